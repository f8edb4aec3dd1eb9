// Indexing-family kernels: the element gathers, the scatters, Trilu, OneHot and TopK, each the
// CPU's cpu/kernels/indexing.cpp step for step. Gathers, Trilu and OneHot only copy element
// bits; the scatters apply each output element's updates in the CPU's index order (one thread
// owns every update of an element); TopK places each element by its rank in the CPU's strict
// order, which is unique. No result depends on the launch geometry or the thread order.

#include <type_traits>

#include "map.cuh"

namespace volta::cuda {
namespace {

__device__ __forceinline__ int64_t from_end(int64_t index, int64_t dim) {
  return index < 0 ? index + dim : index;
}

template <class I>
__global__ void find_bad_tuple_index_kernel(IndexTuples t, const I* indices,
                                            unsigned long long* first_bad) {
  const int64_t n = t.tuples * t.k;
  for (int64_t p = first_index(); p < n; p += grid_stride()) {
    const int64_t dim = t.dims[p % t.k];
    const int64_t value = indices[p];
    if (value < -dim || value >= dim) atomicMin(first_bad, static_cast<unsigned long long>(p));
  }
}

// The data offset of tuple `tuple`'s indexed axes (the indices are in range).
template <class I>
__device__ __forceinline__ int64_t tuple_offset(const IndexTuples& t, const I* indices,
                                                int64_t tuple) {
  int64_t offset = 0;
  for (int j = 0; j < t.k; ++j) {
    offset += from_end(indices[tuple * t.k + j], t.dims[j]) * t.strides[j];
  }
  return offset;
}

template <class U, class I>
__global__ void gather_elements_kernel(ElementsGeometry g, const U* data, const I* indices,
                                       U* out) {
  for (int64_t p = first_index(); p < g.numel; p += grid_stride()) {
    int64_t rest = p;
    int64_t at = 0;
    for (int a = g.rank - 1; a >= 0; --a) {
      if (a != g.axis) at += rest % g.index_dims[a] * g.data_strides[a];
      rest /= g.index_dims[a];
    }
    out[p] = data[at + from_end(indices[p], g.dim) * g.data_strides[g.axis]];
  }
}

template <class U, class I>
__global__ void gather_nd_kernel(IndexTuples t, const U* data, const I* indices, U* out) {
  const int64_t n = t.tuples * t.slice;
  for (int64_t p = first_index(); p < n; p += grid_stride()) {
    const int64_t tuple = p / t.slice;
    const int64_t base = tuple / t.tuples_per_batch * t.batch_stride;
    out[p] = data[base + tuple_offset(t, indices, tuple) + p % t.slice];
  }
}

// The CPU's reduce_into: floats in their own type (one IEEE operation; -fmad=false keeps it
// one), integers wrapping in the unsigned type of their width, bool always assigned.
template <class T>
__device__ __forceinline__ T combine(ScatterReduction r, T current, T update) {
  if constexpr (std::is_same_v<T, uint8_t>) {
    return update;
  } else if constexpr (std::is_integral_v<T>) {
    using W = std::make_unsigned_t<T>;
    if (r == ScatterReduction::Add) {
      return static_cast<T>(static_cast<W>(current) + static_cast<W>(update));
    }
    if (r == ScatterReduction::Mul) {
      return static_cast<T>(static_cast<W>(current) * static_cast<W>(update));
    }
    return update;
  } else {
    if (r == ScatterReduction::Add) return current + update;
    if (r == ScatterReduction::Mul) return current * update;
    return update;
  }
}

// Line l of indices: every coordinate but the axis fixed (row-major over the other axes). Its
// updates go to one line of the output, which no other line touches.
template <class T, class I>
__global__ void scatter_elements_kernel(ElementsGeometry g, ScatterReduction r, const I* indices,
                                        const T* updates, T* out) {
  const int64_t length = g.index_dims[g.axis];
  const int64_t lines = g.numel / length;
  for (int64_t l = first_index(); l < lines; l += grid_stride()) {
    int64_t rest = l;
    int64_t at_data = 0;
    int64_t at_index = 0;
    int64_t index_stride = 1;
    int64_t axis_index_stride = 1;
    for (int a = g.rank - 1; a >= 0; --a) {
      if (a == g.axis) {
        axis_index_stride = index_stride;
      } else {
        const int64_t c = rest % g.index_dims[a];
        rest /= g.index_dims[a];
        at_data += c * g.data_strides[a];
        at_index += c * index_stride;
      }
      index_stride *= g.index_dims[a];
    }
    for (int64_t j = 0; j < length; ++j) {
      const int64_t p = at_index + j * axis_index_stride;
      T& target = out[at_data + from_end(indices[p], g.dim) * g.data_strides[g.axis]];
      target = combine(r, target, updates[p]);
    }
  }
}

template <class T, class I>
__global__ void scatter_nd_kernel(IndexTuples t, ScatterReduction r, const I* indices,
                                  const T* updates, T* out) {
  for (int64_t c = first_index(); c < t.slice; c += grid_stride()) {
    for (int64_t tuple = 0; tuple < t.tuples; ++tuple) {
      T& target = out[tuple_offset(t, indices, tuple) + c];
      target = combine(r, target, updates[tuple * t.slice + c]);
    }
  }
}

template <class U>
__global__ void trilu_kernel(TriluGeometry g, const U* x, U* y) {
  for (int64_t f = first_index(); f < g.numel; f += grid_stride()) {
    const int64_t c = f % g.cols;
    const int64_t i = f / g.cols % g.rows;
    const int64_t lo = g.upper ? min(max(i + g.k, int64_t{0}), g.cols) : 0;
    const int64_t hi = g.upper ? g.cols : min(max(i + g.k + 1, int64_t{0}), g.cols);
    y[f] = c >= lo && c < hi ? x[f] : U{0};
  }
}

// The CPU's one_hot_class: the class an index selects, or -1 (out of range, NaN). Float indices
// truncate toward zero in double.
template <class I>
__device__ __forceinline__ int64_t one_hot_class(I value, int64_t depth) {
  if constexpr (std::is_floating_point_v<I>) {
    const double t = trunc(static_cast<double>(value));
    if (!(t >= static_cast<double>(-depth) && t < static_cast<double>(depth))) return -1;
    return from_end(static_cast<int64_t>(t), depth);
  } else {
    const auto v = static_cast<int64_t>(value);
    if (v < -depth || v >= depth) return -1;
    return from_end(v, depth);
  }
}

template <class U, class I>
__global__ void one_hot_kernel(OneHotGeometry g, const I* indices, const U* values, U* out) {
  for (int64_t f = first_index(); f < g.numel; f += grid_stride()) {
    const int64_t c = f % g.inner;
    const int64_t row = f / g.inner;
    const int64_t d = row % g.depth;
    const int64_t o = row / g.depth;
    out[f] = one_hot_class(indices[o * g.inner + c], g.depth) == d ? values[1] : values[0];
  }
}

// The CPU's TopKOrder: whether element a (value x) ranks before element b (value y).
template <class T>
__device__ __forceinline__ bool ranks_before(T x, int64_t a, T y, int64_t b, bool largest) {
  if constexpr (std::is_floating_point_v<T>) {
    const bool nx = x != x;
    const bool ny = y != y;
    if (nx || ny) return nx == ny ? a < b : nx == largest;
  }
  if (x != y) return largest ? x > y : x < y;
  return a < b;
}

// Thread (row, j) counts the elements of its line ranked before element j, stopping at k.
template <class T>
__global__ void top_k_kernel(TopKGeometry g, const T* x, T* values, int64_t* indices) {
  const int64_t n = g.rows * g.n;
  for (int64_t p = first_index(); p < n; p += grid_stride()) {
    const int64_t row = p / g.n;
    const int64_t j = p % g.n;
    const int64_t o = row / g.inner;
    const int64_t i = row % g.inner;
    const T* line = x + o * g.n * g.inner + i;
    const T value = line[j * g.inner];
    int64_t rank = 0;
    for (int64_t m = 0; m < g.n && rank < g.k; ++m) {
      if (m != j && ranks_before(line[m * g.inner], m, value, j, g.largest)) ++rank;
    }
    if (rank < g.k) {
      const int64_t at = (o * g.k + rank) * g.inner + i;
      values[at] = value;
      indices[at] = j;
    }
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
cudaError_t with_index(int bytes, Fn&& fn) {
  if (bytes == 4) return fn(int32_t{});
  if (bytes == 8) return fn(int64_t{});
  return cudaErrorInvalidValue;
}

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
    find_bad_tuple_index_kernel<I><<<blocks_for(tuples.tuples * tuples.k), kThreadsPerBlock, 0,
                                     stream>>>(tuples, static_cast<const I*>(indices), first_bad);
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
            g, static_cast<const I*>(indices), static_cast<const U*>(values),
            static_cast<U*>(out));
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
