// Activation kernels: Erf Tanh Sigmoid Relu LeakyRelu Gelu, and those added for ONNX import,
// Elu Selu Celu HardSigmoid HardSwish Softplus Softsign PRelu ThresholdedRelu Shrink. They run
// on the elementwise machinery (elementwise_common.h): fixed chunks, one pure function per
// element.
//
// f32 activations use the vectorizable vmath functions; f64 ones are loops of libm calls.
// Every activation keeps NaN as NaN, including the piecewise ones whose plain comparisons would
// send NaN to 0.

#include <cmath>
#include <limits>
#include <type_traits>

#include "activation_functors.h"
#include "elementwise_common.h"
#include "vector_math.h"

namespace volta::cpu {
namespace {

template <class T>
T attr_as(const AttrReader& attrs, std::string_view name) {
  return static_cast<T>(attrs.get_float(name));
}

template <class T>
struct Erf {
  static constexpr std::string_view kImpl = kF32VectorF64Libm<T>;
  T operator()(T x) const {
    if constexpr (kIsF32<T>) {
      return vmath::erf_f32(x);
    } else {
      return std::erf(x);
    }
  }
};
template <class T>
struct Tanh {
  static constexpr std::string_view kImpl = kF32VectorF64Libm<T>;
  T operator()(T x) const {
    if constexpr (kIsF32<T>) {
      return vmath::tanh_f32(x);
    } else {
      return std::tanh(x);
    }
  }
};

template <class T>
struct Sigmoid {
  static constexpr std::string_view kImpl = kF32VectorF64Libm<T>;
  T operator()(T x) const {
    if constexpr (kIsF32<T>) {
      return vmath::sigmoid_f32(x);
    } else {
      return sigmoid_f64(x);
    }
  }
};
// Relu, Gelu and GeluTanh are in activation_functors.h, shared with FusedMatMul's epilogue.

template <class T>
T expm1_of(T x) {
  if constexpr (kIsF32<T>) {
    return vmath::expm1_f32(x);
  } else {
    return std::expm1(x);
  }
}

template <class T>
struct Elu {
  static constexpr std::string_view kImpl = kF32VectorF64Libm<T>;
  T alpha;
  explicit Elu(const AttrReader& attrs) : alpha(attr_as<T>(attrs, "alpha")) {}
  T operator()(T x) const { return x < T{0} ? alpha * expm1_of(x) : x; }
};

template <class T>
struct Selu {
  static constexpr std::string_view kImpl = kF32VectorF64Libm<T>;
  T alpha, gamma;
  explicit Selu(const AttrReader& attrs)
      : alpha(attr_as<T>(attrs, "alpha")), gamma(attr_as<T>(attrs, "gamma")) {}
  T operator()(T x) const { return gamma * (x > T{0} ? x : alpha * expm1_of(x)); }
};

// max(0, x) + min(0, alpha (e^(x/alpha) - 1)): for x >= 0 the second term is 0, for x < 0
// the first.
template <class T>
struct Celu {
  static constexpr std::string_view kImpl = kF32VectorF64Libm<T>;
  T alpha;
  explicit Celu(const AttrReader& attrs) : alpha(attr_as<T>(attrs, "alpha")) {}
  T operator()(T x) const { return x < T{0} ? alpha * expm1_of(x / alpha) : x; }
};

// Clamp to [0, 1] by comparisons that NaN fails, so NaN passes through.
template <class T>
T clamp01(T v) {
  const T above = v < T{0} ? T{0} : v;
  return above > T{1} ? T{1} : above;
}

template <class T>
struct HardSigmoid {
  T alpha, beta;
  explicit HardSigmoid(const AttrReader& attrs)
      : alpha(attr_as<T>(attrs, "alpha")), beta(attr_as<T>(attrs, "beta")) {}
  T operator()(T x) const { return clamp01(alpha * x + beta); }
};

// Below -3 the clamp is 0: x is clamped there too, so that -inf gives the limit -0, not NaN.
template <class T>
struct HardSwish {
  T operator()(T x) const { return (x < T{-3} ? T{-3} : x) * clamp01(x / T{6} + T{0.5}); }
};

// log(e^x + 1) = max(x, 0) + log1p(e^-|x|): the exponential never overflows and tiny
// results (x << 0) keep their precision.
template <class T>
struct Softplus {
  static constexpr std::string_view kImpl = kF32VectorF64Libm<T>;
  T operator()(T x) const {
    const T positive = x > T{0} ? x : T{0};
    if constexpr (kIsF32<T>) {
      return positive + vmath::log1p_f32(vmath::exp_f32(-std::fabs(x)));
    } else {
      return positive + std::log1p(std::exp(-std::fabs(x)));
    }
  }
};

// x / (1 + |x|), with the limits +-1 at +-Inf (where the quotient would be Inf / Inf).
template <class T>
struct Softsign {
  T operator()(T x) const {
    const T ax = std::fabs(x);
    const T quotient = x / (T{1} + ax);
    return ax == std::numeric_limits<T>::infinity() ? std::copysign(T{1}, x) : quotient;
  }
};

template <class T>
struct PRelu {
  T operator()(T x, T slope) const {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;  // integer products wrap
      return x < 0 ? static_cast<T>(static_cast<U>(slope) * static_cast<U>(x)) : x;
    } else {
      return x < T{0} ? slope * x : x;
    }
  }
};

template <class T>
struct ThresholdedRelu {
  T alpha;
  explicit ThresholdedRelu(const AttrReader& attrs) : alpha(attr_as<T>(attrs, "alpha")) {}
  T operator()(T x) const { return x <= alpha ? T{0} : x; }  // NaN fails the test: kept
};

template <class T>
struct Shrink {
  T bias, lambd;
  explicit Shrink(const AttrReader& attrs)
      : bias(attr_as<T>(attrs, "bias")), lambd(attr_as<T>(attrs, "lambd")) {}
  T operator()(T x) const {
    const T inside = x != x ? x : T{0};  // NaN is neither below nor above: kept
    const T upper = x > lambd ? x - bias : inside;
    return x < -lambd ? x + bias : upper;
  }
};

// ---- Kernels ----

template <class T, class Op>
void unary_kernel(const KernelArgs& args) {
  map_broadcast<T, T>(args, make_op<Op>(args));
}

template <class T, class Op>
void binary_kernel(const KernelArgs& args) {
  map_broadcast<T, T, T>(args, make_op<Op>(args));
}

template <class T>
void leaky_relu_kernel(const KernelArgs& args) {
  const T alpha = static_cast<T>(args.attrs.get_float("alpha"));
  map_broadcast<T, T>(args, [alpha](T x) { return x >= T{0} ? x : alpha * x; });
}

// ---- Tables ----

// f32 and f64 compute as themselves; f16 and bf16 widen to f32 and round once (KernelOp).
using ActivationTypes = ConcatTypes<FloatTypes, HalfTypes>;

// Kernels named "<dtype>_<name>_<impl>" for each T of the list.
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

DTypeKernels leaky_relu_kernels() {
  return make_kernels(FloatTypes{}, [](auto tag) {
    using T = typename decltype(tag)::type;
    return CpuKernel{&leaky_relu_kernel<T>,
                     kernel_variant(dtype_of<T>(), "leaky_relu", simd_isa())};
  });
}

const OpDTypeKernels& activation_kernels() {
  static const OpDTypeKernels kKernels = [] {
    using K = OpKind;
    OpDTypeKernels t{};
    auto at = [&t](OpKind op) -> DTypeKernels& { return t[static_cast<size_t>(op_index(op))]; };
    at(K::Erf) = unary_kernels<Erf>(ActivationTypes{}, "erf");
    at(K::Tanh) = unary_kernels<Tanh>(ActivationTypes{}, "tanh");
    at(K::Sigmoid) = unary_kernels<Sigmoid>(ActivationTypes{}, "sigmoid");
    at(K::Relu) = unary_kernels<Relu>(ConcatTypes<NumericTypes, HalfTypes>{}, "relu");
    at(K::LeakyRelu) = leaky_relu_kernels();
    at(K::Elu) = unary_kernels<Elu>(ActivationTypes{}, "elu");
    at(K::Selu) = unary_kernels<Selu>(ActivationTypes{}, "selu");
    at(K::Celu) = unary_kernels<Celu>(ActivationTypes{}, "celu");
    at(K::HardSigmoid) = unary_kernels<HardSigmoid>(ActivationTypes{}, "hard_sigmoid");
    at(K::HardSwish) = unary_kernels<HardSwish>(ActivationTypes{}, "hard_swish");
    at(K::Softplus) = unary_kernels<Softplus>(ActivationTypes{}, "softplus");
    at(K::Softsign) = unary_kernels<Softsign>(ActivationTypes{}, "softsign");
    at(K::PRelu) = binary_kernels<PRelu>(ConcatTypes<NumericTypes, HalfTypes>{}, "prelu");
    at(K::ThresholdedRelu) = unary_kernels<ThresholdedRelu>(ActivationTypes{}, "thresholded_relu");
    at(K::Shrink) = unary_kernels<Shrink>(ActivationTypes{}, "shrink");
    return t;
  }();
  return kKernels;
}

// Every op keys on the dtype of input 0.
KernelSelection select_activation(const KernelQuery& query) {
  return select_by_dtype(activation_kernels()[static_cast<size_t>(op_index(query.node.op))],
                         query.node, query.inputs[0]->dtype);
}

// Gelu's kernel depends on its `approximate` attribute: "none" (erf) or "tanh".
KernelSelection select_gelu(const KernelQuery& query) {
  static const DTypeKernels kErf = unary_kernels<Gelu>(ActivationTypes{}, "gelu_erf");
  static const DTypeKernels kTanh = unary_kernels<GeluTanh>(ActivationTypes{}, "gelu_tanh");
  const bool tanh = AttrReader(query.node).get_string("approximate") == "tanh";
  return select_by_dtype(tanh ? kTanh : kErf, query.node, query.inputs[0]->dtype);
}

}  // namespace

void register_activation_kernels(KernelTable& table) {
  register_family(table, activation_kernels(), &select_activation);
  table[static_cast<size_t>(op_index(OpKind::Gelu))] =
      OpKernels{&select_gelu, kFloatTypes | kHalfTypes, KernelDeterminism::BitExact};
}

}  // namespace volta::cpu
