// VJP rules of the loss family. A sample's loss is -input[n, label, d...] * weight[label] (0 for
// an ignored label), so its gradient is that one class's -weight[label] times the sample's share
// of the output gradient: a one-hot over the classes. The labels and weights get none (the op
// table marks them not differentiable).

#include <string>
#include <vector>

#include "vjp.h"

namespace volta::autograd {
namespace {

// d loss / d input of NegativeLogLikelihoodLoss(input [N, C, d...], labels [N, d...], weights):
//   none: -w[label] * g[n, d...]; sum: -w[label] * g; mean: -w[label] * g / W, W the sum of the
//   weights of the samples that count (their number when unweighted), as the forward divides;
// at the label's class, 0 at the others and for ignored samples. A mean whose W is 0 is NaN, as
// the forward is.
ValueId nll_input_grad(VjpBuilder& b, ValueId g) {
  const AttrReader at = b.attrs();
  const ValueId labels = b.input(1);
  const DType label_type = b.value(labels).dtype;
  const int64_t classes = b.shape(b.input(0))[1];
  const std::string float_name(dtype_name(b.dtype()));
  // An ignored label may be outside [0, C): it is read as class 0 and its weight zeroed.
  ValueId counted = kNoValue;
  ValueId safe_labels = labels;
  const std::vector<int64_t>& ignore = at.get_ints("ignore_index");
  if (!ignore.empty()) {
    Tensor ignored(label_type, Shape{});
    ignored.set_int(0, ignore.front());
    counted = b.add(OpKind::Not, {b.add(OpKind::Equal, {labels, b.constant(std::move(ignored))})});
    Tensor zero(label_type, Shape{});
    zero.set_int(0, 0);
    safe_labels = b.add(OpKind::Where, {counted, labels, b.constant(std::move(zero))});
  }
  ValueId weight = kNoValue;  // per sample, [N, d...]; kNoValue: 1 everywhere
  if (b.num_inputs() > 2 && b.input(2).valid()) {
    weight = b.add(OpKind::Gather, {b.input(2), safe_labels}, {{"axis", int64_t{0}}});
  }
  if (counted.valid()) {
    const ValueId mask = b.add(OpKind::Cast, {counted}, {{"to", float_name}});
    weight = weight.valid() ? b.mul(weight, mask) : mask;
  }
  const std::string& reduction = at.get_string("reduction");
  ValueId share = g;  // the output gradient each sample's loss receives
  if (reduction == "mean") {
    ValueId total;
    if (weight.valid()) {
      total = b.add(OpKind::ReduceSum, {weight}, {{"keepdims", int64_t{0}}});
    } else {
      total = b.scalar(static_cast<double>(b.shape(labels).numel()));
    }
    share = b.div(g, total);
  }
  ValueId coefficient = b.neg(share);
  if (weight.valid()) coefficient = b.mul(coefficient, weight);
  if (reduction != "none" && !weight.valid()) {
    coefficient = b.add(OpKind::Expand, {coefficient}, {{"shape", b.shape(labels).dims()}});
  }
  Tensor off_on(b.dtype(), Shape{2});
  off_on.set_double(0, 0.0);
  off_on.set_double(1, 1.0);
  const ValueId one_hot = b.add(OpKind::OneHot, {safe_labels, b.constant(std::move(off_on))},
                                {{"depth", classes}, {"axis", int64_t{1}}});
  const ValueId per_sample =
      b.add(OpKind::Unsqueeze, {coefficient}, {{"axes", std::vector<int64_t>{1}}});
  return b.mul(one_hot, per_sample);
}

void nll_loss_vjp(VjpBuilder& b) { b.set(0, nll_input_grad(b, b.grad())); }

// SoftmaxCrossEntropyLoss = NegativeLogLikelihoodLoss of log_prob = LogSoftmax(scores, axis 1):
// the gradients reaching log_prob (from the loss and from the log_prob output) go back through
// LogSoftmax: d scores = d - softmax * sum over classes of d.
void softmax_cross_entropy_vjp(VjpBuilder& b) {
  const bool has_log_prob = b.node().outputs.size() > 1;
  ValueId d = kNoValue;
  if (b.grad(0).valid()) d = nll_input_grad(b, b.grad(0));
  if (has_log_prob && b.grad(1).valid()) d = d.valid() ? b.sum(d, b.grad(1)) : b.grad(1);
  const ValueId log_prob =
      has_log_prob ? b.output(1) : b.add(OpKind::LogSoftmax, {b.input(0)}, {{"axis", int64_t{1}}});
  const ValueId total =
      b.add(OpKind::ReduceSum, {d}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{1}}});
  b.set(0, b.sub(d, b.mul(b.add(OpKind::Exp, {log_prob}), total)));
}

}  // namespace

void register_loss_vjps(VjpTable& t) {
  t[static_cast<size_t>(op_index(OpKind::NegativeLogLikelihoodLoss))] = {&nll_loss_vjp, 0b1};
  t[static_cast<size_t>(op_index(OpKind::SoftmaxCrossEntropyLoss))] = {&softmax_cross_entropy_vjp,
                                                                       0b1};
}

}  // namespace volta::autograd
