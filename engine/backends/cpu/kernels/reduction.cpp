// Reduce*, ArgMax / ArgMin and CumSum on the CPU.
//
// Reduce*: every output reduces its row of input elements (the reduced axes, in row-major
// order) with the fixed tree of reduce_tree.h. Work items are (leaf, output block) pairs in
// fixed runs, so a reduce-all over millions of elements still spreads over every thread, and
// the bits never depend on the thread count, nor on the memory layout of the rows. Integers
// accumulate in their own type and wrap around.
// A NaN output is the canonical quiet NaN, whatever NaN the row held.
// ArgMax / ArgMin select exactly (no arithmetic), so any scan order gives the same index.
// CumSum runs along each line in index order; tasks take fixed runs of lines.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "dtype_kernels.h"
#include "reduce_tree.h"
#include "simd.h"
#include "volta/ir/op_helpers.h"

namespace volta::cpu {
namespace {

// A variant that names the ISA its row loops run on (simd.h), e.g.
// "softmax_rows_tree4096x8_avx512".
std::string with_isa(std::string_view what) {
  return std::string(what) + "_" + std::string(simd_isa());
}

// ---------------------------------------------------------------------------------------
// Integer arithmetic that wraps around (two's complement) instead of overflowing.

template <class T>
T wrapping_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <class T>
T wrapping_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}
// |lowest| does not fit: it wraps to lowest, as in two's complement negation.
template <class T>
T wrapping_abs(T a) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return a < 0 ? static_cast<T>(U{0} - static_cast<U>(a)) : a;
  } else {
    return std::abs(a);
  }
}

// ---------------------------------------------------------------------------------------
// Reduce* ops as the engine sees them: `map` turns an input element of output o's row into a
// term of type Acc, `combine` accumulates terms (associative in exact arithmetic; the tree
// fixes the rounding) and `finish` turns the combined terms of a row of `count` elements into
// the output. An empty row finishes from identity().

// ReduceL2 accumulates in Wide<T> (reduce_tree.h): the f32 sum of squares under the root can
// overflow while the result is finite. ReduceProd keeps its exponent apart (ScaledProduct).
template <class T, class A>
struct SumOf {
  using Acc = A;
  A identity() const { return A{0}; }
  A map(int64_t /*output*/, T x) const { return static_cast<A>(x); }
  A combine(A a, A b) const { return wrapping_add(a, b); }
  T finish(int64_t /*output*/, A total, int64_t /*count*/) const { return static_cast<T>(total); }
};
template <class T>
struct SumOp : SumOf<T, T> {};
template <class T>
struct MeanOp : SumOp<T> {
  // An empty row gives 0 / 0 = NaN, the mean of nothing.
  T finish(int64_t /*output*/, T total, int64_t count) const {
    return total / static_cast<T>(count);
  }
};
template <class T, class A>
struct SquaresOf : SumOf<T, A> {
  A map(int64_t /*output*/, T x) const {
    return wrapping_mul(static_cast<A>(x), static_cast<A>(x));
  }
};
template <class T>
struct SumSquareOp : SquaresOf<T, T> {};
template <class T>
struct L1Op : SumOp<T> {
  T map(int64_t /*output*/, T x) const { return wrapping_abs(x); }
};
template <class T>
struct L2Op : SquaresOf<T, Wide<T>> {
  T finish(int64_t /*output*/, Wide<T> total, int64_t /*count*/) const {
    return static_cast<T>(std::sqrt(total));
  }
};
// Float products keep their binary exponent apart: value = mantissa * 2^exponent with the
// mantissa a double in [0.5, 1) (or 0, NaN, infinite), renormalized by frexp at every step. No
// partial product overflows or underflows, so a row holding a 0 gives 0 however large the
// other values are, and the result rounds once, at the end.
struct ScaledProduct {
  double mantissa = 1.0;
  int64_t exponent = 0;
};
inline ScaledProduct normalized(double mantissa, int64_t exponent) {
  int e = 0;
  const double m = std::frexp(mantissa, &e);
  return {m, std::isfinite(m) ? exponent + e : 0};
}
template <class T>
struct ScaledProdOp {
  using Acc = ScaledProduct;
  Acc identity() const { return {}; }
  Acc map(int64_t /*output*/, T x) const { return normalized(static_cast<double>(x), 0); }
  Acc combine(Acc a, Acc b) const {
    return normalized(a.mantissa * b.mantissa, a.exponent + b.exponent);
  }
  T finish(int64_t /*output*/, Acc total, int64_t /*count*/) const {
    constexpr int64_t kBeyondAnyRange = 4096;  // past f64's exponents either way
    return static_cast<T>(std::ldexp(
        total.mantissa,
        static_cast<int>(std::clamp(total.exponent, -kBeyondAnyRange, kBeyondAnyRange))));
  }
};
// Integer products wrap around in their own type.
template <class T>
struct WrappingProdOp : SumOf<T, T> {
  T identity() const { return T{1}; }
  T combine(T a, T b) const { return wrapping_mul(a, b); }
};
template <class T>
struct ProdOp
    : std::conditional_t<std::is_floating_point_v<T>, ScaledProdOp<T>, WrappingProdOp<T>> {};
// combine_numbers: the same combine on operands that are never NaN, for leaves without NaN.
template <class T>
struct MaxOp : SumOp<T> {
  T identity() const { return lowest_value<T>(); }
  T combine(T a, T b) const { return max_propagating_nan(a, b); }
  T combine_numbers(T a, T b) const { return max_of_numbers(a, b); }
};
template <class T>
struct MinOp : SumOp<T> {
  T identity() const { return highest_value<T>(); }
  T combine(T a, T b) const { return min_propagating_nan(a, b); }
  T combine_numbers(T a, T b) const { return min_of_numbers(a, b); }
};
// The second pass of ReduceLogSumExp: sum exp(x - max) given each row's max. A row whose max
// is not finite has its answer already: -inf (every term -inf, or no terms), +inf, or NaN.
template <class T>
struct ExpSumAboveMaxOp : SumOp<T> {
  const T* row_max = nullptr;
  T map(int64_t output, T x) const { return std::exp(x - row_max[output]); }
  T finish(int64_t output, T total, int64_t /*count*/) const {
    const T max = row_max[output];
    return std::isfinite(max) ? max + std::log(total) : max;
  }
};

// ---------------------------------------------------------------------------------------
// Where each output's row lives in the input. Size-1 axes are dropped and neighbouring axes
// of the same kind (kept or reduced) merged, so a reduction over trailing axes becomes one
// contiguous row per output and anything else a short list of strided extents.

struct Extent {
  int64_t size;
  int64_t stride;  // in elements of the input
};

// How the engine reads the rows. All three give the same bits: the tree is the row's.
enum class RowAccess {
  Contiguous,  // output o reads input[o * row, (o + 1) * row)
  Columns,     // the input's last axis is kept: neighbouring outputs read neighbouring elements
  Gathered,    // anything else: element offsets computed per leaf
};

class ReduceLayout {
 public:
  ReduceLayout(const Shape& input, const ReduceAxes& axes) {
    const std::vector<int64_t> strides = input.strides();
    const std::vector<Extent>* previous = nullptr;
    for (int a = 0; a < input.rank(); ++a) {
      if (input[a] == 1) continue;
      std::vector<Extent>& group = axes.reduces(a) ? reduced_ : kept_;
      const Extent extent{input[a], strides[static_cast<size_t>(a)]};
      if (previous == &group) {
        group.back() = {group.back().size * extent.size, extent.stride};
      } else {
        group.push_back(extent);
      }
      previous = &group;
    }
    for (const Extent& e : kept_) outputs_ *= e.size;
    for (const Extent& e : reduced_) row_length_ *= e.size;
  }

  int64_t outputs() const { return outputs_; }
  int64_t row_length() const { return row_length_; }

  RowAccess access() const {
    const bool reduced_unit = reduced_.empty() || (reduced_.size() == 1 && reduced_[0].stride == 1);
    const bool kept_outer = kept_.empty() || (kept_.size() == 1 && kept_[0].stride == row_length_);
    if (reduced_unit && kept_outer) return RowAccess::Contiguous;
    if (!kept_.empty() && kept_.back().stride == 1) return RowAccess::Columns;
    return RowAccess::Gathered;
  }

  // On the Columns path: how many neighbouring outputs read neighbouring elements.
  int64_t column_run() const { return kept_.back().size; }

  // Input offset of output o's first row element.
  int64_t row_start(int64_t output) const { return offset_of(kept_, output); }

  // Offsets, relative to row_start, of row elements [first, first + count).
  void row_offsets(int64_t first, int64_t count, int64_t* offsets) const {
    if (count == 0) return;
    std::vector<int64_t> index(reduced_.size());
    int64_t rest = first;
    for (size_t d = reduced_.size(); d-- > 0;) {
      index[d] = rest % reduced_[d].size;
      rest /= reduced_[d].size;
    }
    int64_t offset = offset_of(reduced_, first);
    for (int64_t i = 0; i < count; ++i) {
      offsets[i] = offset;
      for (size_t d = reduced_.size(); d-- > 0;) {  // odometer step, innermost extent first
        offset += reduced_[d].stride;
        if (++index[d] < reduced_[d].size) break;
        offset -= reduced_[d].stride * reduced_[d].size;
        index[d] = 0;
      }
    }
  }

 private:
  static int64_t offset_of(const std::vector<Extent>& extents, int64_t flat) {
    int64_t offset = 0;
    for (size_t d = extents.size(); d-- > 0;) {
      offset += (flat % extents[d].size) * extents[d].stride;
      flat /= extents[d].size;
    }
    return offset;
  }

  std::vector<Extent> kept_, reduced_;
  int64_t outputs_ = 1;
  int64_t row_length_ = 1;
};

// Op's output for a row, a NaN made the canonical quiet NaN. Which NaN a sum or a max of several
// ends with (its sign and payload) depends on the operand order of each step, which the
// compiler may commute in scalar code at one optimization level and not another; one NaN keeps
// the bits of every ISA and build equal.
template <class Op, class A>
auto finished_output(const Op& op, int64_t output, A total, int64_t count) {
  auto value = op.finish(output, total, count);
  using T = decltype(value);
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(value)) return std::numeric_limits<T>::quiet_NaN();
  }
  return value;
}

// Outputs reduced together by one work item: on the Columns path up to column_block<Acc>
// neighbours within one run of the innermost kept axis, otherwise a single output. A block's
// lanes take kColumnLaneBytes (32 KiB: L1-resident), so an f32 block is 1024 outputs and each
// step reads 4 KiB of contiguous input: a [rows, 1024] input reduced over its rows is then read
// front to back, one page after the next, where narrower blocks visit every page once per
// block and leave the hardware prefetcher a fresh page every few lines. The width never
// changes a result: every output accumulates its own lanes.
inline constexpr size_t kColumnLaneBytes = 32 * 1024;
template <class A>
inline constexpr int64_t column_block =
    static_cast<int64_t>(std::max<size_t>(16, kColumnLaneBytes / (sizeof(A) * kReductionLanes)));

struct OutputBlocks {
  OutputBlocks(int64_t outputs, int64_t run_length, int64_t block_width)
      : run(run_length),
        width(block_width),
        per_run((run_length + block_width - 1) / block_width),
        count(outputs / run_length * per_run) {}
  int64_t first(int64_t block) const { return block / per_run * run + block % per_run * width; }
  int64_t size(int64_t block) const { return std::min(width, run - block % per_run * width); }

  int64_t run;      // outputs per run; blocks never straddle two runs
  int64_t width;    // outputs per full block
  int64_t per_run;  // blocks per run
  int64_t count;    // blocks in all
};

// Leaf results of `width` neighbouring outputs whose elements sit side by side in the input.
// Each output's element i goes to its lane i % kReductionLanes in index order and the lanes
// combine pairwise, exactly as in reduce_leaf, but every step loads `width` contiguous values.
template <class T, class Op>
void reduce_leaf_columns(const Op& op, const T* start, const int64_t* offsets, int64_t count,
                         int64_t first_output, int64_t width, typename Op::Acc* results) {
  using A = typename Op::Acc;
  std::array<std::array<A, column_block<A>>, kReductionLanes> lanes;
  for (auto& lane : lanes) lane.fill(op.identity());
  for (int64_t i = 0; i < count; ++i) {
    const T* elements = start + offsets[i];
    A* lane = lanes[static_cast<size_t>(i % kReductionLanes)].data();
    for_each_index_blocked(width, [&](int64_t c) {
      lane[c] = op.combine(lane[c], op.map(first_output + c, elements[c]));
    });
  }
  const auto combine = [&op](A a, A b) { return op.combine(a, b); };
  for (int64_t c = 0; c < width; ++c) {
    std::array<A, kReductionLanes> column;
    for (size_t l = 0; l < column.size(); ++l) column[l] = lanes[l][static_cast<size_t>(c)];
    results[c] = combine_lanes(column, combine);
  }
}

// Reduces every output's row with `op`. Work items are (leaf, output block) pairs numbered
// leaf * blocks + block, in fixed runs per task, so that the items of a task mostly share a
// leaf (and its element offsets). Rows of more than one leaf keep their leaf results in a
// [leaf][output] buffer and combine them pairwise afterwards, exactly as reduce_row would.
template <class T, class Op>
void reduce_rows(const Op& op, const T* x, T* y, const ReduceLayout& layout, ThreadPool& pool) {
  using A = typename Op::Acc;
  const int64_t outputs = layout.outputs();
  const int64_t row = layout.row_length();
  if (outputs == 0) return;
  if (row == 0) {
    for (int64_t o = 0; o < outputs; ++o) y[o] = finished_output(op, o, op.identity(), 0);
    return;
  }
  const RowAccess access = layout.access();
  const int64_t leaves = leaf_count(row);
  // Narrower column blocks where full ones would give a thread fewer than two items (the width
  // never changes a result, so it may follow the thread count).
  const int64_t min_items = pool.num_threads() > 1 ? 2 * int64_t{pool.num_threads()} : 1;
  int64_t width = column_block<A>;
  while (access == RowAccess::Columns && width > 64 &&
         leaves * OutputBlocks(outputs, layout.column_run(), width).count < min_items) {
    width /= 2;
  }
  const OutputBlocks blocks = access == RowAccess::Columns
                                  ? OutputBlocks(outputs, layout.column_run(), width)
                                  : OutputBlocks(outputs, 1, 1);
  std::vector<A> partials(leaves > 1 ? static_cast<size_t>(leaves * outputs) : 0);
  const auto combine = [&op](A a, A b) { return op.combine(a, b); };

  // Writes the leaf results of `block` to results[0, blocks.size(block)).
  const auto reduce_block_leaf = [&](int64_t leaf, int64_t block, const int64_t* offsets,
                                     A* results) {
    const int64_t o = blocks.first(block);
    const int64_t count = leaf_length(row, leaf);
    const A identity = op.identity();
    switch (access) {
      case RowAccess::Contiguous: {
        const T* elements = x + o * row + leaf * kReductionChunk;
        const auto load = [&](int64_t i) { return op.map(o, elements[i]); };
        // Max and Min of a leaf without NaN: the select without the NaN test gives the same
        // value at a fraction of the latency per step.
        if constexpr (requires { op.combine_numbers(identity, identity); }) {
          if (!any_nan(elements, count)) {
            results[0] = reduce_leaf(count, identity, load,
                                     [&op](A a, A b) { return op.combine_numbers(a, b); });
            return;
          }
        }
        results[0] = reduce_leaf(count, identity, load, combine);
        return;
      }
      case RowAccess::Gathered: {
        const T* start = x + layout.row_start(o);
        results[0] = reduce_leaf(
            count, identity, [&](int64_t i) { return op.map(o, start[offsets[i]]); }, combine);
        return;
      }
      case RowAccess::Columns:
        reduce_leaf_columns(op, x + layout.row_start(o), offsets, count, o, blocks.size(block),
                            results);
        return;
    }
  };

  const int64_t items_per_task =
      std::max<int64_t>(1, kElementwiseChunk / (std::min(row, kReductionChunk) * blocks.width));
  pool.parallel_chunks(leaves * blocks.count, items_per_task, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> offsets;
    int64_t offsets_leaf = -1;
    std::array<A, column_block<A>> block_results;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t leaf = item / blocks.count;
      const int64_t block = item % blocks.count;
      if (access != RowAccess::Contiguous && offsets_leaf != leaf) {
        offsets.resize(static_cast<size_t>(leaf_length(row, leaf)));
        layout.row_offsets(leaf * kReductionChunk, leaf_length(row, leaf), offsets.data());
        offsets_leaf = leaf;
      }
      const int64_t o = blocks.first(block);
      with_simd([&] {
        if (leaves > 1) {
          reduce_block_leaf(leaf, block, offsets.data(), partials.data() + leaf * outputs + o);
          return;
        }
        reduce_block_leaf(leaf, block, offsets.data(), block_results.data());
        for (int64_t c = 0; c < blocks.size(block); ++c) {
          y[o + c] = finished_output(op, o + c, block_results[static_cast<size_t>(c)], row);
        }
      });
    }
  });
  if (leaves == 1) return;

  const int64_t outputs_per_task = std::max<int64_t>(1, kElementwiseChunk / leaves);
  pool.parallel_chunks(outputs, outputs_per_task, [&](int64_t begin, int64_t end) {
    std::vector<A> row_partials(static_cast<size_t>(leaves));
    for (int64_t o = begin; o < end; ++o) {
      for (int64_t leaf = 0; leaf < leaves; ++leaf) {
        row_partials[static_cast<size_t>(leaf)] = partials[static_cast<size_t>(leaf * outputs + o)];
      }
      y[o] = finished_output(op, o, combine_pairwise(row_partials.data(), leaves, combine), row);
    }
  });
}

// noop_with_empty_axes with no axes: the identity, without even the op's map.
void copy_input(const KernelArgs& args) {
  const ConstTensorView& in = args.inputs[0];
  if (in.numel() == 0) return;
  std::memcpy(args.outputs[0].data, in.data,
              static_cast<size_t>(in.numel()) * dtype_size(in.dtype));
}

template <template <class> class Op>
struct ReduceKernel {
  template <class T>
  struct Of {
    static void run(const KernelArgs& args) {
      const ReduceAxes axes = resolve_reduce_axes(args.attrs, args.inputs[0].shape.rank());
      if (axes.noop) return copy_input(args);
      reduce_rows(Op<T>{}, args.inputs[0].as<T>(), args.outputs[0].as<T>(),
                  ReduceLayout(args.inputs[0].shape, axes), args.pool);
    }
  };
};

// log(sum(exp(x))) as max + log(sum(exp(x - max))): two passes, so no term overflows.
template <class T>
struct ReduceLogSumExpKernel {
  static void run(const KernelArgs& args) {
    const ReduceAxes axes = resolve_reduce_axes(args.attrs, args.inputs[0].shape.rank());
    if (axes.noop) return copy_input(args);
    const ReduceLayout layout(args.inputs[0].shape, axes);
    const T* x = args.inputs[0].as<T>();
    std::vector<T> row_max(static_cast<size_t>(layout.outputs()));
    reduce_rows(MaxOp<T>{}, x, row_max.data(), layout, args.pool);
    reduce_rows(ExpSumAboveMaxOp<T>{{}, row_max.data()}, x, args.outputs[0].as<T>(), layout,
                args.pool);
  }
};

// ---------------------------------------------------------------------------------------
// Axis walks shared by ArgMax / ArgMin and CumSum: the tensor is [outer, axis, inner] and
// each (outer, inner) position is one line along the axis. Tasks take fixed runs of lines;
// a run is processed one outer slice at a time, its inner positions side by side, so every
// step along the axis reads contiguous memory.

int64_t lines_per_task(const AxisSplit& split) {
  return std::max<int64_t>(1, kElementwiseChunk / std::max<int64_t>(split.axis, 1));
}

// Calls body(outer, first, last) for the pieces of lines [begin, end) within one slice:
// inner positions [first, last) of slice `outer`.
template <class Body>
void for_each_slice_run(const AxisSplit& split, int64_t begin, int64_t end, const Body& body) {
  while (begin < end) {
    const int64_t outer = begin / split.inner;
    const int64_t first = begin % split.inner;
    const int64_t last = std::min(split.inner, first + (end - begin));
    body(outer, first, last);
    begin += last - first;
  }
}

// Whether `candidate`, met after `best` along the axis, takes its place. NaN counts as the
// extreme and the first NaN wins; select_last_index makes the last of equals (or NaNs) win.
template <class T, bool kMax>
bool replaces(T candidate, T best, bool select_last) {
  if (is_nan(best)) return select_last && is_nan(candidate);
  if (is_nan(candidate)) return true;
  if (candidate == best) return select_last;
  return kMax ? candidate > best : candidate < best;
}

template <bool kMax>
struct ArgExtremeKernel {
  template <class T>
  struct Of {
    static void run(const KernelArgs& args) {
      const ConstTensorView& in = args.inputs[0];
      const int axis = *normalize_axis(args.attrs.get_int("axis"), in.shape.rank());
      const AxisSplit split = split_at_axis(in.shape, axis);
      const bool select_last = args.attrs.get_int("select_last_index") != 0;
      const T* x = in.as<T>();
      int64_t* indices = args.outputs[0].as<int64_t>();
      const int64_t lines = split.outer * split.inner;
      args.pool.parallel_chunks(lines, lines_per_task(split), [&](int64_t begin, int64_t end) {
        std::vector<T> best(static_cast<size_t>(std::min(split.inner, end - begin)));
        for_each_slice_run(split, begin, end, [&](int64_t outer, int64_t first, int64_t last) {
          const T* slice = x + outer * split.axis * split.inner;
          int64_t* slice_indices = indices + outer * split.inner;
          std::copy(slice + first, slice + last, best.begin());
          std::fill(slice_indices + first, slice_indices + last, 0);
          for (int64_t a = 1; a < split.axis; ++a) {
            const T* line = slice + a * split.inner;
            for (int64_t i = first; i < last; ++i) {
              T& current = best[static_cast<size_t>(i - first)];
              if (replaces<T, kMax>(line[i], current, select_last)) {
                current = line[i];
                slice_indices[i] = a;
              }
            }
          }
        });
      });
    }
  };
};

// Lines along the last axis keep their running sum in a register; lines across it keep theirs
// side by side in a buffer, each step adding the step's input line. f32 sums run in double
// (Accumulator::Wide): a long scan in f32 drifts where the sum cancels to near zero.
template <class T>
struct CumSumKernel {
  static void run(const KernelArgs& args) {
    using A = Wide<T>;
    const ConstTensorView& in = args.inputs[0];
    const int axis = *normalize_axis(args.attrs.get_int("axis"), in.shape.rank());
    const AxisSplit split = split_at_axis(in.shape, axis);
    const bool exclusive = args.attrs.get_int("exclusive") != 0;
    const bool reverse = args.attrs.get_int("reverse") != 0;
    const T* x = in.as<T>();
    T* y = args.outputs[0].as<T>();
    if (split.axis == 0) return;
    const auto line_start = [&](int64_t outer, int64_t step) {
      const int64_t a = reverse ? split.axis - 1 - step : step;
      return (outer * split.axis + a) * split.inner;
    };
    const int64_t lines = split.outer * split.inner;
    args.pool.parallel_chunks(lines, lines_per_task(split), [&](int64_t begin, int64_t end) {
      if (split.inner == 1) {  // contiguous lines: the running sum stays in a register
        for (int64_t outer = begin; outer < end; ++outer) {
          A sum{0};
          for (int64_t step = 0; step < split.axis; ++step) {
            const int64_t at = line_start(outer, step);
            const A value = static_cast<A>(x[at]);
            if (exclusive) y[at] = static_cast<T>(sum);
            sum = wrapping_add(sum, value);
            if (!exclusive) y[at] = static_cast<T>(sum);
          }
        }
        return;
      }
      std::vector<A> sums;
      for_each_slice_run(split, begin, end, [&](int64_t outer, int64_t first, int64_t last) {
        sums.assign(static_cast<size_t>(last - first), A{0});
        for (int64_t step = 0; step < split.axis; ++step) {
          const T* line = x + line_start(outer, step) + first;
          T* out = y + line_start(outer, step) + first;
          for_each_index_blocked(last - first, [&](int64_t i) {
            const A before = sums[static_cast<size_t>(i)];
            const A after = wrapping_add(before, static_cast<A>(line[i]));
            sums[static_cast<size_t>(i)] = after;
            out[i] = static_cast<T>(exclusive ? before : after);
          });
        }
      });
    });
  }
};

// ---------------------------------------------------------------------------------------

const OpDTypeKernels& reduction_kernels() {
  static const OpDTypeKernels kKernels = [] {
    using K = OpKind;
    OpDTypeKernels f{};
    auto at = [&f](K op) -> DTypeKernels& { return f[static_cast<size_t>(op_index(op))]; };
    at(K::ReduceSum) =
        kernels_for<ReduceKernel<SumOp>::Of>(NumericTypes{}, with_isa("reduce_sum_tree4096x8"));
    at(K::ReduceMean) =
        kernels_for<ReduceKernel<MeanOp>::Of>(FloatTypes{}, with_isa("reduce_mean_tree4096x8"));
    at(K::ReduceMax) =
        kernels_for<ReduceKernel<MaxOp>::Of>(NumericTypes{}, with_isa("reduce_max_tree4096x8"));
    at(K::ReduceMin) =
        kernels_for<ReduceKernel<MinOp>::Of>(NumericTypes{}, with_isa("reduce_min_tree4096x8"));
    at(K::ReduceProd) =
        kernels_for<ReduceKernel<ProdOp>::Of>(NumericTypes{}, with_isa("reduce_prod_tree4096x8"));
    at(K::ReduceSumSquare) = kernels_for<ReduceKernel<SumSquareOp>::Of>(
        NumericTypes{}, with_isa("reduce_sum_square_tree4096x8"));
    at(K::ReduceL1) =
        kernels_for<ReduceKernel<L1Op>::Of>(NumericTypes{}, with_isa("reduce_l1_tree4096x8"));
    at(K::ReduceL2) =
        kernels_for<ReduceKernel<L2Op>::Of>(FloatTypes{}, with_isa("reduce_l2_tree4096x8"));
    at(K::ReduceLogSumExp) = kernels_for<ReduceLogSumExpKernel>(
        FloatTypes{}, with_isa("reduce_log_sum_exp_2pass_tree4096x8"));
    at(K::ArgMax) = kernels_for<ArgExtremeKernel<true>::Of>(NumericTypes{}, "argmax_scan");
    at(K::ArgMin) = kernels_for<ArgExtremeKernel<false>::Of>(NumericTypes{}, "argmin_scan");
    at(K::CumSum) = kernels_for<CumSumKernel>(NumericTypes{}, "cumsum_sequential");
    return f;
  }();
  return kKernels;
}

KernelSelection select_reduction_kernel(const KernelQuery& query) {
  return select_by_dtype(reduction_kernels()[static_cast<size_t>(op_index(query.node.op))],
                         query.node, query.inputs[0]->dtype);
}

}  // namespace

void register_reduction_kernels(KernelTable& table) {
  register_family(table, reduction_kernels(), select_reduction_kernel);
}

}  // namespace volta::cpu
