#include "volta/ir/verify.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include "size_limit.h"

namespace volta {
namespace {

std::string where(const Node& node) {
  return "Node '" + node.name + "' (" + std::string(op_name(node.op)) + ")";
}

std::string type_str(const TypeInfo& t) { return std::string(dtype_name(t.dtype)) + t.shape.str(); }

// Shortest text that reads back as `v` ("2", "-1e-05", "inf"): std::to_string's fixed six
// decimals would print a small epsilon as "-0.000000".
std::string num(double v) {
  char buf[32];
  const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  return std::string(buf, end);
}

// "1 value", "5 values".
std::string value_count(const Graph& graph) {
  const int n = graph.num_values();
  return std::to_string(n) + (n == 1 ? " value" : " values");
}

// "f32[2,3], f32[3,6]": the operand types a shape rule saw ("_" for an absent input).
std::string input_types(const Graph& graph, const Node& node) {
  std::string out;
  for (ValueId v : node.inputs) {
    if (!out.empty()) out += ", ";
    out += v.valid() ? type_str(graph.value(v).type()) : "_";
  }
  return out;
}

struct NodeError {
  ErrorCode code;
  std::string message;
};

void check_range(const Node& node, const AttrSpec& spec, double v) {
  // NaN compares false both ways, so it is named explicitly: a NaN epsilon is never valid.
  const bool bounded = spec.min || spec.max;
  if ((bounded && std::isnan(v)) || (spec.min && v < *spec.min) || (spec.max && v > *spec.max)) {
    throw NodeError{ErrorCode::VerifyAttributeRange,
                    where(node) + ": attribute '" + std::string(spec.name) + "' is " + num(v) +
                        ", outside [" + (spec.min ? num(*spec.min) : "-inf") + ", " +
                        (spec.max ? num(*spec.max) : "inf") + "]"};
  }
}

void check_attributes(const Node& node, const OpSchema& schema) {
  for (const auto& [name, value] : node.attrs) {
    const AttrSpec* spec = schema.find_attr(name);
    if (spec == nullptr) {
      std::string known;
      for (const AttrSpec& s : schema.attrs)
        known += (known.empty() ? "" : ", ") + std::string(s.name);
      throw NodeError{ErrorCode::VerifyUnknownAttribute,
                      where(node) + ": unknown attribute '" + name +
                          "' (supported: " + (known.empty() ? "none" : known) + ")"};
    }
    if (attr_type_of(value) != spec->type) {
      throw NodeError{ErrorCode::VerifyAttributeType,
                      where(node) + ": attribute '" + name + "' is " +
                          std::string(attr_type_name(attr_type_of(value))) + ", expected " +
                          std::string(attr_type_name(spec->type))};
    }
    if (const auto* i = std::get_if<int64_t>(&value))
      check_range(node, *spec, static_cast<double>(*i));
    if (const auto* f = std::get_if<double>(&value)) check_range(node, *spec, *f);
    if (const auto* is = std::get_if<std::vector<int64_t>>(&value)) {
      for (int64_t x : *is) check_range(node, *spec, static_cast<double>(x));
    }
    if (const auto* s = std::get_if<std::string>(&value); s && !spec->allowed_strings.empty()) {
      bool ok = false;
      std::string allowed;
      for (std::string_view a : spec->allowed_strings) {
        ok = ok || a == *s;
        allowed += (allowed.empty() ? "\"" : ", \"") + std::string(a) + "\"";
      }
      if (!ok) {
        std::string message = where(node) + ": attribute '" + name + "' is \"";
        message += *s;
        message += "\", supported: ";
        message += allowed;
        throw NodeError{ErrorCode::VerifyAttributeRange, message};
      }
    }
  }
  for (const AttrSpec& spec : schema.attrs) {
    if (!spec.default_value && !node.attrs.contains(spec.name)) {
      throw NodeError{
          ErrorCode::VerifyMissingAttribute,
          where(node) + ": required attribute '" + std::string(spec.name) + "' is missing"};
    }
  }
}

// "1 input", "2 to 3 inputs", "at least 1 input".
std::string arity_text(int lo, int hi, std::string_view noun) {
  const std::string plural = std::string(noun) + ((hi < 0 ? lo : hi) == 1 ? "" : "s");
  if (hi < 0) return "at least " + std::to_string(lo) + " " + plural;
  if (lo == hi) return std::to_string(lo) + " " + plural;
  return std::to_string(lo) + " to " + std::to_string(hi) + " " + plural;
}

std::vector<TypeInfo> infer_or_throw(const Graph& graph, const Node& node) {
  const OpSchema& schema = op_schema(node.op);
  const int n_in = static_cast<int>(node.inputs.size());
  if (n_in < schema.min_inputs() || (schema.max_inputs() >= 0 && n_in > schema.max_inputs())) {
    throw NodeError{ErrorCode::VerifyArity,
                    where(node) + ": takes " +
                        arity_text(schema.min_inputs(), schema.max_inputs(), "input") + ", got " +
                        std::to_string(n_in)};
  }
  const int n_out = static_cast<int>(node.outputs.size());
  if (n_out < std::max(schema.min_outputs(), 1) ||
      (schema.max_outputs() >= 0 && n_out > schema.max_outputs())) {
    throw NodeError{ErrorCode::VerifyOutputArity, where(node) + ": produces " +
                                                      arity_text(std::max(schema.min_outputs(), 1),
                                                                 schema.max_outputs(), "output") +
                                                      ", got " + std::to_string(n_out)};
  }
  check_attributes(node, schema);

  std::vector<std::optional<TypeInfo>> inputs(node.inputs.size());
  struct Binding {
    char type_param;
    int input;
    std::string_view name;
    DType dtype;
  };
  std::vector<Binding> bound;  // type parameter bindings, in input order
  for (int i = 0; i < n_in; ++i) {
    const InputSpec& spec =
        schema.inputs[static_cast<size_t>(std::min(i, static_cast<int>(schema.inputs.size()) - 1))];
    const ValueId id = node.inputs[static_cast<size_t>(i)];
    if (!id.valid()) {
      if (spec.optional) continue;
      throw NodeError{ErrorCode::VerifyMissingInput, where(node) + ": required input " +
                                                         std::to_string(i) + " '" +
                                                         std::string(spec.name) + "' is empty"};
    }
    if (!graph.has_value(id)) {
      throw NodeError{ErrorCode::VerifyUndefinedValue,
                      where(node) + ": input " + std::to_string(i) + " refers to value %" +
                          std::to_string(id.index) + ", but the graph has " + value_count(graph)};
    }
    const Value& v = graph.value(id);
    const TypeParam* param = schema.find_type_param(spec.type_param);
    if (param && !param->allowed.contains(v.dtype)) {
      throw NodeError{ErrorCode::VerifyDType, where(node) + ": input " + std::to_string(i) + " '" +
                                                  std::string(spec.name) + "' has dtype " +
                                                  std::string(dtype_name(v.dtype)) +
                                                  ", supported: " + param->allowed.str()};
    }
    for (const Binding& b : bound) {
      if (b.type_param == spec.type_param && b.dtype != v.dtype) {
        throw NodeError{ErrorCode::VerifyDType,
                        where(node) + ": input " + std::to_string(i) + " '" +
                            std::string(spec.name) + "' has dtype " +
                            std::string(dtype_name(v.dtype)) + ", but input " +
                            std::to_string(b.input) + " '" + std::string(b.name) +
                            "' of the same type parameter " + std::string(1, b.type_param) +
                            " has " + std::string(dtype_name(b.dtype))};
      }
    }
    bound.push_back({spec.type_param, i, spec.name, v.dtype});
    inputs[static_cast<size_t>(i)] = v.type();
  }

  std::vector<TypeInfo> out;
  try {
    out = schema.infer(InferContext{node, inputs, n_out, AttrReader(node)});
  } catch (const ShapeError& e) {
    throw NodeError{ErrorCode::VerifyShape, where(node) + ": " + e.what()};
  } catch (const VoltaError& e) {
    throw NodeError{e.code(), where(node) + ": " + e.message()};
  }
  if (static_cast<int>(out.size()) != n_out) {
    throw NodeError{ErrorCode::VerifyOutputArity,
                    where(node) + ": declares " + std::to_string(n_out) +
                        " outputs, the op gives " + std::to_string(out.size())};
  }
  return out;
}

}  // namespace

std::vector<TypeInfo> infer_node(const Graph& graph, const Node& node) {
  try {
    return infer_or_throw(graph, node);
  } catch (const NodeError& e) {
    throw VoltaError(e.code, e.message);
  }
}

// A state's next value is written into the state's own storage: it must be a node output of
// the state's type, each state updated once, and no read of the state may depend on the new
// value (it would run after the write and read the next value, not this run's).
template <class Report>
void verify_state_updates(const Graph& graph, const std::vector<int>& producer, Report& report) {
  std::vector<char> updated(static_cast<size_t>(graph.num_values()), 0);
  for (const StateUpdate& u : graph.state_updates()) {
    const std::string what = "the update of state %" + std::to_string(u.state.index);
    if (!graph.has_value(u.state) || graph.value(u.state).kind != ValueKind::State) {
      report(ErrorCode::VerifyStateUpdate,
             what + ": %" + std::to_string(u.state.index) + " is not a state of the graph");
      continue;
    }
    const Value& state = graph.value(u.state);
    const std::string named = what + " '" + state.name + "'";
    if (updated[static_cast<size_t>(u.state.index)]++) {
      report(ErrorCode::VerifyStateUpdate, named + ": the state is updated more than once");
      continue;
    }
    if (!graph.has_value(u.value) || producer[static_cast<size_t>(u.value.index)] < 0) {
      report(ErrorCode::VerifyStateUpdate,
             named + ": its next value %" + std::to_string(u.value.index) +
                 " is not a node output (a state is updated by the node that computes it)");
      continue;
    }
    const Value& next = graph.value(u.value);
    if (next.type() != state.type()) {
      report(ErrorCode::VerifyStateUpdate, named + " is " + type_str(state.type()) +
                                               ", its next value %" +
                                               std::to_string(u.value.index) + " '" + next.name +
                                               "' is " + type_str(next.type()));
      continue;
    }
    // The writer writes into the state while it runs: it may read the state only where its
    // kernel reads each element before writing it.
    const int writer = producer[static_cast<size_t>(u.value.index)];
    const Node& writer_node = graph.node(writer);
    if (std::find(writer_node.inputs.begin(), writer_node.inputs.end(), u.state) !=
            writer_node.inputs.end() &&
        !may_write_over_operand(writer_node, u.state)) {
      report(ErrorCode::VerifyStateUpdate,
             named + ": node '" + writer_node.name + "' (" + std::string(op_name(writer_node.op)) +
                 ") writes the next value over the state it reads, which only an elementwise op "
                 "or one aliasing its input 0 may do; compute it into an intermediate and update "
                 "the state with an Identity of that",
             writer);
    }
    // Nodes that depend on the new value, from its writer on (program order is topological).
    std::vector<char> after(static_cast<size_t>(graph.num_values()), 0);
    for (ValueId v : graph.node(writer).outputs) {
      if (graph.has_value(v)) after[static_cast<size_t>(v.index)] = 1;
    }
    for (int n = writer + 1; n < graph.num_nodes(); ++n) {
      const Node& node = graph.node(n);
      bool depends = false;
      for (ValueId v : node.inputs)
        depends = depends || (graph.has_value(v) && after[static_cast<size_t>(v.index)]);
      if (!depends) continue;
      for (ValueId v : node.outputs) {
        if (graph.has_value(v)) after[static_cast<size_t>(v.index)] = 1;
      }
      if (std::find(node.inputs.begin(), node.inputs.end(), u.state) != node.inputs.end()) {
        report(ErrorCode::VerifyStateUpdate,
               named + ": node '" + node.name + "' (" + std::string(op_name(node.op)) +
                   ") reads the state but depends on its next value '" + next.name +
                   "', so it would read the state after it is overwritten",
               n);
      }
    }
    for (ValueId v : graph.outputs()) {
      if (v == u.state) {
        report(ErrorCode::VerifyStateUpdate,
               named +
                   ": the state is also a graph output, which would be read after the "
                   "update; output its next value instead");
      }
    }
  }
}

std::vector<Diagnostic> verify_graph(const Graph& graph) {
  std::vector<Diagnostic> out;
  const auto report = [&](ErrorCode code, std::string message, int node = -1) {
    out.push_back({code, std::move(message), node});
  };
  const auto ref = [](ValueId v) { return "%" + std::to_string(v.index); };

  std::map<std::string_view, int> first_with_name;
  for (int i = 0; i < graph.num_values(); ++i) {
    const Value& v = graph.value(ValueId{i});
    if (!bounded_numel(v.shape.dims())) {
      report(ErrorCode::VerifyShape, "value %" + std::to_string(i) + " '" + v.name + "' of type " +
                                         type_str(v.type()) +
                                         " has more than 2^48 elements, Volta's limit");
    }
    const auto [first, added] = first_with_name.emplace(v.name, i);
    if (!added) {
      report(ErrorCode::VerifyDuplicateName, "value %" + std::to_string(i) + " reuses the name '" +
                                                 v.name + "' of value %" +
                                                 std::to_string(first->second));
    }
  }

  std::vector<char> defined(static_cast<size_t>(graph.num_values()), 0);
  const std::vector<int> producer = producers(graph);
  for (ValueId v : graph.inputs()) {
    if (graph.has_value(v)) defined[static_cast<size_t>(v.index)] = 1;
  }
  for (ValueId v : graph.states()) {
    if (graph.has_value(v)) defined[static_cast<size_t>(v.index)] = 1;
  }
  for (ValueId v : graph.parameters()) {
    if (!graph.has_value(v)) continue;
    defined[static_cast<size_t>(v.index)] = 1;
    const Tensor& data = graph.parameter_data(v);
    const Value& value = graph.value(v);
    if (data.dtype() != value.dtype || data.shape() != value.shape) {
      report(ErrorCode::VerifyParameter,
             "parameter " + ref(v) + " '" + value.name + "' is declared " + type_str(value.type()) +
                 ", but its data is " + type_str({data.dtype(), data.shape()}));
    }
  }

  for (int n = 0; n < graph.num_nodes(); ++n) {
    const Node& node = graph.node(n);
    bool inputs_ok = true;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId v = node.inputs[i];
      if (!v.valid() || !graph.has_value(v) || defined[static_cast<size_t>(v.index)]) continue;
      inputs_ok = false;
      const int def = producer[static_cast<size_t>(v.index)];
      if (def >= 0) {
        report(ErrorCode::VerifyUseBeforeDef,
               where(node) + ": input " + std::to_string(i) + " reads " + ref(v) + " '" +
                   graph.value(v).name + "' before node " + std::to_string(def) + " '" +
                   graph.node(def).name + "' defines it (reader is node " + std::to_string(n) + ")",
               n);
      } else {
        report(ErrorCode::VerifyUndefinedValue,
               where(node) + ": input " + std::to_string(i) + " reads " + ref(v) + " '" +
                   graph.value(v).name + "', which nothing defines",
               n);
      }
    }
    std::vector<TypeInfo> inferred;
    if (inputs_ok) {
      try {
        inferred = infer_or_throw(graph, node);
      } catch (const NodeError& e) {
        report(e.code, e.message, n);
      }
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      const ValueId v = node.outputs[i];
      if (!graph.has_value(v)) {
        report(ErrorCode::VerifyUndefinedValue,
               where(node) + ": output " + std::to_string(i) + " is " +
                   (v.valid() ? ref(v) + ", but the graph has " + value_count(graph)
                              : std::string("empty")),
               n);
        continue;
      }
      if (defined[static_cast<size_t>(v.index)]) {
        const Value& value = graph.value(v);
        const std::string first =
            value.kind == ValueKind::Input   ? "it is a graph input"
            : value.kind == ValueKind::State ? "it is a state"
            : value.kind == ValueKind::Parameter
                ? "it is a parameter"
                : "node " + std::to_string(producer[static_cast<size_t>(v.index)]) + " '" +
                      graph.node(producer[static_cast<size_t>(v.index)]).name + "' defines it";
        report(ErrorCode::VerifyRedefinedValue,
               where(node) + ": output " + std::to_string(i) + " redefines " + ref(v) + " '" +
                   value.name + "' (" + first + ")",
               n);
        continue;
      }
      defined[static_cast<size_t>(v.index)] = 1;
      if (i < inferred.size() && graph.value(v).type() != inferred[i]) {
        report(ErrorCode::VerifyDeclaredType,
               where(node) + ": output " + std::to_string(i) + " " + ref(v) + " '" +
                   graph.value(v).name + "' is " + type_str(inferred[i]) + " for inputs " +
                   input_types(graph, node) + ", graph declares " + type_str(graph.value(v).type()),
               n);
      }
    }
  }

  if (graph.outputs().empty()) {
    report(ErrorCode::VerifyUndefinedOutput, "the graph has no outputs");
  }
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    const ValueId v = graph.outputs()[i];
    if (!graph.has_value(v)) {
      report(ErrorCode::VerifyUndefinedOutput, "graph output " + std::to_string(i) +
                                                   " refers to value " + ref(v) +
                                                   ", but the graph has " + value_count(graph));
    } else if (!defined[static_cast<size_t>(v.index)]) {
      report(ErrorCode::VerifyUndefinedOutput, "graph output " + std::to_string(i) + " " + ref(v) +
                                                   " '" + graph.value(v).name +
                                                   "' is never defined");
    }
  }
  verify_state_updates(graph, producer, report);
  return out;
}

void verify_graph_or_throw(const Graph& graph) {
  const std::vector<Diagnostic> diags = verify_graph(graph);
  if (diags.empty()) return;
  std::string message = diags.front().message;
  if (diags.size() > 1) message += " (and " + std::to_string(diags.size() - 1) + " more)";
  throw VoltaError(diags.front().code, message);
}

}  // namespace volta
