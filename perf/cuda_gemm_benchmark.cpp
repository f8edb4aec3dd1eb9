// The CUDA backend's GEMM (the kernel behind its MatMul, Gemm and FusedMatMul), timed at its
// launch: operands already in device memory, one launch and a stream synchronisation per
// iteration. GFLOP/s counts 2 * M * N * K per product over wall time.
//
// cuda_f32_gemm/size:S        square row-major S x S x S (4096: the cuBLAS comparison)
// cuda_f64_gemm/size:S
// cuda/gemm/f32_tiny/NAME     the tiny transformer's products (batch 16 x seq 32 = 512 tokens,
//                             d_model 64, FFN 256, 4 heads of 16): qkv, out, up, down, logits,
//                             and the attention scores, 64 problems [32,16]x[16,32]
//
// Registered only where this build has the CUDA backend and this machine a usable device:
// elsewhere they are absent from the list, like the CPU benchmarks of an ISA the CPU lacks.

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/launch.h"
#include "perf_support.h"
#include "volta/backends/cuda.h"

namespace volta::perf {
namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
  }
}

// A device copy of a random host tensor, freed with the benchmark.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(const Tensor& host) : bytes_(host.nbytes()) {
    check(cudaMalloc(&data_, bytes_), "cudaMalloc");
    check(cudaMemcpy(data_, host.data(), bytes_, cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(data_); }
  template <class T>
  T* as() const {
    return static_cast<T*>(data_);
  }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// `count` row-major products [m,k] x [k,n], each with its own operands.
template <class T>
void run_products(benchmark::State& state, int64_t count, int64_t m, int64_t n, int64_t k) {
  const DType dtype = sizeof(T) == 4 ? DType::F32 : DType::F64;
  const DeviceBuffer a(random_tensor(dtype, Shape{count, m, k}, 1));
  const DeviceBuffer b(random_tensor(dtype, Shape{count, k, n}, 2));
  const DeviceBuffer y(Tensor(dtype, Shape{count, m, n}));
  cuda::GemmLaunch<T> g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.a = a.as<T>();
  g.a_row_stride = k;
  g.a_col_stride = 1;
  g.b = b.as<T>();
  g.b_row_stride = n;
  g.b_col_stride = 1;
  g.y = y.as<T>();
  g.batch.rank = 1;
  g.batch.dims[0] = count;
  g.batch.a_strides[0] = 1;
  g.batch.b_strides[0] = 1;
  g.batch.numel = count;
  const auto launch = [&] {
    if constexpr (sizeof(T) == 4) {
      check(cuda::launch_f32_gemm(g, nullptr), "launch");
    } else {
      check(cuda::launch_f64_gemm(g, nullptr), "launch");
    }
  };
  launch();  // the first launch loads the module
  check(cudaDeviceSynchronize(), "warm-up");
  for (auto _ : state) {
    launch();
    check(cudaStreamSynchronize(nullptr), "synchronize");
  }
  record_flops(state, 2.0 * static_cast<double>(count * m * n * k));
  record_variant(state, sizeof(T) == 4 ? "f32_matmul_cuda" : "f64_matmul_cuda", 1);
}

template <class T>
void add(const std::string& name, int64_t count, int64_t m, int64_t n, int64_t k) {
  benchmark::RegisterBenchmark(
      name.c_str(),
      [count, m, n, k](benchmark::State& state) { run_products<T>(state, count, m, n, k); })
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
}

void register_cuda_gemm() {
  for (int64_t size : {256, 1024, 2048, 4096}) {
    add<float>("cuda/gemm/f32/size:" + std::to_string(size), 1, size, size, size);
  }
  for (int64_t size : {1024, 2048}) {
    add<double>("cuda/gemm/f64/size:" + std::to_string(size), 1, size, size, size);
  }
  constexpr int64_t kTokens = 16 * 32, kModel = 64, kFfn = 256, kVocab = 256;
  add<float>("cuda/gemm/f32_tiny/qkv", 1, kTokens, 3 * kModel, kModel);
  add<float>("cuda/gemm/f32_tiny/out", 1, kTokens, kModel, kModel);
  add<float>("cuda/gemm/f32_tiny/up", 1, kTokens, kFfn, kModel);
  add<float>("cuda/gemm/f32_tiny/down", 1, kTokens, kModel, kFfn);
  add<float>("cuda/gemm/f32_tiny/logits", 1, kTokens, kVocab, kModel);
  add<float>("cuda/gemm/f32_tiny/scores", 16 * 4, 32, 32, 16);
}

const bool kRegistered = add_registrar([](const Options&) {
  if (cuda_report().unavailable.empty()) register_cuda_gemm();
});

}  // namespace
}  // namespace volta::perf
