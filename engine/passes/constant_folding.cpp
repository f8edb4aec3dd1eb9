#include <map>
#include <set>

#include "volta/passes/pass_manager.h"

namespace volta {
namespace {

class ConstantFolding final : public Pass {
 public:
  ConstantFolding(ConstantEvaluator evaluate, int64_t max_elements)
      : evaluate_(std::move(evaluate)), max_elements_(max_elements) {}

  std::string_view name() const override { return "constant-folding"; }

  bool run(Graph& graph) override {
    std::set<int32_t> constant;
    for (ValueId v : graph.parameters()) constant.insert(v.index);
    // A state's next value is written into the state every run: never a constant, whatever
    // it is computed from. (States themselves are never constants: they are not parameters.)
    std::set<int32_t> updates;
    for (const StateUpdate& u : graph.state_updates()) updates.insert(u.value.index);
    std::vector<Node> kept;
    bool changed = false;
    for (const Node& node : graph.nodes()) {
      if (!foldable(graph, node, constant, updates)) {
        kept.push_back(node);
        continue;
      }
      std::vector<Tensor> values = evaluate_(single_node_graph(graph, node));
      for (size_t i = 0; i < node.outputs.size(); ++i) {
        graph.make_parameter(node.outputs[i], std::move(values[i]));
        constant.insert(node.outputs[i].index);
      }
      changed = true;
    }
    if (changed) graph.mutable_nodes() = std::move(kept);
    return changed;
  }

 private:
  bool foldable(const Graph& graph, const Node& node, const std::set<int32_t>& constant,
                const std::set<int32_t>& updates) const {
    for (ValueId v : node.inputs) {
      if (v.valid() && !constant.contains(v.index)) return false;
    }
    for (ValueId v : node.outputs) {
      if (graph.value(v).shape.numel() > max_elements_ || updates.contains(v.index)) return false;
    }
    return true;
  }

  // The node alone, its inputs as parameters: what the evaluator runs.
  static Graph single_node_graph(const Graph& graph, const Node& node) {
    Graph g;
    Node copy = node;
    std::map<int32_t, ValueId> params;  // Mul(w, w) reads one parameter twice
    for (ValueId& v : copy.inputs) {
      if (!v.valid()) continue;
      auto [it, added] = params.try_emplace(v.index);
      if (added) it->second = g.add_parameter(graph.value(v).name, graph.parameter_data(v));
      v = it->second;
    }
    for (ValueId& v : copy.outputs) {
      const Value& value = graph.value(v);
      v = g.add_value(value.name, value.dtype, value.shape);
    }
    g.set_outputs(copy.outputs);
    g.append_node(std::move(copy));
    return g;
  }

  ConstantEvaluator evaluate_;
  int64_t max_elements_;
};

}  // namespace

std::unique_ptr<Pass> make_constant_folding(ConstantEvaluator evaluate,
                                            int64_t max_folded_elements) {
  return std::make_unique<ConstantFolding>(std::move(evaluate), max_folded_elements);
}

}  // namespace volta
