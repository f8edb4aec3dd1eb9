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

// Four f32 elements travel as one 16-byte vector where every pointer of a kernel is 16-byte
// aligned: a memory-bound kernel then needs a quarter of the load and store instructions and
// keeps more bytes in flight. Only how the elements travel changes, never their values.
inline constexpr int64_t kVector = 4;
__host__ __device__ inline bool vector_aligned(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % sizeof(float4) == 0;
}
__device__ __forceinline__ float4 load4(const float* p) {
  return *reinterpret_cast<const float4*>(p);
}
__device__ __forceinline__ void store4(float* p, float4 v) { *reinterpret_cast<float4*>(p) = v; }
template <class Op>
__device__ __forceinline__ float4 map4(const Op& op, float4 v) {
  return make_float4(op(v.x), op(v.y), op(v.z), op(v.w));
}
template <class Op>
__device__ __forceinline__ float4 map4(const Op& op, float4 a, float4 b) {
  return make_float4(op(a.x, b.x), op(a.y, b.y), op(a.z, b.z), op(a.w, b.w));
}

// y[i] = op(x[i]), `vectors` groups of four first (0 unless both pointers are aligned), then
// the rest one by one. In place (y == x) is safe: each element is read before it is written,
// by the same thread.
template <class Op>
__global__ void f32_map_kernel(Op op, const float* x, float* y, int64_t n, int64_t vectors) {
  for (int64_t q = first_index(); q < vectors; q += grid_stride()) {
    store4(y + q * kVector, map4(op, load4(x + q * kVector)));
  }
  for (int64_t i = vectors * kVector + first_index(); i < n; i += grid_stride()) y[i] = op(x[i]);
}

template <class Op>
cudaError_t launch_f32_map(Op op, const float* x, float* y, int64_t n, cudaStream_t stream) {
  const int64_t vectors = vector_aligned(x) && vector_aligned(y) ? n / kVector : 0;
  f32_map_kernel<<<blocks_for(n - vectors * (kVector - 1)), kThreadsPerBlock, 0, stream>>>(
      op, x, y, n, vectors);
  return cudaGetLastError();
}

}  // namespace volta::cuda
