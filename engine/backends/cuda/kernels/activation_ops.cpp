// The activation family on the CUDA backend (f32): Relu Tanh Sigmoid. Selection, launch and
// each op's claim against the CPU backend; the device code is kernels/activation.cu.

#include <optional>

#include "../cuda_kernel.h"
#include "launch.h"

namespace volta::cuda {
namespace {

inline constexpr DTypeSet kF32{DType::F32};

template <ActivationOp kOp>
void run_activation(const CudaKernelArgs& args) {
  const TensorView& y = args.outputs[0];
  if (y.numel() == 0) return;
  check_launch(
      launch_f32_activation(kOp, args.inputs[0].as<float>(), y.as<float>(), y.numel(), args.stream),
      args.node);
}

constexpr CudaKernel kRelu{run_activation<ActivationOp::Relu>, "f32_relu_cuda"};
constexpr CudaKernel kTanh{run_activation<ActivationOp::Tanh>, "f32_tanh_cuda"};
constexpr CudaKernel kSigmoid{run_activation<ActivationOp::Sigmoid>, "f32_sigmoid_cuda"};

template <const CudaKernel* kKernel>
KernelSelection select_activation(const CudaKernelQuery& query) {
  if (std::optional<KernelUnsupported> refused = refuse_dtype(query, kF32)) return *refused;
  return choice_of(*kKernel);
}

using E = CrossBackendExactness;
const CudaOpKernels kOps[] = {
    {{OpKind::Relu, kF32, E::Bitwise, "x < 0 ? 0 : x, a select on both: NaN and -0 pass"},
     select_activation<&kRelu>},
    {{OpKind::Tanh, kF32, E::BitwiseExceptNanPayload,
      "the CPU's tanh_f32: same polynomial, exponential and operation order, no FMA"},
     select_activation<&kTanh>},
    {{OpKind::Sigmoid, kF32, E::Bitwise,
      "the CPU's sigmoid_f32: same exponential, division and operation order, no FMA; a NaN "
      "comes back as itself on both"},
     select_activation<&kSigmoid>},
};

}  // namespace

std::span<const CudaOpKernels> activation_op_kernels() { return kOps; }

}  // namespace volta::cuda
