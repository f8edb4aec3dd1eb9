// The reduction family on the CUDA backend (f32, f64; i32, i64 but for Mean, L2 and LogSumExp):
// ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ReduceSumSquare ReduceL1 ReduceL2
// ReduceLogSumExp over any set of axes, keepdims either way (the output's layout is the same).
// Selection, launch and each op's claim against the CPU backend; the device code is
// kernels/reduction.cu.

#include <cuda_runtime_api.h>

#include <optional>
#include <string>

#include "../cuda_kernel.h"
#include "../reduce_geometry.h"
#include "launch.h"

namespace volta::cuda {
namespace {

// The CPU's types: every numeric type, Mean and L2 the float ones.
inline constexpr DTypeSet kFloats{DType::F32, DType::F64};
inline constexpr DTypeSet kNumeric{DType::F32, DType::F64, DType::I32, DType::I64};

constexpr DTypeSet types_of(ReduceOp op) {
  return op == ReduceOp::Mean || op == ReduceOp::L2 ? kFloats : kNumeric;
}

// Also the index of a dtype's kernel in an op's list.
ReduceType reduce_type(DType dtype) {
  switch (dtype) {
    case DType::F64:
      return ReduceType::F64;
    case DType::I32:
      return ReduceType::I32;
    case DType::I64:
      return ReduceType::I64;
    default:
      return ReduceType::F32;
  }
}

// The geometry of a selected node (selection refused the ones without).
ReduceGeometry geometry_of(const Node& node, const Shape& input) {
  const std::optional<ReduceGeometry> g =
      reduce_geometry(input, resolve_reduce_axes(AttrReader(node), input.rank()));
  if (!g)
    fail(ErrorCode::KernelFailure, "the reduction has more extents than its selection allowed");
  return *g;
}

// noop_with_empty_axes and no axes: the identity, copied as the CPU copies it. Returns whether
// the node was one.
bool copied_as_identity(const CudaKernelArgs& args) {
  const ConstTensorView& x = args.inputs[0];
  if (!resolve_reduce_axes(AttrReader(args.node), x.shape.rank()).noop) return false;
  if (x.numel() == 0) return true;
  check_launch(cudaMemcpyAsync(args.outputs[0].data, x.data,
                               static_cast<size_t>(x.numel()) * dtype_size(x.dtype),
                               cudaMemcpyDeviceToDevice, args.stream),
               args.node);
  return true;
}

template <ReduceOp kOp>
void run_reduce(const CudaKernelArgs& args) {
  const ConstTensorView& x = args.inputs[0];
  const TensorView& y = args.outputs[0];
  if (copied_as_identity(args)) return;
  const ReduceGeometry g = geometry_of(args.node, x.shape);
  if (g.outputs == 0) return;
  check_launch(
      launch_reduce(kOp, reduce_type(x.dtype), g, x.data, y.data, args.workspace.data, args.stream),
      args.node);
}

template <ReduceOp kOp>
KernelSelection select_reduce(const CudaKernelQuery& query, const CudaKernel* kernels) {
  if (std::optional<KernelUnsupported> refused = refuse_dtype(query, types_of(kOp))) {
    return *refused;
  }
  const TypeInfo& input = *query.inputs[0];
  const ReduceAxes axes = resolve_reduce_axes(AttrReader(query.node), input.shape.rank());
  const CudaKernel& kernel = kernels[static_cast<int>(reduce_type(input.dtype))];
  if (axes.noop) return choice_of(kernel);
  const std::optional<ReduceGeometry> g = reduce_geometry(input.shape, axes);
  if (!g) {
    return KernelUnsupported{std::string(op_name(query.node.op)) + " of " + input.shape.str() +
                             " alternates kept and reduced axes more than " +
                             std::to_string(kMaxReduceExtents) +
                             " times; the CUDA kernels take at most " +
                             std::to_string(kMaxReduceExtents) + " runs of each"};
  }
  return choice_of(kernel, reduce_workspace_bytes(kOp, reduce_type(input.dtype), *g));
}

// Kernels in ReduceType order; Mean and L2 never select their integer entries.
#define VOLTA_CUDA_REDUCE(Name, snake)                                \
  constexpr CudaKernel k##Name[] = {                                  \
      {run_reduce<ReduceOp::Name>, "f32_" snake "_cuda_tree4096x8"},  \
      {run_reduce<ReduceOp::Name>, "f64_" snake "_cuda_tree4096x8"},  \
      {run_reduce<ReduceOp::Name>, "i32_" snake "_cuda_tree4096x8"},  \
      {run_reduce<ReduceOp::Name>, "i64_" snake "_cuda_tree4096x8"}}; \
  KernelSelection select_##Name(const CudaKernelQuery& query) {       \
    return select_reduce<ReduceOp::Name>(query, k##Name);             \
  }
VOLTA_CUDA_REDUCE(Sum, "reduce_sum")
VOLTA_CUDA_REDUCE(Mean, "reduce_mean")
VOLTA_CUDA_REDUCE(Max, "reduce_max")
VOLTA_CUDA_REDUCE(Min, "reduce_min")
VOLTA_CUDA_REDUCE(Prod, "reduce_prod")
VOLTA_CUDA_REDUCE(SumSquare, "reduce_sum_square")
VOLTA_CUDA_REDUCE(L1, "reduce_l1")
VOLTA_CUDA_REDUCE(L2, "reduce_l2")
#undef VOLTA_CUDA_REDUCE

// ReduceLogSumExp (f32, f64): the row max, then max + log(sum of e^(x - max)), two launches
// sharing a workspace (the maxima, the leaf partials).
void run_log_sum_exp(const CudaKernelArgs& args) {
  const ConstTensorView& x = args.inputs[0];
  const TensorView& y = args.outputs[0];
  if (copied_as_identity(args)) return;
  const ReduceGeometry g = geometry_of(args.node, x.shape);
  if (g.outputs == 0) return;
  check_launch(launch_reduce_log_sum_exp(reduce_type(x.dtype), g, x.data, y.data,
                                         args.workspace.data, args.stream),
               args.node);
}

constexpr CudaKernel kLogSumExp[] = {
    {run_log_sum_exp, "f32_reduce_log_sum_exp_cuda_2pass_tree4096x8"},
    {run_log_sum_exp, "f64_reduce_log_sum_exp_cuda_2pass_tree4096x8"}};

KernelSelection select_log_sum_exp(const CudaKernelQuery& query) {
  if (std::optional<KernelUnsupported> refused = refuse_dtype(query, kFloats)) return *refused;
  const TypeInfo& input = *query.inputs[0];
  const ReduceAxes axes = resolve_reduce_axes(AttrReader(query.node), input.shape.rank());
  const CudaKernel& kernel = kLogSumExp[input.dtype == DType::F64 ? 1 : 0];
  if (axes.noop) return choice_of(kernel);
  const std::optional<ReduceGeometry> g = reduce_geometry(input.shape, axes);
  if (!g) {
    return KernelUnsupported{
        "ReduceLogSumExp of " + input.shape.str() + " alternates kept and reduced axes more than " +
        std::to_string(kMaxReduceExtents) + " times; the CUDA kernels take at most " +
        std::to_string(kMaxReduceExtents) + " runs of each"};
  }
  return choice_of(kernel, log_sum_exp_workspace_bytes(reduce_type(input.dtype), *g));
}

// x as lines along `axis`: [outer, axis, inner], one line per (outer, inner).
RowGeometry lines_along(const Node& node, const Shape& shape) {
  const int axis = *normalize_axis(AttrReader(node).get_int("axis"), shape.rank());
  RowGeometry g;
  g.length = shape[axis];
  for (int d = axis + 1; d < shape.rank(); ++d) g.inner *= shape[d];
  g.rows = 1;
  for (int d = 0; d < shape.rank(); ++d) g.rows *= d == axis ? 1 : shape[d];
  return g;
}

template <bool kMax>
void run_arg_extreme(const CudaKernelArgs& args) {
  const ConstTensorView& x = args.inputs[0];
  if (args.outputs[0].numel() == 0) return;
  const bool select_last = AttrReader(args.node).get_int("select_last_index") != 0;
  check_launch(
      launch_arg_extreme(kMax, select_last, reduce_type(x.dtype), lines_along(args.node, x.shape),
                         x.data, args.outputs[0].as<int64_t>(), args.stream),
      args.node);
}

void run_cumsum(const CudaKernelArgs& args) {
  const ConstTensorView& x = args.inputs[0];
  if (x.numel() == 0) return;
  const AttrReader attrs(args.node);
  check_launch(launch_cumsum(reduce_type(x.dtype), lines_along(args.node, x.shape),
                             attrs.get_int("exclusive") != 0, attrs.get_int("reverse") != 0, x.data,
                             args.outputs[0].data, args.stream),
               args.node);
}

// In ReduceType order.
constexpr CudaKernel kArgMax[] = {{run_arg_extreme<true>, "f32_argmax_cuda_scan"},
                                  {run_arg_extreme<true>, "f64_argmax_cuda_scan"},
                                  {run_arg_extreme<true>, "i32_argmax_cuda_scan"},
                                  {run_arg_extreme<true>, "i64_argmax_cuda_scan"}};
constexpr CudaKernel kArgMin[] = {{run_arg_extreme<false>, "f32_argmin_cuda_scan"},
                                  {run_arg_extreme<false>, "f64_argmin_cuda_scan"},
                                  {run_arg_extreme<false>, "i32_argmin_cuda_scan"},
                                  {run_arg_extreme<false>, "i64_argmin_cuda_scan"}};
constexpr CudaKernel kCumSum[] = {{run_cumsum, "f32_cumsum_cuda_sequential"},
                                  {run_cumsum, "f64_cumsum_cuda_sequential"},
                                  {run_cumsum, "i32_cumsum_cuda_sequential"},
                                  {run_cumsum, "i64_cumsum_cuda_sequential"}};

template <const CudaKernel* kKernels>
KernelSelection select_scan(const CudaKernelQuery& query) {
  if (std::optional<KernelUnsupported> refused = refuse_dtype(query, kNumeric)) return *refused;
  return choice_of(kKernels[static_cast<int>(reduce_type(query.inputs[0]->dtype))]);
}

using E = CrossBackendExactness;
const CudaOpKernels kOps[] = {
    {{OpKind::ReduceSum, kNumeric, E::BitwiseExceptNanPayload,
      "the CPU's tree (leaves of 4096, 8 lanes in index order, pairwise) over the CPU's row "
      "order, one IEEE add per step in the input type on both; integers wrap on both"},
     select_Sum},
    {{OpKind::ReduceMean, kFloats, E::BitwiseExceptNanPayload,
      "ReduceSum's tree and adds, then one IEEE division by the count rounded to the type"},
     select_Mean},
    {{OpKind::ReduceMax, kNumeric, E::BitwiseExceptNanPayload,
      "the CPU's tree of selects (max_propagating_nan): the left operand kept on ties and NaN, "
      "so the same zero survives; a NaN comes back as the canonical NaN where a row is read "
      "across strides (seen on an H100), so its payload is not claimed"},
     select_Max},
    {{OpKind::ReduceMin, kNumeric, E::BitwiseExceptNanPayload,
      "the CPU's tree of selects (min_propagating_nan): the left operand kept on ties and NaN, "
      "so the same zero survives; a NaN comes back as the canonical NaN where a row is read "
      "across strides (seen on an H100), so its payload is not claimed"},
     select_Min},
    {{OpKind::ReduceProd, kNumeric, E::BitwiseExceptNanPayload,
      "the CPU's scaled product: exact frexp renormalization after each double multiply on the "
      "tree, one ldexp and one rounding at the end; integers wrap on both"},
     select_Prod},
    {{OpKind::ReduceSumSquare, kNumeric, E::BitwiseExceptNanPayload,
      "one IEEE multiply per element, then ReduceSum's tree and adds in the input type"},
     select_SumSquare},
    {{OpKind::ReduceL1, kNumeric, E::BitwiseExceptNanPayload,
      "a sign-bit clear per element, then ReduceSum's tree and adds in the input type"},
     select_L1},
    {{OpKind::ReduceL2, kFloats, E::BitwiseExceptNanPayload,
      "exact squares in double summed in double on the CPU's tree (Wide), one correctly "
      "rounded double square root, one rounding to the type"},
     select_L2},
    {{OpKind::ReduceLogSumExp, kFloats, E::NotClaimed,
      "the CPU's two passes: ReduceMax's tree, then e^(x - max) summed on ReduceSum's tree and "
      "max + log(sum), with CUDA's double exp and log (rounded once for f32) where the CPU calls "
      "libm's"},
     select_log_sum_exp},
    {{OpKind::ArgMax, kNumeric, E::Bitwise,
      "the CPU's scan of each line in index order with its compares and tie rules (first NaN "
      "wins, select_last_index); an index, no arithmetic"},
     select_scan<kArgMax>},
    {{OpKind::ArgMin, kNumeric, E::Bitwise,
      "the CPU's scan of each line in index order with its compares and tie rules (first NaN "
      "wins, select_last_index); an index, no arithmetic"},
     select_scan<kArgMin>},
    {{OpKind::CumSum, kNumeric, E::BitwiseExceptNanPayload,
      "the CPU's running sum along each line in index order (reverse and exclusive alike), f32 "
      "in double (Wide) and rounded per output, one IEEE add per step; integers wrap"},
     select_scan<kCumSum>},
};

}  // namespace

std::span<const CudaOpKernels> reduction_op_kernels() { return kOps; }

}  // namespace volta::cuda
