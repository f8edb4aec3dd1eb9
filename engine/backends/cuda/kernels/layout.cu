// Layout kernels: Tile, Pad, DepthToSpace, SpaceToDepth and ReverseSequence (with its check of
// the lengths). One thread per output element copies the input element layout_kernel.cuh finds
// for it (or Pad's constant). Elements move by size, so results are the CPU's bits whatever the
// dtype, NaN payloads included.

#include "element_types.cuh"
#include "layout_kernel.cuh"
#include "map.cuh"

namespace volta::cuda {
namespace {

using namespace layout_detail;  // NOLINT(google-build-using-namespace): this file's kernels

template <class U>
__global__ void tile_kernel(LayoutAxes g, const U* x, U* y) {
  for (int64_t i = first_index(); i < g.numel; i += grid_stride()) y[i] = x[tile_source(g, i)];
}

template <class U>
__global__ void pad_kernel(PadMode mode, LayoutAxes g, const U* x, const U* value, U* y) {
  const U constant = value != nullptr ? *value : U{0};
  for (int64_t i = first_index(); i < g.numel; i += grid_stride()) {
    const int64_t at = pad_source(mode, g, i);
    y[i] = at < 0 ? constant : x[at];
  }
}

template <class U>
__global__ void space_depth_kernel(SpaceDepthOp op, SpaceDepthGeometry g, const U* x, U* y) {
  for (int64_t i = first_index(); i < g.numel; i += grid_stride()) {
    y[i] = x[space_depth_source(op, g, i)];
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
    y[i] = x[reverse_sequence_source(g, lengths, i)];
  }
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
  return with_index(length_bytes, [&](auto tag) {
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
    return with_index(length_bytes, [&](auto length_tag) {
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
