#pragma once
// Runs the CUDA GEMM kernel (kernels/gemm_kernel.cuh) on the host: each block's threads are
// std::threads meeting at a std::barrier for __syncthreads, __shared__ variables are function
// statics (one block runs at a time, so its threads share them), and the rounding intrinsics
// are the IEEE operations they name. A host test can so check the kernel's indexing, double
// buffering, edge handling and K-slice folding bit for bit without a device. It cannot see
// races between threads or what nvcc makes of the code: the device tests check those.

#include <cuda_runtime_api.h>  // dim3, uint3

#include <barrier>
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

// NOLINTBEGIN(bugprone-reserved-identifier): the CUDA names the kernel is written with, which
// cuda_runtime_api.h defines as device attributes a host compiler does not know.
#undef __device__
#undef __global__
#undef __forceinline__
#undef __noinline__
#undef __launch_bounds__
#undef __shared__
#define __device__
#define __global__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __shared__ static

inline thread_local uint3 threadIdx{};
inline uint3 blockIdx{};
inline dim3 gridDim{};
inline std::barrier<>* volta_emulated_block = nullptr;

inline void __syncthreads() { volta_emulated_block->arrive_and_wait(); }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline double __fma_rn(double a, double b, double c) { return std::fma(a, b, c); }
inline float __fmul_rn(float a, float b) { return a * b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline double __dadd_rn(double a, double b) { return a + b; }
// NOLINTEND(bugprone-reserved-identifier)

#include "kernels/gemm_kernel.cuh"

namespace volta::cuda {

// The block tiles of the launch in the large tiles, which linalg.cu launches a block each for
// when there are enough of them.
template <class T>
unsigned tile_count(const GemmLaunch<T>& g) {
  return static_cast<unsigned>(gemm_detail::tile_count<typename gemm_detail::Tiles<T>::Large>(g));
}

// The kernel of tile shape Tile (the type's Large by default) on `blocks` blocks (fewer than
// the tiles makes blocks stride), block after block, each block's kThreads threads at once.
template <class T, class Tile = typename gemm_detail::Tiles<T>::Large>
void emulate_gemm(const GemmLaunch<T>& g, unsigned blocks) {
  const int64_t tiles = gemm_detail::tile_count<Tile>(g);
  gridDim = dim3(blocks, 1, 1);
  for (unsigned x = 0; x < blocks; ++x) {
    blockIdx = {x, 0, 0};
    std::barrier<> block(gemm_detail::kThreads);
    volta_emulated_block = &block;
    std::vector<std::jthread> threads;
    threads.reserve(gemm_detail::kThreads);
    for (unsigned t = 0; t < static_cast<unsigned>(gemm_detail::kThreads); ++t) {
      threads.emplace_back([&g, t, tiles] {
        threadIdx = {t, 0, 0};
        gemm_detail::gemm_kernel<Tile>(g, tiles);
      });
    }
  }
  volta_emulated_block = nullptr;
}

}  // namespace volta::cuda
