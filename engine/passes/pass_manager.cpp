#include "volta/passes/pass_manager.h"

#include "volta/ir/printer.h"
#include "volta/ir/verify.h"

namespace volta {

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
