#include "volta/reference/reference.h"

#include <iterator>
#include <stdexcept>
#include <string>

#include "ref_ops.h"
#include "volta/ir/verify.h"

namespace volta::reference {
namespace {

// Each family file registers the kernels of its family's ops and no other.
struct FamilyFile {
  OpFamily family;
  void (*add)(RefTable& table);
};
constexpr FamilyFile kFamilyFiles[] = {
    {OpFamily::Elementwise, register_elementwise},
    {OpFamily::Activation, register_activation},
    {OpFamily::Logical, register_logical},
    {OpFamily::Linalg, register_linalg},
    {OpFamily::Normalization, register_normalization},
    {OpFamily::Reduction, register_reduction},
    {OpFamily::Movement, register_movement},
    {OpFamily::Convolution, register_convolution},
    {OpFamily::Pooling, register_pooling},
    {OpFamily::Indexing, register_indexing},
    {OpFamily::Loss, register_loss},
    {OpFamily::Resampling, register_resampling},
};
static_assert(std::size(kFamilyFiles) == kOpFamilyCount, "one reference file per family");

const RefTable& table() {
  static const RefTable kTable = [] {
    RefTable t{};
    for (const FamilyFile& file : kFamilyFiles) {
      RefTable part{};
      file.add(part);
      for (int i = 0; i < kOpCount; ++i) {
        if (part[static_cast<size_t>(i)] == nullptr) continue;
        const OpSchema& schema = op_schema(static_cast<OpKind>(i));
        if (schema.family != file.family || t[static_cast<size_t>(i)] != nullptr) {
          throw std::logic_error("reference: the " + std::string(schema.name) +
                                 " kernel is registered twice or in ops/" +
                                 std::string(op_family_name(file.family)) + ".cpp (its family is " +
                                 std::string(op_family_name(schema.family)) + ")");
        }
        t[static_cast<size_t>(i)] = part[static_cast<size_t>(i)];
      }
    }
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
