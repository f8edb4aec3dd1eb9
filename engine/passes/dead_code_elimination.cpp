#include "volta/passes/pass_manager.h"

namespace volta {
namespace {

class DeadCodeElimination final : public Pass {
 public:
  std::string_view name() const override { return "dead-code-elimination"; }

  bool run(Graph& graph) override {
    const std::vector<int> producer = producers(graph);
    std::vector<char> live_node(static_cast<size_t>(graph.num_nodes()), 0);
    std::vector<ValueId> work(graph.outputs().begin(), graph.outputs().end());
    for (const StateUpdate& u : graph.state_updates()) work.push_back(u.value);
    // Walk back from the outputs and the states' next values; every node reached is live.
    while (!work.empty()) {
      const ValueId v = work.back();
      work.pop_back();
      if (!graph.has_value(v)) continue;
      const int p = producer[static_cast<size_t>(v.index)];
      if (p < 0 || live_node[static_cast<size_t>(p)]) continue;
      live_node[static_cast<size_t>(p)] = 1;
      for (ValueId in : graph.node(p).inputs) work.push_back(in);
    }
    std::vector<Node> kept;
    for (int i = 0; i < graph.num_nodes(); ++i) {
      if (live_node[static_cast<size_t>(i)]) kept.push_back(graph.node(i));
    }
    const int before_values = graph.num_values();
    const bool removed_nodes = static_cast<int>(kept.size()) != graph.num_nodes();
    graph.mutable_nodes() = std::move(kept);
    graph.compact();
    return removed_nodes || graph.num_values() != before_values;
  }
};

}  // namespace

std::unique_ptr<Pass> make_dead_code_elimination() {
  return std::make_unique<DeadCodeElimination>();
}

}  // namespace volta
