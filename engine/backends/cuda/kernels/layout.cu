// Layout kernels: Tile, Pad, DepthToSpace, SpaceToDepth and ReverseSequence (with its check of
// the lengths). One thread per output element, which finds the one input element it copies
// (or Pad's constant) by the CPU's index arithmetic (cpu/kernels/movement_layout.cpp). Elements
// move by size, so results are the CPU's bits whatever the dtype, NaN payloads included.

#include "map.cuh"

namespace volta::cuda {
namespace {

// Output element i's index on each axis, innermost first: calls fn(axis, index).
template <class Fn>
__device__ __forceinline__ void for_each_axis(const LayoutAxes& g, int64_t i, Fn&& fn) {
  int64_t rest = i;
  for (int a = g.rank - 1; a >= 0; --a) {
    fn(a, rest % g.out_dims[a]);
    rest /= g.out_dims[a];
  }
}

template <class U>
__global__ void tile_kernel(LayoutAxes g, const U* x, U* y) {
  for (int64_t i = first_index(); i < g.numel; i += grid_stride()) {
    int64_t at = 0;
    for_each_axis(g, i, [&](int a, int64_t o) { at += o % g.in_dims[a] * g.in_strides[a]; });
    y[i] = x[at];
  }
}

// The CPU's pad_source: the input index output index o reads along an axis, or -1 for the
// constant.
__device__ __forceinline__ int64_t pad_source(int64_t o, int64_t before, int64_t dim,
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

template <class U>
__global__ void pad_kernel(PadMode mode, LayoutAxes g, const U* x, const U* value, U* y) {
  const U constant = value != nullptr ? *value : U{0};
  for (int64_t i = first_index(); i < g.numel; i += grid_stride()) {
    int64_t at = 0;
    bool inside = true;
    for_each_axis(g, i, [&](int a, int64_t o) {
      const int64_t s = pad_source(o, g.before[a], g.in_dims[a], mode);
      if (s < 0) inside = false;
      at += s * g.in_strides[a];
    });
    y[i] = inside ? x[at] : constant;
  }
}

template <class U>
__global__ void space_depth_kernel(SpaceDepthOp op, SpaceDepthGeometry g, const U* x, U* y) {
  const int64_t b = g.block;
  for (int64_t i = first_index(); i < g.numel; i += grid_stride()) {
    const int64_t xo = i % g.out_w;
    const int64_t yo = i / g.out_w % g.out_h;
    const int64_t co = i / g.out_w / g.out_h % g.out_c;
    const int64_t n = i / g.out_w / g.out_h / g.out_c;
    int64_t at = 0;
    if (op == SpaceDepthOp::SpaceToDepth) {
      const int64_t c = co % g.in_c, block = co / g.in_c;
      const int64_t bi = block / b, bj = block % b;
      at = ((n * g.in_c + c) * g.in_h + yo * b + bi) * g.in_w + xo * b + bj;
    } else {
      const int64_t bi = yo % b, h = yo / b;
      const int64_t bj = xo % b, w = xo / b;
      const int64_t ch = op == SpaceDepthOp::DepthToSpaceCrd ? (co * b + bi) * b + bj
                                                             : (bi * b + bj) * g.out_c + co;
      at = ((n * g.in_c + ch) * g.in_h + h) * g.in_w + w;
    }
    y[i] = x[at];
  }
}

template <class I>
__global__ void find_bad_length_kernel(const I* lengths, int64_t n, int64_t steps,
                                       unsigned long long* first_bad) {
  for (int64_t e = first_index(); e < n; e += grid_stride()) {
    const int64_t len = lengths[e];
    if (len < 0 || len > steps) atomicMin(first_bad, static_cast<unsigned long long>(e));
  }
}

template <class U, class I>
__global__ void reverse_sequence_kernel(ReverseSequenceGeometry g, const U* x, const I* lengths,
                                        U* y) {
  const int64_t numel = g.d0 * g.d1 * g.inner;
  for (int64_t i = first_index(); i < numel; i += grid_stride()) {
    const int64_t col = i % g.inner;
    const int64_t row = i / g.inner;
    const int64_t a0 = row / g.d1, a1 = row % g.d1;
    const int64_t batch = g.batch_first ? a0 : a1;
    const int64_t t = g.batch_first ? a1 : a0;
    const int64_t len = lengths[batch];
    const int64_t from_t = t < len ? len - 1 - t : t;
    const int64_t from_row = g.batch_first ? a0 * g.d1 + from_t : from_t * g.d1 + a1;
    y[i] = x[from_row * g.inner + col];
  }
}

// Calls fn(U{}) with U the unsigned integer of `bytes` bytes.
template <class Fn>
cudaError_t with_element(int bytes, Fn&& fn) {
  switch (bytes) {
    case 1:
      return fn(uint8_t{});
    case 4:
      return fn(uint32_t{});
    case 8:
      return fn(uint64_t{});
    default:
      return cudaErrorInvalidValue;
  }
}

template <class Fn>
cudaError_t with_length(int bytes, Fn&& fn) {
  if (bytes == 4) return fn(int32_t{});
  if (bytes == 8) return fn(int64_t{});
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t launch_tile(int element_bytes, const LayoutAxes& axes, const void* x, void* y,
                        cudaStream_t stream) {
  return with_element(element_bytes, [&](auto tag) {
    using U = decltype(tag);
    tile_kernel<U><<<blocks_for(axes.numel), kThreadsPerBlock, 0, stream>>>(
        axes, static_cast<const U*>(x), static_cast<U*>(y));
    return cudaGetLastError();
  });
}

cudaError_t launch_pad(int element_bytes, PadMode mode, const LayoutAxes& axes, const void* x,
                       const void* value, void* y, cudaStream_t stream) {
  return with_element(element_bytes, [&](auto tag) {
    using U = decltype(tag);
    pad_kernel<U><<<blocks_for(axes.numel), kThreadsPerBlock, 0, stream>>>(
        mode, axes, static_cast<const U*>(x), static_cast<const U*>(value), static_cast<U*>(y));
    return cudaGetLastError();
  });
}

cudaError_t launch_space_depth(int element_bytes, SpaceDepthOp op, const SpaceDepthGeometry& g,
                               const void* x, void* y, cudaStream_t stream) {
  return with_element(element_bytes, [&](auto tag) {
    using U = decltype(tag);
    space_depth_kernel<U><<<blocks_for(g.numel), kThreadsPerBlock, 0, stream>>>(
        op, g, static_cast<const U*>(x), static_cast<U*>(y));
    return cudaGetLastError();
  });
}

cudaError_t launch_find_bad_length(int length_bytes, const void* lengths, int64_t n, int64_t steps,
                                   unsigned long long* first_bad, cudaStream_t stream) {
  return with_length(length_bytes, [&](auto tag) {
    using I = decltype(tag);
    find_bad_length_kernel<I><<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(
        static_cast<const I*>(lengths), n, steps, first_bad);
    return cudaGetLastError();
  });
}

cudaError_t launch_reverse_sequence(int element_bytes, int length_bytes,
                                    const ReverseSequenceGeometry& g, const void* x,
                                    const void* lengths, void* y, cudaStream_t stream) {
  return with_element(element_bytes, [&](auto element_tag) {
    return with_length(length_bytes, [&](auto length_tag) {
      using U = decltype(element_tag);
      using I = decltype(length_tag);
      reverse_sequence_kernel<U, I>
          <<<blocks_for(g.d0 * g.d1 * g.inner), kThreadsPerBlock, 0, stream>>>(
              g, static_cast<const U*>(x), static_cast<const I*>(lengths), static_cast<U*>(y));
      return cudaGetLastError();
    });
  });
}

}  // namespace volta::cuda
