// f32 GEMM throughput through the entry point the CPU backend's MatMul, Gemm, Conv and Einsum
// kernels call, once per micro-kernel this CPU runs (the ISA is in the name, the kernel
// variant in the label). Reported as GFLOP/s (2 * M * N * K flops per iteration) over wall
// time, since several threads work on each iteration.
//
// f32_gemm/ISA/size:S/threads:T   square row-major S x S x S
// f32_gemm_mlp/ISA/...            a transformer layer's products, B*T tokens by width d:
//                                 up [BT,d]x[d,4d], down [BT,4d]x[4d,d], qkv [BT,d]x[d,3d]
// f32_gemm_attention/ISA/...      scores [T,dh]x[dh,T] for each head, one gemm() call: 8 heads
//                                 of 128 x 64, and the tiny transformer's 16 x 4 of 32 x 16
// f32_gemm_attention_context/...  context [T,T]x[T,dh] for each head, the same shapes

#include <benchmark/benchmark.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/linalg_gemm.h"
#include "perf_support.h"
#include "volta/backends/cpu/thread_pool.h"
#include "volta/ir/tensor.h"

namespace volta::cpu {
namespace {

constexpr GemmIsa kIsas[] = {GemmIsa::Generic, GemmIsa::Avx2Fma, GemmIsa::Avx512};

// The ISA part of a benchmark name: the micro-kernel's name between "f32_gemm_" and its tile.
std::string isa_label(const GemmMicroKernel<float>& kernel) {
  const std::string_view name = kernel.name.substr(std::string_view("f32_gemm_").size());
  return std::string(name.substr(0, name.rfind('_')));
}

// `count` independent row-major products [m,k] x [k,n], optionally with B transposed
// (stored [n,k]), timed as one gemm() call.
void run_products(benchmark::State& state, const GemmMicroKernel<float>& kernel, int64_t count,
                  int64_t m, int64_t n, int64_t k, bool trans_b) {
  const int threads = static_cast<int>(state.range(0));
  const Tensor a = perf::random_tensor(DType::F32, Shape{count, m, k}, 1);
  const Tensor b = perf::random_tensor(DType::F32, Shape{count, k, n}, 2);
  Tensor y(DType::F32, Shape{count, m, n});
  std::vector<GemmProblem<float>> problems;
  for (int64_t q = 0; q < count; ++q) {
    problems.push_back({.m = m,
                        .n = n,
                        .k = k,
                        .a = a.data_as<float>() + q * m * k,
                        .a_row_stride = k,
                        .a_col_stride = 1,
                        .b = b.data_as<float>() + q * k * n,
                        .b_row_stride = trans_b ? 1 : n,
                        .b_col_stride = trans_b ? k : 1,
                        .y = y.data_as<float>() + q * m * n,
                        .y_row_stride = n});
  }
  ThreadPool pool(threads);
  // The scratch a plan would give the call, made once as a plan's would be.
  OwnedGemmScratch scratch(kernel, std::span<const GemmProblem<float>>(problems), pool);
  for (auto _ : state) {
    gemm<float>(kernel, problems, pool, scratch.shared());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  perf::record_flops(state, 2.0 * static_cast<double>(count * m * n * k));
  perf::record_variant(state, kernel.name, threads);
}

// One benchmark of `count` products [m,k] x [k,n] (see run_products), at 1 and 2 threads.
void register_products(const std::string& name, benchmark::TimeUnit unit,
                       const GemmMicroKernel<float>& kernel, int64_t count, int64_t m, int64_t n,
                       int64_t k, bool trans_b) {
  benchmark::RegisterBenchmark(name.c_str(),
                               [&kernel, count, m, n, k, trans_b](benchmark::State& state) {
                                 run_products(state, kernel, count, m, n, k, trans_b);
                               })
      ->ArgName("threads")
      ->Arg(1)
      ->Arg(2)
      ->UseRealTime()
      ->Unit(unit);
}

void register_isa(GemmIsa isa) {
  const GemmMicroKernel<float>& kernel = gemm_micro_kernel<float>(isa);
  const std::string label = isa_label(kernel);
  for (int64_t size : {64, 128, 256, 512, 1024, 2048}) {
    register_products("f32_gemm/" + label + "/size:" + std::to_string(size),
                      benchmark::kMillisecond, kernel, 1, size, size, size, false);
  }
  struct Product {
    const char* name;
    int64_t in;   // K in multiples of d
    int64_t out;  // N in multiples of d
  };
  constexpr Product kMlp[] = {{"up", 1, 4}, {"down", 4, 1}, {"qkv", 1, 3}};
  for (int64_t tokens : {64, 512}) {
    for (int64_t d : {64, 256, 512, 768}) {
      for (const Product& product : kMlp) {
        register_products("f32_gemm_mlp/" + label + "/" + product.name +
                              "/tokens:" + std::to_string(tokens) + "/d:" + std::to_string(d),
                          benchmark::kMicrosecond, kernel, 1, tokens, product.out * d,
                          product.in * d, false);
      }
    }
  }
  struct Attention {
    int64_t heads, seq, head_dim;
  };
  // The second is the tiny transformer's (batch 16 x 4 heads, seq 32, d 64). Scores are
  // Q K^T, [T,dh] x [dh,T]; context is P V, [T,T] x [T,dh].
  for (const Attention& at : {Attention{8, 128, 64}, Attention{64, 32, 16}}) {
    const std::string shape = label + "/heads:" + std::to_string(at.heads) +
                              "/seq:" + std::to_string(at.seq) +
                              "/head_dim:" + std::to_string(at.head_dim);
    register_products("f32_gemm_attention/" + shape, benchmark::kMicrosecond, kernel, at.heads,
                      at.seq, at.seq, at.head_dim, true);
    register_products("f32_gemm_attention_context/" + shape, benchmark::kMicrosecond, kernel,
                      at.heads, at.seq, at.head_dim, at.seq, false);
  }
}

const bool kRegistered = perf::add_registrar([](const perf::Options&) {
  for (GemmIsa isa : kIsas) {
    if (gemm_isa_supported(isa) && isa != GemmIsa::Generic) register_isa(isa);
  }
});

}  // namespace
}  // namespace volta::cpu
