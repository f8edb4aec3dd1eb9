// Lowering an ONNX graph onto Volta's op table, node by node, for concrete input shapes.
//
// Values that become attributes of internal ops (shapes, axes, bounds) are computed here,
// at import time, by evaluating the internal nodes that produce them with the import's
// evaluator. When such a value depends on a graph input, the import reads that input's
// value and records it: the plan is specialized on it (see specialization_key).

#include <onnx/defs/schema.h>

#include <algorithm>
#include <map>
#include <set>

#include "lowering.h"
#include "model_impl.h"
#include "proto_util.h"
#include "volta/error.h"

namespace volta::onnx {
namespace {

// The import names no backend: whoever imports says whose kernels decide import-time values.
ConstantEvaluator required(ConstantEvaluator evaluator) {
  if (!evaluator) {
    fail(ErrorCode::InvalidArgument,
         "ONNX import needs a constant evaluator (ImportOptions::evaluator): the backend the "
         "model will run on (make_backend_evaluator) or the reference engine");
  }
  return evaluator;
}

class Importer;

// The context one lowering sees: a view of one ONNX node inside the import.
class NodeContext final : public LoweringContext {
 public:
  NodeContext(Importer& importer, const ::onnx::NodeProto& node, std::string name, int version);

  const std::string& op_type() const override { return node_.op_type(); }
  const std::string& node_name() const override { return name_; }
  int since_version() const override { return version_; }

  int num_inputs() const override { return node_.input_size(); }
  bool has_input(int i) const override {
    return i >= 0 && i < node_.input_size() && !node_.input(i).empty();
  }
  ValueId input(int i) override;
  const TypeInfo& input_type(int i) override;
  const Tensor& constant_input(int i, std::string_view what) override;
  bool is_constant(int i) override;
  const Tensor& constant_value(ValueId v, std::string_view what) override;
  const Sequence& input_sequence(int i) override;

  bool has_attr(std::string_view name) const override { return find_attr(name) != nullptr; }
  int64_t attr_int(std::string_view name, std::optional<int64_t> def) override;
  double attr_float(std::string_view name, std::optional<double> def) override;
  std::string attr_string(std::string_view name, std::optional<std::string> def) override;
  std::vector<int64_t> attr_ints(std::string_view name,
                                 std::optional<std::vector<int64_t>> def) override;
  std::vector<double> attr_floats(std::string_view name,
                                  std::optional<std::vector<double>> def) override;
  std::vector<std::string> attr_strings(std::string_view name,
                                        std::optional<std::vector<std::string>> def) override;
  Tensor attr_tensor(std::string_view name) override;
  std::vector<ValueId> lower_graph_attr(std::string_view name,
                                        std::span<const ValueId> inputs) override;
  void consume_attr(std::string_view name) override { consumed_.insert(std::string(name)); }

  int num_outputs() const override { return node_.output_size(); }
  bool has_output(int i) const override {
    return i >= 0 && i < node_.output_size() && !node_.output(i).empty();
  }
  void set_output(int i, ValueId value) override;
  void set_output_constant(int i, Tensor value) override;
  void set_output_sequence(int i, Sequence value) override;

  ValueId add(OpKind op, std::vector<ValueId> inputs, Attributes attrs) override;
  std::vector<ValueId> add_node(OpKind op, std::vector<ValueId> inputs, Attributes attrs,
                                int num_outputs) override;
  ValueId constant(Tensor value) override;
  const Graph& graph() const override;

  // After lowering: every attribute read and every declared output produced.
  void finish();

 private:
  const ::onnx::AttributeProto* find_attr(std::string_view name) const;
  const ::onnx::AttributeProto* attr(std::string_view name, ::onnx::AttributeProto::AttributeType t,
                                     bool required);

  Importer& importer_;
  const ::onnx::NodeProto& node_;
  std::string name_;
  int version_;
  std::set<std::string, std::less<>> consumed_;
  std::vector<bool> produced_;
  std::map<int, TypeInfo> input_types_;
  int added_ = 0;
};

class Importer {
 public:
  Importer(const Model::Impl& model, std::span<const Tensor> inputs, bool inputs_have_values,
           const ImportOptions& options)
      : model_(model),
        given_(inputs),
        inputs_have_values_(inputs_have_values),
        trainable_(options.trainable),
        evaluate_(required(options.evaluator)) {}

  // The model file's folder, where its external data lies (empty for a model of bytes).
  const std::filesystem::path& model_dir() const { return model_.directory; }

  // Lowers every node. With `issues`, a node that fails is recorded and the nodes that
  // depend on it are skipped, so one pass reports every failing node; without, the first
  // failure throws.
  ImportedGraph run(std::vector<ImportIssue>* issues);

  Graph& graph() { return graph_; }
  ValueId value_of(const std::string& onnx_name, const std::string& node) const;
  void bind(const std::string& onnx_name, ValueId v) { names_[onnx_name] = v; }
  const Sequence& sequence_of(const std::string& onnx_name, const std::string& node) const;
  void bind_sequence(const std::string& onnx_name, Sequence s) {
    sequences_.insert_or_assign(onnx_name, std::move(s));
  }
  const Tensor& known_value(ValueId v, const std::string& who, std::string_view what);
  bool is_static(ValueId v);
  void record_constant(ValueId v, Tensor t) { known_.insert_or_assign(v.index, std::move(t)); }
  std::vector<ValueId> add_node(OpKind op, std::vector<ValueId> inputs, Attributes attrs,
                                const std::string& stem, int num_outputs);
  // A subgraph lowered inline under node `scope` (its nodes named "<scope>/<node>"); the
  // values of its outputs.
  std::vector<ValueId> lower_subgraph(const ::onnx::GraphProto& graph, const std::string& scope,
                                      std::span<const ValueId> inputs);

 private:
  void add_inputs();
  void lower(const ::onnx::NodeProto& node, int index, const std::string& scope = "");

  const Model::Impl& model_;
  std::span<const Tensor> given_;
  bool inputs_have_values_;
  bool trainable_;
  ConstantEvaluator evaluate_;
  Graph graph_;
  std::map<std::string, ValueId, std::less<>> names_;
  std::map<std::string, Sequence, std::less<>> sequences_;  // sequence values, by ONNX name
  std::map<int32_t, Tensor> known_;                         // values computed at import time
  std::map<int32_t, int> producer_;                         // value index -> node index in graph_
  std::map<int32_t, int> input_index_;  // graph input value index -> model input index
  std::set<int> value_inputs_;          // model inputs read by value
  std::set<std::string> failed_;        // outputs of failed nodes (check mode)
  std::map<int32_t, Tensor> initial_;   // state value index -> the initializer's data
  std::set<int32_t> frozen_;            // states a node read by value: parameters after all
};

// ---- Importer ---------------------------------------------------------------------------

ValueId Importer::value_of(const std::string& onnx_name, const std::string& node) const {
  const auto it = names_.find(onnx_name);
  if (it == names_.end() && sequences_.contains(onnx_name)) {
    fail(ErrorCode::ImportUnsupported,
         "node '" + node + "' reads the sequence '" + onnx_name +
             "' as a tensor; supported: sequences as inputs of the sequence ops "
             "(SequenceAt, SequenceInsert, SequenceErase, SequenceLength, ConcatFromSequence)");
  }
  if (it == names_.end()) {
    fail(ErrorCode::ImportInvalidModel, "node '" + node + "' reads '" + onnx_name +
                                            "', which no input, initializer or earlier "
                                            "node defines (the graph must be in "
                                            "topological order)");
  }
  return it->second;
}

const Sequence& Importer::sequence_of(const std::string& onnx_name, const std::string& node) const {
  const auto it = sequences_.find(onnx_name);
  if (it == sequences_.end()) {
    value_of(onnx_name, node);  // undefined: I-INVALID-MODEL
    fail(ErrorCode::ImportInvalidModel,
         "node '" + node + "' takes a sequence; '" + onnx_name + "' is a tensor");
  }
  return it->second;
}

std::vector<ValueId> Importer::add_node(OpKind op, std::vector<ValueId> inputs, Attributes attrs,
                                        const std::string& stem, int num_outputs) {
  std::vector<ValueId> outs = graph_.add_node(op, std::move(inputs), std::move(attrs),
                                              graph_.unique_name(stem), num_outputs);
  for (ValueId v : outs) producer_[v.index] = graph_.num_nodes() - 1;
  return outs;
}

bool Importer::is_static(ValueId v) {
  if (known_.contains(v.index)) return true;
  const Value& value = graph_.value(v);
  if (value.kind == ValueKind::Parameter) return true;
  if (value.kind == ValueKind::Input) return false;
  const auto p = producer_.find(v.index);
  if (p == producer_.end()) return false;
  for (ValueId in : graph_.node(p->second).inputs) {
    if (in.valid() && !is_static(in)) return false;
  }
  return true;
}

const Tensor& Importer::known_value(ValueId v, const std::string& who, std::string_view what) {
  if (const auto it = known_.find(v.index); it != known_.end()) return it->second;
  const Value& value = graph_.value(v);
  if (value.kind == ValueKind::Parameter) return graph_.parameter_data(v);
  if (value.kind == ValueKind::State) {
    // A shape or attribute argument is fixed in the plan: the initializer stays frozen.
    frozen_.insert(v.index);
    return initial_.at(v.index);
  }
  if (value.kind == ValueKind::Input) {
    const int index = input_index_.at(v.index);
    if (!inputs_have_values_) {
      fail(ErrorCode::ImportNotStatic,
           "node '" + who + "': " + std::string(what) + " depends on the value of graph input '" +
               value.name + "'; the plan is specialized on that value when the model runs");
    }
    value_inputs_.insert(index);
    return given_[static_cast<size_t>(index)];
  }
  const auto p = producer_.find(v.index);
  if (p == producer_.end()) {
    fail(ErrorCode::ImportNotStatic,
         "node '" + who + "': " + std::string(what) + " is not known at import time");
  }
  const Node node = graph_.node(p->second);  // a copy: evaluation may add to the graph
  Graph single;
  std::vector<ValueId> args;
  std::map<int32_t, ValueId> parameters;  // a value the node reads twice is one parameter
  for (ValueId in : node.inputs) {
    if (!in.valid()) {
      args.push_back(kNoValue);
      continue;
    }
    auto [it, added] = parameters.try_emplace(in.index);
    if (added) it->second = single.add_parameter(graph_.value(in).name, known_value(in, who, what));
    args.push_back(it->second);
  }
  single.set_outputs(
      single.add_node(node.op, args, node.attrs, node.name, static_cast<int>(node.outputs.size())));
  std::vector<Tensor> results = evaluate_(single);
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    known_.insert_or_assign(node.outputs[i].index, std::move(results.at(i)));
  }
  return known_.at(v.index);
}

void Importer::add_inputs() {
  const auto& graph = model_.proto.graph();
  if (given_.size() != model_.inputs.size()) {
    fail(ErrorCode::InputMismatch, model_.source + " has " + std::to_string(model_.inputs.size()) +
                                       " inputs; " + std::to_string(given_.size()) + " given");
  }
  for (size_t i = 0; i < model_.inputs.size(); ++i) {
    const ValueSpec& spec = model_.inputs[i];
    const Tensor& t = given_[i];
    if (!spec.dtype) {
      fail(ErrorCode::ImportUnsupported, "graph input '" + spec.name + "' has type " + spec.type +
                                             "; supported: tensors of " + onnx_tensor_types());
    }
    bool shape_ok = !spec.has_shape || static_cast<int>(spec.dims.size()) == t.shape().rank();
    for (size_t d = 0; shape_ok && spec.has_shape && d < spec.dims.size(); ++d) {
      shape_ok = spec.dims[d] < 0 || spec.dims[d] == t.shape()[static_cast<int>(d)];
    }
    if (*spec.dtype != t.dtype() || !shape_ok) {
      std::string dims;
      for (int64_t d : spec.dims)
        dims += (dims.empty() ? "" : ",") + (d < 0 ? "?" : std::to_string(d));
      fail(ErrorCode::InputMismatch, "graph input '" + spec.name + "' is " + spec.type + "[" +
                                         dims + "]; given " + std::string(dtype_name(t.dtype())) +
                                         " " + t.shape().str());
    }
    const ValueId v = graph_.add_input(spec.name, t.dtype(), t.shape());
    input_index_[v.index] = static_cast<int>(i);
    names_[spec.name] = v;
  }
  for (const auto& init : graph.initializer()) {
    std::shared_ptr<const Tensor> data = model_.initializer(init);
    if (trainable_ && (data->dtype() == DType::F32 || data->dtype() == DType::F64)) {
      const ValueId v = graph_.add_state(init.name(), data->dtype(), data->shape());
      initial_.emplace(v.index, *data);  // the state's own copy, which training updates
      names_[init.name()] = v;
    } else {
      names_[init.name()] = graph_.add_parameter(init.name(), std::move(data));
    }
  }
}

std::vector<ValueId> Importer::lower_subgraph(const ::onnx::GraphProto& graph,
                                              const std::string& scope,
                                              std::span<const ValueId> inputs) {
  if (graph.input_size() != static_cast<int>(inputs.size())) {
    fail(ErrorCode::ImportInvalidModel,
         "node '" + scope + "': its graph attribute '" + graph.name() + "' takes " +
             std::to_string(graph.input_size()) + " input(s); the node gives it " +
             std::to_string(inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto& formal = graph.input(static_cast<int>(i));
    const DType given = graph_.value(inputs[i]).dtype;
    if (formal.type().has_tensor_type() && formal.type().tensor_type().elem_type() != 0 &&
        dtype_from_onnx(formal.type().tensor_type().elem_type()) != given) {
      fail(ErrorCode::ImportInvalidModel,
           "node '" + scope + "': input '" + formal.name() + "' of its graph attribute is " +
               onnx_type_name(formal.type().tensor_type().elem_type()) + "; the node gives it " +
               std::string(dtype_name(given)));
    }
    names_[formal.name()] = inputs[i];
  }
  // Sibling graph attributes may reuse each other's names: the parameters take scoped ones.
  for (const auto& init : graph.initializer()) {
    names_[init.name()] = graph_.add_parameter(graph_.unique_name(scope + "/" + init.name()),
                                               model_.initializer(init));
  }
  for (int i = 0; i < graph.node_size(); ++i) lower(graph.node(i), i, scope + "/");
  std::vector<ValueId> outputs;
  outputs.reserve(static_cast<size_t>(graph.output_size()));
  for (const auto& out : graph.output()) outputs.push_back(value_of(out.name(), scope));
  return outputs;
}

void Importer::lower(const ::onnx::NodeProto& node, int index, const std::string& scope) {
  const std::string name =
      scope + (node.name().empty() ? node.op_type() + "_" + std::to_string(index) : node.name());
  auto unsupported = [&](const std::string& what) {
    fail(ErrorCode::ImportUnsupported, "node '" + name + "' (" + node.op_type() + "): " + what);
  };
  const NodeLowering found = find_lowering(node.domain(), node.op_type(), model_.opset,
                                           model_.domain_opset(node.domain()));
  const VersionCheck& version = found.version;
  if (version.invalid)
    fail(ErrorCode::ImportInvalidModel, "node '" + name + "': " + version.problem);
  if (!version.problem.empty()) unsupported(version.problem);
  const Lowering* lowering = found.lowering;
  NodeContext ctx(*this, node, name, version.version);
  lowering->lower(ctx);
  ctx.finish();
}

ImportedGraph Importer::run(std::vector<ImportIssue>* issues) {
  add_inputs();
  const auto& graph = model_.proto.graph();
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    if (issues == nullptr) {
      lower(node, i);
      continue;
    }
    bool blocked = false;
    for (const std::string& in : node.input()) blocked = blocked || failed_.contains(in);
    if (!blocked) {
      try {
        lower(node, i);
        continue;
      } catch (const VoltaError& e) {
        // Values that depend on run-time inputs are resolved when the model runs.
        if (e.code() != ErrorCode::ImportNotStatic) {
          issues->push_back(
              {node.name().empty() ? node.op_type() + "_" + std::to_string(i) : node.name(),
               node.op_type(), e.what()});
        }
      }
    }
    for (const std::string& out : node.output()) failed_.insert(out);
  }
  ImportedGraph result;
  std::set<int32_t> used;
  std::vector<ValueId> outputs;
  for (const auto& out : graph.output()) {
    if (failed_.contains(out.name())) continue;
    ValueId v = value_of(out.name(), "graph output");
    // Graph outputs are produced by nodes of their own: a graph input, a parameter or a
    // value already listed gets a copy.
    if (graph_.value(v).kind != ValueKind::Intermediate || used.contains(v.index)) {
      v = add_node(OpKind::Identity, {v}, {}, out.name(), 1).front();
    }
    used.insert(v.index);
    outputs.push_back(v);
    result.output_names.push_back(out.name());
  }
  graph_.set_outputs(outputs);
  for (int32_t v : frozen_) {
    result.frozen_initializers.push_back(graph_.value(ValueId{v}).name);
    graph_.freeze_state(ValueId{v}, std::move(initial_.at(v)));
  }
  for (ValueId v : graph_.states())
    result.initial_states.push_back(std::move(initial_.at(v.index)));
  result.graph = std::move(graph_);
  result.value_inputs.assign(value_inputs_.begin(), value_inputs_.end());
  return result;
}

// ---- NodeContext ------------------------------------------------------------------------

NodeContext::NodeContext(Importer& importer, const ::onnx::NodeProto& node, std::string name,
                         int version)
    : importer_(importer),
      node_(node),
      name_(std::move(name)),
      version_(version),
      produced_(static_cast<size_t>(node.output_size()), false) {}

ValueId NodeContext::input(int i) {
  if (!has_input(i)) invalid("input " + std::to_string(i) + " is required");
  return importer_.value_of(node_.input(i), name_);
}

const TypeInfo& NodeContext::input_type(int i) {
  // Kept per input so that references to several inputs' types stay valid together.
  return input_types_.insert_or_assign(i, importer_.graph().value(input(i)).type()).first->second;
}

const Tensor& NodeContext::constant_input(int i, std::string_view what) {
  return importer_.known_value(input(i), name_, what);
}

bool NodeContext::is_constant(int i) { return importer_.is_static(input(i)); }

const Tensor& NodeContext::constant_value(ValueId v, std::string_view what) {
  return importer_.known_value(v, name_, what);
}

const Sequence& NodeContext::input_sequence(int i) {
  if (!has_input(i)) invalid("input " + std::to_string(i) + " is required");
  return importer_.sequence_of(node_.input(i), name_);
}

const ::onnx::AttributeProto* NodeContext::find_attr(std::string_view name) const {
  for (const auto& a : node_.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

const ::onnx::AttributeProto* NodeContext::attr(std::string_view name,
                                                ::onnx::AttributeProto::AttributeType type,
                                                bool required) {
  consumed_.insert(std::string(name));
  const ::onnx::AttributeProto* a = find_attr(name);
  if (a == nullptr) {
    if (required) invalid("attribute '" + std::string(name) + "' is required");
    return nullptr;
  }
  if (a->type() != type && a->type() != ::onnx::AttributeProto::UNDEFINED) {
    invalid("attribute '" + std::string(name) + "' has type " +
            ::onnx::AttributeProto::AttributeType_Name(a->type()) + "; expected " +
            ::onnx::AttributeProto::AttributeType_Name(type));
  }
  return a;
}

int64_t NodeContext::attr_int(std::string_view name, std::optional<int64_t> def) {
  const auto* a = attr(name, ::onnx::AttributeProto::INT, !def.has_value());
  return a ? a->i() : *def;
}

double NodeContext::attr_float(std::string_view name, std::optional<double> def) {
  const auto* a = attr(name, ::onnx::AttributeProto::FLOAT, !def.has_value());
  return a ? static_cast<double>(a->f()) : *def;
}

std::string NodeContext::attr_string(std::string_view name, std::optional<std::string> def) {
  const auto* a = attr(name, ::onnx::AttributeProto::STRING, !def.has_value());
  return a ? a->s() : *def;
}

std::vector<int64_t> NodeContext::attr_ints(std::string_view name,
                                            std::optional<std::vector<int64_t>> def) {
  const auto* a = attr(name, ::onnx::AttributeProto::INTS, !def.has_value());
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : *def;
}

std::vector<double> NodeContext::attr_floats(std::string_view name,
                                             std::optional<std::vector<double>> def) {
  const auto* a = attr(name, ::onnx::AttributeProto::FLOATS, !def.has_value());
  return a ? std::vector<double>(a->floats().begin(), a->floats().end()) : *def;
}

std::vector<std::string> NodeContext::attr_strings(std::string_view name,
                                                   std::optional<std::vector<std::string>> def) {
  const auto* a = attr(name, ::onnx::AttributeProto::STRINGS, !def.has_value());
  return a ? std::vector<std::string>(a->strings().begin(), a->strings().end()) : *def;
}

Tensor NodeContext::attr_tensor(std::string_view name) {
  const auto* a = attr(name, ::onnx::AttributeProto::TENSOR, true);
  return tensor_from_proto(a->t(), "attribute '" + std::string(name) + "' of node '" + name_ + "'",
                           importer_.model_dir());
}

std::vector<ValueId> NodeContext::lower_graph_attr(std::string_view name,
                                                   std::span<const ValueId> inputs) {
  const auto* a = attr(name, ::onnx::AttributeProto::GRAPH, true);
  return importer_.lower_subgraph(a->g(), name_, inputs);
}

void NodeContext::set_output(int i, ValueId value) {
  if (!has_output(i)) return;  // an optional output the model does not use
  importer_.bind(node_.output(i), value);
  produced_[static_cast<size_t>(i)] = true;
}

void NodeContext::set_output_sequence(int i, Sequence value) {
  if (!has_output(i)) return;
  importer_.bind_sequence(node_.output(i), std::move(value));
  produced_[static_cast<size_t>(i)] = true;
}

void NodeContext::set_output_constant(int i, Tensor value) {
  if (!has_output(i)) return;
  const ValueId v = constant(value);
  importer_.record_constant(v, std::move(value));
  set_output(i, v);
}

ValueId NodeContext::add(OpKind op, std::vector<ValueId> inputs, Attributes attrs) {
  return add_node(op, std::move(inputs), std::move(attrs), 1).front();
}

std::vector<ValueId> NodeContext::add_node(OpKind op, std::vector<ValueId> inputs, Attributes attrs,
                                           int num_outputs) {
  const std::string stem = added_++ == 0 ? name_ : name_ + "/" + std::string(volta::op_name(op));
  const OpSchema& schema = op_schema(op);
  const auto cast = [&](ValueId v, DType to) {
    return importer_
        .add_node(OpKind::Cast, {v}, {{"to", std::string(dtype_name(to))}}, name_ + "/Cast", 1)
        .front();
  };
  // Halves on an op without a kernel for them are computed in f32 between Casts: each type
  // parameter whose inputs are all of one half dtype widens them, and narrows its outputs.
  std::vector<std::pair<char, DType>> widened;
  for (const TypeParam& param : schema.type_params) {
    std::vector<size_t> bound;  // the present inputs of this type parameter
    for (size_t i = 0; i < inputs.size(); ++i) {
      // The last spec stands for every input of a variadic tail.
      const InputSpec& spec = schema.inputs[std::min(i, schema.inputs.size() - 1)];
      if (spec.type_param == param.name && inputs[i].valid()) bound.push_back(i);
    }
    if (bound.empty()) continue;
    const DType half = type_of(inputs[bound.front()]).dtype;
    const bool uniform = std::all_of(bound.begin(), bound.end(),
                                     [&](size_t i) { return type_of(inputs[i]).dtype == half; });
    if (!uniform || !half_through_f32(param.allowed, half)) continue;
    widened.emplace_back(param.name, half);
    for (const size_t i : bound) inputs[i] = cast(inputs[i], DType::F32);
  }
  std::vector<ValueId> outs;
  try {
    outs = importer_.add_node(op, std::move(inputs), std::move(attrs), stem, num_outputs);
  } catch (const VoltaError& e) {
    // The op table rejected what the lowering built from this node: name the ONNX node.
    unsupported("lowering onto " + std::string(volta::op_name(op)) + ": " + e.message());
  }
  for (const auto& [param, half] : widened) {
    for (size_t o = 0; o < outs.size(); ++o) {
      const OutputSpec& spec = schema.outputs[std::min(o, schema.outputs.size() - 1)];
      if (spec.type_param == param && outs[o].valid()) outs[o] = cast(outs[o], half);
    }
  }
  return outs;
}

ValueId NodeContext::constant(Tensor value) {
  Tensor copy = value;
  const ValueId v = add(OpKind::Constant, {}, {{"value", std::move(value)}});
  importer_.record_constant(v, std::move(copy));
  return v;
}

const Graph& NodeContext::graph() const { return importer_.graph(); }

void NodeContext::finish() {
  for (const auto& a : node_.attribute()) {
    if (!consumed_.contains(a.name())) {
      unsupported("attribute '" + a.name() + "' is not supported");
    }
  }
  for (int i = 0; i < node_.output_size(); ++i) {
    if (has_output(i) && !produced_[static_cast<size_t>(i)]) {
      unsupported("output " + std::to_string(i) + " ('" + node_.output(i) + "') is not supported");
    }
  }
}

}  // namespace

ImportedGraph Model::import_for(std::span<const Tensor> inputs,
                                const ImportOptions& options) const {
  if (const std::vector<ImportIssue> issues = static_issues(*impl_); !issues.empty()) {
    const ImportIssue& first = issues.front();
    fail(ErrorCode::ImportUnsupported,
         (first.node.empty() ? "" : "node '" + first.node + "' (" + first.op_type + "): ") +
             first.message);
  }
  return Importer(*impl_, inputs, true, options).run(nullptr);
}

std::vector<ImportIssue> Model::check(const ImportOptions& options) const {
  std::vector<ImportIssue> issues = static_issues(*impl_);
  for (const ImportIssue& i : issues) {
    if (i.node.empty()) return issues;  // the graph's interface itself is not importable
  }
  // Lower with zero tensors of the declared shapes when every input shape is static: that
  // finds unsupported attribute values and dtypes. Values that depend on input values are
  // resolved at run time and are not issues.
  std::vector<Tensor> zeros;
  for (const ValueSpec& spec : impl_->inputs) {
    if (!spec.dtype || !spec.has_shape) return issues;
    for (int64_t d : spec.dims) {
      if (d < 0) return issues;
    }
    zeros.emplace_back(*spec.dtype, Shape(spec.dims));
  }
  std::set<std::string> reported;
  for (const ImportIssue& i : issues) reported.insert(i.node);
  try {
    std::vector<ImportIssue> found;
    Importer(*impl_, zeros, false, options).run(&found);
    for (ImportIssue& i : found) {
      if (!reported.contains(i.node)) issues.push_back(std::move(i));
    }
  } catch (const VoltaError& e) {
    issues.push_back({"", "", e.what()});
  }
  return issues;
}

std::string specialization_key(std::span<const Tensor> inputs, std::span<const int> value_inputs) {
  std::string key;
  for (const Tensor& t : inputs) {
    key += std::string(dtype_name(t.dtype())) + t.shape().str() + ";";
  }
  static constexpr char kHex[] = "0123456789abcdef";
  for (int i : value_inputs) {
    const Tensor& t = inputs[static_cast<size_t>(i)];
    key += "#" + std::to_string(i) + "=";
    const auto* bytes = static_cast<const unsigned char*>(t.data());
    for (size_t b = 0; b < t.nbytes(); ++b) {
      key += kHex[bytes[b] >> 4];
      key += kHex[bytes[b] & 15];
    }
  }
  return key;
}

std::shared_ptr<const Tensor> Model::Impl::initializer(const ::onnx::TensorProto& tensor) const {
  const std::lock_guard lock(decoded_mutex_);
  auto it = decoded_.find(&tensor);
  if (it == decoded_.end()) {
    it = decoded_
             .emplace(&tensor, std::make_shared<const Tensor>(tensor_from_proto(
                                   tensor, "initializer '" + tensor.name() + "'", directory)))
             .first;
  }
  return it->second;
}

}  // namespace volta::onnx
