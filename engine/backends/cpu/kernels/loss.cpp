// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss on the CPU.
//
// The input [N, C, d1, ...] is seen as [N, C, D] and the labels as N * D samples. A sample's loss
// is -input[n, label, d] * weight[label] (0 for an ignored label); tasks take fixed runs of
// samples. The "sum" and "mean" reductions add the losses (and, for a weighted mean, the weights)
// with the fixed tree of reduce_tree.h, so the bits do not depend on the thread count.
// SoftmaxCrossEntropyLoss first takes LogSoftmax along axis 1 with the rows of softmax_rows.h,
// into its log_prob output when the node declares it, else into scratch.

#include <string>
#include <vector>

#include "dtype_kernels.h"
#include "reduce_tree.h"
#include "softmax_rows.h"

namespace volta::cpu {
namespace {

constexpr auto plus = [](auto a, auto b) { return a + b; };

struct LossLayout {
  int64_t batch = 1;    // N
  int64_t classes = 1;  // C
  int64_t inner = 1;    // D: the product of d1, ...
  int64_t samples() const { return batch * inner; }
};

LossLayout loss_layout(const Shape& input) {
  const AxisSplit s = split_at_axis(input, 1);
  return {s.outer, s.axis, s.inner};
}

struct IgnoreIndex {
  bool given = false;
  int64_t label = 0;
  bool ignores(int64_t l) const { return given && l == label; }
};

IgnoreIndex ignore_index_of(const AttrReader& attrs) {
  const std::vector<int64_t>& given = attrs.get_ints("ignore_index");
  return given.empty() ? IgnoreIndex{} : IgnoreIndex{true, given.front()};
}

// Checked before any loss is computed, in sample order, so the error names the first bad label.
template <class L>
void check_labels(const L* labels, const Shape& shape, int64_t classes, IgnoreIndex ignore) {
  for (int64_t k = 0; k < shape.numel(); ++k) {
    const int64_t l = labels[k];
    if (ignore.ignores(l) || (l >= 0 && l < classes)) continue;
    std::vector<int64_t> position(static_cast<size_t>(shape.rank()));
    for (int64_t rest = k, a = shape.rank() - 1; a >= 0; --a) {
      position[static_cast<size_t>(a)] = rest % shape[static_cast<int>(a)];
      rest /= shape[static_cast<int>(a)];
    }
    fail(ErrorCode::KernelFailure,
         "label " + std::to_string(l) + " at labels position " + Shape(position).str() +
             " is out of range for " + std::to_string(classes) + " classes (valid: [0, " +
             std::to_string(classes - 1) + "]" +
             (ignore.given ? ", or ignore_index " + std::to_string(ignore.label) : "") + ")");
  }
}

// The loss of log-probabilities `log_prob` ([N, C, D]) against `labels_view`, into `out`:
// per sample for reduction "none", else one value.
template <class T, class L>
void nll_loss(const KernelArgs& args, const T* log_prob, const LossLayout& layout, T* out) {
  const ConstTensorView& labels_view = args.inputs[1];
  const L* labels = labels_view.as<L>();
  const T* weights = optional_input_data<T>(args, 2);
  const IgnoreIndex ignore = ignore_index_of(args.attrs);
  const std::string& reduction = args.attrs.get_string("reduction");
  check_labels(labels, labels_view.shape, layout.classes, ignore);

  // Each sample's loss is formed in Wide<T> (exact for f32: a product of two floats), and the
  // "sum" and "mean" reductions add them in Wide<T>, the op table's accumulator: an f32 sum over
  // thousands of samples drifts by more than the reference's tolerance.
  using A = Wide<T>;
  const auto loss_of = [&](int64_t k) {
    const int64_t l = labels[k];
    if (ignore.ignores(l)) return A{0};
    const int64_t n = k / layout.inner, d = k % layout.inner;
    const auto v = static_cast<A>(log_prob[(n * layout.classes + l) * layout.inner + d]);
    return weights != nullptr ? -v * static_cast<A>(weights[l]) : -v;
  };
  const int64_t samples = layout.samples();
  if (reduction == "none") {
    args.pool.parallel_chunks(samples, kElementwiseChunk, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) out[k] = static_cast<T>(loss_of(k));
    });
    return;
  }
  const A sum = reduce_row(samples, A{0}, loss_of, plus);
  if (reduction == "sum") {
    out[0] = static_cast<T>(sum);
    return;
  }
  // mean: divided by the summed weights of the samples that count (their number when unweighted).
  if (weights == nullptr) {
    int64_t counted = 0;
    for (int64_t k = 0; k < samples; ++k) counted += ignore.ignores(labels[k]) ? 0 : 1;
    out[0] = static_cast<T>(sum / static_cast<A>(counted));
    return;
  }
  const auto weight_of = [&](int64_t k) {
    return ignore.ignores(labels[k]) ? A{0} : static_cast<A>(weights[labels[k]]);
  };
  out[0] = static_cast<T>(sum / reduce_row(samples, A{0}, weight_of, plus));
}

template <class T>
void nll_by_label_type(const KernelArgs& args, const T* log_prob, const LossLayout& layout,
                       T* out) {
  if (args.inputs[1].dtype == DType::I32) {
    nll_loss<T, int32_t>(args, log_prob, layout, out);
  } else {
    nll_loss<T, int64_t>(args, log_prob, layout, out);
  }
}

template <class T>
struct NllLossKernel {
  static void run(const KernelArgs& args) {
    const ConstTensorView& in = args.inputs[0];
    nll_by_label_type<T>(args, in.as<T>(), loss_layout(in.shape), args.outputs[0].as<T>());
  }
};

template <class T>
struct SoftmaxCrossEntropyKernel {
  static void run(const KernelArgs& args) {
    const ConstTensorView& in = args.inputs[0];
    const LossLayout layout = loss_layout(in.shape);
    // log_prob is the second output when the node has one, else the planned workspace.
    T* const log_prob = args.outputs.size() > 1
                            ? args.outputs[1].as<T>()
                            : workspace_part<T>(args.workspace, 0, in.numel(), args.node);
    softmax_rows::softmax_along_axis<T, true>(in.as<T>(), log_prob, split_at_axis(in.shape, 1),
                                              args.pool);
    nll_by_label_type<T>(args, log_prob, layout, args.outputs[0].as<T>());
  }
};

const OpDTypeKernels& loss_kernels() {
  static const OpDTypeKernels kKernels = [] {
    OpDTypeKernels f{};
    f[static_cast<size_t>(op_index(OpKind::NegativeLogLikelihoodLoss))] =
        kernels_for<NllLossKernel>(FloatTypes{}, "nll_loss_tree4096x8");
    f[static_cast<size_t>(op_index(OpKind::SoftmaxCrossEntropyLoss))] =
        kernels_for<SoftmaxCrossEntropyKernel>(FloatTypes{}, "sce_loss_log_softmax_tree4096x8");
    return f;
  }();
  return kKernels;
}

// SoftmaxCrossEntropyLoss without its log_prob output keeps log_prob in the workspace.
KernelSelection select_loss_kernel(const KernelQuery& query) {
  const TypeInfo& in = *query.inputs[0];
  const bool log_prob_aside =
      query.node.op == OpKind::SoftmaxCrossEntropyLoss && query.outputs.size() < 2;
  return with_scratch(
      select_by_dtype(loss_kernels()[static_cast<size_t>(op_index(query.node.op))], query.node,
                      in.dtype),
      log_prob_aside ? in.shape.numel() * static_cast<int64_t>(dtype_size(in.dtype)) : 0, 0);
}

}  // namespace

void register_loss_kernels(KernelTable& table) {
  register_family(table, loss_kernels(), select_loss_kernel);
}

}  // namespace volta::cpu
