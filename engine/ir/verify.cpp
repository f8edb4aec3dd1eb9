#include "volta/ir/verify.h"

#include <cmath>
#include <set>

namespace volta {
namespace {

std::string where(const Node& node) {
  return "Node '" + node.name + "' (" + std::string(op_name(node.op)) + ")";
}

std::string type_str(const TypeInfo& t) { return std::string(dtype_name(t.dtype)) + t.shape.str(); }

std::string num(double v) {
  if (v == std::floor(v) && std::abs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
  return std::to_string(v);
}

struct NodeError {
  ErrorCode code;
  std::string message;
};

void check_range(const Node& node, const AttrSpec& spec, double v) {
  if ((spec.min && v < *spec.min) || (spec.max && v > *spec.max)) {
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
      for (const AttrSpec& s : schema.attrs) known += (known.empty() ? "" : ", ") + std::string(s.name);
      throw NodeError{ErrorCode::VerifyUnknownAttribute,
                      where(node) + ": unknown attribute '" + name + "' (supported: " +
                          (known.empty() ? "none" : known) + ")"};
    }
    if (attr_type_of(value) != spec->type) {
      throw NodeError{ErrorCode::VerifyAttributeType,
                      where(node) + ": attribute '" + name + "' is " +
                          std::string(attr_type_name(attr_type_of(value))) + ", expected " +
                          std::string(attr_type_name(spec->type))};
    }
    if (const auto* i = std::get_if<int64_t>(&value)) check_range(node, *spec, static_cast<double>(*i));
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
        throw NodeError{ErrorCode::VerifyAttributeRange,
                        where(node) + ": attribute '" + name + "' is \"" + *s +
                            "\", supported: " + allowed};
      }
    }
  }
  for (const AttrSpec& spec : schema.attrs) {
    if (!spec.default_value && !node.attrs.contains(spec.name)) {
      throw NodeError{ErrorCode::VerifyMissingAttribute,
                      where(node) + ": required attribute '" + std::string(spec.name) +
                          "' is missing"};
    }
  }
}

std::string arity_text(int lo, int hi) {
  if (hi < 0) return "at least " + std::to_string(lo);
  if (lo == hi) return std::to_string(lo);
  return std::to_string(lo) + " to " + std::to_string(hi);
}

std::vector<TypeInfo> infer_or_throw(const Graph& graph, const Node& node) {
  const OpSchema& schema = op_schema(node.op);
  const int n_in = static_cast<int>(node.inputs.size());
  if (n_in < schema.min_inputs() || (schema.max_inputs() >= 0 && n_in > schema.max_inputs())) {
    throw NodeError{ErrorCode::VerifyArity,
                    where(node) + ": takes " + arity_text(schema.min_inputs(), schema.max_inputs()) +
                        " inputs, got " + std::to_string(n_in)};
  }
  const int n_out = static_cast<int>(node.outputs.size());
  if (n_out < std::max(schema.min_outputs(), 1) ||
      (schema.max_outputs() >= 0 && n_out > schema.max_outputs())) {
    throw NodeError{ErrorCode::VerifyOutputArity,
                    where(node) + ": produces " +
                        arity_text(std::max(schema.min_outputs(), 1), schema.max_outputs()) +
                        " outputs, got " + std::to_string(n_out)};
  }
  check_attributes(node, schema);

  std::vector<std::optional<TypeInfo>> inputs(node.inputs.size());
  std::vector<std::pair<char, DType>> bound;  // type parameter bindings, in input order
  for (int i = 0; i < n_in; ++i) {
    const InputSpec& spec = schema.inputs[static_cast<size_t>(std::min(i, static_cast<int>(schema.inputs.size()) - 1))];
    const ValueId id = node.inputs[static_cast<size_t>(i)];
    if (!id.valid()) {
      if (spec.optional) continue;
      throw NodeError{ErrorCode::VerifyMissingInput,
                      where(node) + ": required input " + std::to_string(i) + " '" +
                          std::string(spec.name) + "' is empty"};
    }
    if (!graph.has_value(id)) {
      throw NodeError{ErrorCode::VerifyUndefinedValue,
                      where(node) + ": input " + std::to_string(i) + " refers to value %" +
                          std::to_string(id.index) + ", but the graph has " +
                          std::to_string(graph.num_values()) + " values"};
    }
    const Value& v = graph.value(id);
    const TypeParam* param = schema.find_type_param(spec.type_param);
    if (param && !param->allowed.contains(v.dtype)) {
      throw NodeError{ErrorCode::VerifyDType,
                      where(node) + ": input " + std::to_string(i) + " '" + std::string(spec.name) +
                          "' has dtype " + std::string(dtype_name(v.dtype)) + ", supported: " +
                          param->allowed.str()};
    }
    for (const auto& [p, d] : bound) {
      if (p == spec.type_param && d != v.dtype) {
        throw NodeError{ErrorCode::VerifyDType,
                        where(node) + ": input " + std::to_string(i) + " '" +
                            std::string(spec.name) + "' has dtype " +
                            std::string(dtype_name(v.dtype)) + " but an earlier input of type " +
                            std::string(1, p) + " has " + std::string(dtype_name(d))};
      }
    }
    bound.emplace_back(spec.type_param, v.dtype);
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
                    where(node) + ": declares " + std::to_string(n_out) + " outputs, the op gives " +
                        std::to_string(out.size())};
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

std::vector<Diagnostic> verify_graph(const Graph& graph) {
  std::vector<Diagnostic> out;
  const auto report = [&](ErrorCode code, std::string message, int node = -1) {
    out.push_back({code, std::move(message), node});
  };
  const auto ref = [](ValueId v) { return "%" + std::to_string(v.index); };

  std::set<std::string, std::less<>> names;
  for (int i = 0; i < graph.num_values(); ++i) {
    const Value& v = graph.value(ValueId{i});
    if (!names.insert(v.name).second) {
      report(ErrorCode::VerifyDuplicateName,
             "value %" + std::to_string(i) + " reuses the name '" + v.name + "'");
    }
  }

  std::vector<char> defined(static_cast<size_t>(graph.num_values()), 0);
  const std::vector<int> producer = producers(graph);
  for (ValueId v : graph.inputs()) {
    if (graph.has_value(v)) defined[static_cast<size_t>(v.index)] = 1;
  }
  for (ValueId v : graph.parameters()) {
    if (!graph.has_value(v)) continue;
    defined[static_cast<size_t>(v.index)] = 1;
    const Tensor& data = graph.parameter_data(v);
    const Value& value = graph.value(v);
    if (data.dtype() != value.dtype || data.shape() != value.shape) {
      report(ErrorCode::VerifyParameter,
             "parameter '" + value.name + "' is declared " +
                 type_str(value.type()) + " but its data is " +
                 type_str({data.dtype(), data.shape()}));
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
                   (v.valid() ? ref(v) + ", but the graph has " + std::to_string(graph.num_values()) + " values"
                              : std::string("empty")),
               n);
        continue;
      }
      if (defined[static_cast<size_t>(v.index)]) {
        const Value& value = graph.value(v);
        const std::string first =
            value.kind == ValueKind::Input       ? "it is a graph input"
            : value.kind == ValueKind::Parameter ? "it is a parameter"
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
               where(node) + ": output " + std::to_string(i) + " " + ref(v) + " is declared " +
                   type_str(graph.value(v).type()) + ", the op gives " + type_str(inferred[i]),
               n);
      }
    }
  }

  if (graph.outputs().empty()) {
    report(ErrorCode::VerifyUndefinedOutput, "the graph has no outputs");
  }
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    const ValueId v = graph.outputs()[i];
    if (!graph.has_value(v) || !defined[static_cast<size_t>(v.index)]) {
      report(ErrorCode::VerifyUndefinedOutput,
             "graph output " + std::to_string(i) + " (" + ref(v) + ") is never defined");
    }
  }
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
