#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "commands.h"
#include "volta/ir/printer.h"
#include "volta/model/builtin_models.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta::cli {

namespace {

std::string model_names() {
  std::string names;
  for (const BuiltInModel& m : built_in_models()) {
    names += (names.empty() ? "" : ", ") + std::string(m.name);
  }
  return names;
}

}  // namespace

// A built-in model (engine/model): its graph and its CPU plan, with the plan's peak bytes.
int info(std::span<const std::string_view> args) {
  DeterminismMode mode = DeterminismMode::Strict;
  std::string_view model_name = "transformer-block";
  std::optional<int64_t> batch;
  for (size_t i = 0; i < args.size(); ++i) {
    const bool has_value = i + 1 < args.size();
    if (args[i] == "--mode" && has_value) {
      const auto parsed = parse_determinism_mode(args[++i]);
      if (!parsed) {
        std::fprintf(stderr, "volta info: unknown mode '%s' (supported: strict, relaxed)\n",
                     std::string(args[i]).c_str());
        return 2;
      }
      mode = *parsed;
    } else if (args[i] == "--model" && has_value) {
      model_name = args[++i];
    } else if (args[i] == "--batch" && has_value) {
      const std::string text(args[++i]);
      char* end = nullptr;
      const long long value = std::strtoll(text.c_str(), &end, 10);
      if (end == text.c_str() || *end != '\0' || value < 1) {
        std::fprintf(stderr, "volta info: --batch needs a positive integer, got '%s'\n",
                     text.c_str());
        return 2;
      }
      batch = value;
    } else {
      std::fprintf(stderr,
                   "volta info: unknown option '%s' (supported: --model NAME, --batch N, "
                   "--mode strict|relaxed)\n",
                   std::string(args[i]).c_str());
      return 2;
    }
  }
  const BuiltInModel* model = find_built_in_model(model_name);
  if (model == nullptr) {
    std::fprintf(stderr, "volta info: no built-in model '%s' (built in: %s)\n",
                 std::string(model_name).c_str(), model_names().c_str());
    return 2;
  }
  const int64_t samples = batch.value_or(model->default_batch);
  const Graph graph = model->graph(samples);
  std::printf("graph: built-in model %s (batch=%lld)\n", std::string(model->name).c_str(),
              static_cast<long long>(samples));
  std::printf("nodes=%d values=%d parameters=%zu ir_hash=%s\n\n%s\n", graph.num_nodes(),
              graph.num_values(), graph.parameters().size(), hash_hex(ir_hash(graph)).c_str(),
              to_text(graph).c_str());
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  const ExecutionPlan plan = compile(graph, *cpu, mode);
  std::fputs(describe_plan(plan).c_str(), stdout);
  return 0;
}

}  // namespace volta::cli
