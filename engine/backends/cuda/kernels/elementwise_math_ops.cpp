// The elementwise ops whose CPU kernels are libm calls, on the CUDA backend (f32, f64): Pow
// with numpy broadcasting, and Sin Cos Tan Asin Acos Atan Sinh Cosh Asinh Acosh Atanh.
// Selection, launch and each op's claim; the device code is kernels/elementwise_math.cu. CUDA's
// math library does not give glibc's last bits, so nothing here claims the CPU's bits: the
// parity suite compares them within the tolerance table.

#include <optional>
#include <string>

#include "../broadcast_geometry.h"
#include "../cuda_kernel.h"
#include "launch.h"

namespace volta::cuda {
namespace {

inline constexpr DTypeSet kFloat{DType::F32, DType::F64};

template <MathOp kOp>
void run_math(const CudaKernelArgs& args) {
  const TensorView& y = args.outputs[0];
  if (y.numel() == 0) return;
  check_launch(launch_math_unary(kOp, element_type(y.dtype), args.inputs[0].data, y.data, y.numel(),
                                 args.stream),
               args.node);
}

void run_pow(const CudaKernelArgs& args) {
  const TensorView& y = args.outputs[0];
  if (y.numel() == 0) return;
  const std::optional<BroadcastGeometry> geometry =
      broadcast_geometry(merge_broadcast(y.shape, args.inputs[0].shape, args.inputs[1].shape));
  if (!geometry) {
    fail(ErrorCode::KernelFailure, "the broadcast has more merged dims than its selection allowed");
  }
  check_launch(launch_pow(element_type(y.dtype), *geometry, args.inputs[0].data,
                          args.inputs[1].data, y.data, args.stream),
               args.node);
}

// f32 and f64 kernels of each op, in DType order.
#define VOLTA_CUDA_MATH(Name, snake)                                                     \
  constexpr CudaKernel k##Name[] = {{run_math<MathOp::Name>, "f32_" snake "_cuda_libm"}, \
                                    {run_math<MathOp::Name>, "f64_" snake "_cuda_libm"}};
VOLTA_CUDA_MATH(Sin, "sin")
VOLTA_CUDA_MATH(Cos, "cos")
VOLTA_CUDA_MATH(Tan, "tan")
VOLTA_CUDA_MATH(Asin, "asin")
VOLTA_CUDA_MATH(Acos, "acos")
VOLTA_CUDA_MATH(Atan, "atan")
VOLTA_CUDA_MATH(Sinh, "sinh")
VOLTA_CUDA_MATH(Cosh, "cosh")
VOLTA_CUDA_MATH(Asinh, "asinh")
VOLTA_CUDA_MATH(Acosh, "acosh")
VOLTA_CUDA_MATH(Atanh, "atanh")
#undef VOLTA_CUDA_MATH
// [dtype][contiguous, broadcast]: one launch walks either geometry.
constexpr CudaKernel kPow[2][2] = {
    {{run_pow, "f32_pow_cuda_libm_contiguous"}, {run_pow, "f32_pow_cuda_libm_broadcast"}},
    {{run_pow, "f64_pow_cuda_libm_contiguous"}, {run_pow, "f64_pow_cuda_libm_broadcast"}}};

KernelSelection select_pow(const CudaKernelQuery& query) {
  if (std::optional<KernelUnsupported> refused = refuse_dtype(query, kFloat)) return *refused;
  const Shape& a = query.inputs[0]->shape;
  const Shape& b = query.inputs[1]->shape;
  const MergedBroadcast merged = merge_broadcast(query.outputs[0].shape, a, b);
  const std::optional<BroadcastGeometry> geometry = broadcast_geometry(merged);
  if (!geometry) {
    return KernelUnsupported{"Pow of " + a.str() + " and " + b.str() + " broadcasts over " +
                             std::to_string(merged.dims.size()) +
                             " dims that cannot be merged; the CUDA kernels take at most " +
                             std::to_string(kMaxBroadcastDims)};
  }
  return choice_of(
      kPow[static_cast<size_t>(query.inputs[0]->dtype)][geometry->contiguous() ? 0 : 1]);
}

using E = CrossBackendExactness;
constexpr std::string_view kLibmHow =
    "the CPU's form (f32: the double function of the value, rounded once) around CUDA's double "
    "function where the CPU calls glibc's: the last bits may differ";
const CudaOpKernels kOps[] = {
    {{OpKind::Pow, kFloat, E::NotClaimed,
      "pow in double, rounded once to f32 (the CPU: powf); f64: CUDA's pow where the CPU calls "
      "glibc's: the last bits may differ"},
     select_pow},
    {{OpKind::Sin, kFloat, E::NotClaimed, kLibmHow}, select_float_kernel<kSin>},
    {{OpKind::Cos, kFloat, E::NotClaimed, kLibmHow}, select_float_kernel<kCos>},
    {{OpKind::Tan, kFloat, E::NotClaimed, kLibmHow}, select_float_kernel<kTan>},
    {{OpKind::Asin, kFloat, E::NotClaimed, kLibmHow}, select_float_kernel<kAsin>},
    {{OpKind::Acos, kFloat, E::NotClaimed, kLibmHow}, select_float_kernel<kAcos>},
    {{OpKind::Atan, kFloat, E::NotClaimed, kLibmHow}, select_float_kernel<kAtan>},
    {{OpKind::Sinh, kFloat, E::NotClaimed, kLibmHow}, select_float_kernel<kSinh>},
    {{OpKind::Cosh, kFloat, E::NotClaimed, kLibmHow}, select_float_kernel<kCosh>},
    {{OpKind::Asinh, kFloat, E::NotClaimed, kLibmHow}, select_float_kernel<kAsinh>},
    {{OpKind::Acosh, kFloat, E::NotClaimed, kLibmHow}, select_float_kernel<kAcosh>},
    {{OpKind::Atanh, kFloat, E::NotClaimed, kLibmHow}, select_float_kernel<kAtanh>},
};

}  // namespace

std::span<const CudaOpKernels> elementwise_math_op_kernels() { return kOps; }

}  // namespace volta::cuda
