#pragma once
// The CPU backend's fixed reduction tree (cpu/kernels/reduce_tree.h) on the device, for the
// reduction and normalization kernels. combine(a, b) always takes the lower-indexed operand
// first, as on the CPU, so which of two equal maxima (+0 or -0) or which NaN survives is the
// CPU's choice too.

#include <cuda_runtime.h>

#include <cstdint>

#include "launch.h"

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

// combine_pairwise over leaf results that arrive one at a time, in leaf order. Level by level
// pairing makes node j of level k the combination of leaves [j * 2^k, (j + 1) * 2^k), with the
// last node of a level covering whatever is left; so the complete power-of-two blocks are
// merged as they fill (a binary counter), and at the end the partial blocks combine from the
// right: result = c(B0, c(B1, ... c(Bm-1, Bm))), B0 the largest.
template <class A>
struct LeafStack {
  static constexpr int kDepth = 48;  // 2^48 leaves: beyond any row
  A values[kDepth];
  int levels[kDepth];
  int top = 0;

  template <class Combine>
  __device__ void push(A value, const Combine& combine) {
    values[top] = value;
    levels[top] = 0;
    ++top;
    while (top >= 2 && levels[top - 1] == levels[top - 2]) {
      values[top - 2] = combine(values[top - 2], values[top - 1]);
      ++levels[top - 2];
      --top;
    }
  }
  template <class Combine>
  __device__ A result(const Combine& combine) const {
    A r = values[top - 1];
    for (int k = top - 2; k >= 0; --k) r = combine(values[k], r);
    return r;
  }
};

}  // namespace volta::cuda::tree
