// The pooling family on the CUDA backend (f32, f64): MaxPool with its optional Indices,
// AveragePool, LpPool and GlobalAveragePool, GlobalMaxPool, GlobalLpPool, every window attribute
// the op table has (kernel_shape, strides, dilations, pads, ceil_mode, storage_order,
// count_include_pad); LpPool and GlobalLpPool for p 1 and 2. Selection, launch and each op's
// claim against the CPU backend; the device code is kernels/pooling.cu.

#include <optional>
#include <string>

#include "../cuda_kernel.h"
#include "../spatial_geometry.h"
#include "launch.h"

namespace volta::cuda {
namespace {

inline constexpr DTypeSet kFloats{DType::F32, DType::F64};

PoolOp pool_op(const Node& node) {
  const AttrReader attrs(node);
  switch (node.op) {
    case OpKind::MaxPool:
      return PoolOp::Max;
    case OpKind::AveragePool:
      return attrs.get_int("count_include_pad") != 0 ? PoolOp::AverageIncludePad : PoolOp::Average;
    default:
      return attrs.get_int("p") == 1 ? PoolOp::L1 : PoolOp::L2;
  }
}

GlobalPoolOp global_pool_op(const Node& node) {
  switch (node.op) {
    case OpKind::GlobalMaxPool:
      return GlobalPoolOp::Max;
    case OpKind::GlobalAveragePool:
      return GlobalPoolOp::Average;
    default:
      return AttrReader(node).get_int("p") == 1 ? GlobalPoolOp::L1 : GlobalPoolOp::L2;
  }
}

template <class T>
void run_pool(const CudaKernelArgs& args) {
  const TensorView& y = args.outputs[0];
  if (y.numel() == 0) return;
  PoolLaunch p;
  p.op = pool_op(args.node);
  p.geometry = pool_geometry(args.node, args.inputs[0].shape, y.shape);
  if (p.op == PoolOp::Max) {
    p.indices = args.outputs.size() > 1 ? args.outputs[1].as<int64_t>() : nullptr;
    p.column_major = AttrReader(args.node).get_int("storage_order") != 0;
  }
  check_launch(launch_pool(p, args.inputs[0].as<T>(), y.as<T>(), args.stream), args.node);
}

template <class T>
void run_global_pool(const CudaKernelArgs& args) {
  const ConstTensorView& x = args.inputs[0];
  const int64_t planes = x.shape[0] * x.shape[1];
  if (planes == 0) return;  // the op table refuses empty spatial dims
  check_launch(launch_global_pool(global_pool_op(args.node), planes, x.numel() / planes, x.as<T>(),
                                  args.outputs[0].as<T>(), args.stream),
               args.node);
}

constexpr CudaKernel kMaxPool[] = {{run_pool<float>, "f32_maxpool_cuda_direct"},
                                   {run_pool<double>, "f64_maxpool_cuda_direct"}};
constexpr CudaKernel kAveragePool[] = {{run_pool<float>, "f32_averagepool_cuda_direct"},
                                       {run_pool<double>, "f64_averagepool_cuda_direct"}};
constexpr CudaKernel kLpPool[] = {{run_pool<float>, "f32_lppool_cuda_direct"},
                                  {run_pool<double>, "f64_lppool_cuda_direct"}};
constexpr CudaKernel kGlobalAveragePool[] = {
    {run_global_pool<float>, "f32_globalaveragepool_cuda_tree4096x8"},
    {run_global_pool<double>, "f64_globalaveragepool_cuda_tree4096x8"}};
constexpr CudaKernel kGlobalMaxPool[] = {
    {run_global_pool<float>, "f32_globalmaxpool_cuda_tree4096x8"},
    {run_global_pool<double>, "f64_globalmaxpool_cuda_tree4096x8"}};
constexpr CudaKernel kGlobalLpPool[] = {
    {run_global_pool<float>, "f32_globallppool_cuda_tree4096x8"},
    {run_global_pool<double>, "f64_globallppool_cuda_tree4096x8"}};

// The CPU raises |x| to a p other than 1 and 2 with std::pow (glibc's), which no device
// function reproduces bit for bit; those nodes are refused rather than claimed loosely.
std::optional<KernelUnsupported> refuse_p(const CudaKernelQuery& query) {
  const int64_t p = AttrReader(query.node).get_int("p");
  if (p == 1 || p == 2) return std::nullopt;
  return KernelUnsupported{"no CUDA kernel for " + std::string(op_name(query.node.op)) +
                           " with p " + std::to_string(p) +
                           " (supported: p 1 and 2; the CPU's std::pow for other p has no "
                           "bit-equal device counterpart)"};
}

template <const CudaKernel* kKernels>
KernelSelection select_float(const CudaKernelQuery& query) {
  if (std::optional<KernelUnsupported> refused = refuse_dtype(query, kFloats)) return *refused;
  if (query.node.op == OpKind::LpPool || query.node.op == OpKind::GlobalLpPool) {
    if (std::optional<KernelUnsupported> refused = refuse_p(query)) return *refused;
  }
  return choice_of(kKernels[query.inputs[0]->dtype == DType::F64 ? 1 : 0]);
}

using E = CrossBackendExactness;
const CudaOpKernels kOps[] = {
    {{OpKind::MaxPool, kFloats, E::Bitwise,
      "the CPU's scan of each window's taps inside X in window order: the first maximum, a NaN "
      "replacing a number and the first NaN kept; the value copied, Indices the CPU's flat "
      "index (storage_order 1: column-major)"},
     select_float<kMaxPool>},
    {{OpKind::AveragePool, kFloats, E::BitwiseExceptNanPayload,
      "the window's taps inside X summed in double in window order, one IEEE division by the "
      "CPU's count (count_include_pad: the positions inside the padded input), one rounding to "
      "the type"},
     select_float<kAveragePool>},
    {{OpKind::LpPool, kFloats, E::BitwiseExceptNanPayload,
      "p 1 and 2: |x| or x * x in double summed in window order, the IEEE square root for p 2, "
      "one rounding to the type; other p refused (the CPU's std::pow)"},
     select_float<kLpPool>},
    {{OpKind::GlobalAveragePool, kFloats, E::BitwiseExceptNanPayload,
      "each plane summed in double on the CPU's tree, one IEEE division by its size, one "
      "rounding to the type"},
     select_float<kGlobalAveragePool>},
    {{OpKind::GlobalMaxPool, kFloats, E::Bitwise,
      "each plane's max_propagating_nan on the CPU's tree from -inf: selects only, so the "
      "same element (and NaN) wins"},
     select_float<kGlobalMaxPool>},
    {{OpKind::GlobalLpPool, kFloats, E::BitwiseExceptNanPayload,
      "p 1 and 2: |x| or x * x in double summed on the CPU's tree, the IEEE square root for p 2, "
      "one rounding to the type; other p refused (the CPU's std::pow)"},
     select_float<kGlobalLpPool>},
};

}  // namespace

std::span<const CudaOpKernels> pooling_op_kernels() { return kOps; }

}  // namespace volta::cuda
