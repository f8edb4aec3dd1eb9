// The normalization family on the CUDA backend (f32, f64): Softmax and LogSoftmax along any
// axis, LayerNormalization with its optional Mean and InvStdDev outputs, BatchNormalization
// (inference), InstanceNormalization, MeanVarianceNormalization, LRN and Hardmax. Selection,
// launch and each op's claim against the CPU backend; the device code is kernels/normalization.cu.

#include <algorithm>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "../broadcast_geometry.h"
#include "../cuda_kernel.h"
#include "../reduce_geometry.h"
#include "launch.h"

namespace volta::cuda {
namespace {

// Where the CPU's f64 kernel calls libm: the f64 kernel matches within the tolerance table.
inline constexpr DTypeSet kLibmF64{DType::F64};
inline constexpr DTypeSet kFloats{DType::F32, DType::F64};

int axis_of(const Node& node, int rank) {
  return *normalize_axis(AttrReader(node).get_int("axis"), rank);
}

// The rows along the node's axis of a non-empty x.
RowGeometry softmax_rows_of(const Node& node, const Shape& x) {
  const int axis = axis_of(node, x.rank());
  RowGeometry rows;
  rows.length = x[axis];
  for (int d = axis + 1; d < x.rank(); ++d) rows.inner *= x[d];
  rows.rows = x.numel() / rows.length;
  return rows;
}

void run_softmax(const CudaKernelArgs& args) {
  const ConstTensorView& x = args.inputs[0];
  if (x.numel() == 0) return;
  const RowGeometry rows = softmax_rows_of(args.node, x.shape);
  const TensorView& y = args.outputs[0];
  check_launch(x.dtype == DType::F64
                   ? launch_f64_softmax(rows, x.as<double>(), y.as<double>(), args.stream)
                   : launch_f32_softmax(rows, x.as<float>(), y.as<float>(), args.stream),
               args.node);
}

void run_log_softmax(const CudaKernelArgs& args) {
  const ConstTensorView& x = args.inputs[0];
  if (x.numel() == 0) return;
  check_launch(launch_log_softmax(x.dtype == DType::F64 ? ReduceType::F64 : ReduceType::F32,
                                  softmax_rows_of(args.node, x.shape), x.data, args.outputs[0].data,
                                  args.stream),
               args.node);
}

// The CPU's LrnKernel reads its attributes as T: scale = alpha / size in double, then rounded.
template <class T>
void run_lrn(const CudaKernelArgs& args) {
  const ConstTensorView& x = args.inputs[0];
  if (x.numel() == 0) return;
  const AttrReader attrs(args.node);
  const int64_t size = attrs.get_int("size");
  LrnParams p;
  p.batch = x.shape[0];
  p.channels = x.shape[1];
  p.spatial = x.numel() / (p.batch * p.channels);
  p.before = (size - 1) / 2;
  p.after = size - 1 - p.before;
  p.scale = static_cast<T>(attrs.get_float("alpha") / static_cast<double>(size));
  p.beta = static_cast<T>(attrs.get_float("beta"));
  p.bias = static_cast<T>(attrs.get_float("bias"));
  check_launch(launch_lrn(std::is_same_v<T, double> ? ReduceType::F64 : ReduceType::F32, p, x.data,
                          args.outputs[0].data, args.stream),
               args.node);
}

// An optional output the node declares, or null.
template <class T>
T* optional_output(const CudaKernelArgs& args, size_t index) {
  return args.outputs.size() > index ? args.outputs[index].as<T>() : nullptr;
}

// Scale and B broadcast within the normalized block (the shape function checked it) walk the
// block's merged dims; nullopt when they need more than kMaxBroadcastDims.
std::optional<BroadcastGeometry> layer_norm_operands(const Node& node, const Shape& x,
                                                     const Shape& scale,
                                                     const std::optional<Shape>& bias) {
  const int axis = axis_of(node, x.rank());
  const Shape row(std::vector<int64_t>(x.dims().begin() + axis, x.dims().end()));
  return broadcast_geometry(merge_broadcast(row, scale, bias ? *bias : scale));
}

template <class T>
void run_layer_norm(const CudaKernelArgs& args) {
  const ConstTensorView& x = args.inputs[0];
  const int axis = axis_of(args.node, x.shape.rank());
  int64_t rows = 1;
  int64_t n = 1;
  for (int d = 0; d < x.shape.rank(); ++d) (d < axis ? rows : n) *= x.shape[d];
  RowNormalization<T> a;
  a.mean = optional_output<T>(args, 1);
  a.inv_std = optional_output<T>(args, 2);
  if (n == 0) {
    // The statistics of nothing: mean 0 / 0 = NaN and so InvStdDev NaN, as the CPU writes them.
    for (T* stats : {a.mean, a.inv_std}) {
      if (stats != nullptr && rows > 0) {
        check_launch(launch_fill_quiet_nan(stats, rows, args.stream), args.node);
      }
    }
    return;
  }
  if (rows == 0) return;
  const bool has_bias = args.inputs.size() > 2 && args.inputs[2].present();
  const std::optional<BroadcastGeometry> operands =
      layer_norm_operands(args.node, x.shape, args.inputs[1].shape,
                          has_bias ? std::optional<Shape>(args.inputs[2].shape) : std::nullopt);
  if (!operands) {
    fail(ErrorCode::KernelFailure, "the operands broadcast over more dims than selection allowed");
  }
  a.operands = *operands;
  a.x = x.as<T>();
  a.scale = args.inputs[1].as<T>();
  a.bias = has_bias ? args.inputs[2].as<T>() : nullptr;
  a.y = args.outputs[0].as<T>();
  a.epsilon = static_cast<T>(AttrReader(args.node).get_float("epsilon"));
  check_launch(launch_normalize_rows(RowGeometry{rows, n, 1}, a, args.stream), args.node);
}

// [N, C, ...] as N * C planes of the remaining dims' element count.
struct Planes {
  int64_t count = 1;
  int64_t length = 1;
  int64_t channels = 1;
};
Planes planes_of(const Shape& shape) {
  Planes p;
  p.channels = shape[1];
  for (int d = 0; d < shape.rank(); ++d) (d < 2 ? p.count : p.length) *= shape[d];
  return p;
}

template <class T>
void run_instance_norm(const CudaKernelArgs& args) {
  const ConstTensorView& x = args.inputs[0];
  const Planes p = planes_of(x.shape);
  if (p.count == 0 || p.length == 0) return;
  RowNormalization<T> a;
  a.x = x.as<T>();
  a.scale = args.inputs[1].as<T>();
  a.bias = args.inputs[2].as<T>();
  a.y = args.outputs[0].as<T>();
  a.epsilon = static_cast<T>(AttrReader(args.node).get_float("epsilon"));
  a.channels = p.channels;
  check_launch(launch_normalize_rows(RowGeometry{p.count, p.length, 1}, a, args.stream), args.node);
}

template <class T>
void run_batch_norm(const CudaKernelArgs& args) {
  const ConstTensorView& x = args.inputs[0];
  if (x.numel() == 0) return;
  const Planes p = planes_of(x.shape);
  BatchNormArgs<T> a;
  a.x = x.as<T>();
  a.scale = args.inputs[1].as<T>();
  a.bias = args.inputs[2].as<T>();
  a.mean = args.inputs[3].as<T>();
  a.var = args.inputs[4].as<T>();
  a.y = args.outputs[0].as<T>();
  a.epsilon = static_cast<T>(AttrReader(args.node).get_float("epsilon"));
  a.channels = p.channels;
  a.plane = p.length;
  a.numel = x.numel();
  check_launch(launch_batch_norm(a, args.stream), args.node);
}

// MeanVarianceNormalization's groups: its axes reduced, as a Reduce* over them reads its rows
// (the CPU's member and group offsets are row-major over the same axes).
std::optional<ReduceGeometry> mvn_groups(const Node& node, const Shape& x) {
  ReduceAxes axes;
  for (int64_t a : AttrReader(node).get_ints("axes")) {
    axes.axes.push_back(*normalize_axis(a, x.rank()));
  }
  std::ranges::sort(axes.axes);
  axes.axes.erase(std::unique(axes.axes.begin(), axes.axes.end()), axes.axes.end());
  return reduce_geometry(x, axes);
}

template <class T>
void run_mean_variance_norm(const CudaKernelArgs& args) {
  const ConstTensorView& x = args.inputs[0];
  if (x.numel() == 0) return;
  const std::optional<ReduceGeometry> groups = mvn_groups(args.node, x.shape);
  if (!groups) fail(ErrorCode::KernelFailure, "the axes alternate more than selection allowed");
  const double epsilon = AttrReader(args.node).get_float("epsilon");
  check_launch(launch_mean_variance_normalization(*groups, x.as<T>(), args.outputs[0].as<T>(),
                                                  epsilon, args.stream),
               args.node);
}

template <class T>
void run_hardmax(const CudaKernelArgs& args) {
  const ConstTensorView& x = args.inputs[0];
  if (x.numel() == 0) return;
  const int axis = axis_of(args.node, x.shape.rank());
  RowGeometry lines;
  lines.length = x.shape[axis];
  for (int d = axis + 1; d < x.shape.rank(); ++d) lines.inner *= x.shape[d];
  lines.rows = x.numel() / lines.length;
  check_launch(launch_hardmax(x.dtype == DType::F64 ? ReduceType::F64 : ReduceType::F32, lines,
                              x.data, args.outputs[0].data, args.stream),
               args.node);
}

constexpr CudaKernel kSoftmax[] = {{run_softmax, "f32_softmax_cuda_tree4096x8"},
                                   {run_softmax, "f64_softmax_cuda_tree4096x8"}};
constexpr CudaKernel kLogSoftmax[] = {{run_log_softmax, "f32_logsoftmax_cuda_tree4096x8"},
                                      {run_log_softmax, "f64_logsoftmax_cuda_tree4096x8"}};
constexpr CudaKernel kLrn[] = {{run_lrn<float>, "f32_lrn_cuda_channel_window"},
                               {run_lrn<double>, "f64_lrn_cuda_channel_window"}};
constexpr CudaKernel kLayerNorm[] = {{run_layer_norm<float>, "f32_layernorm_cuda_tree4096x8"},
                                     {run_layer_norm<double>, "f64_layernorm_cuda_tree4096x8"}};
constexpr CudaKernel kBatchNorm[] = {{run_batch_norm<float>, "f32_batchnorm_inference_cuda"},
                                     {run_batch_norm<double>, "f64_batchnorm_inference_cuda"}};
constexpr CudaKernel kInstanceNorm[] = {
    {run_instance_norm<float>, "f32_instancenorm_cuda_tree4096x8"},
    {run_instance_norm<double>, "f64_instancenorm_cuda_tree4096x8"}};

constexpr CudaKernel kMeanVarianceNorm[] = {
    {run_mean_variance_norm<float>, "f32_mvn_cuda_tree4096x8"},
    {run_mean_variance_norm<double>, "f64_mvn_cuda_tree4096x8"}};

constexpr CudaKernel kHardmax[] = {{run_hardmax<float>, "f32_hardmax_cuda_first_max"},
                                   {run_hardmax<double>, "f64_hardmax_cuda_first_max"}};

const CudaKernel& by_dtype(const CudaKernel* kernels, const CudaKernelQuery& query) {
  return kernels[query.inputs[0]->dtype == DType::F64 ? 1 : 0];
}

KernelSelection select_layer_norm(const CudaKernelQuery& query) {
  if (std::optional<KernelUnsupported> refused = refuse_dtype(query, kFloats)) return *refused;
  const Shape& x = query.inputs[0]->shape;
  const Shape& scale = query.inputs[1]->shape;
  const bool has_bias = query.inputs.size() > 2 && query.inputs[2].has_value();
  const std::optional<Shape> bias =
      has_bias ? std::optional<Shape>(query.inputs[2]->shape) : std::nullopt;
  if (!layer_norm_operands(query.node, x, scale, bias)) {
    return KernelUnsupported{"LayerNormalization of " + x.str() + " with Scale " + scale.str() +
                             (bias ? " and B " + bias->str() : std::string()) +
                             " broadcasts over more dims than the CUDA kernel takes (" +
                             std::to_string(kMaxBroadcastDims) + " once merged)"};
  }
  return choice_of(by_dtype(kLayerNorm, query));
}

KernelSelection select_mean_variance_norm(const CudaKernelQuery& query) {
  if (std::optional<KernelUnsupported> refused = refuse_dtype(query, kFloats)) return *refused;
  const Shape& x = query.inputs[0]->shape;
  if (!mvn_groups(query.node, x)) {
    return KernelUnsupported{"MeanVarianceNormalization of " + x.str() +
                             " alternates normalized and other axes more than " +
                             std::to_string(kMaxReduceExtents) +
                             " times; the CUDA kernel takes at most " +
                             std::to_string(kMaxReduceExtents) + " runs of each"};
  }
  return choice_of(by_dtype(kMeanVarianceNorm, query));
}

template <const CudaKernel* kKernels>
KernelSelection select_float(const CudaKernelQuery& query) {
  if (std::optional<KernelUnsupported> refused = refuse_dtype(query, kFloats)) return *refused;
  return choice_of(by_dtype(kKernels, query));
}

using E = CrossBackendExactness;
const CudaOpKernels kOps[] = {
    {{OpKind::Softmax, kFloats, E::Bitwise,
      "the CPU's softmax_rows: row max by NaN-blind selects and the sum of its exp_f32 on the "
      "CPU's tree, y = e * (1 / sum), fma only in exp_f32's Horner steps (on both); a NaN sum "
      "gives the same quiet NaN row; f64: "
      "the same with CUDA's exp where the CPU calls libm's",
      kLibmF64},
     select_float<kSoftmax>},
    {{OpKind::LogSoftmax, kFloats, E::NotClaimed,
      "the CPU's softmax_rows (exp_f32 for f32, the same tree), then (x - max) - log(sum) with "
      "the double log (rounded once for f32) where the CPU calls libm's logf / log"},
     select_float<kLogSoftmax>},
    {{OpKind::LayerNormalization, kFloats, E::BitwiseExceptNanPayload,
      "the CPU's two passes on its tree (sum, then squared deviations), IEEE divisions and "
      "square root, (x - mean) * inv_std * scale + bias left to right, no FMA"},
     select_layer_norm},
    {{OpKind::BatchNormalization, kFloats, E::BitwiseExceptNanPayload,
      "1 / sqrt(var + epsilon) per channel, then (x - mean) * inv_std * scale + bias left to "
      "right, IEEE operations, no FMA, as on the CPU"},
     select_float<kBatchNorm>},
    {{OpKind::InstanceNormalization, kFloats, E::BitwiseExceptNanPayload,
      "the CPU's mean and variance of each plane on its tree, IEEE divisions and square root, "
      "(x - mean) * inv_std * scale + bias left to right, no FMA"},
     select_float<kInstanceNorm>},
    {{OpKind::MeanVarianceNormalization, kFloats, E::BitwiseExceptNanPayload,
      "the CPU's mean and variance in double (Wide) on its tree over the same member order, "
      "(x - mean) / (sqrt(variance) + epsilon) in IEEE double, one rounding to the type"},
     select_mean_variance_norm},
    {{OpKind::LRN, kFloats, E::NotClaimed,
      "the CPU's window sums (x * x added channel by channel in ascending order, no FMA), then "
      "x / pow(bias + scale * sum, beta) with CUDA's double pow where the CPU calls libm's"},
     select_float<kLrn>},
    {{OpKind::Hardmax, kFloats, E::Bitwise,
      "the CPU's scan of each line for its first maximum (the first NaN once met), then exact "
      "1 and 0"},
     select_float<kHardmax>},
};

}  // namespace

std::span<const CudaOpKernels> normalization_op_kernels() { return kOps; }

}  // namespace volta::cuda
