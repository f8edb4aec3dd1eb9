#pragma once
// Grid-stride loops for the kernels' .cu files, and the f32 map of the elementwise and activation
// families: each output element a pure function of its operands. No element's
// result depends on the launch geometry, so the grid may be sized freely (it is fixed by the
// element count alone anyway).

#include <cuda_runtime.h>

#include <cstdint>

#include "launch.h"

namespace volta::cuda {

inline constexpr int kThreadsPerBlock = 256;
inline constexpr int64_t kMaxBlocks = 65536;  // larger tensors loop (grid stride)

inline unsigned blocks_for(int64_t n) {
  const int64_t blocks = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

__device__ __forceinline__ int64_t first_index() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t grid_stride() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

// The operands' offsets of output element i of a binary broadcast: i split into the merged
// dims, innermost first, each operand's offset summed from its strides (0 along the dims it
// broadcasts).
__device__ __forceinline__ void operand_offsets(const BroadcastGeometry& g, int64_t i,
                                                int64_t& at_a, int64_t& at_b) {
  int64_t rest = i;
  at_a = 0;
  at_b = 0;
  for (int d = g.rank - 1; d >= 0; --d) {
    const int64_t index = rest % g.dims[d];
    rest /= g.dims[d];
    at_a += index * g.a_strides[d];
    at_b += index * g.b_strides[d];
  }
}

// y[i] = op(x[i]). In place (y == x) is safe: each element is read before it is written, by
// the same thread.
template <class Op>
__global__ void f32_map_kernel(Op op, const float* x, float* y, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) y[i] = op(x[i]);
}

template <class Op>
cudaError_t launch_f32_map(Op op, const float* x, float* y, int64_t n, cudaStream_t stream) {
  f32_map_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(op, x, y, n);
  return cudaGetLastError();
}

}  // namespace volta::cuda
