// The machine's attainable f32 FMA rate, so that a report can show it next to the GEMM figures
// of gemm_benchmark.cpp: independent chains of AVX-512 (or AVX2) fused multiply-adds on
// registers, no memory traffic. The "peak" (cores x clock x 2 FMA ports x 16 lanes x 2)
// assumes the nominal boost clock; this loop runs at the clock the core actually holds under
// a sustained FMA load, which is what a GEMM micro-kernel can reach at best.
//
// Threads run the same loop on a fixed share of the iterations each (ThreadPool chunks), like
// the multithreaded GEMM.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "perf_support.h"
#include "volta/backends/cpu/thread_pool.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace volta::perf {
namespace {

constexpr int64_t kStepsPerChunk = 1 << 16;  // rounds of FMAs (one per chain) per task

#if defined(__x86_64__)
// Independent accumulators: enough to cover the FMA latency on both FMA pipes (4 cycles x 2),
// and few enough to stay in registers (32 zmm with AVX-512, 16 ymm with AVX2).
constexpr int kAvx512Chains = 24;
constexpr int kAvx2Chains = 12;

// `steps` rounds of independent FMAs on vectors; returns a lane of their sum so nothing is
// elided. One function per ISA: the intrinsics need the target on the function. The chain
// loop is unrolled (the pragma): rolled, GCC keeps the accumulators in memory.
__attribute__((target("avx512f"))) float avx512_chains(int64_t steps) {
  __m512 acc[kAvx512Chains];
  for (int c = 0; c < kAvx512Chains; ++c) {
    acc[c] = _mm512_set1_ps(1.0f + 1e-3f * static_cast<float>(c));
  }
  const __m512 a = _mm512_set1_ps(0.999999f);
  const __m512 b = _mm512_set1_ps(1e-7f);
  for (int64_t s = 0; s < steps; ++s) {
#pragma GCC unroll 24
    for (int c = 0; c < kAvx512Chains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], a, b);
  }
  for (int c = 1; c < kAvx512Chains; ++c) acc[0] = _mm512_add_ps(acc[0], acc[c]);
  return _mm512_cvtss_f32(acc[0]);
}
__attribute__((target("avx2,fma"))) float avx2_chains(int64_t steps) {
  __m256 acc[kAvx2Chains];
  for (int c = 0; c < kAvx2Chains; ++c) {
    acc[c] = _mm256_set1_ps(1.0f + 1e-3f * static_cast<float>(c));
  }
  const __m256 a = _mm256_set1_ps(0.999999f);
  const __m256 b = _mm256_set1_ps(1e-7f);
  for (int64_t s = 0; s < steps; ++s) {
#pragma GCC unroll 12
    for (int c = 0; c < kAvx2Chains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], a, b);
  }
  for (int c = 1; c < kAvx2Chains; ++c) acc[0] = _mm256_add_ps(acc[0], acc[c]);
  return _mm256_cvtss_f32(acc[0]);
}

// flops_per_step: 2 x chains x lanes.
void f32_fma_peak(benchmark::State& state, double flops_per_step, float (*chains)(int64_t),
                  const std::string& variant) {
  const int threads = static_cast<int>(state.range(0));
  const int64_t chunks = 8 * threads;  // a fixed share per thread, as in parallel_chunks
  ThreadPool pool(threads);
  for (auto _ : state) {
    pool.parallel_chunks(chunks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) benchmark::DoNotOptimize(chains(kStepsPerChunk));
    });
  }
  record_flops(state, flops_per_step * static_cast<double>(kStepsPerChunk * chunks));
  record_variant(state, variant, threads);
}

void register_peak(const std::string& isa, double flops_per_step, float (*chains)(int64_t),
                   const std::string& variant) {
  benchmark::RegisterBenchmark(
      ("peak/f32_fma/" + isa).c_str(),
      [=](benchmark::State& state) { f32_fma_peak(state, flops_per_step, chains, variant); })
      ->Apply(at_one_and_two_threads)
      ->Unit(benchmark::kMillisecond);
}

// Only the ISAs this CPU has: a benchmark the machine cannot run is not a benchmark of it, so
// it is neither listed nor judged (an error would leave the perf gate NOT VERIFIED forever on
// an AVX2-only CPU).
const bool kRegistered = add_registrar([](const Options& /*options*/) {
  if (__builtin_cpu_supports("avx512f") != 0) {
    register_peak("avx512", 2.0 * kAvx512Chains * 16, &avx512_chains, "f32_fma_avx512_24chains");
  }
  if (__builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0) {
    register_peak("avx2fma", 2.0 * kAvx2Chains * 8, &avx2_chains, "f32_fma_avx2_12chains");
  }
});
#endif

}  // namespace
}  // namespace volta::perf
