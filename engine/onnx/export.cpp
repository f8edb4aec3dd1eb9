// ONNX export: the model around the nodes (names, inputs, outputs, initializers, value_info)
// and the atomic file write. How each node is written: export_ops*.cpp.

#include "volta/onnx/export.h"

#include <fcntl.h>
#include <onnx/defs/data_type_utils.h>
#include <onnx/defs/schema.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <map>

#include "export_writer.h"
#include "lowering.h"
#include "proto_util.h"
#include "volta/error.h"
#include "volta/ir/verify.h"

namespace volta::onnx {

// raw_data is little-endian: the tensor's bytes are written as they are.
static_assert(std::endian::native == std::endian::little,
              "ONNX raw_data is little-endian; this exporter copies host bytes");

namespace {

// Opset 17 models are IR version 8 (ONNX 1.12).
constexpr int64_t kIrVersion = 8;
constexpr int64_t kOpset = 17;

void set_type(::onnx::ValueInfoProto& info, const std::string& name, const Value& value) {
  info.set_name(name);
  auto* tensor = info.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(static_cast<int32_t>(onnx_from_dtype(value.dtype)));
  auto* shape = tensor->mutable_shape();  // present even for a scalar: rank 0, not unknown
  for (int64_t d : value.shape.dims()) shape->add_dim()->set_dim_value(d);
}

// The ONNX checker does not check element types; ONNX's schema of each op does, at opset 17
// (bf16 is missing from some ops' constraints, e.g. ReverseSequence). Each node a Volta node
// emitted is checked against it for the inputs whose types the model states.
void check_onnx_types(const ModelWriter& writer, const Node& node, const ::onnx::NodeProto& emitted,
                      const std::map<std::string, int32_t>& known) {
  const ::onnx::OpSchema* schema =
      ::onnx::OpSchemaRegistry::Schema(emitted.op_type(), kOpset, emitted.domain());
  if (schema == nullptr || schema->inputs().empty()) return;
  for (int i = 0; i < emitted.input_size(); ++i) {
    const auto type = known.find(emitted.input(i));
    if (emitted.input(i).empty() || type == known.end()) continue;
    const auto& formal =
        schema->inputs()[std::min(static_cast<size_t>(i), schema->inputs().size() - 1)];
    ::onnx::TypeProto proto;
    proto.mutable_tensor_type()->set_elem_type(type->second);
    if (!formal.GetTypes().contains(::onnx::Utils::DataTypeUtils::ToType(proto))) {
      writer.refuse(node, "ONNX's " + emitted.op_type() + " (opset " + std::to_string(kOpset) +
                              ") does not take " + onnx_type_name(type->second) + " for input " +
                              std::to_string(i) + " ('" + formal.GetName() + "')");
    }
  }
}

void check_states(const Graph& graph, std::span<const Tensor> states) {
  if (!graph.state_updates().empty()) {
    const Value& state = graph.value(graph.state_updates().front().state);
    fail(ErrorCode::InvalidArgument,
         "ONNX export: the graph updates state '" + state.name +
             "' (a training step); supported: inference graphs, whose states are read-only");
  }
  if (states.size() != graph.states().size()) {
    fail(ErrorCode::InvalidArgument,
         "ONNX export: the graph has " + std::to_string(graph.states().size()) + " states but " +
             std::to_string(states.size()) +
             " values were given (one per state, indexed like graph.states())");
  }
  for (size_t i = 0; i < states.size(); ++i) {
    const Value& state = graph.value(graph.states()[i]);
    if (states[i].dtype() != state.dtype || states[i].shape() != state.shape) {
      fail(ErrorCode::InvalidArgument,
           "ONNX export: state '" + state.name + "' is " + std::string(dtype_name(state.dtype)) +
               " " + state.shape.str() + "; the value given is " +
               std::string(dtype_name(states[i].dtype())) + " " + states[i].shape().str());
    }
  }
}

// Graph outputs that are not a node's output (an input, a parameter) or repeat an earlier
// output go through Identity, so every ONNX output is a distinct node output.
void add_outputs(ModelWriter& writer, ::onnx::GraphProto& proto, const Graph& graph) {
  const std::vector<int> producer = producers(graph);
  std::set<int32_t> written;
  for (ValueId out : graph.outputs()) {
    std::string name = writer.name_of(out);
    if (producer[static_cast<size_t>(out.index)] < 0 || !written.insert(out.index).second) {
      const std::string copy = writer.fresh_name(name);
      writer.add_node("Identity", {name}, {copy}, name + "/output");
      name = copy;
    }
    set_type(*proto.add_output(), name, graph.value(out));
  }
}

std::filesystem::path temporary_beside(const std::filesystem::path& path) {
  static std::atomic<uint64_t> counter{0};
  return path.parent_path() / ("." + path.filename().string() + ".tmp-" +
                               std::to_string(::getpid()) + "-" + std::to_string(counter++));
}

[[noreturn]] void refuse_io(const std::string& what, const std::filesystem::path& path, int error) {
  fail(ErrorCode::InvalidArgument,
       "ONNX export: " + what + " " + path.string() + ": " + std::strerror(error));
}

}  // namespace

// ---- ModelWriter ---------------------------------------------------------------------------

ModelWriter::ModelWriter(const Graph& graph, ::onnx::GraphProto& proto)
    : graph_(graph), proto_(proto), uses_(use_counts(graph)) {
  // Inputs first, so they keep their names whatever an intermediate is called.
  value_names_.resize(static_cast<size_t>(graph.num_values()));
  for (ValueId v : graph.inputs()) {
    value_names_[static_cast<size_t>(v.index)] = fresh_name(graph.value(v).name);
  }
  for (int i = 0; i < graph.num_values(); ++i) {
    std::string& name = value_names_[static_cast<size_t>(i)];
    if (name.empty()) name = fresh_name(graph.value(ValueId{i}).name);
  }
}

const std::string& ModelWriter::name_of(ValueId v) const {
  static const std::string kAbsent;
  return v.valid() ? value_names_.at(static_cast<size_t>(v.index)) : kAbsent;
}

std::string ModelWriter::fresh_name(std::string_view stem) {
  std::string name(stem.empty() ? "value" : stem);
  for (int k = 1; taken_.contains(name); ++k) {
    name = std::string(stem.empty() ? "value" : stem) + "_" + std::to_string(k);
  }
  taken_.insert(name);
  return name;
}

::onnx::NodeProto& ModelWriter::add_node(std::string_view op_type, std::vector<std::string> inputs,
                                         std::vector<std::string> outputs, std::string_view name) {
  ::onnx::NodeProto& node = *proto_.add_node();
  node.set_op_type(std::string(op_type));
  std::string unique(name);
  for (int k = 1; node_names_.contains(unique); ++k)
    unique = std::string(name) + "_" + std::to_string(k);
  node_names_.insert(unique);
  node.set_name(unique);
  for (std::string& in : inputs) node.add_input(std::move(in));
  for (std::string& out : outputs) node.add_output(std::move(out));
  return node;
}

std::string ModelWriter::add_initializer(const Tensor& value, std::string_view stem) {
  std::string name = fresh_name(stem);
  *proto_.add_initializer() = proto_from_tensor(value, name);
  return name;
}

std::string ModelWriter::ints_initializer(std::span<const int64_t> values, std::string_view stem) {
  return add_initializer(Tensor::from<int64_t>(Shape{static_cast<int64_t>(values.size())}, values),
                         stem);
}

std::string ModelWriter::int_scalar_initializer(int64_t value, std::string_view stem) {
  return add_initializer(Tensor::from<int64_t>(Shape{}, {value}), stem);
}

std::string ModelWriter::scalar_initializer(const Tensor& value) {
  std::string key(dtype_name(value.dtype()));
  key.append(static_cast<const char*>(value.data()), value.nbytes());
  for (const auto& [k, name] : scalars_) {
    if (k == key) return name;
  }
  std::string name = add_initializer(value, "const." + std::string(dtype_name(value.dtype())));
  scalars_.emplace_back(std::move(key), name);
  return name;
}

std::string ModelWriter::scalar_initializer(DType dtype, double value) {
  Tensor t(dtype, Shape{});
  t.set_double(0, value);
  return scalar_initializer(t);
}

int ModelWriter::used_outputs(const Node& node) const {
  int used = 1;
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (uses_.at(static_cast<size_t>(node.outputs[i].index)) > 0) used = static_cast<int>(i) + 1;
  }
  return used;
}

std::string ModelWriter::node_name(const Node& node) const {
  if (!node.name.empty()) return node.name;
  const auto index = &node - graph_.nodes().data();
  return std::string(op_name(node.op)) + "_" + std::to_string(index);
}

void ModelWriter::refuse(const Node& node, const std::string& what) const {
  fail(ErrorCode::InvalidArgument, "ONNX export: node '" + node_name(node) + "' (" +
                                       std::string(op_name(node.op)) + "): " + what);
}

// ---- The model ------------------------------------------------------------------------------

std::string export_onnx(const Graph& graph, std::span<const Tensor> states,
                        const ExportOptions& options) {
  if (options.opset != kOpset) {
    fail(ErrorCode::InvalidArgument, "ONNX export: opset " + std::to_string(options.opset) +
                                         " is not supported; supported: opset 17");
  }
  check_states(graph, states);
  verify_graph_or_throw(graph);

  ::onnx::ModelProto model;
  model.set_ir_version(kIrVersion);
  model.set_producer_name(options.producer_name);
  model.set_producer_version(options.producer_version);
  ::onnx::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(kOpset);
  ::onnx::GraphProto& proto = *model.mutable_graph();
  proto.set_name(options.graph_name);

  ModelWriter writer(graph, proto);
  for (ValueId v : graph.inputs()) set_type(*proto.add_input(), writer.name_of(v), graph.value(v));
  for (ValueId v : graph.parameters()) {
    *proto.add_initializer() = proto_from_tensor(graph.parameter_data(v), writer.name_of(v));
  }
  for (size_t i = 0; i < states.size(); ++i) {
    *proto.add_initializer() = proto_from_tensor(states[i], writer.name_of(graph.states()[i]));
  }
  const std::vector<ExportRule>& rules = export_rules();
  std::set<int32_t> outputs;
  for (ValueId v : graph.outputs()) outputs.insert(v.index);
  // The element type of every value the model states: inputs, initializers, value_info.
  std::map<std::string, int32_t> known;
  for (const auto& v : proto.input()) known[v.name()] = v.type().tensor_type().elem_type();
  for (const auto& t : proto.initializer()) known[t.name()] = t.data_type();
  for (const Node& node : graph.nodes()) {
    const ExportRule& rule = rules[static_cast<size_t>(op_index(node.op))];
    if (rule.emit == nullptr) writer.refuse(node, std::string(rule.note));
    const int first = proto.node_size();
    rule.emit(writer, node);
    for (int k = first; k < proto.node_size(); ++k) {
      check_onnx_types(writer, node, proto.node(k), known);
    }
    for (int i = 0; i < writer.used_outputs(node); ++i) {
      const ValueId out = node.outputs[static_cast<size_t>(i)];
      known[writer.name_of(out)] = static_cast<int32_t>(onnx_from_dtype(graph.value(out).dtype));
      if (!outputs.contains(out.index)) {
        set_type(*proto.add_value_info(), writer.name_of(out), graph.value(out));
      }
    }
  }
  add_outputs(writer, proto, graph);
  return model.SerializeAsString();
}

void export_onnx_file(const Graph& graph, const std::filesystem::path& file,
                      std::span<const Tensor> states, const ExportOptions& options) {
  write_onnx_file(export_onnx(graph, states, options), file);  // refusals before any I/O
}

void write_onnx_file(std::string_view bytes, const std::filesystem::path& file) {
  const std::filesystem::path temporary = temporary_beside(file);
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) refuse_io("cannot create", temporary, errno);
  std::string_view rest = bytes;
  int error = 0;
  while (!rest.empty() && error == 0) {
    const ssize_t written = ::write(fd, rest.data(), rest.size());
    if (written < 0 && errno != EINTR) error = errno;
    if (written > 0) rest.remove_prefix(static_cast<size_t>(written));
  }
  if (error == 0 && ::fsync(fd) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && ::rename(temporary.c_str(), file.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temporary.c_str());
    refuse_io("cannot write", file, error);
  }
}

// ---- The table -------------------------------------------------------------------------------

std::span<const OpExport> onnx_export_table() {
  static const std::vector<OpExport> table = [] {
    std::vector<OpExport> out;
    for (const ExportRule& rule : export_rules()) {
      out.push_back(
          {rule.op, rule.emit ? rule.onnx_ops : std::vector<std::string_view>{}, rule.note});
    }
    return out;
  }();
  return table;
}

const std::vector<ExportRule>& export_rules() {
  static const std::vector<ExportRule> rules = [] {
    std::vector<ExportRule> listed;
    add_direct_rules(listed);
    add_decomposed_rules(listed);
    std::vector<ExportRule> by_op(static_cast<size_t>(kOpCount));
    std::vector<bool> seen(static_cast<size_t>(kOpCount), false);
    for (ExportRule& rule : listed) {
      const auto i = static_cast<size_t>(op_index(rule.op));
      if (seen[i]) {
        throw std::logic_error("ONNX export: two rules for " + std::string(op_name(rule.op)));
      }
      seen[i] = true;
      by_op[i] = std::move(rule);
    }
    for (int i = 0; i < kOpCount; ++i) {
      if (!seen[static_cast<size_t>(i)]) {
        throw std::logic_error("ONNX export: no rule for " +
                               std::string(op_name(static_cast<OpKind>(i))) +
                               " (engine/onnx/export_ops*.cpp)");
      }
    }
    return by_op;
  }();
  return rules;
}

}  // namespace volta::onnx
