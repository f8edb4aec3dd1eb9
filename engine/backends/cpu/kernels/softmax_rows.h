#pragma once
// Softmax and LogSoftmax rows, shared by the normalization kernels (Softmax, LogSoftmax) and the
// loss kernels (SoftmaxCrossEntropyLoss's log-probabilities along the class axis).
//
// A row's max and sum use the fixed tree of reduce_tree.h, so its bits depend on the row alone.
// Special values follow the math with no masking: a row of all -inf computes (-inf) - (-inf) =
// NaN everywhere, a row holding +inf gives NaN everywhere too (inf - inf), and any NaN in a row
// makes the whole row NaN.

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "reduce_tree.h"
#include "simd.h"
#include "vector_math.h"

namespace volta::cpu::softmax_rows {

// f32 rows use the vectorizable exp of vector_math.h (<= 1 ULP); f64 rows use libm.
template <class T>
T exp_of(T v) {
  if constexpr (std::is_same_v<T, float>) {
    return vmath::exp_f32(v);
  } else {
    return std::exp(v);
  }
}

// Rows of length n per task: about kElementwiseChunk elements each.
inline int64_t rows_per_task(int64_t n) {
  return std::max<int64_t>(1, kElementwiseChunk / std::max<int64_t>(n, 1));
}

// The row max with the NaN-blind max_of_numbers: a NaN is skipped there, but it reaches the
// sum of exponentials (exp(NaN - max) is NaN), so every output of its row is NaN all the same,
// and the row needs no separate NaN scan.
inline constexpr auto kMaxOfNumbers = [](auto a, auto b) { return max_of_numbers(a, b); };
inline constexpr auto kPlus = [](auto a, auto b) { return a + b; };

// The outputs of a row from its max and its sum of exponentials: y holds e^(x - max) for
// Softmax already. Softmax multiplies by 1 / sum (a multiply per element instead of a
// divide).
template <class T, bool kLog>
void finish_row(const T* x, T* y, int64_t n, T max, T sum) {
  // A NaN sum (a NaN or +inf in the row) makes every output NaN. Written as the default NaN:
  // which NaN the arithmetic would pass on depends on the operand order each ISA's code picks.
  if (sum != sum) {
    std::fill_n(y, n, std::numeric_limits<T>::quiet_NaN());
    return;
  }
  if constexpr (kLog) {
    const T log_sum = std::log(sum);
    for_each_index_blocked(n, [=](int64_t i) { y[i] = (x[i] - max) - log_sum; });
  } else {
    const T inverse = T{1} / sum;
    for_each_index_blocked(n, [=](int64_t i) { y[i] = y[i] * inverse; });
  }
}

// Softmax (kLog false) or LogSoftmax (kLog true) of one contiguous row; y may be x. On the
// calling ISA: softmax_row dispatches.
template <class T, bool kLog>
void softmax_row_loop(const T* x, T* y, int64_t n) {
  const T max = reduce_row(
      n, lowest_value<T>(), [x](int64_t i) { return x[i]; }, kMaxOfNumbers);
  T sum;
  if constexpr (kLog) {
    sum = reduce_row(
        n, T{0}, [x, max](int64_t i) { return exp_of(x[i] - max); }, kPlus);
  } else {
    // Separate passes over the (cache-resident) row: the exponentials vectorize at full width
    // in a plain loop, and the sum's lane chain runs on its own.
    for_each_index_blocked(n, [=](int64_t i) { y[i] = exp_of(x[i] - max); });
    sum = reduce_row(
        n, T{0}, [y](int64_t i) { return y[i]; }, kPlus);
  }
  finish_row<T, kLog>(x, y, n, max, sum);
}

// Two rows at once, each with exactly softmax_row_loop's bits: a row's max and sum are one
// chain of dependent steps per lane, and two independent chains overlap.
template <class T, bool kLog>
void softmax_row_pair_loop(const T* x0, T* y0, const T* x1, T* y1, int64_t n) {
  const std::array<T, 2> maxes = reduce_row_pair(
      n, lowest_value<T>(), [x0](int64_t i) { return x0[i]; }, [x1](int64_t i) { return x1[i]; },
      kMaxOfNumbers);
  const T max0 = maxes[0];  // named copies: clang cannot capture structured bindings
  const T max1 = maxes[1];
  std::array<T, 2> sums;
  if constexpr (kLog) {
    sums = reduce_row_pair(
        n, T{0}, [x0, max0](int64_t i) { return exp_of(x0[i] - max0); },
        [x1, max1](int64_t i) { return exp_of(x1[i] - max1); }, kPlus);
  } else {
    for_each_index_blocked(n, [=](int64_t i) { y0[i] = exp_of(x0[i] - max0); });
    for_each_index_blocked(n, [=](int64_t i) { y1[i] = exp_of(x1[i] - max1); });
    sums = reduce_row_pair(
        n, T{0}, [y0](int64_t i) { return y0[i]; }, [y1](int64_t i) { return y1[i]; }, kPlus);
  }
  finish_row<T, kLog>(x0, y0, n, max0, sums[0]);
  finish_row<T, kLog>(x1, y1, n, max1, sums[1]);
}

// softmax_row_loop vectorized for the CPU's ISA (simd.h).
template <class T, bool kLog>
void softmax_row(const T* x, T* y, int64_t n) {
  with_simd([=] { softmax_row_loop<T, kLog>(x, y, n); });
}

// Contiguous rows [begin, end) of length n, two at a time, in one dispatch.
template <class T, bool kLog>
void softmax_rows_range(const T* x, T* y, int64_t n, int64_t begin, int64_t end) {
  with_simd([=] {
    int64_t r = begin;
    for (; r + 2 <= end; r += 2) {
      softmax_row_pair_loop<T, kLog>(x + r * n, y + r * n, x + (r + 1) * n, y + (r + 1) * n, n);
    }
    if (r < end) softmax_row_loop<T, kLog>(x + r * n, y + r * n, n);
  });
}

// Rows along a non-last axis are strided by `inner`. A task gathers a tile of up to kRowTile
// neighbouring rows into contiguous scratch (each step along the axis reads a contiguous run
// of the tile's columns), computes them there with softmax_row, and scatters them back.
inline constexpr int64_t kRowTile = 16;

// The `width` rows starting at x and y, each of n elements `stride` apart; scratch holds
// width * n elements.
template <class T, bool kLog>
void softmax_row_tile(const T* x, T* y, int64_t n, int64_t stride, int64_t width, T* scratch) {
  for (int64_t a = 0; a < n; ++a) {
    for (int64_t c = 0; c < width; ++c) scratch[c * n + a] = x[a * stride + c];
  }
  for (int64_t c = 0; c < width; ++c) softmax_row<T, kLog>(scratch + c * n, scratch + c * n, n);
  for (int64_t a = 0; a < n; ++a) {
    for (int64_t c = 0; c < width; ++c) y[a * stride + c] = scratch[c * n + a];
  }
}

// Softmax or LogSoftmax of x seen as [split.outer, split.axis, split.inner] along the middle
// axis, into y (which may be x). Tasks take fixed runs of rows or row tiles.
template <class T, bool kLog>
void softmax_along_axis(const T* x, T* y, const AxisSplit& split, ThreadPool& pool) {
  const int64_t n = split.axis;
  if (split.outer * n * split.inner == 0) return;
  if (split.inner == 1) {
    pool.parallel_chunks(split.outer, rows_per_task(n), [&](int64_t begin, int64_t end) {
      softmax_rows_range<T, kLog>(x, y, n, begin, end);
    });
    return;
  }
  const int64_t tiles_per_slice = (split.inner + kRowTile - 1) / kRowTile;
  const auto run_tiles = [&](int64_t begin, int64_t end) {
    std::vector<T> scratch(static_cast<size_t>(kRowTile * n));
    for (int64_t tile = begin; tile < end; ++tile) {
      const int64_t column = (tile % tiles_per_slice) * kRowTile;
      const int64_t first = (tile / tiles_per_slice) * n * split.inner + column;
      const int64_t width = std::min(kRowTile, split.inner - column);
      softmax_row_tile<T, kLog>(x + first, y + first, n, split.inner, width, scratch.data());
    }
  };
  pool.parallel_chunks(split.outer * tiles_per_slice, rows_per_task(n * kRowTile), run_tiles);
}

}  // namespace volta::cpu::softmax_rows
