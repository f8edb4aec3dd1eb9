// The loss family on the CUDA backend: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
// (f32, f64; i32 or i64 labels; reductions none, sum, mean; ignore_index; weights), the CPU's
// arithmetic and tree. Labels are checked on the device, the first bad one failing the run in
// the CPU's words. SoftmaxCrossEntropyLoss claims no CPU bits: its LogSoftmax takes libm's log
// (and, in f64, exp) on the CPU, which the device does not reproduce bit for bit. Selection,
// launch and the claims; the device code is kernels/loss.cu.

#include <cuda_runtime_api.h>

#include <optional>
#include <string>
#include <vector>

#include "../cuda_kernel.h"
#include "launch.h"

namespace volta::cuda {
namespace {

inline constexpr DTypeSet kFloats{DType::F32, DType::F64};

LossGeometry loss_geometry(const Node& node, const Shape& input, const Shape& labels) {
  LossGeometry g;
  g.classes = input[1];
  for (int a = 2; a < input.rank(); ++a) g.inner *= input[a];
  g.samples = labels.numel();
  const std::vector<int64_t>& ignore = AttrReader(node).get_ints("ignore_index");
  g.has_ignore = !ignore.empty();
  g.ignore = g.has_ignore ? ignore.front() : 0;
  return g;
}

LossReduction reduction_of(const Node& node) {
  const std::string& r = AttrReader(node).get_string("reduction");
  if (r == "none") return LossReduction::None;
  if (r == "sum") return LossReduction::Sum;
  if (r == "mean") return LossReduction::Mean;
  fail(ErrorCode::KernelFailure,
       "reduction \"" + r + "\" is not supported (supported: \"none\", \"sum\", \"mean\")");
}

// The check word, then (for "sum" and "mean") the leaves' partials, then (for a
// SoftmaxCrossEntropyLoss without its log_prob output) the log-probabilities.
int64_t partials_bytes(const Node& node, const LossGeometry& g) {
  return reduction_of(node) == LossReduction::None ? 0 : loss_partials_bytes(g);
}
int64_t workspace_bytes(const Node& node, const LossGeometry& g, int64_t log_prob_bytes) {
  return kCheckWorkspaceBytes + partials_bytes(node, g) + log_prob_bytes;
}

LossType loss_type(DType dtype) { return dtype == DType::F32 ? LossType::F32 : LossType::F64; }

// The CPU's check_labels: the first sample (in order) whose label is neither a class nor the
// ignored label.
void check_labels(const CudaKernelArgs& args, const LossGeometry& g) {
  const ConstTensorView& labels = args.inputs[1];
  if (g.samples == 0) return;
  const auto label_bytes = static_cast<int>(dtype_size(labels.dtype));
  const std::optional<int64_t> bad = first_flagged(args, [&](unsigned long long* word) {
    return launch_find_bad_label(label_bytes, g, labels.data, word, args.stream);
  });
  if (!bad) return;
  const int64_t k = *bad;
  int64_t label = 0;
  if (label_bytes == 4) {
    int32_t v = 0;
    copy_to_host_now(&v, static_cast<const int32_t*>(labels.data) + k, sizeof v, args);
    label = v;
  } else {
    copy_to_host_now(&label, static_cast<const int64_t*>(labels.data) + k, sizeof label, args);
  }
  std::vector<int64_t> position(static_cast<size_t>(labels.shape.rank()));
  for (int64_t rest = k, a = labels.shape.rank() - 1; a >= 0; --a) {
    position[static_cast<size_t>(a)] = rest % labels.shape[static_cast<int>(a)];
    rest /= labels.shape[static_cast<int>(a)];
  }
  fail(ErrorCode::KernelFailure,
       "label " + std::to_string(label) + " at labels position " + Shape(position).str() +
           " is out of range for " + std::to_string(g.classes) + " classes (valid: [0, " +
           std::to_string(g.classes - 1) + "]" +
           (g.has_ignore ? ", or ignore_index " + std::to_string(g.ignore) : "") + ")");
}

// The loss of `log_prob` (device memory of input 0's type and shape) into output 0.
void nll_of(const CudaKernelArgs& args, const LossGeometry& g, const void* log_prob) {
  const ConstTensorView& labels = args.inputs[1];
  const LossReduction reduction = reduction_of(args.node);
  check_labels(args, g);
  if (reduction == LossReduction::None && g.samples == 0) return;
  const void* weights = args.inputs.size() > 2 ? args.inputs[2].data : nullptr;
  auto* partials = static_cast<std::byte*>(args.workspace.data) + kCheckWorkspaceBytes;
  check_launch(launch_nll_loss(loss_type(args.inputs[0].dtype),
                               static_cast<int>(dtype_size(labels.dtype)), reduction, g, log_prob,
                               labels.data, weights, args.outputs[0].data, partials, args.stream),
               args.node);
}

void nll_loss(const CudaKernelArgs& args) {
  const ConstTensorView& input = args.inputs[0];
  nll_of(args, loss_geometry(args.node, input.shape, args.inputs[1].shape), input.data);
}

// As on the CPU: LogSoftmax into log_prob (the second output, else the workspace), then the
// loss of it.
void softmax_cross_entropy(const CudaKernelArgs& args) {
  const ConstTensorView& input = args.inputs[0];
  const LossGeometry g = loss_geometry(args.node, input.shape, args.inputs[1].shape);
  void* log_prob = args.outputs.size() > 1
                       ? args.outputs[1].data
                       : static_cast<std::byte*>(args.workspace.data) + kCheckWorkspaceBytes +
                             partials_bytes(args.node, g);
  if (input.numel() > 0) {
    check_launch(
        launch_log_softmax_classes(loss_type(input.dtype), g, input.data, log_prob, args.stream),
        args.node);
  }
  nll_of(args, g, log_prob);
}

constexpr CudaKernel kNllLoss[2] = {{nll_loss, "f32_nll_loss_cuda_tree4096x8", true},
                                    {nll_loss, "f64_nll_loss_cuda_tree4096x8", true}};
constexpr CudaKernel kSoftmaxCrossEntropy[2] = {
    {softmax_cross_entropy, "f32_sce_loss_cuda_log_softmax_tree4096x8", true},
    {softmax_cross_entropy, "f64_sce_loss_cuda_log_softmax_tree4096x8", true}};

template <const CudaKernel* kByType>
KernelSelection select_loss(const CudaKernelQuery& query) {
  if (auto refusal = refuse_dtype(query, kFloats)) return *refusal;
  const TypeInfo& input = *query.inputs[0];
  const LossGeometry g = loss_geometry(query.node, input.shape, query.inputs[1]->shape);
  const bool log_prob_aside =
      query.node.op == OpKind::SoftmaxCrossEntropyLoss && query.outputs.size() < 2;
  const int64_t log_prob_bytes =
      log_prob_aside ? input.shape.numel() * static_cast<int64_t>(dtype_size(input.dtype)) : 0;
  return choice_of(kByType[input.dtype == DType::F32 ? 0 : 1],
                   workspace_bytes(query.node, g, log_prob_bytes));
}

using E = CrossBackendExactness;
const CudaOpKernels kOps[] = {
    {{OpKind::SoftmaxCrossEntropyLoss, kFloats, E::NotClaimed,
      "the CPU's LogSoftmax tree (exp_f32 for f32) and loss, but the device's log (and f64 exp) "
      "where the CPU calls libm: within the tolerance table"},
     select_loss<kSoftmaxCrossEntropy>},
    {{OpKind::NegativeLogLikelihoodLoss, kFloats, E::BitwiseExceptNanPayload,
      "the CPU's loss per sample in double (-v, or -v * weight: exact products) and, for sum "
      "and mean, its 4096x8 tree over the samples and the weights, one IEEE division"},
     select_loss<kNllLoss>},
};

}  // namespace

std::span<const CudaOpKernels> loss_op_kernels() { return kOps; }

}  // namespace volta::cuda
