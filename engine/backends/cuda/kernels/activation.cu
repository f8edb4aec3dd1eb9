// Activation-family kernels, f32: Relu Tanh Sigmoid, computing what the CPU backend's
// kernels compute (kernels/activation.cpp, activation_functors.h and vector_math.h there),
// operation for operation. The per-op exactness claims are in activation_ops.cpp.

#include "device_math.cuh"
#include "map.cuh"

namespace volta::cuda {
namespace {

// max(x, 0) as the CPU writes it: NaN and -0 pass unchanged.
struct ReluOp {
  __device__ float operator()(float x) const { return x < 0.0f ? 0.0f : x; }
};
struct TanhOp {
  __device__ float operator()(float x) const { return dmath::tanh_f32(x); }
};
struct SigmoidOp {
  __device__ float operator()(float x) const { return dmath::sigmoid_f32(x); }
};

}  // namespace

cudaError_t launch_f32_activation(ActivationOp op, const float* x, float* y, int64_t n,
                                  cudaStream_t stream) {
  switch (op) {
    case ActivationOp::Relu:
      return launch_f32_map(ReluOp{}, x, y, n, stream);
    case ActivationOp::Tanh:
      return launch_f32_map(TanhOp{}, x, y, n, stream);
    case ActivationOp::Sigmoid:
      return launch_f32_map(SigmoidOp{}, x, y, n, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace volta::cuda
