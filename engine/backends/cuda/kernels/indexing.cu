// Launches of the indexing family's kernels (kernels/indexing_kernels.cuh): one grid-stride
// kernel per op, sized by the element count alone (map.cuh's blocks_for).

#include <type_traits>

#include "element_types.cuh"
#include "indexing_kernels.cuh"
#include "map.cuh"

namespace volta::cuda {
namespace {

using namespace indexing_detail;  // NOLINT(google-build-using-namespace): this file's kernels

// Calls fn(T{}) with T the C++ type of `type` (bool: its byte).
template <class Fn>
cudaError_t with_type(ElementType type, Fn&& fn) {
  switch (type) {
    case ElementType::F32:
      return fn(float{});
    case ElementType::F64:
      return fn(double{});
    case ElementType::I32:
      return fn(int32_t{});
    case ElementType::I64:
      return fn(int64_t{});
    case ElementType::Bool:
      return fn(uint8_t{});
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t launch_find_bad_tuple_index(int index_bytes, const IndexTuples& tuples,
                                        const void* indices, unsigned long long* first_bad,
                                        cudaStream_t stream) {
  return with_index(index_bytes, [&](auto tag) {
    using I = decltype(tag);
    find_bad_tuple_index_kernel<I>
        <<<blocks_for(tuples.tuples * tuples.k), kThreadsPerBlock, 0, stream>>>(
            tuples, static_cast<const I*>(indices), first_bad);
    return cudaGetLastError();
  });
}

cudaError_t launch_gather_elements(int element_bytes, int index_bytes, const ElementsGeometry& g,
                                   const void* data, const void* indices, void* out,
                                   cudaStream_t stream) {
  return with_element(element_bytes, [&](auto element_tag) {
    return with_index(index_bytes, [&](auto index_tag) {
      using U = decltype(element_tag);
      using I = decltype(index_tag);
      gather_elements_kernel<U, I><<<blocks_for(g.numel), kThreadsPerBlock, 0, stream>>>(
          g, static_cast<const U*>(data), static_cast<const I*>(indices), static_cast<U*>(out));
      return cudaGetLastError();
    });
  });
}

cudaError_t launch_gather_nd(int element_bytes, int index_bytes, const IndexTuples& tuples,
                             const void* data, const void* indices, void* out,
                             cudaStream_t stream) {
  return with_element(element_bytes, [&](auto element_tag) {
    return with_index(index_bytes, [&](auto index_tag) {
      using U = decltype(element_tag);
      using I = decltype(index_tag);
      gather_nd_kernel<U, I>
          <<<blocks_for(tuples.tuples * tuples.slice), kThreadsPerBlock, 0, stream>>>(
              tuples, static_cast<const U*>(data), static_cast<const I*>(indices),
              static_cast<U*>(out));
      return cudaGetLastError();
    });
  });
}

cudaError_t launch_scatter_elements(ElementType type, int index_bytes, ScatterReduction reduction,
                                    const ElementsGeometry& g, const void* indices,
                                    const void* updates, void* out, cudaStream_t stream) {
  return with_type(type, [&](auto type_tag) {
    return with_index(index_bytes, [&](auto index_tag) {
      using T = decltype(type_tag);
      using I = decltype(index_tag);
      const int64_t lines = g.numel / g.index_dims[g.axis];
      scatter_elements_kernel<T, I><<<blocks_for(lines), kThreadsPerBlock, 0, stream>>>(
          g, reduction, static_cast<const I*>(indices), static_cast<const T*>(updates),
          static_cast<T*>(out));
      return cudaGetLastError();
    });
  });
}

cudaError_t launch_scatter_nd(ElementType type, int index_bytes, ScatterReduction reduction,
                              const IndexTuples& tuples, const void* indices, const void* updates,
                              void* out, cudaStream_t stream) {
  return with_type(type, [&](auto type_tag) {
    return with_index(index_bytes, [&](auto index_tag) {
      using T = decltype(type_tag);
      using I = decltype(index_tag);
      scatter_nd_kernel<T, I><<<blocks_for(tuples.slice), kThreadsPerBlock, 0, stream>>>(
          tuples, reduction, static_cast<const I*>(indices), static_cast<const T*>(updates),
          static_cast<T*>(out));
      return cudaGetLastError();
    });
  });
}

cudaError_t launch_scatter_elements_last_writer(int element_bytes, int index_bytes,
                                                const ElementsGeometry& g, const void* indices,
                                                const void* updates, void* out, long long* last,
                                                int64_t last_slots, cudaStream_t stream) {
  return with_element(element_bytes, [&](auto element_tag) {
    return with_index(index_bytes, [&](auto index_tag) {
      using U = decltype(element_tag);
      using I = decltype(index_tag);
      const auto* idx = static_cast<const I*>(indices);
      cudaError_t status =
          cudaMemsetAsync(last, 0xff, static_cast<size_t>(last_slots) * sizeof *last, stream);
      if (status != cudaSuccess) return status;
      scatter_elements_last_writer_kernel<I>
          <<<blocks_for(g.numel), kThreadsPerBlock, 0, stream>>>(g, idx, last);
      if ((status = cudaGetLastError()) != cudaSuccess) return status;
      scatter_elements_assign_last_kernel<U, I>
          <<<blocks_for(g.numel), kThreadsPerBlock, 0, stream>>>(
              g, idx, last, static_cast<const U*>(updates), static_cast<U*>(out));
      return cudaGetLastError();
    });
  });
}

cudaError_t launch_scatter_nd_last_writer(int element_bytes, int index_bytes,
                                          const IndexTuples& tuples, const void* indices,
                                          const void* updates, void* out, long long* last,
                                          int64_t last_slots, cudaStream_t stream) {
  return with_element(element_bytes, [&](auto element_tag) {
    return with_index(index_bytes, [&](auto index_tag) {
      using U = decltype(element_tag);
      using I = decltype(index_tag);
      const auto* idx = static_cast<const I*>(indices);
      cudaError_t status =
          cudaMemsetAsync(last, 0xff, static_cast<size_t>(last_slots) * sizeof *last, stream);
      if (status != cudaSuccess) return status;
      scatter_nd_last_writer_kernel<I>
          <<<blocks_for(tuples.tuples), kThreadsPerBlock, 0, stream>>>(tuples, idx, last);
      if ((status = cudaGetLastError()) != cudaSuccess) return status;
      scatter_nd_assign_last_kernel<U, I>
          <<<blocks_for(tuples.tuples * tuples.slice), kThreadsPerBlock, 0, stream>>>(
              tuples, idx, last, static_cast<const U*>(updates), static_cast<U*>(out));
      return cudaGetLastError();
    });
  });
}

cudaError_t launch_trilu(int element_bytes, const TriluGeometry& g, const void* x, void* y,
                         cudaStream_t stream) {
  return with_element(element_bytes, [&](auto tag) {
    using U = decltype(tag);
    trilu_kernel<U><<<blocks_for(g.numel), kThreadsPerBlock, 0, stream>>>(
        g, static_cast<const U*>(x), static_cast<U*>(y));
    return cudaGetLastError();
  });
}

cudaError_t launch_one_hot(int element_bytes, ElementType index_type, const OneHotGeometry& g,
                           const void* indices, const void* values, void* out,
                           cudaStream_t stream) {
  return with_element(element_bytes, [&](auto element_tag) {
    return with_type(index_type, [&](auto index_tag) {
      using U = decltype(element_tag);
      using I = decltype(index_tag);
      if constexpr (std::is_same_v<I, uint8_t>) {
        return cudaErrorInvalidValue;  // bool indices: the op table allows numeric ones only
      } else {
        one_hot_kernel<U, I><<<blocks_for(g.numel), kThreadsPerBlock, 0, stream>>>(
            g, static_cast<const I*>(indices), static_cast<const U*>(values), static_cast<U*>(out));
        return cudaGetLastError();
      }
    });
  });
}

cudaError_t launch_top_k(ElementType type, const TopKGeometry& g, const void* x, void* values,
                         int64_t* indices, cudaStream_t stream) {
  return with_type(type, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, uint8_t>) {
      return cudaErrorInvalidValue;  // TopK takes numeric types only
    } else {
      top_k_kernel<T><<<blocks_for(g.rows * g.n), kThreadsPerBlock, 0, stream>>>(
          g, static_cast<const T*>(x), static_cast<T*>(values), indices);
      return cudaGetLastError();
    }
  });
}

}  // namespace volta::cuda
