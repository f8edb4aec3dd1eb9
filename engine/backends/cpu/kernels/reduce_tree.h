#pragma once
// The fixed reduction tree shared by the reduction and normalization kernels.
//
// A row of n values is cut into leaves of kReductionChunk consecutive elements. Inside a
// leaf, element i accumulates into lane i % kReductionLanes in index order, and the lanes
// are combined pairwise. The leaf results are then combined pairwise, level by level. The
// tree depends on n alone, so a row gives the same bits whether its leaves are computed by
// one thread (reduce_row) or by many (the leaf-parallel path in reduction.cpp), and whatever
// the vector width the compiler picks for the lanes.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "cpu_kernel.h"

namespace volta::cpu {

// Keeps GCC's -O3 from unrolling a constant lane loop before the vectorizer sees it: unrolled
// into straight-line code, a lane loop whose combine is a select (max, min) is left scalar
// with a branch per element. At -O2 the loop is not unrolled early and vectorizes either way.
#if defined(__GNUC__) && !defined(__clang__)
#define VOLTA_LANE_LOOP _Pragma("GCC unroll 1")
#else
#define VOLTA_LANE_LOOP
#endif

// Independent accumulators per leaf: enough to fill a vector register (eight f32 lanes of AVX,
// two SSE registers) and hide the add latency, and a constant, never the machine's width.
inline constexpr int kReductionLanes = 8;

// Combines values[0, n) pairwise, level by level: (v0, v1), (v2, v3), ..., an odd last value
// carried up unchanged, until one remains. Overwrites `values`. Requires n >= 1.
template <class Acc, class Combine>
Acc combine_pairwise(Acc* values, int64_t n, const Combine& combine) {
  while (n > 1) {
    const int64_t pairs = n / 2;
    for (int64_t i = 0; i < pairs; ++i) values[i] = combine(values[2 * i], values[2 * i + 1]);
    if (n % 2 != 0) values[pairs] = values[n - 1];
    n = pairs + n % 2;
  }
  return values[0];
}

// combine_pairwise of one leaf's kReductionLanes lanes, written out: the same tree, which the
// compiler keeps in registers, where the loop form went through memory lane by lane (a short
// row's reduction is mostly this).
template <class Acc, class Combine>
Acc combine_lanes(const std::array<Acc, kReductionLanes>& lanes, const Combine& combine) {
  static_assert(kReductionLanes == 8, "the tree below is written for eight lanes");
  const Acc l01 = combine(lanes[0], lanes[1]);
  const Acc l23 = combine(lanes[2], lanes[3]);
  const Acc l45 = combine(lanes[4], lanes[5]);
  const Acc l67 = combine(lanes[6], lanes[7]);
  return combine(combine(l01, l23), combine(l45, l67));
}

// One leaf of n <= kReductionChunk elements: load(i) gives element i of the leaf. An empty
// leaf gives `identity`.
template <class Acc, class Load, class Combine>
Acc reduce_leaf(int64_t n, Acc identity, const Load& load, const Combine& combine) {
  std::array<Acc, kReductionLanes> lanes;
  lanes.fill(identity);
  int64_t i = 0;
  for (; i + kReductionLanes <= n; i += kReductionLanes) {
    VOLTA_LANE_LOOP
    for (int lane = 0; lane < kReductionLanes; ++lane) {
      lanes[lane] = combine(lanes[lane], load(i + lane));
    }
  }
  for (int lane = 0; i + lane < n; ++lane) lanes[lane] = combine(lanes[lane], load(i + lane));
  return combine_lanes(lanes, combine);
}

// The accumulator of the ops the op table marks Accumulator::Wide: f32 partial results are
// kept in double, where an f32 running total would overflow or drift while the result is finite.
template <class T>
using Wide = std::conditional_t<std::is_same_v<T, float>, double, T>;

// Elements per block of for_each_index_blocked: one AVX-512 register of f32.
inline constexpr int kIndexBlock = 16;

// Runs body(i) for every i in [0, n) in fixed blocks of kIndexBlock: a block with a constant
// trip count is what GCC vectorizes at -O2 (its "very cheap" cost model), where a plain loop of
// unknown length is left scalar. body(i) must touch element i alone (no reduction), so the
// block size never changes a result.
template <class Body>
void for_each_index_blocked(int64_t n, const Body& body) {
  int64_t i = 0;
  for (; i + kIndexBlock <= n; i += kIndexBlock) {
    VOLTA_LANE_LOOP
    for (int j = 0; j < kIndexBlock; ++j) body(i + j);
  }
  for (; i < n; ++i) body(i);
}

// Whether any of x[0, n) is NaN.
template <class T>
bool any_nan(const T* x, int64_t n) {
  if constexpr (std::is_floating_point_v<T>) {
    int64_t i = 0;
    for (; i + kIndexBlock <= n; i += kIndexBlock) {
      int found = 0;
      VOLTA_LANE_LOOP
      for (int j = 0; j < kIndexBlock; ++j) found |= x[i + j] != x[i + j] ? 1 : 0;
      if (found != 0) return true;
    }
    for (; i < n; ++i) {
      if (x[i] != x[i]) return true;
    }
  }
  return false;
}

inline int64_t leaf_count(int64_t n) { return (n + kReductionChunk - 1) / kReductionChunk; }
inline int64_t leaf_length(int64_t n, int64_t leaf) {
  return std::min(kReductionChunk, n - leaf * kReductionChunk);
}

// A whole row on the calling thread: load(i) gives element i of the row.
template <class Acc, class Load, class Combine>
Acc reduce_row(int64_t n, Acc identity, const Load& load, const Combine& combine) {
  if (n <= kReductionChunk) return reduce_leaf(n, identity, load, combine);
  std::vector<Acc> leaves(static_cast<size_t>(leaf_count(n)));
  for (size_t k = 0; k < leaves.size(); ++k) {
    const int64_t first = static_cast<int64_t>(k) * kReductionChunk;
    leaves[k] = reduce_leaf(
        leaf_length(n, static_cast<int64_t>(k)), identity,
        [&](int64_t i) { return load(first + i); }, combine);
  }
  return combine_pairwise(leaves.data(), static_cast<int64_t>(leaves.size()), combine);
}

// Two rows of the same length n at once: each gets exactly reduce_row's result, and the two
// lane chains are independent, so their adds overlap (a single leaf is one dependent chain).
template <class Acc, class Load0, class Load1, class Combine>
std::array<Acc, 2> reduce_row_pair(int64_t n, Acc identity, const Load0& load0, const Load1& load1,
                                   const Combine& combine) {
  if (n > kReductionChunk) {
    return {reduce_row(n, identity, load0, combine), reduce_row(n, identity, load1, combine)};
  }
  std::array<Acc, kReductionLanes> lanes0, lanes1;
  lanes0.fill(identity);
  lanes1.fill(identity);
  int64_t i = 0;
  for (; i + kReductionLanes <= n; i += kReductionLanes) {
    VOLTA_LANE_LOOP
    for (int lane = 0; lane < kReductionLanes; ++lane) {
      lanes0[lane] = combine(lanes0[lane], load0(i + lane));
      lanes1[lane] = combine(lanes1[lane], load1(i + lane));
    }
  }
  for (int lane = 0; i + lane < n; ++lane) {
    lanes0[lane] = combine(lanes0[lane], load0(i + lane));
    lanes1[lane] = combine(lanes1[lane], load1(i + lane));
  }
  return {combine_lanes(lanes0, combine), combine_lanes(lanes1, combine)};
}

template <class T>
bool is_nan(T value) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(value);
  } else {
    return false;
  }
}

// max and min that propagate NaN: once either operand is NaN the result is NaN. Otherwise the
// first operand is kept on ties, so which zero survives max(-0, +0) is fixed by the tree.
template <class T>
T max_propagating_nan(T a, T b) {
  return (!is_nan(a) && !(b <= a)) ? b : a;
}
template <class T>
T min_propagating_nan(T a, T b) {
  return (!is_nan(a) && !(b >= a)) ? b : a;
}
// The same on operands that are never NaN, without the NaN test: one compare and select
// (vmaxps / vminps keep the first operand on ties just the same).
template <class T>
T max_of_numbers(T a, T b) {
  return b > a ? b : a;
}
template <class T>
T min_of_numbers(T a, T b) {
  return b < a ? b : a;
}

// The identities of max and min: -inf / +inf for floats, the type's limits for integers.
template <class T>
constexpr T lowest_value() {
  if constexpr (std::numeric_limits<T>::has_infinity) {
    return -std::numeric_limits<T>::infinity();
  } else {
    return std::numeric_limits<T>::lowest();
  }
}
template <class T>
constexpr T highest_value() {
  if constexpr (std::numeric_limits<T>::has_infinity) {
    return std::numeric_limits<T>::infinity();
  } else {
    return std::numeric_limits<T>::max();
  }
}

// A tensor seen as [outer, axis, inner] around one axis (Softmax, ArgMax, CumSum, ...).
struct AxisSplit {
  int64_t outer = 1;
  int64_t axis = 1;
  int64_t inner = 1;
};
inline AxisSplit split_at_axis(const Shape& shape, int axis) {
  AxisSplit s;
  for (int i = 0; i < axis; ++i) s.outer *= shape[i];
  s.axis = shape[axis];
  for (int i = axis + 1; i < shape.rank(); ++i) s.inner *= shape[i];
  return s;
}

}  // namespace volta::cpu
