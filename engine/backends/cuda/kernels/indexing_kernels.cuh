#pragma once
// The indexing family's kernels (kernels/indexing.cu launches them): the element gathers, the
// scatters, Trilu, OneHot and TopK, each the CPU's cpu/kernels/indexing.cpp step for step.
// Every thread owns its outputs (a scatter thread owns every update of its elements, applied
// in the CPU's index order), so no result depends on the grid or on the order threads run.
//
// Plain CUDA C++ over launch.h, so that a host test can also run it under an emulation of the
// CUDA thread model (tests/cuda_indexing_emulation_test.cpp).

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "grid_loop.cuh"
#include "launch.h"

namespace volta::cuda::indexing_detail {

// v clamped to [0, hi].
__device__ __forceinline__ int64_t clamp_to(int64_t v, int64_t hi) {
  return v < 0 ? 0 : (v > hi ? hi : v);
}

__device__ __forceinline__ int64_t from_end(int64_t index, int64_t dim) {
  return index < 0 ? index + dim : index;
}

template <class I>
__global__ void find_bad_tuple_index_kernel(IndexTuples t, const I* indices,
                                            unsigned long long* first_bad) {
  const int64_t n = t.tuples * t.k;
  for (int64_t p = thread_begin(); p < n; p += thread_stride()) {
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

// The data offset index position p of GatherElements / ScatterElements names: p's coordinates
// in data's layout, the axis coordinate replaced by the index there (in range).
template <class I>
__device__ __forceinline__ int64_t element_target(const ElementsGeometry& g, const I* indices,
                                                  int64_t p) {
  int64_t rest = p;
  int64_t at = 0;
  for (int a = g.rank - 1; a >= 0; --a) {
    if (a != g.axis) at += rest % g.index_dims[a] * g.data_strides[a];
    rest /= g.index_dims[a];
  }
  return at + from_end(indices[p], g.dim) * g.data_strides[g.axis];
}

template <class U, class I>
__global__ void gather_elements_kernel(ElementsGeometry g, const U* data, const I* indices,
                                       U* out) {
  for (int64_t p = thread_begin(); p < g.numel; p += thread_stride()) {
    out[p] = data[element_target(g, indices, p)];
  }
}

template <class U, class I>
__global__ void gather_nd_kernel(IndexTuples t, const U* data, const I* indices, U* out) {
  const int64_t n = t.tuples * t.slice;
  for (int64_t p = thread_begin(); p < n; p += thread_stride()) {
    const int64_t tuple = p / t.slice;
    const int64_t base = tuple / t.tuples_per_batch * t.batch_stride;
    out[p] = data[base + tuple_offset(t, indices, tuple) + p % t.slice];
  }
}

// The CPU's reduce_into: floats in their own type (one IEEE operation; -fmad=false keeps it
// one), integers wrapping in the unsigned type of their width, max and min as numpy's (a NaN
// propagates, the current one first; of equals the current one stays), bool always assigned.
template <class T>
__device__ __forceinline__ T combine(ScatterReduction r, T current, T update) {
  if constexpr (std::is_same_v<T, uint8_t>) {
    return update;
  } else if (r == ScatterReduction::Max) {
    if (current != current) return current;
    return update != update || update > current ? update : current;
  } else if (r == ScatterReduction::Min) {
    if (current != current) return current;
    return update != update || update < current ? update : current;
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
  for (int64_t l = thread_begin(); l < lines; l += thread_stride()) {
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
  for (int64_t c = thread_begin(); c < t.slice; c += thread_stride()) {
    for (int64_t tuple = 0; tuple < t.tuples; ++tuple) {
      T& target = out[tuple_offset(t, indices, tuple) + c];
      target = combine(r, target, updates[tuple * t.slice + c]);
    }
  }
}

// Reduction "none" by last writer: the CPU applies an element's updates in index order, so the
// last one wins; an integer atomicMax over the update positions finds it whatever the thread
// order, then only the winners write. `last` (all -1 before) has one slot per target: per data
// element for ScatterElements, per slice for ScatterND.
template <class I>
__global__ void scatter_elements_last_writer_kernel(ElementsGeometry g, const I* indices,
                                                    long long* last) {
  for (int64_t p = thread_begin(); p < g.numel; p += thread_stride()) {
    atomicMax(&last[element_target(g, indices, p)], static_cast<long long>(p));
  }
}

template <class U, class I>
__global__ void scatter_elements_assign_last_kernel(ElementsGeometry g, const I* indices,
                                                    const long long* last, const U* updates,
                                                    U* out) {
  for (int64_t p = thread_begin(); p < g.numel; p += thread_stride()) {
    const int64_t target = element_target(g, indices, p);
    if (last[target] == p) out[target] = updates[p];
  }
}

// A tuple's offset is a multiple of the slice (the strides of the indexed axes are).
template <class I>
__global__ void scatter_nd_last_writer_kernel(IndexTuples t, const I* indices, long long* last) {
  for (int64_t tuple = thread_begin(); tuple < t.tuples; tuple += thread_stride()) {
    atomicMax(&last[tuple_offset(t, indices, tuple) / t.slice], static_cast<long long>(tuple));
  }
}

template <class U, class I>
__global__ void scatter_nd_assign_last_kernel(IndexTuples t, const I* indices,
                                              const long long* last, const U* updates, U* out) {
  const int64_t n = t.tuples * t.slice;
  for (int64_t p = thread_begin(); p < n; p += thread_stride()) {
    const int64_t tuple = p / t.slice;
    const int64_t offset = tuple_offset(t, indices, tuple);
    if (last[offset / t.slice] == tuple) out[offset + p % t.slice] = updates[p];
  }
}

template <class U>
__global__ void trilu_kernel(TriluGeometry g, const U* x, U* y) {
  for (int64_t f = thread_begin(); f < g.numel; f += thread_stride()) {
    const int64_t c = f % g.cols;
    const int64_t i = f / g.cols % g.rows;
    const int64_t lo = g.upper ? clamp_to(i + g.k, g.cols) : 0;
    const int64_t hi = g.upper ? g.cols : clamp_to(i + g.k + 1, g.cols);
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
  for (int64_t f = thread_begin(); f < g.numel; f += thread_stride()) {
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
  for (int64_t p = thread_begin(); p < n; p += thread_stride()) {
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

}  // namespace volta::cuda::indexing_detail
