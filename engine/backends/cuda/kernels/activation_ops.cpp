// The activation family on the CUDA backend (f32): Relu (also f64 i32 i64) Tanh Sigmoid Erf Gelu
// LeakyRelu Elu Selu Celu HardSigmoid HardSwish Softplus Softsign ThresholdedRelu Shrink, and
// PRelu (broadcasting its slope). Selection, launch and each op's claim against the CPU backend;
// the device code is kernels/activation.cu (PRelu: elementwise.cu's binary kernels; Relu in other
// dtypes: elementwise_typed.cu).

#include <optional>
#include <string>

#include "../broadcast_geometry.h"
#include "../cuda_kernel.h"
#include "launch.h"

namespace volta::cuda {
namespace {

inline constexpr DTypeSet kF32{DType::F32};
inline constexpr DTypeSet kNumeric{DType::F32, DType::F64, DType::I64, DType::I32};

// An f32 attribute as the CPU's activation kernels read it: the double, rounded to float.
float attr_f32(const Node& node, std::string_view name) {
  return static_cast<float>(AttrReader(node).get_float(name));
}

ActivationParams params_of(ActivationOp op, const Node& node) {
  switch (op) {
    case ActivationOp::LeakyRelu:
    case ActivationOp::Elu:
    case ActivationOp::Celu:
    case ActivationOp::ThresholdedRelu:
      return {attr_f32(node, "alpha"), 0.0f, 0.0f};
    case ActivationOp::Selu:
      return {attr_f32(node, "alpha"), attr_f32(node, "gamma"), 0.0f};
    case ActivationOp::HardSigmoid:
      return {attr_f32(node, "alpha"), attr_f32(node, "beta"), 0.0f};
    case ActivationOp::Shrink:
      return {0.0f, attr_f32(node, "bias"), attr_f32(node, "lambd")};
    default:
      return {};
  }
}

template <ActivationOp kOp>
void run_activation(const CudaKernelArgs& args) {
  const TensorView& y = args.outputs[0];
  if (y.numel() == 0) return;
  check_launch(launch_f32_activation(kOp, params_of(kOp, args.node), args.inputs[0].as<float>(),
                                     y.as<float>(), y.numel(), args.stream),
               args.node);
}

void run_prelu(const CudaKernelArgs& args) {
  const TensorView& y = args.outputs[0];
  if (y.numel() == 0) return;
  const std::optional<BroadcastGeometry> geometry =
      broadcast_geometry(merge_broadcast(y.shape, args.inputs[0].shape, args.inputs[1].shape));
  if (!geometry) {
    fail(ErrorCode::KernelFailure, "the broadcast has more merged dims than its selection allowed");
  }
  check_launch(launch_f32_binary(BinaryOp::PRelu, *geometry, args.inputs[0].as<float>(),
                                 args.inputs[1].as<float>(), y.as<float>(), args.stream),
               args.node);
}

// Relu in f64, i32 and i64: elementwise_typed.cu's select.
void run_typed_relu(const CudaKernelArgs& args) {
  const TensorView& y = args.outputs[0];
  if (y.numel() == 0) return;
  check_launch(launch_typed_unary(UnaryOp::Relu, element_type(y.dtype), args.inputs[0].data, y.data,
                                  y.numel(), args.stream),
               args.node);
}

// By dtype, in DType order: f32 f64 i64 i32.
constexpr CudaKernel kRelu[] = {{run_activation<ActivationOp::Relu>, "f32_relu_cuda"},
                                {run_typed_relu, "f64_relu_cuda"},
                                {run_typed_relu, "i64_relu_cuda"},
                                {run_typed_relu, "i32_relu_cuda"}};
constexpr CudaKernel kTanh{run_activation<ActivationOp::Tanh>, "f32_tanh_cuda"};
constexpr CudaKernel kSigmoid{run_activation<ActivationOp::Sigmoid>, "f32_sigmoid_cuda"};
constexpr CudaKernel kErf{run_activation<ActivationOp::Erf>, "f32_erf_cuda"};
constexpr CudaKernel kGelu[] = {{run_activation<ActivationOp::Gelu>, "f32_gelu_erf_cuda"},
                                {run_activation<ActivationOp::GeluTanh>, "f32_gelu_tanh_cuda"}};
constexpr CudaKernel kLeakyRelu{run_activation<ActivationOp::LeakyRelu>, "f32_leakyrelu_cuda"};
constexpr CudaKernel kElu{run_activation<ActivationOp::Elu>, "f32_elu_cuda"};
constexpr CudaKernel kSelu{run_activation<ActivationOp::Selu>, "f32_selu_cuda"};
constexpr CudaKernel kCelu{run_activation<ActivationOp::Celu>, "f32_celu_cuda"};
constexpr CudaKernel kHardSigmoid{run_activation<ActivationOp::HardSigmoid>,
                                  "f32_hardsigmoid_cuda"};
constexpr CudaKernel kHardSwish{run_activation<ActivationOp::HardSwish>, "f32_hardswish_cuda"};
constexpr CudaKernel kSoftplus{run_activation<ActivationOp::Softplus>, "f32_softplus_cuda"};
constexpr CudaKernel kSoftsign{run_activation<ActivationOp::Softsign>, "f32_softsign_cuda"};
constexpr CudaKernel kThresholdedRelu{run_activation<ActivationOp::ThresholdedRelu>,
                                      "f32_thresholdedrelu_cuda"};
constexpr CudaKernel kShrink{run_activation<ActivationOp::Shrink>, "f32_shrink_cuda"};
constexpr CudaKernel kPRelu[] = {{run_prelu, "f32_prelu_cuda_contiguous"},
                                 {run_prelu, "f32_prelu_cuda_broadcast"}};

template <const CudaKernel* kKernel>
KernelSelection select_activation(const CudaKernelQuery& query) {
  if (std::optional<KernelUnsupported> refused = refuse_dtype(query, kF32)) return *refused;
  return choice_of(*kKernel);
}

KernelSelection select_relu(const CudaKernelQuery& query) {
  if (std::optional<KernelUnsupported> refused = refuse_dtype(query, kNumeric)) return *refused;
  return choice_of(kRelu[static_cast<size_t>(query.inputs[0]->dtype)]);
}

// Gelu's kernel follows its `approximate` attribute, "none" (erf) or "tanh", as on the CPU.
KernelSelection select_gelu(const CudaKernelQuery& query) {
  if (std::optional<KernelUnsupported> refused = refuse_dtype(query, kF32)) return *refused;
  return choice_of(kGelu[AttrReader(query.node).get_string("approximate") == "tanh" ? 1 : 0]);
}

KernelSelection select_prelu(const CudaKernelQuery& query) {
  if (std::optional<KernelUnsupported> refused = refuse_dtype(query, kF32)) return *refused;
  const MergedBroadcast merged =
      merge_broadcast(query.outputs[0].shape, query.inputs[0]->shape, query.inputs[1]->shape);
  const std::optional<BroadcastGeometry> geometry = broadcast_geometry(merged);
  if (!geometry) {
    return KernelUnsupported{"PRelu of " + query.inputs[0]->shape.str() + " and slope " +
                             query.inputs[1]->shape.str() + " broadcasts over " +
                             std::to_string(merged.dims.size()) +
                             " dims that cannot be merged; the CUDA kernels take at most " +
                             std::to_string(kMaxBroadcastDims)};
  }
  return choice_of(kPRelu[geometry->contiguous() ? 0 : 1]);
}

// What a NaN argument gives: ops that reach it only through selects return it bit for bit
// (Bitwise); ops that compute on it give the GPU's canonical NaN where x86 passes the
// payload on (BitwiseExceptNanPayload).
using E = CrossBackendExactness;
const CudaOpKernels kOps[] = {
    {{OpKind::Erf, kF32, E::BitwiseExceptNanPayload,
      "the CPU's erf_f32: same polynomials, exponential and operation order, no FMA"},
     select_activation<&kErf>},
    {{OpKind::Tanh, kF32, E::BitwiseExceptNanPayload,
      "the CPU's tanh_f32: same polynomial, exponential and operation order, no FMA"},
     select_activation<&kTanh>},
    {{OpKind::Sigmoid, kF32, E::Bitwise,
      "the CPU's sigmoid_f32: same exponential, division and operation order, no FMA; a NaN "
      "comes back as itself on both"},
     select_activation<&kSigmoid>},
    {{OpKind::Relu, kNumeric, E::Bitwise, "x < 0 ? 0 : x, a select on both: NaN and -0 pass"},
     select_relu},
    {{OpKind::LeakyRelu, kF32, E::BitwiseExceptNanPayload,
      "x >= 0 ? x : alpha * x, alpha rounded to f32 as on the CPU"},
     select_activation<&kLeakyRelu>},
    {{OpKind::Gelu, kF32, E::BitwiseExceptNanPayload,
      "approximate=none: the CPU's gelu_f32; approximate=tanh: its gelu_tanh_f32 with the "
      "same double steps; same polynomials and operation order, no FMA"},
     select_gelu},
    {{OpKind::Elu, kF32, E::BitwiseExceptNanPayload,
      "x < 0 ? alpha * expm1(x) : x with the CPU's expm1_f32, no FMA"},
     select_activation<&kElu>},
    {{OpKind::Selu, kF32, E::BitwiseExceptNanPayload,
      "gamma * (x > 0 ? x : alpha * expm1(x)) with the CPU's expm1_f32, no FMA"},
     select_activation<&kSelu>},
    {{OpKind::Celu, kF32, E::BitwiseExceptNanPayload,
      "x < 0 ? alpha * expm1(x / alpha) : x with the CPU's expm1_f32, no FMA"},
     select_activation<&kCelu>},
    {{OpKind::HardSigmoid, kF32, E::BitwiseExceptNanPayload,
      "clamp01(alpha * x + beta), a multiply then an add, no FMA"},
     select_activation<&kHardSigmoid>},
    {{OpKind::HardSwish, kF32, E::BitwiseExceptNanPayload,
      "max(x, -3) * clamp01(x / 6 + 0.5) in the CPU's operation order, no FMA"},
     select_activation<&kHardSwish>},
    {{OpKind::Softplus, kF32, E::BitwiseExceptNanPayload,
      "max(x, 0) + log1p(exp(-|x|)) with the CPU's exp_f32 and log1p_f32, no FMA"},
     select_activation<&kSoftplus>},
    {{OpKind::Softsign, kF32, E::BitwiseExceptNanPayload,
      "x / (1 + |x|), +-1 at +-inf, as the CPU computes it"},
     select_activation<&kSoftsign>},
    {{OpKind::PRelu, kF32, E::BitwiseExceptNanPayload,
      "x < 0 ? slope * x : x with numpy broadcasting of the slope"},
     select_prelu},
    {{OpKind::ThresholdedRelu, kF32, E::Bitwise,
      "x <= alpha ? 0 : x, a select on both: NaN passes"},
     select_activation<&kThresholdedRelu>},
    {{OpKind::Shrink, kF32, E::Bitwise,
      "x < -lambd ? x + bias : (x > lambd ? x - bias : 0); a NaN reaches the result by selects "
      "only"},
     select_activation<&kShrink>},
};

}  // namespace

std::span<const CudaOpKernels> activation_op_kernels() { return kOps; }

}  // namespace volta::cuda
