#pragma once
// The CPU backend's fixed reduction tree (cpu/kernels/reduce_tree.h) on the device, for the
// reduction and normalization kernels. combine(a, b) always takes the lower-indexed operand
// first, as on the CPU, so which of two equal maxima (+0 or -0) or which NaN survives is the
// CPU's choice too.

#include <cuda_runtime.h>

#include <cstdint>

#include "launch.h"
#include "leaf_stack.h"  // LeafStack: the same tree over leaves arriving one by one

namespace volta::cuda::tree {

// Elements in leaf `leaf` of a row of n (the last leaf may be short; an empty row has one
// empty leaf).
__host__ __device__ inline int64_t leaf_length(int64_t n, int64_t leaf) {
  const int64_t rest = n - leaf * kTreeLeaf;
  return rest < kTreeLeaf ? rest : kTreeLeaf;
}

// Offset of flat index `flat` over extents (row-major, innermost last).
__device__ inline int64_t offset_of(const ReduceExtents& e, int64_t flat) {
  int64_t offset = 0;
  for (int d = e.rank - 1; d >= 0; --d) {
    offset += (flat % e.sizes[d]) * e.strides[d];
    flat /= e.sizes[d];
  }
  return offset;
}

// The CPU's combine_pairwise: (v0, v1), (v2, v3), ..., an odd last value carried up unchanged,
// level by level until one remains. values[k * stride] is value k; overwritten. n >= 1.
template <class A, class Combine>
__device__ A combine_pairwise(A* values, int64_t n, int64_t stride, const Combine& combine) {
  while (n > 1) {
    const int64_t pairs = n / 2;
    for (int64_t i = 0; i < pairs; ++i) {
      values[i * stride] = combine(values[2 * i * stride], values[(2 * i + 1) * stride]);
    }
    if (n % 2 != 0) values[pairs * stride] = values[(n - 1) * stride];
    n = pairs + n % 2;
  }
  return values[0];
}

// The lanes of one leaf held by 8 neighbouring threads of a warp (lane = thread % 8), combined
// as combine_pairwise combines 8 values: ((l0 l1)(l2 l3))((l4 l5)(l6 l7)). Every thread of the
// warp must call it; each gets its group's result.
template <class A, class Combine>
__device__ A combine_group_lanes(A v, const Combine& combine) {
  const unsigned lane = threadIdx.x % kTreeLanes;
  A other = __shfl_down_sync(0xffffffffu, v, 1, kTreeLanes);
  if (lane % 2 == 0) v = combine(v, other);
  other = __shfl_down_sync(0xffffffffu, v, 2, kTreeLanes);
  if (lane % 4 == 0) v = combine(v, other);
  other = __shfl_down_sync(0xffffffffu, v, 4, kTreeLanes);
  if (lane == 0) v = combine(v, other);
  return __shfl_sync(0xffffffffu, v, 0, kTreeLanes);
}

}  // namespace volta::cuda::tree
