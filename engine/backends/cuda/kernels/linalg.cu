// Linalg-family kernels (f32, f64): the launch of the GEMM behind MatMul, Gemm and FusedMatMul
// (gemm_kernel.cuh). The grid covers the problem's tiles up to the hardware's limits; past
// them blocks stride over the tiles, which never changes an element's value.

#include <cuda_runtime.h>

#include <cstdint>

#include "gemm_kernel.cuh"
#include "launch.h"

namespace volta::cuda {
namespace {

using gemm_detail::gemm_kernel;
using gemm_detail::kBlock;
using gemm_detail::kThreads;

constexpr int64_t kMaxGridX = 2147483647;
constexpr int64_t kMaxGridYZ = 65535;

unsigned grid_extent(int64_t wanted, int64_t most) {
  return static_cast<unsigned>(wanted < most ? wanted : most);
}

template <class T>
cudaError_t launch_gemm(const GemmLaunch<T>& g, cudaStream_t stream) {
  const int64_t row_tiles = (g.m + kBlock<T> - 1) / kBlock<T>;
  const int64_t col_tiles = (g.n + kBlock<T> - 1) / kBlock<T>;
  const dim3 grid(grid_extent(col_tiles, kMaxGridX), grid_extent(row_tiles, kMaxGridYZ),
                  grid_extent(g.batch.numel, kMaxGridYZ));
  gemm_kernel<T><<<grid, kThreads, 0, stream>>>(g, row_tiles, col_tiles);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_f32_gemm(const GemmLaunch<float>& g, cudaStream_t stream) {
  return launch_gemm(g, stream);
}
cudaError_t launch_f64_gemm(const GemmLaunch<double>& g, cudaStream_t stream) {
  return launch_gemm(g, stream);
}

}  // namespace volta::cuda
