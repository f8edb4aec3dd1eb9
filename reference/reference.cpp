#include "volta/reference/reference.h"

#include "ref_ops.h"
#include "volta/ir/verify.h"

namespace volta::reference {
namespace {

const RefTable& table() {
  static const RefTable kTable = [] {
    RefTable t{};
    register_elementwise(t);
    register_linalg(t);
    register_normalization(t);
    register_reduction(t);
    register_movement(t);
    register_math(t);
    register_spatial(t);
    register_loss(t);
    register_indexing(t);
    register_resize(t);
    return t;
  }();
  return kTable;
}

}  // namespace

RefKernel reference_kernel(OpKind op) { return table()[static_cast<size_t>(op_index(op))]; }

std::vector<Tensor> evaluate(const Graph& graph, std::span<const Tensor> inputs,
                             std::span<Tensor* const> states) {
  verify_graph_or_throw(graph);
  check_graph_inputs(graph, inputs);
  check_graph_states(graph, states);
  std::vector<std::optional<Tensor>> values(static_cast<size_t>(graph.num_values()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    values[static_cast<size_t>(graph.inputs()[i].index)] = inputs[i];
  }
  for (ValueId p : graph.parameters()) {
    values[static_cast<size_t>(p.index)] = graph.parameter_data(p);
  }
  for (size_t i = 0; i < states.size(); ++i) {
    values[static_cast<size_t>(graph.states()[i].index)] = *states[i];
  }
  // Nodes are in program order (the verifier checked), which is a topological order.
  for (const Node& node : graph.nodes()) {
    const RefKernel kernel = reference_kernel(node.op);
    if (kernel == nullptr) {
      fail(ErrorCode::MissingKernel, "node '" + node.name + "' (" + std::string(op_name(node.op)) +
                                         ") has no reference kernel");
    }
    std::vector<const Tensor*> args;
    for (ValueId v : node.inputs) {
      args.push_back(v.valid() ? &*values[static_cast<size_t>(v.index)] : nullptr);
    }
    std::vector<TypeInfo> types;
    for (ValueId v : node.outputs) types.push_back(graph.value(v).type());
    std::vector<Tensor> results;
    try {
      results = kernel(node, args, types);
    } catch (const VoltaError& e) {
      fail(e.code(), "reference: node '" + node.name + "' (" + std::string(op_name(node.op)) +
                         "): " + e.message());
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      values[static_cast<size_t>(node.outputs[i].index)] = std::move(results.at(i));
    }
  }
  std::vector<Tensor> out;
  for (ValueId v : graph.outputs()) out.push_back(*values[static_cast<size_t>(v.index)]);
  const std::vector<ValueId> next = state_update_values(graph);
  for (size_t i = 0; i < states.size(); ++i) {
    if (next[i].valid()) *states[i] = std::move(*values[static_cast<size_t>(next[i].index)]);
  }
  return out;
}

}  // namespace volta::reference
