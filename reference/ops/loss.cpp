// Reference NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: plain loops over the samples,
// every sum taken in double and each output rounded once.

#include <cmath>
#include <limits>

#include "ref_util.h"

namespace volta::reference {
namespace {

// The input seen as [N, C, D], and the labels as [N, D].
struct LossView {
  int64_t batch, classes, inner;
  int64_t at(int64_t n, int64_t c, int64_t d) const { return (n * classes + c) * inner + d; }
};

LossView loss_view(const Shape& input) {
  const AxisView v = view_around_axis(input, 1);
  return {v.outer, v.extent, v.inner};
}

// The loss of log-probabilities (given as a function of a flat [N, C, D] offset) against the
// labels: -log_prob[n, label, d] * weight[label], 0 for the ignored label; then reduced.
template <class LogProb>
Tensor nll(const Node& node, const LogProb& log_prob, const LossView& v, const Tensor& labels,
           const Tensor* weights, const TypeInfo& out_type) {
  const AttrReader attrs(node);
  const std::string& reduction = attrs.get_string("reduction");
  const std::vector<int64_t>& ignore = attrs.get_ints("ignore_index");
  Tensor out(out_type.dtype, out_type.shape);
  double sum = 0.0, weight_sum = 0.0;
  for (int64_t n = 0; n < v.batch; ++n) {
    for (int64_t d = 0; d < v.inner; ++d) {
      const int64_t k = n * v.inner + d;
      const int64_t label = labels.get_int(k);
      double loss = 0.0, weight = 0.0;
      if (ignore.empty() || label != ignore.front()) {
        if (label < 0 || label >= v.classes) {
          kernel_fail("label " + std::to_string(label) + " of sample " + std::to_string(k) +
                      " is outside [0, " + std::to_string(v.classes) + ")");
        }
        weight = weights != nullptr ? weights->get_double(label) : 1.0;
        loss = -log_prob(v.at(n, label, d)) * weight;
      }
      if (reduction == "none") out.set_double(k, loss);
      sum += loss;
      weight_sum += weight;
    }
  }
  if (reduction == "sum") out.set_double(0, sum);
  if (reduction == "mean") out.set_double(0, sum / weight_sum);
  return out;
}

std::vector<Tensor> negative_log_likelihood_loss(const Node& node, RefInputs in,
                                                 RefOutputTypes out) {
  const Tensor& x = *in[0];
  return {nll(
      node, [&x](int64_t at) { return x.get_double(at); }, loss_view(x.shape()), *in[1],
      optional_input(in, 2), out[0])};
}

// LogSoftmax of the scores along axis 1 (shifted by the maximum), then the NLL loss of it.
std::vector<Tensor> softmax_cross_entropy_loss(const Node& node, RefInputs in, RefOutputTypes out) {
  const Tensor& x = *in[0];
  const LossView v = loss_view(x.shape());
  std::vector<double> log_prob(static_cast<size_t>(x.numel()));
  for (int64_t n = 0; n < v.batch; ++n) {
    for (int64_t d = 0; d < v.inner; ++d) {
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t c = 0; c < v.classes; ++c) max = std::max(max, x.get_double(v.at(n, c, d)));
      double sum = 0.0;
      for (int64_t c = 0; c < v.classes; ++c) sum += std::exp(x.get_double(v.at(n, c, d)) - max);
      for (int64_t c = 0; c < v.classes; ++c) {
        log_prob[static_cast<size_t>(v.at(n, c, d))] =
            x.get_double(v.at(n, c, d)) - max - std::log(sum);
      }
    }
  }
  std::vector<Tensor> results = {nll(
      node, [&log_prob](int64_t at) { return log_prob[static_cast<size_t>(at)]; }, v, *in[1],
      optional_input(in, 2), out[0])};
  if (out.size() > 1) {
    Tensor lp(out[1].dtype, out[1].shape);
    for (int64_t i = 0; i < lp.numel(); ++i) lp.set_double(i, log_prob[static_cast<size_t>(i)]);
    results.push_back(std::move(lp));
  }
  return results;
}

}  // namespace

void register_loss(RefTable& table) {
  register_kernel(table, OpKind::NegativeLogLikelihoodLoss, negative_log_likelihood_loss);
  register_kernel(table, OpKind::SoftmaxCrossEntropyLoss, softmax_cross_entropy_loss);
}

}  // namespace volta::reference
