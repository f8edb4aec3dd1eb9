// f32 GEMM throughput, C = A @ B with square row-major operands, through the entry point the
// CPU backend's MatMul and Gemm kernels call and with the micro-kernel they pick on this CPU.
// Reported as GFLOP/s (2 * M * N * K flops per iteration) over wall time, since several
// threads work on each iteration.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <span>
#include <string>

#include "kernels/gemm.h"
#include "perf_support.h"
#include "volta/ir/tensor.h"
#include "volta/runtime/thread_pool.h"

namespace volta::cpu {
namespace {

Tensor random_matrix(int64_t rows, int64_t cols, uint32_t seed) {
  Tensor t(DType::F32, Shape{rows, cols});
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  float* data = t.data_as<float>();
  for (int64_t i = 0; i < t.numel(); ++i) data[i] = uniform(rng);
  return t;
}

void f32_gemm(benchmark::State& state) {
  const int64_t size = state.range(0);
  const int threads = static_cast<int>(state.range(1));
  const Tensor a = random_matrix(size, size, 1);
  const Tensor b = random_matrix(size, size, 2);
  Tensor y(DType::F32, Shape{size, size});
  ThreadPool pool(threads);
  const GemmMicroKernel<float>& kernel = gemm_micro_kernel<float>(best_gemm_isa());
  const GemmProblem<float> problem{.m = size,
                                   .n = size,
                                   .k = size,
                                   .a = a.data_as<float>(),
                                   .a_row_stride = size,
                                   .a_col_stride = 1,
                                   .b = b.data_as<float>(),
                                   .b_row_stride = size,
                                   .b_col_stride = 1,
                                   .y = y.data_as<float>(),
                                   .y_row_stride = size};
  for (auto _ : state) {
    gemm<float>(kernel, std::span(&problem, 1), pool);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  perf::record_flops(state, 2.0 * static_cast<double>(size * size * size));
  perf::record_variant(state, kernel.name, threads);
}

BENCHMARK(f32_gemm)
    ->ArgNames({"size", "threads"})
    ->ArgsProduct({{64, 256, 512, 1024}, {1, 2}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace volta::cpu
