#pragma once
// Shared machinery of the CPU kernels of the elementwise, activation and logical families
// (elementwise*.cpp, activation.cpp, logical.cpp): broadcast iteration, the vectorizable row
// loops, and the per-op, per-dtype kernel tables.
//
// How a kernel runs: the output is split into fixed chunks of kElementwiseChunk elements
// (never by thread count). Within a chunk, BroadcastLoop walks rows of the innermost merged
// dim; along a row each input either advances one element at a time (a Run) or repeats one
// value (a Splat). So a same-shape op is one long row per chunk, a scalar or row-broadcast
// operand is a Splat or a Run re-read per row, and any other broadcast is the general case
// of the same walk. Each element's result is a pure function of its operands, computed by
// the same code in every path, so results do not depend on the chunking or thread count.

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "dtype_kernels.h"
#include "simd.h"

// Tells the vectorizer that a loop's iterations are independent. True for every row loop
// here: an output may share input 0's buffer (in-place), but then element i of the output
// is written only after element i of the input is read, and no other element is touched.
#if defined(__clang__)
#define VOLTA_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define VOLTA_IVDEP _Pragma("GCC ivdep")
#else
#define VOLTA_IVDEP
#endif

namespace volta::cpu {

// What an op functor's kImpl says when its loop is vectorized: its variant then names the ISA
// the row loops run on (simd_isa()).
inline constexpr std::string_view kVectorizedImpl = "vectorized";

template <class T>
constexpr bool kIsF32 = std::is_same_v<T, float>;

// The 16-bit floats compute in f32 (numerics policy): an op's f32 functor runs on the exactly
// widened operands and a float result is rounded once to the storage type; a bool result (of
// a comparison) is kept. Their kernels say "via_f32" in their variant name.
template <class Half, class F32Op>
struct InF32 {
  static constexpr std::string_view kImpl = "via_f32";
  F32Op op;

  InF32() = default;
  explicit InF32(const AttrReader& attrs) requires std::is_constructible_v<F32Op, const AttrReader&>
      : op(attrs) {}

  template <class... A>
  auto operator()(A... operands) const {
    const auto result = op(static_cast<float>(operands)...);
    if constexpr (std::is_same_v<std::remove_const_t<decltype(result)>, float>) {
      return Half(result);
    } else {
      return result;
    }
  }
};

// The functor a kernel of element type T runs: Op<T>, or Op<float> in f32 for a 16-bit float.
template <class T, template <class> class Op>
using KernelOp = std::conditional_t<kIsHalf<T>, InF32<T, Op<float>>, Op<T>>;

// Ops computed by vmath in f32 and by libm calls in f64 say so in their variant name.
template <class T>
constexpr std::string_view kF32VectorF64Libm = kIsF32<T> ? kVectorizedImpl
                                                         : std::string_view("libm");

// Row loops run in blocks of this many elements with a constant trip count: that is what
// GCC's -O2 cost model vectorizes (it does not vectorize loops needing a scalar epilogue).
// The remainder runs through the same per-element function, so it gives the same bits.
inline constexpr int64_t kLanes = 16;

// The output's iteration space: size-1 dims dropped, adjacent dims merged wherever every
// input is laid out across both as one (contiguous or broadcast), walked as rows of the
// innermost merged dim.
class BroadcastLoop {
 public:
  BroadcastLoop(const Shape& out, std::span<const ConstTensorView> inputs);

  // Whether input k advances one element per output element along a row (else it repeats
  // one value for the whole row).
  bool advances(size_t input) const { return stride(dims_.size() - 1, input) != 0; }

  // Calls row(out_offset, input_offsets, count) for consecutive row pieces covering output
  // elements [begin, end): input k's element for output out_offset + i is at
  // input_offsets[k] + i when it advances, else at input_offsets[k].
  template <class RowFn>
  void for_each_row(int64_t begin, int64_t end, RowFn&& row) const;

 private:
  int64_t stride(size_t dim, size_t input) const { return strides_[dim * num_inputs_ + input]; }

  size_t num_inputs_;
  std::vector<int64_t> dims_;     // merged dims, outermost first; back() is a row
  std::vector<int64_t> strides_;  // [dim][input], in elements
};

template <class RowFn>
void BroadcastLoop::for_each_row(int64_t begin, int64_t end, RowFn&& row) const {
  const size_t rank = dims_.size();
  std::vector<int64_t> index(rank);
  std::vector<int64_t> offsets(num_inputs_, 0);
  int64_t rest = begin;
  for (size_t d = rank; d-- > 0;) {
    index[d] = rest % dims_[d];
    rest /= dims_[d];
    for (size_t k = 0; k < num_inputs_; ++k) offsets[k] += index[d] * stride(d, k);
  }
  const int64_t row_length = dims_.back();
  for (int64_t pos = begin; pos < end;) {
    const int64_t count = std::min(row_length - index.back(), end - pos);
    row(pos, std::span<const int64_t>(offsets), count);
    pos += count;
    // Move to the start of the next row: odometer over the outer dims.
    for (size_t k = 0; k < num_inputs_; ++k) offsets[k] -= index.back() * stride(rank - 1, k);
    index.back() = 0;
    for (size_t d = rank - 1; d-- > 0;) {
      ++index[d];
      for (size_t k = 0; k < num_inputs_; ++k) offsets[k] += stride(d, k);
      if (index[d] < dims_[d]) break;
      for (size_t k = 0; k < num_inputs_; ++k) offsets[k] -= dims_[d] * stride(d, k);
      index[d] = 0;
    }
  }
}

// Row operands: a Run reads consecutive elements, a Splat one value loaded once per row.
template <class T>
struct Run {
  const T* data;
  T operator[](int64_t i) const { return data[i]; }
};
template <class T>
struct Splat {
  T value;
  T operator[](int64_t) const { return value; }
};

// y[i] = f(sources[i]...) for i in [0, count), on the calling ISA. Each block is an `omp simd`
// loop (the kernels are built with -fopenmp-simd, which needs no OpenMP runtime): it asserts
// that the block's iterations may run as vector lanes, true even in place, where element i is
// read before it is written and no other element is touched. So GCC's -O3 neither versions the
// loop with an overlap check, whose scalar copy ran every in-place step, nor leaves the store to
// its SLP cost model, which stored a block computed into a local array in five pieces.
template <class Out, class F, class... Sources>
inline void map_row_loop(Out* y, int64_t count, const F& f, const Sources&... sources) {
  int64_t i = 0;
  for (; i + kLanes <= count; i += kLanes) {
#pragma omp simd
    for (int64_t j = 0; j < kLanes; ++j) y[i + j] = f(sources[i + j]...);
  }
  for (; i < count; ++i) y[i] = f(sources[i]...);
}

// y[i] = f(sources[i]...) for i in [0, count), vectorized for the CPU's ISA (simd.h).
template <class Out, class F, class... Sources>
inline void map_row(Out* y, int64_t count, const F& f, const Sources&... sources) {
  with_simd([&] { map_row_loop(y, count, f, sources...); });
}

// One input of a row before it is given its Run or Splat type.
template <class T>
struct RowInput {
  const T* data;
  bool advances;
};

// Calls fn(sources...) with each input as a Run or a Splat: every combination is its own
// instantiation, so each gets a vectorized loop with the splatted values in registers.
template <class Fn>
inline void with_sources(Fn&& fn) {
  fn();
}
template <class Fn, class T, class... Rest>
inline void with_sources(Fn&& fn, RowInput<T> first, RowInput<Rest>... rest) {
  if (first.advances) {
    with_sources([&](const auto&... tail) { fn(Run<T>{first.data}, tail...); }, rest...);
  } else {
    with_sources([&](const auto&... tail) { fn(Splat<T>{*first.data}, tail...); }, rest...);
  }
}

// Runs row(y + out_offset, out_offset, count, sources...) over the broadcast output of
// args.inputs[0, sizeof...(In)), in parallel fixed chunks. `row` receives the sources as
// Run/Splat values (a generic lambda).
template <class Out, class... In, class RowFn>
void for_each_output_row(const KernelArgs& args, const RowFn& row) {
  const TensorView& out = args.outputs[0];
  const int64_t n = out.numel();
  if (n == 0) return;
  Out* const y = out.as<Out>();
  [&]<size_t... I>(std::index_sequence<I...>) {
    const std::tuple<const In*...> data{args.inputs[I].template as<In>()...};
    // The common case, every input of the output's shape or of one element, needs no
    // broadcast walk: a chunk is one row (the same elements from the same functor).
    const bool flat = ((args.inputs[I].numel() == n || args.inputs[I].numel() == 1) && ...);
    std::optional<BroadcastLoop> loop;
    if (!flat) loop.emplace(out.shape, args.inputs.first(sizeof...(In)));
    const std::array<bool, sizeof...(In)> advances{
        (flat ? args.inputs[I].numel() == n : loop->advances(I))...};
    const auto rows = [&](int64_t begin, int64_t end) {
      if (flat) {
        with_sources(
            [&](const auto&... sources) { row(y + begin, begin, end - begin, sources...); },
            RowInput<In>{std::get<I>(data) + (advances[I] ? begin : 0), advances[I]}...);
        return;
      }
      loop->for_each_row(
          begin, end, [&](int64_t pos, std::span<const int64_t> offsets, int64_t count) {
            with_sources([&](const auto&... sources) { row(y + pos, pos, count, sources...); },
                         RowInput<In>{std::get<I>(data) + offsets[I], advances[I]}...);
          });
    };
    args.pool.parallel_chunks(n, kElementwiseChunk, rows);
  }
  (std::index_sequence_for<In...>{});
}

// out = f(inputs...) elementwise with broadcasting.
template <class Out, class... In, class F>
void map_broadcast(const KernelArgs& args, const F& f) {
  for_each_output_row<Out, In...>(args,
                                  [&](Out* y, int64_t, int64_t count, const auto&... sources) {
                                    map_row(y, count, f, sources...);
                                  });
}

// How an op functor is computed, for its variant name: the ISA its loop runs on, unless the
// functor says otherwise (Op::kImpl, e.g. "libm" for a loop of libm calls).
template <class Op>
std::string_view impl_of() {
  if constexpr (requires { Op::kImpl; }) {
    return Op::kImpl == kVectorizedImpl ? simd_isa() : Op::kImpl;
  } else {
    return simd_isa();
  }
}

// The op's functor, built from the node's attributes when it takes any.
template <class Op>
Op make_op(const KernelArgs& args) {
  if constexpr (std::is_constructible_v<Op, const AttrReader&>) {
    return Op(args.attrs);
  } else {
    return Op{};
  }
}

}  // namespace volta::cpu
