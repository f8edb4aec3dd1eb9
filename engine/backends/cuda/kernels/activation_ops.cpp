// The activation family on the CUDA backend (f32, f64): Relu and PRelu (also i32 i64) Tanh
// Sigmoid Erf Gelu LeakyRelu Elu Selu Celu HardSigmoid HardSwish Softplus Softsign
// ThresholdedRelu Shrink, PRelu broadcasting its slope. Selection, launch and each op's claim
// against the CPU backend; the device code is kernels/activation.cu (f32), activation_f64.cu
// (f64, and PRelu's f64 and integer kernels), elementwise.cu's binary kernels (PRelu f32) and
// elementwise_typed.cu (Relu in other dtypes).

#include <optional>
#include <string>

#include "../broadcast_geometry.h"
#include "../cuda_kernel.h"
#include "launch.h"

namespace volta::cuda {
namespace {

inline constexpr DTypeSet kFloat{DType::F32, DType::F64};
// Where the CPU's f64 kernel calls libm: the f64 kernel matches within the tolerance table.
inline constexpr DTypeSet kLibmF64{DType::F64};
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

// The same attributes as the CPU's f64 kernels read them: doubles, unrounded.
ActivationParamsF64 params_f64_of(ActivationOp op, const Node& node) {
  const AttrReader attrs(node);
  switch (op) {
    case ActivationOp::LeakyRelu:
    case ActivationOp::Elu:
    case ActivationOp::Celu:
    case ActivationOp::ThresholdedRelu:
      return {attrs.get_float("alpha"), 0.0, 0.0};
    case ActivationOp::Selu:
      return {attrs.get_float("alpha"), attrs.get_float("gamma"), 0.0};
    case ActivationOp::HardSigmoid:
      return {attrs.get_float("alpha"), attrs.get_float("beta"), 0.0};
    case ActivationOp::Shrink:
      return {0.0, attrs.get_float("bias"), attrs.get_float("lambd")};
    default:
      return {};
  }
}

template <ActivationOp kOp>
void run_activation(const CudaKernelArgs& args) {
  const TensorView& y = args.outputs[0];
  if (y.numel() == 0) return;
  const cudaError_t status =
      y.dtype == DType::F64
          ? launch_f64_activation(kOp, params_f64_of(kOp, args.node), args.inputs[0].as<double>(),
                                  y.as<double>(), y.numel(), args.stream)
          : launch_f32_activation(kOp, params_of(kOp, args.node), args.inputs[0].as<float>(),
                                  y.as<float>(), y.numel(), args.stream);
  check_launch(status, args.node);
}

void run_prelu(const CudaKernelArgs& args) {
  const TensorView& y = args.outputs[0];
  if (y.numel() == 0) return;
  const std::optional<BroadcastGeometry> geometry =
      broadcast_geometry(merge_broadcast(y.shape, args.inputs[0].shape, args.inputs[1].shape));
  if (!geometry) {
    fail(ErrorCode::KernelFailure, "the broadcast has more merged dims than its selection allowed");
  }
  const cudaError_t status =
      y.dtype == DType::F32
          ? launch_f32_binary(BinaryOp::PRelu, *geometry, args.inputs[0].as<float>(),
                              args.inputs[1].as<float>(), y.as<float>(), args.stream)
          : launch_typed_prelu(element_type(y.dtype), *geometry, args.inputs[0].data,
                               args.inputs[1].data, y.data, args.stream);
  check_launch(status, args.node);
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
// An op's f32 and f64 kernels, in DType order.
#define VOLTA_CUDA_FLOAT_ACTIVATION(Name, snake)                                                \
  constexpr CudaKernel k##Name[] = {{run_activation<ActivationOp::Name>, "f32_" snake "_cuda"}, \
                                    {run_activation<ActivationOp::Name>, "f64_" snake "_cuda"}};
VOLTA_CUDA_FLOAT_ACTIVATION(Tanh, "tanh")
VOLTA_CUDA_FLOAT_ACTIVATION(Sigmoid, "sigmoid")
VOLTA_CUDA_FLOAT_ACTIVATION(Erf, "erf")
VOLTA_CUDA_FLOAT_ACTIVATION(LeakyRelu, "leakyrelu")
VOLTA_CUDA_FLOAT_ACTIVATION(Elu, "elu")
VOLTA_CUDA_FLOAT_ACTIVATION(Selu, "selu")
VOLTA_CUDA_FLOAT_ACTIVATION(Celu, "celu")
VOLTA_CUDA_FLOAT_ACTIVATION(HardSigmoid, "hardsigmoid")
VOLTA_CUDA_FLOAT_ACTIVATION(HardSwish, "hardswish")
VOLTA_CUDA_FLOAT_ACTIVATION(Softplus, "softplus")
VOLTA_CUDA_FLOAT_ACTIVATION(Softsign, "softsign")
VOLTA_CUDA_FLOAT_ACTIVATION(ThresholdedRelu, "thresholdedrelu")
VOLTA_CUDA_FLOAT_ACTIVATION(Shrink, "shrink")
#undef VOLTA_CUDA_FLOAT_ACTIVATION
// [approximate: none, tanh][f32, f64]
constexpr CudaKernel kGelu[2][2] = {
    {{run_activation<ActivationOp::Gelu>, "f32_gelu_erf_cuda"},
     {run_activation<ActivationOp::Gelu>, "f64_gelu_erf_cuda"}},
    {{run_activation<ActivationOp::GeluTanh>, "f32_gelu_tanh_cuda"},
     {run_activation<ActivationOp::GeluTanh>, "f64_gelu_tanh_cuda"}}};
// [dtype in DType order][contiguous, broadcast]
constexpr CudaKernel kPRelu[4][2] = {
    {{run_prelu, "f32_prelu_cuda_contiguous"}, {run_prelu, "f32_prelu_cuda_broadcast"}},
    {{run_prelu, "f64_prelu_cuda_contiguous"}, {run_prelu, "f64_prelu_cuda_broadcast"}},
    {{run_prelu, "i64_prelu_cuda_contiguous"}, {run_prelu, "i64_prelu_cuda_broadcast"}},
    {{run_prelu, "i32_prelu_cuda_contiguous"}, {run_prelu, "i32_prelu_cuda_broadcast"}}};

KernelSelection select_relu(const CudaKernelQuery& query) {
  if (std::optional<KernelUnsupported> refused = refuse_dtype(query, kNumeric)) return *refused;
  return choice_of(kRelu[static_cast<size_t>(query.inputs[0]->dtype)]);
}

// Gelu's kernel follows its `approximate` attribute, "none" (erf) or "tanh", as on the CPU.
KernelSelection select_gelu(const CudaKernelQuery& query) {
  if (std::optional<KernelUnsupported> refused = refuse_dtype(query, kFloat)) return *refused;
  const bool tanh = AttrReader(query.node).get_string("approximate") == "tanh";
  return choice_of(kGelu[tanh ? 1 : 0][static_cast<size_t>(query.inputs[0]->dtype)]);
}

KernelSelection select_prelu(const CudaKernelQuery& query) {
  if (std::optional<KernelUnsupported> refused = refuse_dtype(query, kNumeric)) return *refused;
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
  return choice_of(
      kPRelu[static_cast<size_t>(query.inputs[0]->dtype)][geometry->contiguous() ? 0 : 1]);
}

// What a NaN argument gives: ops that reach it only through selects return it bit for bit
// (Bitwise); ops that compute on it give the GPU's canonical NaN where x86 passes the
// payload on (BitwiseExceptNanPayload).
using E = CrossBackendExactness;
const CudaOpKernels kOps[] = {
    {{OpKind::Erf, kFloat, E::BitwiseExceptNanPayload,
      "the CPU's erf_f32: same polynomials (an fma per Horner step on both), exponential and "
      "operation order; f64: "
      "CUDA's erf where the CPU calls libm's",
      kLibmF64},
     select_float_kernel<kErf>},
    {{OpKind::Tanh, kFloat, E::BitwiseExceptNanPayload,
      "the CPU's tanh_f32: same polynomial (an fma per Horner step on both), exponential and "
      "operation order; f64: "
      "CUDA's tanh where the CPU calls libm's",
      kLibmF64},
     select_float_kernel<kTanh>},
    {{OpKind::Sigmoid, kFloat, E::Bitwise,
      "the CPU's sigmoid_f32: same exponential (an fma per Horner step on both), division and "
      "operation order; a NaN "
      "comes back as itself on both; f64: the CPU's form around CUDA's exp (libm's there)",
      kLibmF64},
     select_float_kernel<kSigmoid>},
    {{OpKind::Relu, kNumeric, E::Bitwise, "x < 0 ? 0 : x, a select on both: NaN and -0 pass"},
     select_relu},
    {{OpKind::LeakyRelu, kFloat, E::BitwiseExceptNanPayload,
      "x >= 0 ? x : alpha * x, alpha rounded to the type as on the CPU"},
     select_float_kernel<kLeakyRelu>},
    {{OpKind::Gelu, kFloat, E::BitwiseExceptNanPayload,
      "approximate=none: the CPU's gelu_f32; approximate=tanh: its gelu_tanh_f32 with the "
      "same double steps; same polynomials and operation order, fma exactly where the CPU has it "
      "(Horner steps, gelu's exact square); f64: the CPU's "
      "formulas around CUDA's erfc and exp (libm's there)",
      kLibmF64},
     select_gelu},
    {{OpKind::Elu, kFloat, E::BitwiseExceptNanPayload,
      "x < 0 ? alpha * expm1(x) : x with the CPU's expm1_f32 (an fma per Horner step on both); "
      "f64: CUDA's expm1 "
      "(libm's there)",
      kLibmF64},
     select_float_kernel<kElu>},
    {{OpKind::Selu, kFloat, E::BitwiseExceptNanPayload,
      "gamma * (x > 0 ? x : alpha * expm1(x)) with the CPU's expm1_f32 (an fma per Horner step "
      "on both); f64: CUDA's "
      "expm1 (libm's there)",
      kLibmF64},
     select_float_kernel<kSelu>},
    {{OpKind::Celu, kFloat, E::BitwiseExceptNanPayload,
      "x < 0 ? alpha * expm1(x / alpha) : x with the CPU's expm1_f32 (an fma per Horner step on "
      "both); f64: CUDA's "
      "expm1 (libm's there)",
      kLibmF64},
     select_float_kernel<kCelu>},
    {{OpKind::HardSigmoid, kFloat, E::BitwiseExceptNanPayload,
      "clamp01(alpha * x + beta), a multiply then an add, no FMA"},
     select_float_kernel<kHardSigmoid>},
    {{OpKind::HardSwish, kFloat, E::BitwiseExceptNanPayload,
      "max(x, -3) * clamp01(x / 6 + 0.5) in the CPU's operation order, no FMA"},
     select_float_kernel<kHardSwish>},
    {{OpKind::Softplus, kFloat, E::BitwiseExceptNanPayload,
      "max(x, 0) + log1p(exp(-|x|)) with the CPU's exp_f32 and log1p_f32 (an fma per Horner "
      "step on both); f64: CUDA's "
      "exp and log1p (libm's there)",
      kLibmF64},
     select_float_kernel<kSoftplus>},
    {{OpKind::Softsign, kFloat, E::BitwiseExceptNanPayload,
      "x / (1 + |x|), +-1 at +-inf, as the CPU computes it"},
     select_float_kernel<kSoftsign>},
    {{OpKind::PRelu, kNumeric, E::BitwiseExceptNanPayload,
      "x < 0 ? slope * x : x with numpy broadcasting of the slope; integer products wrap on "
      "both"},
     select_prelu},
    {{OpKind::ThresholdedRelu, kFloat, E::Bitwise,
      "x <= alpha ? 0 : x, a select on both: NaN passes"},
     select_float_kernel<kThresholdedRelu>},
    {{OpKind::Shrink, kFloat, E::Bitwise,
      "x < -lambd ? x + bias : (x > lambd ? x - bias : 0); a NaN reaches the result by selects "
      "only"},
     select_float_kernel<kShrink>},
};

}  // namespace

std::span<const CudaOpKernels> activation_op_kernels() { return kOps; }

}  // namespace volta::cuda
