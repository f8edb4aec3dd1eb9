#include "volta/passes/pass_manager.h"

#include <algorithm>
#include <optional>

#include "volta/ir/printer.h"
#include "volta/ir/verify.h"

namespace volta {

void apply_fusions(Graph& graph, std::vector<Fusion> fusions) {
  std::vector<std::optional<Node>> fused_at(static_cast<size_t>(graph.num_nodes()));
  std::vector<char> replaced(static_cast<size_t>(graph.num_nodes()), 0);
  for (Fusion& f : fusions) {
    for (int i : f.replaced) replaced[static_cast<size_t>(i)] = 1;
    const int last = *std::max_element(f.replaced.begin(), f.replaced.end());
    fused_at[static_cast<size_t>(last)] = std::move(f.fused);
  }
  std::vector<Node> nodes;
  for (int i = 0; i < graph.num_nodes(); ++i) {
    if (fused_at[static_cast<size_t>(i)]) {
      nodes.push_back(std::move(*fused_at[static_cast<size_t>(i)]));
    } else if (replaced[static_cast<size_t>(i)] == 0) {
      nodes.push_back(graph.node(i));
    }
  }
  graph.mutable_nodes() = std::move(nodes);
  graph.compact();  // drops the values the fused nodes hide
}

std::vector<std::string> PassManager::pass_names() const {
  std::vector<std::string> names;
  for (const auto& p : passes_) names.emplace_back(p->name());
  return names;
}

std::vector<PassRecord> PassManager::run(Graph& graph) const {
  std::vector<PassRecord> records;
  std::string pipeline;
  for (const auto& pass : passes_) {
    pipeline += (pipeline.empty() ? "" : ",") + std::string(pass->name());
    const std::string before = to_text(graph);
    const bool changed = pass->run(graph);
    const std::vector<Diagnostic> diags = verify_graph(graph);
    if (!diags.empty()) {
      // A reproducer: the pipeline up to the failing pass and the IR it was given.
      std::string message = "pass '" + std::string(pass->name()) + "' left the IR invalid: [";
      message += error_code_name(diags.front().code);
      message += "] " + diags.front().message;
      message += "\n--- reproducer: passes " + pipeline + " on ---\n";
      message += before;
      fail(ErrorCode::PassFailed, message);
    }
    records.push_back({std::string(pass->name()), changed, graph.num_nodes(), ir_hash(graph)});
  }
  return records;
}

}  // namespace volta
