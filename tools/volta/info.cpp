#include <cstdio>

#include "commands.h"
#include "volta/ir/printer.h"
#include "volta/model/builtin_models.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta::cli {

int info(std::span<const std::string_view> args) {
  DeterminismMode mode = DeterminismMode::Strict;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--mode" && i + 1 < args.size()) {
      const auto parsed = parse_determinism_mode(args[++i]);
      if (!parsed) {
        std::fprintf(stderr, "volta info: unknown mode '%s' (supported: strict, relaxed)\n",
                     std::string(args[i]).c_str());
        return 2;
      }
      mode = *parsed;
    } else {
      std::fprintf(stderr, "volta info: unknown option '%s' (supported: --mode strict|relaxed)\n",
                   std::string(args[i]).c_str());
      return 2;
    }
  }
  // Until ONNX import lands, `info` describes the built-in transformer block.
  const TransformerBlockConfig config;
  const Graph graph = transformer_block_graph(config);
  std::printf(
      "graph: built-in transformer block (batch=%lld seq=%lld d_model=%lld heads=%lld d_ff=%lld)\n",
      static_cast<long long>(config.batch), static_cast<long long>(config.seq),
      static_cast<long long>(config.d_model), static_cast<long long>(config.heads),
      static_cast<long long>(config.d_ff));
  std::printf("nodes=%d values=%d parameters=%zu ir_hash=%s\n\n%s\n", graph.num_nodes(),
              graph.num_values(), graph.parameters().size(), hash_hex(ir_hash(graph)).c_str(),
              to_text(graph).c_str());
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  const ExecutionPlan plan = compile(graph, *cpu, mode);
  std::fputs(describe_plan(plan).c_str(), stdout);
  return 0;
}

}  // namespace volta::cli
