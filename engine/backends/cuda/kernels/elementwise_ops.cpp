// The elementwise family on the CUDA backend (f32): Add Sub Mul Div with numpy broadcasting,
// Neg Abs Sqrt Exp Log. Selection, launch and each op's claim against the CPU backend; the
// device code is kernels/elementwise.cu.

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
    {{OpKind::Exp, kF32, E::BitwiseExceptNanPayload,
      "the CPU's exp_f32: same reduction, polynomial and operation order, no FMA"},
     select_unary<&kExp>},
    {{OpKind::Log, kF32, E::Bitwise,
      "the CPU's log_f32: same polynomial and operation order, no FMA; NaN in or a negative "
      "gives the same quiet NaN constant"},
     select_unary<&kLog>},
};

}  // namespace

std::span<const CudaOpKernels> elementwise_op_kernels() { return kOps; }

}  // namespace volta::cuda
