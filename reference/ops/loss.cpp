// Reference NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss and Einsum: plain loops over the
// samples (or output elements), every sum taken in double and each output rounded once.
// (Einsum is a Linalg op; it sits here until the reference gets an einsum file of its own.)

#include <cmath>
#include <limits>

#include "ref_util.h"
#include "volta/ir/einsum.h"

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

// Einsum: for every output index, the sum over every index of the summed labels of the product
// of the operands at those labels. Floats multiply and add in double; integers wrap in int64
// (the same bits as wrapping in their own width once stored).
std::vector<Tensor> einsum(const Node& node, RefInputs in, RefOutputTypes out) {
  std::vector<Shape> shapes;
  for (const Tensor* t : in) shapes.push_back(t->shape());
  const EinsumEquation eq = parse_einsum_equation(AttrReader(node).get_string("equation"), shapes);
  std::vector<int64_t> summed_dims;
  for (int l : eq.summed_labels) summed_dims.push_back(eq.label_extent[static_cast<size_t>(l)]);
  const Shape summed(summed_dims);
  const bool integer = is_integer(out[0].dtype);
  Tensor y(out[0].dtype, out[0].shape);

  std::vector<int64_t> label_index(eq.label_extent.size(), 0);
  // Operand k's element at the current label indices; an axis of extent 1 broadcasts.
  const auto offset_of = [&](size_t k) {
    const std::vector<int>& axes = eq.operand_axes[k];
    std::vector<int64_t> index(axes.size());
    for (size_t a = 0; a < axes.size(); ++a) {
      index[a] =
          shapes[k][static_cast<int>(a)] == 1 ? 0 : label_index[static_cast<size_t>(axes[a])];
    }
    return flat_offset(index, shapes[k]);
  };
  for_each_index(y.shape(), [&](const std::vector<int64_t>& out_index, int64_t flat) {
    for (size_t a = 0; a < out_index.size(); ++a) {
      label_index[static_cast<size_t>(eq.output_labels[a])] = out_index[a];
    }
    double sum = 0.0;
    int64_t int_sum = 0;
    for_each_index(summed, [&](const std::vector<int64_t>& summed_index, int64_t) {
      for (size_t s = 0; s < summed_index.size(); ++s) {
        label_index[static_cast<size_t>(eq.summed_labels[s])] = summed_index[s];
      }
      double product = 1.0;
      int64_t int_product = 1;
      for (size_t k = 0; k < in.size(); ++k) {
        const int64_t at = offset_of(k);
        if (integer) {
          int_product = wrapping_mul(int_product, in[k]->get_int(at));
        } else {
          product *= in[k]->get_double(at);
        }
      }
      sum += product;
      int_sum = wrapping_add(int_sum, int_product);
    });
    if (integer) {
      y.set_int(flat, int_sum);
    } else {
      y.set_double(flat, sum);
    }
  });
  return {y};
}

}  // namespace

void register_loss(RefTable& table) {
  register_kernel(table, OpKind::NegativeLogLikelihoodLoss, negative_log_likelihood_loss);
  register_kernel(table, OpKind::SoftmaxCrossEntropyLoss, softmax_cross_entropy_loss);
  register_kernel(table, OpKind::Einsum, einsum);
}

}  // namespace volta::reference
