// The convolution family on the CUDA backend (f32, f64): Conv and ConvTranspose with 1 to 3
// spatial dims, groups, strides, dilations, pads and the optional B, and ConvGradFilter, as direct
// kernels that sum each output element in the CPU backend's order. Selection, launch and each
// op's claim against the CPU backend; the device code is kernels/convolution.cu.

#include <optional>

#include "../cuda_kernel.h"
#include "../spatial_geometry.h"
#include "launch.h"

namespace volta::cuda {
namespace {

inline constexpr DTypeSet kFloats{DType::F32, DType::F64};

template <class T>
ConvLaunch<T> conv_launch(const CudaKernelArgs& args) {
  ConvLaunch<T> c;
  c.geometry =
      conv_geometry(args.node, args.inputs[0].shape, args.inputs[1].shape, args.outputs[0].shape);
  c.x = args.inputs[0].as<T>();
  c.w = args.inputs[1].as<T>();
  c.bias = args.inputs.size() > 2 && args.inputs[2].present() ? args.inputs[2].as<T>() : nullptr;
  c.y = args.outputs[0].as<T>();
  return c;
}

template <class T>
void run_conv(const CudaKernelArgs& args) {
  if (args.outputs[0].numel() == 0) return;
  check_launch(launch_conv(conv_launch<T>(args), args.stream), args.node);
}

template <class T>
void run_conv_transpose(const CudaKernelArgs& args) {
  if (args.outputs[0].numel() == 0) return;
  check_launch(launch_conv_transpose(conv_launch<T>(args), args.stream), args.node);
}

// X, dY and dW: the geometry's output is dY, its kernel dW's spatial dims.
template <class T>
void run_conv_grad_filter(const CudaKernelArgs& args) {
  const TensorView& dw = args.outputs[0];
  if (dw.numel() == 0) return;
  ConvLaunch<T> c;
  c.geometry = conv_geometry(args.node, args.inputs[0].shape, dw.shape, args.inputs[1].shape);
  c.x = args.inputs[0].as<T>();
  c.w = args.inputs[1].as<T>();
  c.y = dw.as<T>();
  check_launch(launch_conv_grad_filter(c, args.stream), args.node);
}

constexpr CudaKernel kConv[] = {{run_conv<float>, "f32_conv_cuda_direct_gemm_order"},
                                {run_conv<double>, "f64_conv_cuda_direct_gemm_order"}};
constexpr CudaKernel kConvTranspose[] = {
    {run_conv_transpose<float>, "f32_convtranspose_cuda_direct_gather"},
    {run_conv_transpose<double>, "f64_convtranspose_cuda_direct_gather"}};

constexpr CudaKernel kConvGradFilter[] = {
    {run_conv_grad_filter<float>, "f32_convgradfilter_cuda_direct_gemm_order"},
    {run_conv_grad_filter<double>, "f64_convgradfilter_cuda_direct_gemm_order"}};

template <const CudaKernel* kKernels>
KernelSelection select_float(const CudaKernelQuery& query) {
  if (std::optional<KernelUnsupported> refused = refuse_dtype(query, kFloats)) return *refused;
  return choice_of(kKernels[query.inputs[0]->dtype == DType::F64 ? 1 : 0]);
}

using E = CrossBackendExactness;
const CudaOpKernels kOps[] = {
    {{OpKind::Conv, kFloats, E::BitwiseExceptNanPayload,
      "the CPU's im2col + GEMM order per element: K = (channel of the group, tap) in order, a "
      "running FMA sum from +0 per K slice (f32 512, f64 256; padding reads 0), fma(1, B, .) on "
      "the first slice and fma(1, Y, .) on each later one; depthwise (group == C > 1) the CPU's "
      "direct kernel: weight * x added from +0 in tap order, then B"},
     select_float<kConv>},
    {{OpKind::ConvTranspose, kFloats, E::BitwiseExceptNanPayload,
      "the CPU's GEMM + col2im order, gathered per element: from B (or +0), one IEEE add per tap "
      "in kernel order of the column value landing there, each a running FMA sum over the "
      "group's input channels per K slice (f32 512, f64 256), slices folded by fma(1, col, .)"},
     select_float<kConvTranspose>},
    {{OpKind::ConvGradFilter, kFloats, E::BitwiseExceptNanPayload,
      "the CPU's im2col + GEMM order per weight: from +0, per step of the CPU's images (its "
      "column budget) a GEMM over K = (image, position) in order, a running FMA sum of dY * X "
      "(padding 0) per K slice (f32 512, f64 256) folded by fma(1, dW, .); depthwise the CPU's "
      "direct kernel: dY * X into 8 lanes by position in the row, lanes pairwise, dY * 0 over "
      "the padding for a plane with a non-finite dY"},
     select_float<kConvGradFilter>},
};

}  // namespace

std::span<const CudaOpKernels> convolution_op_kernels() { return kOps; }

}  // namespace volta::cuda
