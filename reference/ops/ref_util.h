#pragma once
// Helpers shared by the reference kernels: multi-index iteration, broadcasting by index
// arithmetic, wrapping integer arithmetic and raw element copies. Each is written out plainly
// so that it can be checked by eye; none of it is shared with the engine's kernels.

#include <charconv>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ref_ops.h"
#include "volta/error.h"
#include "volta/ir/graph.h"

namespace volta::reference {

using RefInputs = std::span<const Tensor* const>;
using RefOutputTypes = std::span<const TypeInfo>;

inline void register_kernel(RefTable& table, OpKind op, RefKernel kernel) {
  table[static_cast<size_t>(op_index(op))] = kernel;
}

// Bad data (not bad graphs: the verifier has rejected those) stops the evaluation.
[[noreturn]] inline void kernel_fail(const std::string& message) {
  fail(ErrorCode::KernelFailure, message);
}

// Shortest text that reads back as the same double: "3e+10", "-0.5", "nan", "inf".
inline std::string number_str(double v) {
  char buf[64];
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

// An optional input is absent when the node leaves its slot empty or omits it altogether.
inline const Tensor* optional_input(RefInputs inputs, size_t i) {
  return i < inputs.size() ? inputs[i] : nullptr;
}

// ---- Indices ------------------------------------------------------------------------------

// Row-major offset of `index` in `shape` (Horner's rule over the axes).
inline int64_t flat_offset(std::span<const int64_t> index, const Shape& shape) {
  int64_t offset = 0;
  for (int d = 0; d < shape.rank(); ++d) offset = offset * shape[d] + index[static_cast<size_t>(d)];
  return offset;
}

// Calls visit(index, flat) for every element of `shape` in row-major order; flat is the
// element's row-major offset. A scalar has one element (the empty index), an empty shape none.
template <class Visit>
void for_each_index(const Shape& shape, Visit&& visit) {
  const int64_t count = shape.numel();
  std::vector<int64_t> index(static_cast<size_t>(shape.rank()), 0);
  for (int64_t flat = 0; flat < count; ++flat) {
    visit(std::as_const(index), flat);
    for (int d = shape.rank() - 1; d >= 0; --d) {
      if (++index[static_cast<size_t>(d)] < shape[d]) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
}

// Offset in `from` of the element that numpy broadcasting maps to `index` of a shape of
// rank >= from.rank(): `from` is aligned to the trailing axes, and its size-1 axes repeat.
inline int64_t broadcast_offset(std::span<const int64_t> index, const Shape& from) {
  const size_t lead = index.size() - static_cast<size_t>(from.rank());
  int64_t offset = 0;
  for (int d = 0; d < from.rank(); ++d) {
    const int64_t i = from[d] == 1 ? 0 : index[lead + static_cast<size_t>(d)];
    offset = offset * from[d] + i;
  }
  return offset;
}

// A shape seen as [outer, extent, inner] around one axis: element (o, j, i) of that view is
// at (o * extent + j) * inner + i in the row-major layout.
struct AxisView {
  int64_t outer = 1;
  int64_t extent = 1;
  int64_t inner = 1;
  int64_t at(int64_t o, int64_t j, int64_t i) const { return (o * extent + j) * inner + i; }
};

inline AxisView view_around_axis(const Shape& shape, int axis) {
  AxisView v;
  for (int d = 0; d < axis; ++d) v.outer *= shape[d];
  v.extent = shape[axis];
  for (int d = axis + 1; d < shape.rank(); ++d) v.inner *= shape[d];
  return v;
}

// ---- Raw element copies (movement ops copy bytes, so NaN payloads pass unchanged) --------

inline void copy_element(const Tensor& src, int64_t from, Tensor& dst, int64_t to) {
  const size_t size = dtype_size(src.dtype());
  std::memcpy(static_cast<std::byte*>(dst.data()) + static_cast<size_t>(to) * size,
              static_cast<const std::byte*>(src.data()) + static_cast<size_t>(from) * size, size);
}

// The same elements under another shape of equal element count.
inline Tensor with_shape(const Tensor& x, const Shape& shape) {
  Tensor y(x.dtype(), shape);
  if (x.nbytes() != 0) std::memcpy(y.data(), x.data(), x.nbytes());
  return y;
}

// `x` broadcast (numpy rules) to `shape`, materialized.
inline Tensor broadcast_to(const Tensor& x, const Shape& shape) {
  Tensor y(x.dtype(), shape);
  for_each_index(shape, [&](const std::vector<int64_t>& index, int64_t flat) {
    copy_element(x, broadcast_offset(index, x.shape()), y, flat);
  });
  return y;
}

// ---- Integer arithmetic: two's-complement wrap-around, done in uint64 to avoid UB ---------

inline int64_t wrapping_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t wrapping_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t wrapping_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
inline int64_t wrapping_neg(int64_t a) { return wrapping_sub(0, a); }
inline int64_t wrapping_abs(int64_t a) { return a < 0 ? wrapping_neg(a) : a; }

// The value range of an integer dtype of at most 63 value bits (bool: {0, 1}); u64 keys on
// order_flip below.
inline int64_t lowest_of(DType dtype) {
  if (dtype == DType::Bool) return 0;
  return visit_dtype(dtype, []<class T>(TypeTag<T>) -> int64_t {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<int64_t>(std::numeric_limits<T>::lowest());
    } else {
      return 0;
    }
  });
}
inline int64_t highest_of(DType dtype) {
  if (dtype == DType::Bool) return 1;
  return visit_dtype(dtype, []<class T>(TypeTag<T>) -> int64_t {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<int64_t>(std::numeric_limits<T>::max());  // u64: -1, see order_flip
    } else {
      return 0;
    }
  });
}

// The value of `dtype` nearest to v (how set_double stores it).
inline double round_to(DType dtype, double v) {
  Tensor t(dtype, Shape{1});
  t.set_double(0, v);
  return t.get_double(0);
}

// Integers are read as int64 (get_int), where a u64 value above 2^63 - 1 reads negative.
// XOR with order_flip turns each value into a key that orders like the value: the value itself,
// or for u64 the value with its top bit flipped. Comparisons, Min and Max and Clip compare keys.
inline int64_t order_flip(DType dtype) {
  return dtype == DType::U64 ? std::numeric_limits<int64_t>::min() : 0;
}

}  // namespace volta::reference
