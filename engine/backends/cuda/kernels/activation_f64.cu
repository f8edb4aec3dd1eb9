// The activation family in f64 (and PRelu in i32, i64): what the CPU backend's f64 kernels
// compute (kernels/activation.cpp and activation_functors.h there), operation for operation,
// every step an explicitly rounded double intrinsic (the CPU builds with -ffp-contract=off).
// Where the CPU calls libm (exp, expm1, log1p, erf, erfc, tanh: Tanh Sigmoid Erf Gelu Elu Selu
// Celu Softplus) these call CUDA's, whose last bits may differ; the others (LeakyRelu
// HardSigmoid HardSwish Softsign ThresholdedRelu Shrink PRelu) are IEEE operations and selects
// only. The claims are in activation_ops.cpp.

#include <cstdint>
#include <type_traits>

#include "map.cuh"

namespace volta::cuda {
namespace {

__device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double sub(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double div(double a, double b) { return __ddiv_rn(a, b); }
// Sign-bit operations, as andpd / xorpd do them: NaN payloads pass.
__device__ __forceinline__ double abs_bits(double x) {
  return __longlong_as_double(__double_as_longlong(x) & 0x7fffffffffffffffll);
}
__device__ __forceinline__ double neg_bits(double x) {
  return __longlong_as_double(__double_as_longlong(x) ^
                              static_cast<long long>(0x8000000000000000ull));
}
__device__ __forceinline__ double copysign_bits(double magnitude, double sign) {
  return __longlong_as_double(
      (__double_as_longlong(magnitude) & 0x7fffffffffffffffll) |
      (__double_as_longlong(sign) & static_cast<long long>(0x8000000000000000ull)));
}
__device__ __forceinline__ double inf() { return __longlong_as_double(0x7ff0000000000000ll); }

// The CPU's sigmoid_f64: e = e^-|x|, (x >= 0 ? 1 : e) / (1 + e).
__device__ __forceinline__ double sigmoid(double x) {
  const double e = exp(neg_bits(abs_bits(x)));
  return div(x >= 0.0 ? 1.0 : e, add(1.0, e));
}

// Clamp to [0, 1] by comparisons that NaN fails (the CPU's clamp01).
__device__ __forceinline__ double clamp01(double v) {
  const double above = v < 0.0 ? 0.0 : v;
  return above > 1.0 ? 1.0 : above;
}

template <ActivationOp kOp>
struct F64Activation {
  ActivationParamsF64 p;
  __device__ double operator()(double x) const {
    if constexpr (kOp == ActivationOp::Tanh) return tanh(x);
    if constexpr (kOp == ActivationOp::Erf) return erf(x);
    if constexpr (kOp == ActivationOp::Sigmoid) return sigmoid(x);
    if constexpr (kOp == ActivationOp::Gelu) {
      // 0.5 * xc * erfc(-xc * sqrt2 / 2), left to right; below -40 the result is -0.
      const double xc = x < -40.0 ? -40.0 : x;
      return mul(mul(0.5, xc), erfc(div(mul(neg_bits(xc), 1.4142135623730951), 2.0)));
    }
    if constexpr (kOp == ActivationOp::GeluTanh) {
      // xc * sigmoid(2 sqrt(2/pi) (xc + 0.044715 xc^3)); 2 * sqrt(2 / pi) is one constant on
      // the CPU too (correctly rounded division and square root, then an exact doubling).
      const double xc = x < -30.0 ? -30.0 : x;
      const double cube = mul(mul(mul(0.044715, xc), xc), xc);
      const double two_u = mul(mul(2.0, __dsqrt_rn(div(2.0, 3.141592653589793))), add(xc, cube));
      return mul(xc, sigmoid(two_u));
    }
    if constexpr (kOp == ActivationOp::LeakyRelu) return x >= 0.0 ? x : mul(p.alpha, x);
    if constexpr (kOp == ActivationOp::Elu) return x < 0.0 ? mul(p.alpha, expm1(x)) : x;
    if constexpr (kOp == ActivationOp::Selu) {
      return mul(p.beta, x > 0.0 ? x : mul(p.alpha, expm1(x)));
    }
    if constexpr (kOp == ActivationOp::Celu) {
      return x < 0.0 ? mul(p.alpha, expm1(div(x, p.alpha))) : x;
    }
    if constexpr (kOp == ActivationOp::HardSigmoid) return clamp01(add(mul(p.alpha, x), p.beta));
    if constexpr (kOp == ActivationOp::HardSwish) {
      return mul(x < -3.0 ? -3.0 : x, clamp01(add(div(x, 6.0), 0.5)));
    }
    if constexpr (kOp == ActivationOp::Softplus) {
      const double positive = x > 0.0 ? x : 0.0;
      return add(positive, log1p(exp(neg_bits(abs_bits(x)))));
    }
    if constexpr (kOp == ActivationOp::Softsign) {
      const double ax = abs_bits(x);
      const double quotient = div(x, add(1.0, ax));
      return ax == inf() ? copysign_bits(1.0, x) : quotient;
    }
    if constexpr (kOp == ActivationOp::ThresholdedRelu) return x <= p.alpha ? 0.0 : x;
    if constexpr (kOp == ActivationOp::Shrink) {
      const double inside = x != x ? x : 0.0;
      const double upper = x > p.lambd ? sub(x, p.beta) : inside;
      return x < neg_bits(p.lambd) ? add(x, p.beta) : upper;
    }
    return x;  // Relu: elementwise_typed.cu's
  }
};

template <class Op>
__global__ void f64_map_kernel(Op op, const double* x, double* y, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) y[i] = op(x[i]);
}

template <ActivationOp kOp>
cudaError_t launch_map(const ActivationParamsF64& p, const double* x, double* y, int64_t n,
                       cudaStream_t stream) {
  f64_map_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(F64Activation<kOp>{p}, x, y, n);
  return cudaGetLastError();
}

// The CPU's PRelu: slope * x below 0; integer products wrap (in the unsigned type).
template <class T>
__device__ __forceinline__ T prelu(T x, T slope) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return x < 0 ? static_cast<T>(static_cast<U>(slope) * static_cast<U>(x)) : x;
  } else {
    return x < 0.0 ? mul(slope, x) : x;
  }
}

template <class T>
__global__ void prelu_kernel(BroadcastGeometry g, const T* x, const T* slope, T* y) {
  for (int64_t i = first_index(); i < g.numel; i += grid_stride()) {
    int64_t at_x = 0;
    int64_t at_slope = 0;
    operand_offsets(g, i, at_x, at_slope);
    y[i] = prelu(x[at_x], slope[at_slope]);
  }
}

template <class T>
cudaError_t launch_prelu_of(const BroadcastGeometry& g, const void* x, const void* slope, void* y,
                            cudaStream_t stream) {
  prelu_kernel<T><<<blocks_for(g.numel), kThreadsPerBlock, 0, stream>>>(
      g, static_cast<const T*>(x), static_cast<const T*>(slope), static_cast<T*>(y));
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_f64_activation(ActivationOp op, const ActivationParamsF64& p, const double* x,
                                  double* y, int64_t n, cudaStream_t stream) {
  switch (op) {
    case ActivationOp::Relu:
      break;  // elementwise_typed.cu's
    case ActivationOp::Tanh:
      return launch_map<ActivationOp::Tanh>(p, x, y, n, stream);
    case ActivationOp::Sigmoid:
      return launch_map<ActivationOp::Sigmoid>(p, x, y, n, stream);
    case ActivationOp::Erf:
      return launch_map<ActivationOp::Erf>(p, x, y, n, stream);
    case ActivationOp::Gelu:
      return launch_map<ActivationOp::Gelu>(p, x, y, n, stream);
    case ActivationOp::GeluTanh:
      return launch_map<ActivationOp::GeluTanh>(p, x, y, n, stream);
    case ActivationOp::LeakyRelu:
      return launch_map<ActivationOp::LeakyRelu>(p, x, y, n, stream);
    case ActivationOp::Elu:
      return launch_map<ActivationOp::Elu>(p, x, y, n, stream);
    case ActivationOp::Selu:
      return launch_map<ActivationOp::Selu>(p, x, y, n, stream);
    case ActivationOp::Celu:
      return launch_map<ActivationOp::Celu>(p, x, y, n, stream);
    case ActivationOp::HardSigmoid:
      return launch_map<ActivationOp::HardSigmoid>(p, x, y, n, stream);
    case ActivationOp::HardSwish:
      return launch_map<ActivationOp::HardSwish>(p, x, y, n, stream);
    case ActivationOp::Softplus:
      return launch_map<ActivationOp::Softplus>(p, x, y, n, stream);
    case ActivationOp::Softsign:
      return launch_map<ActivationOp::Softsign>(p, x, y, n, stream);
    case ActivationOp::ThresholdedRelu:
      return launch_map<ActivationOp::ThresholdedRelu>(p, x, y, n, stream);
    case ActivationOp::Shrink:
      return launch_map<ActivationOp::Shrink>(p, x, y, n, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t launch_typed_prelu(ElementType type, const BroadcastGeometry& geometry, const void* x,
                               const void* slope, void* y, cudaStream_t stream) {
  switch (type) {
    case ElementType::F64:
      return launch_prelu_of<double>(geometry, x, slope, y, stream);
    case ElementType::I32:
      return launch_prelu_of<int32_t>(geometry, x, slope, y, stream);
    case ElementType::I64:
      return launch_prelu_of<int64_t>(geometry, x, slope, y, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace volta::cuda
