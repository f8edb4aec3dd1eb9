// Activation-family kernels, f32: Relu Tanh Sigmoid Erf Gelu (erf and tanh forms) LeakyRelu Elu
// Selu Celu HardSigmoid HardSwish Softplus Softsign ThresholdedRelu Shrink, computing what the
// CPU backend's kernels compute (kernels/activation.cpp, activation_functors.h and
// vector_math.h there), operation for operation. PRelu, a broadcasting binary op, runs on
// elementwise.cu's binary kernels. The per-op exactness claims are in activation_ops.cpp.

#include "device_math.cuh"
#include "map.cuh"

namespace volta::cuda {
namespace {

using namespace dmath;

// max(x, 0) as the CPU writes it: NaN and -0 pass unchanged.
struct ReluOp {
  __device__ float operator()(float x) const { return x < 0.0f ? 0.0f : x; }
};
struct TanhOp {
  __device__ float operator()(float x) const { return tanh_f32(x); }
};
struct SigmoidOp {
  __device__ float operator()(float x) const { return sigmoid_f32(x); }
};
struct ErfOp {
  __device__ float operator()(float x) const { return erf_f32(x); }
};
struct GeluOp {
  __device__ float operator()(float x) const { return gelu_f32(x); }
};
struct GeluTanhOp {
  __device__ float operator()(float x) const { return gelu_tanh_f32(x); }
};
struct LeakyReluOp {
  float alpha;
  __device__ float operator()(float x) const { return x >= 0.0f ? x : mul(alpha, x); }
};
struct EluOp {
  float alpha;
  __device__ float operator()(float x) const { return x < 0.0f ? mul(alpha, expm1_f32(x)) : x; }
};
struct SeluOp {
  float alpha, gamma;
  __device__ float operator()(float x) const {
    return mul(gamma, x > 0.0f ? x : mul(alpha, expm1_f32(x)));
  }
};
struct CeluOp {
  float alpha;
  __device__ float operator()(float x) const {
    return x < 0.0f ? mul(alpha, expm1_f32(div(x, alpha))) : x;
  }
};

// Clamp to [0, 1] by comparisons that NaN fails, so NaN passes through (the CPU's clamp01).
__device__ __forceinline__ float clamp01(float v) {
  const float above = v < 0.0f ? 0.0f : v;
  return above > 1.0f ? 1.0f : above;
}
struct HardSigmoidOp {
  float alpha, beta;
  __device__ float operator()(float x) const { return clamp01(add(mul(alpha, x), beta)); }
};
struct HardSwishOp {
  __device__ float operator()(float x) const {
    return mul(x < -3.0f ? -3.0f : x, clamp01(add(div(x, 6.0f), 0.5f)));
  }
};
struct SoftplusOp {
  __device__ float operator()(float x) const {
    const float positive = x > 0.0f ? x : 0.0f;
    return add(positive, log1p_f32(exp_f32(neg_bits(abs_bits(x)))));
  }
};
struct SoftsignOp {
  __device__ float operator()(float x) const {
    const float ax = abs_bits(x);
    const float quotient = div(x, add(1.0f, ax));
    return ax == kInf() ? copysign_bits(1.0f, x) : quotient;
  }
};
struct ThresholdedReluOp {
  float alpha;
  __device__ float operator()(float x) const { return x <= alpha ? 0.0f : x; }
};
struct ShrinkOp {
  float bias, lambd;
  __device__ float operator()(float x) const {
    const float inside = x != x ? x : 0.0f;
    const float upper = x > lambd ? sub(x, bias) : inside;
    return x < neg_bits(lambd) ? add(x, bias) : upper;
  }
};

}  // namespace

cudaError_t launch_f32_activation(ActivationOp op, const ActivationParams& p, const float* x,
                                  float* y, int64_t n, cudaStream_t stream) {
  switch (op) {
    case ActivationOp::Relu:
      return launch_f32_map(ReluOp{}, x, y, n, stream);
    case ActivationOp::Tanh:
      return launch_f32_map(TanhOp{}, x, y, n, stream);
    case ActivationOp::Sigmoid:
      return launch_f32_map(SigmoidOp{}, x, y, n, stream);
    case ActivationOp::Erf:
      return launch_f32_map(ErfOp{}, x, y, n, stream);
    case ActivationOp::Gelu:
      return launch_f32_map(GeluOp{}, x, y, n, stream);
    case ActivationOp::GeluTanh:
      return launch_f32_map(GeluTanhOp{}, x, y, n, stream);
    case ActivationOp::LeakyRelu:
      return launch_f32_map(LeakyReluOp{p.alpha}, x, y, n, stream);
    case ActivationOp::Elu:
      return launch_f32_map(EluOp{p.alpha}, x, y, n, stream);
    case ActivationOp::Selu:
      return launch_f32_map(SeluOp{p.alpha, p.beta}, x, y, n, stream);
    case ActivationOp::Celu:
      return launch_f32_map(CeluOp{p.alpha}, x, y, n, stream);
    case ActivationOp::HardSigmoid:
      return launch_f32_map(HardSigmoidOp{p.alpha, p.beta}, x, y, n, stream);
    case ActivationOp::HardSwish:
      return launch_f32_map(HardSwishOp{}, x, y, n, stream);
    case ActivationOp::Softplus:
      return launch_f32_map(SoftplusOp{}, x, y, n, stream);
    case ActivationOp::Softsign:
      return launch_f32_map(SoftsignOp{}, x, y, n, stream);
    case ActivationOp::ThresholdedRelu:
      return launch_f32_map(ThresholdedReluOp{p.alpha}, x, y, n, stream);
    case ActivationOp::Shrink:
      return launch_f32_map(ShrinkOp{p.beta, p.lambd}, x, y, n, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace volta::cuda
