// The elementwise family on the CUDA backend (f32): Add Sub Mul Div and the variadic Min Max
// with numpy broadcasting, Neg Abs Sqrt Reciprocal Exp Log Floor Ceil Round Sign. Selection,
// launch and each op's claim against the CPU backend; the device code is kernels/elementwise.cu.
// (Cast, Where and Clip are in kernels/conversion_ops.cpp.) Selection, launch and each op's claim
// against the CPU backend; the device code is kernels/elementwise.cu.

#include <optional>
#include <string>

#include "../broadcast_geometry.h"
#include "../cuda_kernel.h"
#include "launch.h"

namespace volta::cuda {
namespace {

inline constexpr DTypeSet kF32{DType::F32};

template <BinaryOp kOp>
void run_binary(const CudaKernelArgs& args) {
  const TensorView& y = args.outputs[0];
  if (y.numel() == 0) return;
  const std::optional<BroadcastGeometry> geometry =
      broadcast_geometry(merge_broadcast(y.shape, args.inputs[0].shape, args.inputs[1].shape));
  if (!geometry) {
    fail(ErrorCode::KernelFailure, "the broadcast has more merged dims than its selection allowed");
  }
  check_launch(launch_f32_binary(kOp, *geometry, args.inputs[0].as<float>(),
                                 args.inputs[1].as<float>(), y.as<float>(), args.stream),
               args.node);
}

template <UnaryOp kOp>
void run_unary(const CudaKernelArgs& args) {
  const TensorView& y = args.outputs[0];
  if (y.numel() == 0) return;
  check_launch(
      launch_f32_unary(kOp, args.inputs[0].as<float>(), y.as<float>(), y.numel(), args.stream),
      args.node);
}

// Min / Max of one or more inputs, folded left to right as the CPU does: y = op(x0, x1), then
// y = op(y, xk) for each further input (each step reads an element of y before writing it, in
// the same thread). One input is a copy.
template <BinaryOp kOp>
void run_fold(const CudaKernelArgs& args) {
  const TensorView& y = args.outputs[0];
  if (y.numel() == 0) return;
  const std::span<const ConstTensorView> in = args.inputs;
  if (in.size() == 1) {
    check_launch(cudaMemcpyAsync(y.data, in[0].data, static_cast<size_t>(y.numel()) * sizeof(float),
                                 cudaMemcpyDeviceToDevice, args.stream),
                 args.node);
    return;
  }
  for (size_t k = 1; k < in.size(); ++k) {
    const Shape& first_shape = k == 1 ? in[0].shape : y.shape;
    const float* first = k == 1 ? in[0].as<float>() : y.as<float>();
    const std::optional<BroadcastGeometry> geometry =
        broadcast_geometry(merge_broadcast(y.shape, first_shape, in[k].shape));
    if (!geometry) {
      fail(ErrorCode::KernelFailure,
           "the broadcast has more merged dims than its selection allowed");
    }
    check_launch(
        launch_f32_binary(kOp, *geometry, first, in[k].as<float>(), y.as<float>(), args.stream),
        args.node);
  }
}

// Contiguous and broadcast variants run the same launch, which walks the same geometry: the
// variant names what selection saw.
constexpr CudaKernel kAdd[] = {{run_binary<BinaryOp::Add>, "f32_add_cuda_contiguous"},
                               {run_binary<BinaryOp::Add>, "f32_add_cuda_broadcast"}};
constexpr CudaKernel kSub[] = {{run_binary<BinaryOp::Sub>, "f32_sub_cuda_contiguous"},
                               {run_binary<BinaryOp::Sub>, "f32_sub_cuda_broadcast"}};
constexpr CudaKernel kMul[] = {{run_binary<BinaryOp::Mul>, "f32_mul_cuda_contiguous"},
                               {run_binary<BinaryOp::Mul>, "f32_mul_cuda_broadcast"}};
constexpr CudaKernel kDiv[] = {{run_binary<BinaryOp::Div>, "f32_div_cuda_contiguous"},
                               {run_binary<BinaryOp::Div>, "f32_div_cuda_broadcast"}};
constexpr CudaKernel kNeg{run_unary<UnaryOp::Neg>, "f32_neg_cuda"};
constexpr CudaKernel kAbs{run_unary<UnaryOp::Abs>, "f32_abs_cuda"};
constexpr CudaKernel kSqrt{run_unary<UnaryOp::Sqrt>, "f32_sqrt_cuda"};
constexpr CudaKernel kExp{run_unary<UnaryOp::Exp>, "f32_exp_cuda"};
constexpr CudaKernel kLog{run_unary<UnaryOp::Log>, "f32_log_cuda"};
constexpr CudaKernel kReciprocal{run_unary<UnaryOp::Reciprocal>, "f32_reciprocal_cuda"};
constexpr CudaKernel kFloor{run_unary<UnaryOp::Floor>, "f32_floor_cuda"};
constexpr CudaKernel kCeil{run_unary<UnaryOp::Ceil>, "f32_ceil_cuda"};
constexpr CudaKernel kRound{run_unary<UnaryOp::Round>, "f32_round_cuda"};
constexpr CudaKernel kSign{run_unary<UnaryOp::Sign>, "f32_sign_cuda"};
constexpr CudaKernel kMin{run_fold<BinaryOp::Min>, "f32_min_cuda_fold"};
constexpr CudaKernel kMax{run_fold<BinaryOp::Max>, "f32_max_cuda_fold"};

template <const CudaKernel* kVariants>
KernelSelection select_binary(const CudaKernelQuery& query) {
  if (std::optional<KernelUnsupported> refused = refuse_dtype(query, kF32)) return *refused;
  const Shape& out = query.outputs[0].shape;
  const MergedBroadcast merged =
      merge_broadcast(out, query.inputs[0]->shape, query.inputs[1]->shape);
  const std::optional<BroadcastGeometry> geometry = broadcast_geometry(merged);
  if (!geometry) {
    return KernelUnsupported{std::string(op_name(query.node.op)) + " of " +
                             query.inputs[0]->shape.str() + " and " + query.inputs[1]->shape.str() +
                             " broadcasts over " + std::to_string(merged.dims.size()) +
                             " dims that cannot be merged; the CUDA kernels take at most " +
                             std::to_string(kMaxBroadcastDims)};
  }
  return choice_of(kVariants[geometry->contiguous() ? 0 : 1]);
}

// Every fold step must fit the kernels' merged broadcast dims.
template <const CudaKernel* kKernel>
KernelSelection select_fold(const CudaKernelQuery& query) {
  if (std::optional<KernelUnsupported> refused = refuse_dtype(query, kF32)) return *refused;
  const Shape& out = query.outputs[0].shape;
  for (size_t k = 1; k < query.inputs.size(); ++k) {
    const Shape& first = k == 1 ? query.inputs[0]->shape : out;
    const MergedBroadcast merged = merge_broadcast(out, first, query.inputs[k]->shape);
    if (!broadcast_geometry(merged)) {
      return KernelUnsupported{std::string(op_name(query.node.op)) + " of " + first.str() +
                               " and " + query.inputs[k]->shape.str() + " broadcasts over " +
                               std::to_string(merged.dims.size()) +
                               " dims that cannot be merged; the CUDA kernels take at most " +
                               std::to_string(kMaxBroadcastDims)};
    }
  }
  return choice_of(*kKernel);
}

template <const CudaKernel* kKernel>
KernelSelection select_unary(const CudaKernelQuery& query) {
  if (std::optional<KernelUnsupported> refused = refuse_dtype(query, kF32)) return *refused;
  return choice_of(*kKernel);
}

using E = CrossBackendExactness;
const CudaOpKernels kOps[] = {
    {{OpKind::Add, kF32, E::BitwiseExceptNanPayload, "one IEEE add rounded to nearest on both"},
     select_binary<kAdd>},
    {{OpKind::Sub, kF32, E::BitwiseExceptNanPayload,
      "one IEEE subtract rounded to nearest on both"},
     select_binary<kSub>},
    {{OpKind::Mul, kF32, E::BitwiseExceptNanPayload,
      "one IEEE multiply rounded to nearest on both"},
     select_binary<kMul>},
    {{OpKind::Div, kF32, E::BitwiseExceptNanPayload,
      "one IEEE division rounded to nearest on both (__fdiv_rn, divss)"},
     select_binary<kDiv>},
    {{OpKind::Neg, kF32, E::Bitwise, "a sign-bit flip on both"}, select_unary<&kNeg>},
    {{OpKind::Abs, kF32, E::Bitwise, "a sign-bit clear on both"}, select_unary<&kAbs>},
    {{OpKind::Sqrt, kF32, E::BitwiseExceptNanPayload,
      "IEEE square root, correctly rounded on both (__fsqrt_rn, sqrtss)"},
     select_unary<&kSqrt>},
    {{OpKind::Reciprocal, kF32, E::BitwiseExceptNanPayload,
      "1 / x, one IEEE division rounded to nearest on both"},
     select_unary<&kReciprocal>},
    {{OpKind::Exp, kF32, E::BitwiseExceptNanPayload,
      "the CPU's exp_f32: same reduction, polynomial and operation order, no FMA"},
     select_unary<&kExp>},
    {{OpKind::Log, kF32, E::Bitwise,
      "the CPU's log_f32: same polynomial and operation order, no FMA; NaN in or a negative "
      "gives the same quiet NaN constant"},
     select_unary<&kLog>},
    {{OpKind::Min, kF32, E::Bitwise,
      "the CPU's left-to-right fold of a != a ? a : (a <= b ? a : b): selects only"},
     select_fold<&kMin>},
    {{OpKind::Max, kF32, E::Bitwise,
      "the CPU's left-to-right fold of a != a ? a : (a >= b ? a : b): selects only"},
     select_fold<&kMax>},
    {{OpKind::Floor, kF32, E::Bitwise,
      "the CPU's round-half-even by +-2^23, then one exact correction step; NaN passes"},
     select_unary<&kFloor>},
    {{OpKind::Ceil, kF32, E::Bitwise,
      "the CPU's round-half-even by +-2^23, then one exact correction step; NaN passes"},
     select_unary<&kCeil>},
    {{OpKind::Round, kF32, E::Bitwise, "the CPU's round-half-even by +-2^23; NaN passes"},
     select_unary<&kRound>},
    {{OpKind::Sign, kF32, E::Bitwise, "selects of -1, 0, 1 or the NaN itself on both"},
     select_unary<&kSign>},
};

}  // namespace

std::span<const CudaOpKernels> elementwise_op_kernels() { return kOps; }

}  // namespace volta::cuda
