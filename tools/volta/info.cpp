#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "commands.h"
#include "volta/ir/printer.h"
#include "volta/model/builtin_models.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"
#include "volta/train/training_session.h"

namespace volta::cli {

namespace {

std::string model_names() {
  std::string names;
  for (const BuiltInModel& m : built_in_models()) {
    names += (names.empty() ? "" : ", ") + std::string(m.name);
  }
  return names;
}

// The training step a TrainingSession compiles for the transformer block as a regression
// (transformer_block_regression; AdamW with clipping): its plan and peak bytes, which hold the
// activations the backward reads for as long as it reads them.
int info_training_step(const BuiltInModel& model, int64_t batch, DeterminismMode mode) {
  TransformerBlockConfig config;
  if (model.name == "transformer-block") {
    config = kTransformerBlock;
  } else if (model.name == "transformer-block-large") {
    config = kTransformerBlockLarge;
  } else {
    std::fprintf(stderr,
                 "volta info: --train supports the models transformer-block and "
                 "transformer-block-large, not '%s'\n",
                 std::string(model.name).c_str());
    return 2;
  }
  config.batch = batch;
  const TrainingProblem problem = transformer_block_regression(config);
  const train::OptimizerConfig adamw{
      .kind = train::OptimizerConfig::Kind::AdamW, .weight_decay = 0.01, .clip_norm = 1.0};
  const train::TrainingStepGraph step =
      train::build_training_step(problem.forward, problem.loss, adamw);
  std::printf(
      "training step: built-in model %s (batch=%lld) as a regression, AdamW with clipping\n"
      "forward nodes=%d, step nodes=%d, trainable states=%zu, states=%zu ir_hash=%s\n\n",
      std::string(model.name).c_str(), static_cast<long long>(batch), problem.forward.num_nodes(),
      step.graph.num_nodes(), step.parameters.size(), step.graph.states().size(),
      hash_hex(ir_hash(step.graph)).c_str());
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  const ExecutionPlan plan = compile(step.graph, *cpu, mode);
  std::fputs(describe_plan(plan).c_str(), stdout);
  return 0;
}

}  // namespace

// A built-in model (engine/model): its graph and its CPU plan, with the plan's peak bytes.
int info(std::span<const std::string_view> args) {
  DeterminismMode mode = DeterminismMode::Strict;
  std::string_view model_name = "transformer-block";
  std::optional<int64_t> batch;
  bool train = false;
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
    } else if (args[i] == "--train") {
      train = true;
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
                   "--mode strict|relaxed, --train)\n",
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
  if (train) return info_training_step(*model, samples, mode);
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
