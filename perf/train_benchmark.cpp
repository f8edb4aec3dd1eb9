// One training step of the built-in transformer block (volta/model/builtin_models.h,
// transformer_block_regression at kTransformerBlock): forward, backward and an AdamW step with
// clipping, one execute of one plan (volta/train/training_session.h). Its forward alone, the
// same graph without backward and optimizer, runs beside it so the step's cost reads as a ratio
// taken in one run.
//
// Counters: GFLOP/s counts the forward GEMMs' multiply-adds times three (forward, and the two
// products of each GEMM's backward); peak_bytes is the plan's arena.

#include <benchmark/benchmark.h>

#include <memory>
#include <utility>
#include <vector>

#include "perf_support.h"
#include "volta/model/builtin_models.h"
#include "volta/runtime/runtime.h"
#include "volta/train/training_session.h"

namespace volta::perf {
namespace {

TransformerBlockConfig config() {
  TransformerBlockConfig c = kTransformerBlock;
  c.batch = 2;
  return c;
}

const train::TrainingOptions kAdamW{.optimizer = {.kind = train::OptimizerConfig::Kind::AdamW,
                                                  .schedule = {.base_lr = 1e-3},
                                                  .weight_decay = 0.01,
                                                  .clip_norm = 1.0}};

void training_step(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const TrainingProblem p = transformer_block_regression(config());
  train::TrainingOptions options = kAdamW;
  options.threads = threads;
  train::TrainingSession session(p.forward, p.loss, p.initial_states, options, cpu_backend(),
                                 DeterminismMode::Strict);
  for (auto _ : state) {
    double loss = session.step(p.batch);
    benchmark::DoNotOptimize(loss);
  }
  record_flops(state, 3 * transformer_block_flops(config()));
  record_plan(state, session.plan(), threads);
}
BENCHMARK(training_step)
    ->Name("train/transformer_block_s16_d64/step")
    ->Apply(at_one_and_two_threads)
    ->Unit(benchmark::kMicrosecond);

// The same forward and loss, parameters as states, without backward or optimizer.
void forward_only(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const TrainingProblem p = transformer_block_regression(config());
  const ExecutionPlan plan = compile(p.forward, cpu_backend(), DeterminismMode::Strict);
  const std::unique_ptr<ExecutionContext> ctx = cpu_backend().make_context({.threads = threads});
  std::vector<Tensor> states = p.initial_states;
  std::vector<Tensor*> bindings;
  bindings.reserve(states.size());
  for (Tensor& t : states) bindings.push_back(&t);
  for (auto _ : state) {
    std::vector<Tensor> outputs = execute(plan, cpu_backend(), *ctx, p.batch, bindings);
    benchmark::DoNotOptimize(outputs.data());
  }
  record_flops(state, transformer_block_flops(config()));
  record_plan(state, plan, threads);
}
BENCHMARK(forward_only)
    ->Name("train/transformer_block_s16_d64/forward")
    ->Apply(at_one_and_two_threads)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace volta::perf
