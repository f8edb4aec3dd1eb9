// Arithmetic kernels: Add Sub Mul Div Pow, Neg Abs Sqrt Reciprocal Exp Log, the variadic
// Min / Max, and the integer bit operations BitShift BitwiseAnd BitwiseOr BitwiseXor BitwiseNot.
// Also register_elementwise_kernels, which registers the elementwise family's other files too (see
// elementwise_common.h for how they run).

#include <cmath>
#include <limits>
#include <type_traits>

#include "elementwise_common.h"
#include "vector_math.h"

namespace volta::cpu {
namespace {

// ---- Integer arithmetic wraps: it is done in an unsigned type at least as wide. ----

// Narrow types promote to int, where 65535 * 65535 would overflow: compute in unsigned int.
template <class T>
using Unsigned = std::common_type_t<unsigned, std::make_unsigned_t<T>>;

template <class T>
T wrapping_add(T a, T b) {
  return static_cast<T>(static_cast<Unsigned<T>>(a) + static_cast<Unsigned<T>>(b));
}
template <class T>
T wrapping_sub(T a, T b) {
  return static_cast<T>(static_cast<Unsigned<T>>(a) - static_cast<Unsigned<T>>(b));
}
template <class T>
T wrapping_mul(T a, T b) {
  return static_cast<T>(static_cast<Unsigned<T>>(a) * static_cast<Unsigned<T>>(b));
}
template <class T>
T wrapping_neg(T a) {
  return wrapping_sub(T{0}, a);
}

// ---- Binary ops ----

template <class T>
struct Add {
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      return wrapping_add(a, b);
    } else {
      return a + b;
    }
  }
};
template <class T>
struct Sub {
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      return wrapping_sub(a, b);
    } else {
      return a - b;
    }
  }
};
template <class T>
struct Mul {
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      return wrapping_mul(a, b);
    } else {
      return a * b;
    }
  }
};
template <class T>
struct FloatDiv {
  T operator()(T a, T b) const { return a / b; }
};
// Truncates toward zero; the one overflowing quotient, lowest / -1, wraps to lowest.
// Divisors are checked for zero before a row is divided (integer_div_kernel).
template <class T>
struct IntegerDiv {
  static constexpr std::string_view kImpl = "scalar";  // no SIMD integer division
  T operator()(T a, T b) const {
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return wrapping_neg(a);
    }
    return static_cast<T>(a / b);
  }
};
// x^2 is a * a: the correctly rounded square, which glibc's powf (within 0.82 ULP) may miss
// and the reference engine (pow in double, rounded once) always gives; every special case
// (NaN, infinities, signed zeros) agrees with pow's. It skips libm's general path for the
// exponent exported models use most (PyTorch's decomposed LayerNorm: Pow(x - mean, 2)).
template <class T>
struct Pow {
  static constexpr std::string_view kImpl = "libm";
  T operator()(T a, T b) const { return b == T(2) ? a * a : std::pow(a, b); }
};

// NaN if either operand is NaN; otherwise the larger (smaller), the first on ties.
template <class T>
struct Maximum {
  T operator()(T a, T b) const { return a != a ? a : (a >= b ? a : b); }
};
template <class T>
struct Minimum {
  T operator()(T a, T b) const { return a != a ? a : (a <= b ? a : b); }
};

// ---- Bit operations (integers) ----

template <class T>
struct BitAnd {
  T operator()(T a, T b) const { return static_cast<T>(a & b); }
};
template <class T>
struct BitOr {
  T operator()(T a, T b) const { return static_cast<T>(a | b); }
};
template <class T>
struct BitXor {
  T operator()(T a, T b) const { return static_cast<T>(a ^ b); }
};
template <class T>
struct BitNot {
  T operator()(T x) const { return static_cast<T>(~x); }
};
// A shift by the width or more, or a negative one, leaves only what the sign extension gives
// (ONNX): 0, or -1 for a right shift of a negative signed X. C++ leaves those shifts undefined.
template <class T>
bool shift_in_range(T y) {
  if constexpr (std::is_signed_v<T>) {
    if (y < 0) return false;
  }
  return y < std::numeric_limits<std::make_unsigned_t<T>>::digits;
}
template <class T>
struct ShiftLeft {
  T operator()(T x, T y) const {
    return shift_in_range(y) ? static_cast<T>(static_cast<Unsigned<T>>(x) << y) : T{0};
  }
};
// Signed: arithmetic (C++20 defines >> of a negative value so).
template <class T>
struct ShiftRight {
  T operator()(T x, T y) const {
    if (shift_in_range(y)) return static_cast<T>(x >> y);
    if constexpr (std::is_signed_v<T>) {
      return x < 0 ? T{-1} : T{0};
    } else {
      return T{0};
    }
  }
};

// ---- Unary ops ----

template <class T>
struct Neg {
  T operator()(T x) const {
    if constexpr (std::is_integral_v<T>) {
      return wrapping_neg(x);
    } else {
      return -x;
    }
  }
};
template <class T>
struct Abs {
  T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T>) {
      return x;
    } else if constexpr (std::is_integral_v<T>) {
      return x < 0 ? wrapping_neg(x) : x;
    } else {
      return std::fabs(x);
    }
  }
};
template <class T>
struct Sqrt {
  T operator()(T x) const { return std::sqrt(x); }
};
template <class T>
struct Reciprocal {
  T operator()(T x) const { return T{1} / x; }
};
template <class T>
struct Exp {
  static constexpr std::string_view kImpl = kF32VectorF64Libm<T>;
  T operator()(T x) const {
    if constexpr (kIsF32<T>) {
      return vmath::exp_f32(x);
    } else {
      return std::exp(x);
    }
  }
};
template <class T>
struct Log {
  static constexpr std::string_view kImpl = kF32VectorF64Libm<T>;
  T operator()(T x) const {
    if constexpr (kIsF32<T>) {
      return vmath::log_f32(x);
    } else {
      return std::log(x);
    }
  }
};
// ---- Kernels ----

template <class T, class Op>
void unary_kernel(const KernelArgs& args) {
  map_broadcast<T, T>(args, Op{});
}

template <class T, class Op>
void binary_kernel(const KernelArgs& args) {
  map_broadcast<T, T, T>(args, Op{});
}

// Integer Div: each row's divisors are checked before it is divided, so the error names the
// first zero divisor (chunks report in order: the lowest failing chunk's error wins).
template <class T>
void integer_div_kernel(const KernelArgs& args) {
  for_each_output_row<T, T, T>(
      args, [](T* y, int64_t pos, int64_t count, const auto& a, const auto& b) {
        for (int64_t i = 0; i < count; ++i) {
          if (b[i] == 0) {
            fail(ErrorCode::KernelFailure,
                 "Div: integer division by zero: divisor B is 0 at output element " +
                     std::to_string(pos + i) + " (integer divisors must be nonzero)");
          }
        }
        map_row(y, count, IntegerDiv<T>{}, a, b);
      });
}

// Pow: a row whose exponent is one splatted 2 is squared in a vectorized loop; other rows call
// Pow per element (which squares where the exponent is 2: the same bits either way).
template <class T>
void pow_kernel(const KernelArgs& args) {
  for_each_output_row<T, T, T>(
      args, [](T* y, int64_t, int64_t count, const auto& a, const auto& b) {
        if constexpr (std::is_same_v<std::decay_t<decltype(b)>, Splat<T>>) {
          if (b.value == T(2)) {
            map_row(
                y, count, [](T x) { return x * x; }, a);
            return;
          }
        }
        map_row(y, count, Pow<T>{}, a, b);
      });
}

// Folds op over the inputs for `width` elements at row position `at`, in a local block:
// an output sharing input 0's buffer is written only after every input has been read there.
// Called with width == kLanes (a constant loop, vectorized) and once with the remainder.
template <class T, class Op>
inline void fold_block(T* y, int64_t at, int64_t width, std::span<const RowInput<T>> inputs,
                       const Op& op) {
  T acc[kLanes];
  const RowInput<T>& first = inputs[0];
  if (first.advances) {
    for (int64_t j = 0; j < width; ++j) acc[j] = first.data[at + j];
  } else {
    for (int64_t j = 0; j < width; ++j) acc[j] = *first.data;
  }
  for (const RowInput<T>& in : inputs.subspan(1)) {
    if (in.advances) {
      const T* x = in.data + at;
      VOLTA_IVDEP
      for (int64_t j = 0; j < width; ++j) acc[j] = op(acc[j], x[j]);
    } else {
      const T value = *in.data;
      for (int64_t j = 0; j < width; ++j) acc[j] = op(acc[j], value);
    }
  }
  for (int64_t j = 0; j < width; ++j) y[j] = acc[j];
}

// Min / Max of one or more broadcasting inputs, folded left to right.
template <class T, class Op>
void extremum_kernel(const KernelArgs& args) {
  const TensorView& out = args.outputs[0];
  const int64_t n = out.numel();
  if (n == 0) return;
  const BroadcastLoop loop(out.shape, args.inputs);
  T* const y = out.as<T>();
  const Op op{};
  args.pool.parallel_chunks(n, kElementwiseChunk, [&](int64_t begin, int64_t end) {
    std::vector<RowInput<T>> inputs(args.inputs.size());
    loop.for_each_row(begin, end,
                      [&](int64_t pos, std::span<const int64_t> offsets, int64_t count) {
                        for (size_t k = 0; k < inputs.size(); ++k) {
                          inputs[k] = {args.inputs[k].as<T>() + offsets[k], loop.advances(k)};
                        }
                        with_simd([&] {
                          int64_t i = 0;
                          for (; i + kLanes <= count; i += kLanes)
                            fold_block<T>(y + pos + i, i, kLanes, inputs, op);
                          if (i < count) fold_block<T>(y + pos + i, i, count - i, inputs, op);
                        });
                      });
  });
}

// ---- Tables ----

template <template <class> class Op, class List>
DTypeKernels unary_kernels(List types, std::string_view name) {
  return make_kernels(types, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return CpuKernel{&unary_kernel<T, KernelOp<T, Op>>,
                     kernel_variant(dtype_of<T>(), name, impl_of<KernelOp<T, Op>>())};
  });
}

template <template <class> class Op, class List>
DTypeKernels binary_kernels(List types, std::string_view name) {
  return make_kernels(types, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return CpuKernel{&binary_kernel<T, KernelOp<T, Op>>,
                     kernel_variant(dtype_of<T>(), name, impl_of<KernelOp<T, Op>>())};
  });
}

template <template <class> class Op>
DTypeKernels extremum_kernels(std::string_view name) {
  return make_kernels(EveryNumericType{}, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return CpuKernel{&extremum_kernel<T, KernelOp<T, Op>>,
                     kernel_variant(dtype_of<T>(), name, impl_of<KernelOp<T, Op>>())};
  });
}

DTypeKernels div_kernels() {
  return make_kernels(EveryNumericType{}, [](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      return CpuKernel{&integer_div_kernel<T>,
                       kernel_variant(dtype_of<T>(), "div", impl_of<IntegerDiv<T>>())};
    } else {
      return CpuKernel{&binary_kernel<T, KernelOp<T, FloatDiv>>,
                       kernel_variant(dtype_of<T>(), "div", impl_of<KernelOp<T, FloatDiv>>())};
    }
  });
}

const OpDTypeKernels& arithmetic_kernels() {
  static const OpDTypeKernels kKernels = [] {
    using K = OpKind;
    OpDTypeKernels t{};
    auto at = [&t](OpKind op) -> DTypeKernels& { return t[static_cast<size_t>(op_index(op))]; };
    at(K::Add) = binary_kernels<Add>(EveryNumericType{}, "add");
    at(K::Sub) = binary_kernels<Sub>(EveryNumericType{}, "sub");
    at(K::Mul) = binary_kernels<Mul>(EveryNumericType{}, "mul");
    at(K::Div) = div_kernels();
    at(K::Pow) = make_kernels(FloatTypes{}, [](auto tag) {
      using T = typename decltype(tag)::type;
      return CpuKernel{&pow_kernel<T>, kernel_variant(dtype_of<T>(), "pow", impl_of<Pow<T>>())};
    });
    at(K::Neg) = unary_kernels<Neg>(SignedNumericTypes{}, "neg");
    at(K::Abs) = unary_kernels<Abs>(EveryNumericType{}, "abs");
    at(K::Sqrt) = unary_kernels<Sqrt>(ConcatTypes<FloatTypes, HalfTypes>{}, "sqrt");
    at(K::Reciprocal) =
        unary_kernels<Reciprocal>(ConcatTypes<FloatTypes, HalfTypes>{}, "reciprocal");
    at(K::Exp) = unary_kernels<Exp>(FloatTypes{}, "exp");
    at(K::Log) = unary_kernels<Log>(FloatTypes{}, "log");
    at(K::Min) = extremum_kernels<Minimum>("min");
    at(K::Max) = extremum_kernels<Maximum>("max");
    at(K::BitwiseAnd) = binary_kernels<BitAnd>(IntegerTypes{}, "bitwise_and");
    at(K::BitwiseOr) = binary_kernels<BitOr>(IntegerTypes{}, "bitwise_or");
    at(K::BitwiseXor) = binary_kernels<BitXor>(IntegerTypes{}, "bitwise_xor");
    at(K::BitwiseNot) = unary_kernels<BitNot>(IntegerTypes{}, "bitwise_not");
    at(K::BitShift) = binary_kernels<ShiftLeft>(IntegerTypes{}, "shift_left");  // see below
    return t;
  }();
  return kKernels;
}

// Every op keys on the dtype of input 0; BitShift also on its direction.
KernelSelection select_arithmetic(const KernelQuery& query) {
  if (query.node.op == OpKind::BitShift &&
      AttrReader(query.node).get_string("direction") == "right") {
    static const DTypeKernels kRight = binary_kernels<ShiftRight>(IntegerTypes{}, "shift_right");
    return select_by_dtype(kRight, query.node, query.inputs[0]->dtype);
  }
  return select_by_dtype(arithmetic_kernels()[static_cast<size_t>(op_index(query.node.op))],
                         query.node, query.inputs[0]->dtype);
}

}  // namespace

void register_elementwise_kernels(KernelTable& table) {
  register_family(table, arithmetic_kernels(), &select_arithmetic);
  register_elementwise_math_kernels(table);
  register_elementwise_cast_kernels(table);
  register_elementwise_where_kernels(table);
}

}  // namespace volta::cpu
