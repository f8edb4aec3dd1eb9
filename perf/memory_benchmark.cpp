// The machine's memory bandwidth, measured the way STREAM does, so that a report can show it
// next to the memory-bound kernels of kernel_benchmark.cpp: copy (b = a) and triad
// (a = b + s * c) over plain float arrays, from L2-resident sizes to DRAM. GB/s counts the
// bytes the loop reads and writes (copy 2, triad 3 per element), as STREAM does; the
// write-allocate reads the hardware may add are not counted, as for the kernels.
//
// Threads split the arrays into the same fixed chunks the CPU kernels use, through the same
// ThreadPool, so the reference pays the same scheduling costs as the kernels it is set next to.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "perf_support.h"
#include "volta/backends/cpu/thread_pool.h"

namespace volta::perf {
namespace {

// Elements per task: the CPU backend's elementwise chunk (kElementwiseChunk).
constexpr int64_t kChunk = 16384;

// Arrays are initialised in parallel chunks too, so first-touch places their pages where the
// timed loop runs.
std::vector<float> filled_array(int64_t n, float value, ThreadPool& pool) {
  std::vector<float> v(static_cast<size_t>(n));
  pool.parallel_chunks(n, kChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) v[static_cast<size_t>(i)] = value;
  });
  return v;
}

void stream_copy(benchmark::State& state) {
  const int64_t n = state.range(0);
  const int threads = static_cast<int>(state.range(1));
  ThreadPool pool(threads);
  const std::vector<float> a = filled_array(n, 1.0f, pool);
  std::vector<float> b = filled_array(n, 0.0f, pool);
  const float* src = a.data();
  float* dst = b.data();
  for (auto _ : state) {
    pool.parallel_chunks(n, kChunk, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) dst[i] = src[i];
    });
    benchmark::DoNotOptimize(dst);
    benchmark::ClobberMemory();
  }
  record_bytes(state, 2.0 * 4.0 * static_cast<double>(n));
  record_variant(state, "f32_stream_copy", threads);
}

void stream_triad(benchmark::State& state) {
  const int64_t n = state.range(0);
  const int threads = static_cast<int>(state.range(1));
  ThreadPool pool(threads);
  std::vector<float> a = filled_array(n, 0.0f, pool);
  const std::vector<float> b = filled_array(n, 1.0f, pool);
  const std::vector<float> c = filled_array(n, 2.0f, pool);
  float* out = a.data();
  const float* x = b.data();
  const float* y = c.data();
  const float scale = 3.0f;
  for (auto _ : state) {
    pool.parallel_chunks(n, kChunk, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = x[i] + scale * y[i];
    });
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
  record_bytes(state, 3.0 * 4.0 * static_cast<double>(n));
  record_variant(state, "f32_stream_triad", threads);
}

// 64 Ki floats (256 KiB per array: L2), 1 Mi (4 MiB: L3), 16 Mi (64 MiB: DRAM).
BENCHMARK(stream_copy)
    ->ArgNames({"elements", "threads"})
    ->ArgsProduct({{1 << 16, 1 << 20, 1 << 24}, {1, 2}})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(stream_triad)
    ->ArgNames({"elements", "threads"})
    ->ArgsProduct({{1 << 16, 1 << 20, 1 << 24}, {1, 2}})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace volta::perf
