#pragma once
// Where each output element of the layout kernels (kernels/layout.cu) reads: the CPU's index
// arithmetic (cpu/kernels/movement_layout.cpp) for one element. Plain CUDA C++ over launch.h,
// so that a host test (tests/cuda_layout_emulation_test.cpp) also runs it against the CPU
// backend without a device.

#include <cstdint>

#include "launch.h"

namespace volta::cuda::layout_detail {

// Tile: output index o reads o % in_dim on every axis.
__device__ __forceinline__ int64_t tile_source(const LayoutAxes& g, int64_t i) {
  int64_t at = 0;
  for (int a = g.rank - 1; a >= 0; --a) {
    at += i % g.out_dims[a] % g.in_dims[a] * g.in_strides[a];
    i /= g.out_dims[a];
  }
  return at;
}

// The CPU's pad_source: the input index output index o reads along an axis, or -1 for the
// constant. Reflect mirrors without repeating the edge, with period 2 * (dim - 1).
__device__ __forceinline__ int64_t pad_axis_source(int64_t o, int64_t before, int64_t dim,
                                                   PadMode mode) {
  const int64_t i = o - before;
  if (i >= 0 && i < dim) return i;
  switch (mode) {
    case PadMode::Constant:
      return -1;
    case PadMode::Edge:
      return i < 0 ? 0 : dim - 1;
    case PadMode::Reflect: {
      if (dim == 1) return 0;
      const int64_t period = 2 * (dim - 1);
      const int64_t m = ((i % period) + period) % period;
      return m < dim ? m : period - m;
    }
  }
  return -1;
}

// Pad: where output element i reads, or -1 for the constant.
__device__ __forceinline__ int64_t pad_source(PadMode mode, const LayoutAxes& g, int64_t i) {
  int64_t at = 0;
  for (int a = g.rank - 1; a >= 0; --a) {
    const int64_t s = pad_axis_source(i % g.out_dims[a], g.before[a], g.in_dims[a], mode);
    if (s < 0) return -1;
    at += s * g.in_strides[a];
    i /= g.out_dims[a];
  }
  return at;
}

// DepthToSpace: output (n, c, y, x) reads channel (i * b + j) * C' + c (DCR) or
// (c * b + i) * b + j (CRD) at (y / b, x / b), i = y % b, j = x % b. SpaceToDepth: output
// channel (i * b + j) * C + c at (h, w) reads (n, c, h * b + i, w * b + j).
__device__ __forceinline__ int64_t space_depth_source(SpaceDepthOp op, const SpaceDepthGeometry& g,
                                                      int64_t i) {
  const int64_t b = g.block;
  const int64_t xo = i % g.out_w;
  const int64_t yo = i / g.out_w % g.out_h;
  const int64_t co = i / g.out_w / g.out_h % g.out_c;
  const int64_t n = i / g.out_w / g.out_h / g.out_c;
  if (op == SpaceDepthOp::SpaceToDepth) {
    const int64_t c = co % g.in_c, block = co / g.in_c;
    const int64_t bi = block / b, bj = block % b;
    return ((n * g.in_c + c) * g.in_h + yo * b + bi) * g.in_w + xo * b + bj;
  }
  const int64_t bi = yo % b, h = yo / b;
  const int64_t bj = xo % b, w = xo / b;
  const int64_t ch =
      op == SpaceDepthOp::DepthToSpaceCrd ? (co * b + bi) * b + bj : (bi * b + bj) * g.out_c + co;
  return ((n * g.in_c + ch) * g.in_h + h) * g.in_w + w;
}

// ReverseSequence: output row (a0, a1) of [d0, d1, inner] reads time step len - 1 - t when
// t < len of its batch entry, else t (the lengths are in range).
template <class I>
__device__ __forceinline__ int64_t reverse_sequence_source(const ReverseSequenceGeometry& g,
                                                           const I* lengths, int64_t i) {
  const int64_t col = i % g.inner;
  const int64_t row = i / g.inner;
  const int64_t a0 = row / g.d1, a1 = row % g.d1;
  const int64_t batch = g.batch_first ? a0 : a1;
  const int64_t t = g.batch_first ? a1 : a0;
  const int64_t len = lengths[batch];
  const int64_t from_t = t < len ? len - 1 - t : t;
  const int64_t from_row = g.batch_first ? a0 * g.d1 + from_t : from_t * g.d1 + a1;
  return from_row * g.inner + col;
}

}  // namespace volta::cuda::layout_detail
