// Math kernels added for ONNX import: Sin Cos Tan Asin Acos Atan Sinh Cosh Asinh Acosh Atanh,
// Floor Ceil Round Sign, and Mod. They run on the elementwise machinery (elementwise_common.h):
// fixed chunks, one pure function per element.
//
// The trigonometric and hyperbolic functions are loops of libm calls (the f32 ones call the
// double function and round once).

#include <cmath>
#include <type_traits>

#include "elementwise_common.h"

namespace volta::cpu {
namespace {

// ---- libm maps: the double function, rounded once to T ----

template <class T, class Fn>
struct Libm {
  static constexpr std::string_view kImpl = "libm";
  T operator()(T x) const { return static_cast<T>(Fn{}(static_cast<double>(x))); }
};

struct SinFn {
  double operator()(double x) const { return std::sin(x); }
};
template <class T>
using Sin = Libm<T, SinFn>;
struct CosFn {
  double operator()(double x) const { return std::cos(x); }
};
template <class T>
using Cos = Libm<T, CosFn>;
struct TanFn {
  double operator()(double x) const { return std::tan(x); }
};
template <class T>
using Tan = Libm<T, TanFn>;
struct AsinFn {
  double operator()(double x) const { return std::asin(x); }
};
template <class T>
using Asin = Libm<T, AsinFn>;
struct AcosFn {
  double operator()(double x) const { return std::acos(x); }
};
template <class T>
using Acos = Libm<T, AcosFn>;
struct AtanFn {
  double operator()(double x) const { return std::atan(x); }
};
template <class T>
using Atan = Libm<T, AtanFn>;
struct SinhFn {
  double operator()(double x) const { return std::sinh(x); }
};
template <class T>
using Sinh = Libm<T, SinhFn>;
struct CoshFn {
  double operator()(double x) const { return std::cosh(x); }
};
template <class T>
using Cosh = Libm<T, CoshFn>;
struct AsinhFn {
  double operator()(double x) const { return std::asinh(x); }
};
template <class T>
using Asinh = Libm<T, AsinhFn>;
struct AcoshFn {
  double operator()(double x) const { return std::acosh(x); }
};
template <class T>
using Acosh = Libm<T, AcoshFn>;
struct AtanhFn {
  double operator()(double x) const { return std::atanh(x); }
};
template <class T>
using Atanh = Libm<T, AtanhFn>;

// ---- Rounding ----

// From this magnitude on, every float of type T is an integer (2^23, 2^52).
template <class T>
constexpr T kIntegral = kIsF32<T> ? T(8388608.0) : T(4503599627370496.0);

// Nearest integer, halves to even: adding and removing kIntegral rounds in the FPU's default
// mode (to nearest even). Integral inputs, Inf and NaN come back unchanged; -0.4 gives -0.
template <class T>
T round_half_even(T x) {
  const T ax = std::fabs(x);
  const T rounded = std::copysign((ax + kIntegral<T>)-kIntegral<T>, x);
  return ax < kIntegral<T> ? rounded : x;
}

template <class T>
struct Round {
  T operator()(T x) const { return round_half_even(x); }
};
template <class T>
struct Floor {
  T operator()(T x) const {
    const T r = round_half_even(x);
    return r > x ? r - T{1} : r;
  }
};
template <class T>
struct Ceil {
  T operator()(T x) const {
    const T r = round_half_even(x);
    return r < x ? r + T{1} : r;
  }
};

// -1, 0 or 1; both zeros give +0 and NaN stays NaN (numpy.sign).
template <class T>
struct Sign {
  T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T>) {
      return x > 0 ? T{1} : T{0};
    } else if constexpr (std::is_integral_v<T>) {
      return x > 0 ? T{1} : (x < 0 ? T{-1} : T{0});
    } else {
      const T zero_or_nan = x == T{0} ? T{0} : x;
      return x > T{0} ? T{1} : (x < T{0} ? T{-1} : zero_or_nan);
    }
  }
};

// ---- Mod ----

// fmod=1: C fmod, the sign of A.
template <class T>
struct FloatFmod {
  static constexpr std::string_view kImpl = "libm";
  T operator()(T a, T b) const { return std::fmod(a, b); }
};
// fmod=0: the sign of B (numpy.mod): a nonzero remainder of the other sign moves by B, a zero
// one takes B's sign.
template <class T>
struct FloatMod {
  static constexpr std::string_view kImpl = "libm";
  T operator()(T a, T b) const {
    const T r = std::fmod(a, b);
    if (r == T{0}) return std::copysign(T{0}, b);
    return (r < T{0}) != (b < T{0}) ? r + b : r;  // NaN stays NaN: both sides compare false
  }
};
// Divisors are checked for zero before a row runs (integer_mod_kernel). A signed b == -1
// always leaves 0; lowest % -1 would overflow in C++.
template <class T>
struct IntegerFmod {
  static constexpr std::string_view kImpl = "scalar";  // no SIMD integer division
  T operator()(T a, T b) const {
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return T{0};
    }
    return static_cast<T>(a % b);
  }
};
template <class T>
struct IntegerMod {
  static constexpr std::string_view kImpl = "scalar";
  T operator()(T a, T b) const {
    const T r = IntegerFmod<T>{}(a, b);
    if constexpr (std::is_signed_v<T>) {
      return r != 0 && ((r < 0) != (b < 0)) ? static_cast<T>(r + b) : r;
    } else {
      return r;
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

// Integer Mod: each row's divisors are checked before it runs, so the error names the first
// zero divisor (chunks report in order: the lowest failing chunk's error wins).
template <class T, class Op>
void integer_mod_kernel(const KernelArgs& args) {
  for_each_output_row<T, T, T>(
      args, [](T* y, int64_t pos, int64_t count, const auto& a, const auto& b) {
        for (int64_t i = 0; i < count; ++i) {
          if (b[i] == 0) {
            fail(ErrorCode::KernelFailure,
                 "Mod: integer division by zero: divisor B is 0 at output element " +
                     std::to_string(pos + i) + " (integer divisors must be nonzero)");
          }
        }
        map_row(y, count, Op{}, a, b);
      });
}

// ---- Tables ----

// Kernels named "<dtype>_<name>_<impl>" for each T of the list.
template <template <class> class Op, class List>
DTypeKernels unary_kernels(List types, std::string_view name) {
  return make_kernels(types, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return CpuKernel{&unary_kernel<T, KernelOp<T, Op>>,
                     kernel_variant(dtype_of<T>(), name, impl_of<KernelOp<T, Op>>())};
  });
}

// fmod=0 and fmod=1 kernels; integer ones check their divisors.
template <template <class> class FloatOp, template <class> class IntegerOp>
DTypeKernels mod_kernels(std::string_view name) {
  return make_kernels(EveryNumericType{}, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      return CpuKernel{&integer_mod_kernel<T, IntegerOp<T>>,
                       kernel_variant(dtype_of<T>(), name, impl_of<IntegerOp<T>>())};
    } else {
      return CpuKernel{&binary_kernel<T, KernelOp<T, FloatOp>>,
                       kernel_variant(dtype_of<T>(), name, impl_of<KernelOp<T, FloatOp>>())};
    }
  });
}

const OpDTypeKernels& math_kernels() {
  static const OpDTypeKernels kKernels = [] {
    using K = OpKind;
    OpDTypeKernels t{};
    auto at = [&t](OpKind op) -> DTypeKernels& { return t[static_cast<size_t>(op_index(op))]; };
    at(K::Sin) = unary_kernels<Sin>(FloatTypes{}, "sin");
    at(K::Cos) = unary_kernels<Cos>(FloatTypes{}, "cos");
    at(K::Tan) = unary_kernels<Tan>(FloatTypes{}, "tan");
    at(K::Asin) = unary_kernels<Asin>(FloatTypes{}, "asin");
    at(K::Acos) = unary_kernels<Acos>(FloatTypes{}, "acos");
    at(K::Atan) = unary_kernels<Atan>(FloatTypes{}, "atan");
    at(K::Sinh) = unary_kernels<Sinh>(FloatTypes{}, "sinh");
    at(K::Cosh) = unary_kernels<Cosh>(FloatTypes{}, "cosh");
    at(K::Asinh) = unary_kernels<Asinh>(FloatTypes{}, "asinh");
    at(K::Acosh) = unary_kernels<Acosh>(FloatTypes{}, "acosh");
    at(K::Atanh) = unary_kernels<Atanh>(FloatTypes{}, "atanh");
    at(K::Floor) = unary_kernels<Floor>(FloatTypes{}, "floor");
    at(K::Ceil) = unary_kernels<Ceil>(FloatTypes{}, "ceil");
    at(K::Round) = unary_kernels<Round>(FloatTypes{}, "round");
    at(K::Sign) = unary_kernels<Sign>(ConcatTypes<NumericTypes, NarrowIntegerTypes>{}, "sign");
    at(K::Mod) = mod_kernels<FloatMod, IntegerMod>("mod");  // fmod=1: select_math
    return t;
  }();
  return kKernels;
}

// Every op keys on the dtype of input 0; Mod also on its fmod attribute.
KernelSelection select_math(const KernelQuery& query) {
  static const DTypeKernels kFmod = mod_kernels<FloatFmod, IntegerFmod>("fmod");
  const DType dtype = query.inputs[0]->dtype;
  if (query.node.op == OpKind::Mod && AttrReader(query.node).get_int("fmod") != 0) {
    return select_by_dtype(kFmod, query.node, dtype);
  }
  return select_by_dtype(math_kernels()[static_cast<size_t>(op_index(query.node.op))], query.node,
                         dtype);
}

}  // namespace

void register_elementwise_math_kernels(KernelTable& table) {
  register_family(table, math_kernels(), &select_math);
}

}  // namespace volta::cpu
