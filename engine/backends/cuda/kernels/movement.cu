// Movement-family kernels: strided copies (Transpose, Slice, Expand), block copies (Concat,
// Split) and Gather with its index check. They only copy elements, by size (1, 4 or 8 bytes),
// so results are the CPU backend's bits whatever the dtype, NaN payloads included.

#include "element_types.cuh"
#include "map.cuh"

namespace volta::cuda {
namespace {

template <class U>
__global__ void strided_copy_kernel(StridedCopyGeometry g, const U* src, U* dst) {
  for (int64_t i = first_index(); i < g.numel; i += grid_stride()) {
    int64_t rest = i;
    int64_t at = g.src_offset;
    for (int d = g.rank - 1; d >= 0; --d) {
      at += rest % g.dims[d] * g.src_strides[d];
      rest /= g.dims[d];
    }
    dst[i] = src[at];
  }
}

template <class U>
__global__ void block_copy_kernel(BlockCopy b, const U* src, U* dst) {
  const int64_t n = b.rows * b.cols;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const int64_t r = i / b.cols;
    const int64_t c = i % b.cols;
    dst[b.dst_start + r * b.dst_row + c] = src[b.src_start + r * b.src_row + c];
  }
}

template <class I>
__global__ void find_bad_index_kernel(const I* indices, int64_t n, int64_t dim,
                                      unsigned long long* first_bad) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const int64_t value = indices[i];
    if (value < -dim || value >= dim) atomicMin(first_bad, static_cast<unsigned long long>(i));
  }
}

template <class U, class I>
__global__ void gather_kernel(GatherGeometry g, const U* data, const I* indices, U* out) {
  const int64_t n = g.outer * g.num_indices * g.inner;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const int64_t c = i % g.inner;
    const int64_t row = i / g.inner;
    const int64_t o = row / g.num_indices;
    const int64_t index = indices[row % g.num_indices];
    out[i] = data[(o * g.dim + (index < 0 ? index + g.dim : index)) * g.inner + c];
  }
}

}  // namespace

cudaError_t launch_strided_copy(int element_bytes, const StridedCopyGeometry& geometry,
                                const void* src, void* dst, cudaStream_t stream) {
  return with_element(element_bytes, [&](auto tag) {
    using U = decltype(tag);
    strided_copy_kernel<U><<<blocks_for(geometry.numel), kThreadsPerBlock, 0, stream>>>(
        geometry, static_cast<const U*>(src), static_cast<U*>(dst));
    return cudaGetLastError();
  });
}

cudaError_t launch_block_copy(int element_bytes, const BlockCopy& block, const void* src, void* dst,
                              cudaStream_t stream) {
  return with_element(element_bytes, [&](auto tag) {
    using U = decltype(tag);
    block_copy_kernel<U><<<blocks_for(block.rows * block.cols), kThreadsPerBlock, 0, stream>>>(
        block, static_cast<const U*>(src), static_cast<U*>(dst));
    return cudaGetLastError();
  });
}

cudaError_t launch_find_bad_index(int index_bytes, const void* indices, int64_t n, int64_t dim,
                                  unsigned long long* first_bad, cudaStream_t stream) {
  return with_index(index_bytes, [&](auto tag) {
    using I = decltype(tag);
    find_bad_index_kernel<I><<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(
        static_cast<const I*>(indices), n, dim, first_bad);
    return cudaGetLastError();
  });
}

cudaError_t launch_gather(int element_bytes, int index_bytes, const GatherGeometry& geometry,
                          const void* data, const void* indices, void* out, cudaStream_t stream) {
  return with_element(element_bytes, [&](auto element_tag) {
    return with_index(index_bytes, [&](auto index_tag) {
      using U = decltype(element_tag);
      using I = decltype(index_tag);
      const int64_t n = geometry.outer * geometry.num_indices * geometry.inner;
      gather_kernel<U, I><<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(
          geometry, static_cast<const U*>(data), static_cast<const I*>(indices),
          static_cast<U*>(out));
      return cudaGetLastError();
    });
  });
}

}  // namespace volta::cuda
