#pragma once
// What every Volta benchmark shares: random inputs, and the conventions `volta-audit perf`
// reads back from each sample. A benchmark names its kernel variant (ISA and tile, or the
// plan's variants) as its label and its thread count as the "threads" counter; throughput
// counters are "GFLOP/s" and "GB/s" (rates over wall time) and "peak_bytes" (a plan's peak
// arena). Any other counter is kept as context on the sample.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "volta/ir/tensor.h"
#include "volta/model/builtin_models.h"
#include "volta/plan/execution_plan.h"
#include "volta/runtime/backend.h"

namespace volta::perf {

inline constexpr const char* kGflopsCounter = "GFLOP/s";
inline constexpr const char* kGbytesCounter = "GB/s";
inline constexpr const char* kPeakBytesCounter = "peak_bytes";
inline constexpr const char* kThreadsCounter = "threads";

// Uniform in [-1, 1) (f32 or f64), or [0, 64) for integer dtypes, from `seed`: the same
// inputs on every run.
Tensor random_tensor(DType dtype, const Shape& shape, uint32_t seed);

// The CPU backend the plan benchmarks compile for and run on, made once.
const Backend& cpu_backend();

// Registers the benchmark at 1 and 2 threads, its one argument "threads", timed on the wall
// clock: `->Apply(at_one_and_two_threads)`.
void at_one_and_two_threads(benchmark::internal::Benchmark* benchmark);

// Records the variant (label) and thread count (counter) of the sample.
void record_variant(benchmark::State& state, std::string_view variant, int threads);
// A plan's sample: its arena as peak_bytes, its kernel variants as the variant, and `threads`.
void record_plan(benchmark::State& state, const ExecutionPlan& plan, int threads);
// Throughput counters: `flops` or `bytes` done by one iteration.
void record_flops(benchmark::State& state, double flops);
void record_bytes(benchmark::State& state, double bytes);
void record_peak_bytes(benchmark::State& state, int64_t bytes);

// The GEMM flops of one forward of a built-in transformer block: Q, K, V and output
// projections, scores and context, the two MLP layers (elementwise work is not counted).
double transformer_block_flops(const TransformerBlockConfig& c);

// Options of the volta-perf binary, parsed before Google Benchmark's own flags.
struct Options {
  std::filesystem::path onnx_data;  // --volta_onnx_data=DIR; empty: the installed test data
  // Google Benchmark's --benchmark_filter (empty: all), so registrars whose setup is costly
  // can skip benchmarks it excludes.
  std::string benchmark_filter = {};
};

// Benchmarks that need the options (e.g. one per ONNX model) register themselves at startup
// through a registrar: `static const bool kRegistered = add_registrar(fn);`.
using Registrar = std::function<void(const Options&)>;
bool add_registrar(Registrar registrar);

}  // namespace volta::perf
