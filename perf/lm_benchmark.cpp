// The tiny transformer language model of issue #17 (volta/model/transformer_lm.h, the
// reference config kTinyTransformer: vocab 256, d_model 64, 2 layers, 4 heads, FFN 256,
// sequence 32, batch 16) as `volta train` and `volta generate` run it:
//
// - lm/train_step: one step of LanguageModelTrainer with `volta train`'s defaults (AdamW 3e-3,
//   warm-up then cosine, weight decay 0.01, clip 1) on GPL-3's bytes, each iteration reading
//   the next batch of sequential windows (batch construction included, as in the CLI);
// - lm/infer: one forward of LanguageModel (the inference plan, weights frozen), batch 16.
//
// perf/peers/lm_peer.py mirrors both in PyTorch and lm/infer in ONNX Runtime (the model
// `volta export` writes) under the same names, so the perf report shows Volta's ratio to each.
//
// Counters: tokens/s (batch x seq per iteration); GFLOP/s counts the GEMMs only (per token and
// layer 2 (4 d^2 + 2 d d_ff) for the projections and MLP, 2 * 2 seq d for scores and context,
// and 2 d V for the head), training three times the forward; peak_bytes is the plan's arena.

#include <benchmark/benchmark.h>

#include <exception>
#include <optional>
#include <vector>

#include "perf_support.h"
#include "volta/model/language_model.h"
#include "volta/model/transformer_lm.h"
#include "volta/train/language_model_training.h"
#include "volta/train/token_data.h"

namespace volta::perf {
namespace {

// The text every Debian machine has, the data of `volta train`'s demo and of the peer lanes.
constexpr const char* kLmData = "/usr/share/common-licenses/GPL-3";
constexpr const char* kTokensCounter = "tokens/s";
// default_run's schedule spans this many steps; past them the rate stays at its floor, so a
// benchmark running longer times the same step.
constexpr int64_t kScheduleSteps = 1000;

double lm_forward_flops(const model::TransformerConfig& c) {
  const TransformerBlockConfig block{
      .batch = c.batch, .seq = c.seq, .d_model = c.d_model, .heads = c.heads, .d_ff = c.d_ff};
  const auto tokens = static_cast<double>(c.batch * c.seq);
  return static_cast<double>(c.layers) * transformer_block_flops(block) +
         2.0 * tokens * static_cast<double>(c.d_model * c.vocab);
}

// The data's bytes, or nothing with the benchmark marked as errored (volta-perf writes an error
// line for it; the perf gate never reads a missing file as a fast benchmark).
std::optional<std::vector<uint8_t>> lm_data(benchmark::State& state) {
  try {
    return train::read_token_file(kLmData);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return std::nullopt;
  }
}

void record_lm_counters(benchmark::State& state, const model::TransformerConfig& c,
                        double flops_per_iteration, const ExecutionPlan& plan, int threads) {
  record_flops(state, flops_per_iteration);
  state.counters[kTokensCounter] = benchmark::Counter(
      static_cast<double>(c.batch * c.seq), benchmark::Counter::kIsIterationInvariantRate);
  record_plan(state, plan, threads);
}

void lm_train_step(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  std::optional<std::vector<uint8_t>> data = lm_data(state);
  if (!data) return;
  const train::LanguageModelRun run = train::default_run(kScheduleSteps);
  train::LanguageModelTrainer trainer(run, std::move(*data), threads, cpu_backend());
  for (auto _ : state) {
    const train::StepRecord record = trainer.step();
    benchmark::DoNotOptimize(record.loss);
  }
  record_lm_counters(state, run.model, 3 * lm_forward_flops(run.model), trainer.plan(), threads);
}
BENCHMARK(lm_train_step)
    ->Name("lm/train_step")
    ->Apply(at_one_and_two_threads)
    ->Unit(benchmark::kMillisecond);

void lm_infer(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const std::optional<std::vector<uint8_t>> data = lm_data(state);
  if (!data) return;
  const model::TrainedModel trained{
      .config = model::kTinyTransformer,
      .parameters = model::initial_parameters(model::kTinyTransformer)};
  const model::TransformerConfig& c = trained.config;
  model::LanguageModel lm(trained, c.batch, threads, cpu_backend());
  // The first batch of the training order: what the peers feed too (timing does not depend on
  // which bytes they are).
  const train::TokenBatch batch = train::make_batch(*data, train::default_run(kScheduleSteps).order,
                                                    c.batch, c.seq, c.vocab, 0);
  for (auto _ : state) {
    Tensor logits = lm.logits(batch.tokens);
    benchmark::DoNotOptimize(logits.data_as<float>());
  }
  record_lm_counters(state, c, lm_forward_flops(c), lm.plan(), threads);
}
BENCHMARK(lm_infer)->Name("lm/infer")->Apply(at_one_and_two_threads)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace volta::perf
