// Reference Softmax, LogSoftmax, LayerNormalization, BatchNormalization, InstanceNormalization,
// MeanVarianceNormalization, LRN and Hardmax. Rows are normalized one at a time; maxima, sums
// and statistics are taken in double and each output rounded once.

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "ref_util.h"

namespace volta::reference {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

int attr_axis(const Node& node, const Shape& shape) {
  return *normalize_axis(AttrReader(node).get_int("axis"), shape.rank());
}

// Softmax and LogSoftmax along one axis (ONNX opset 13), both shifted by the row maximum
// so that exp never overflows. A NaN anywhere in a row makes its sum, and so the whole row,
// NaN.
template <bool kLog>
std::vector<Tensor> softmax(const Node& node, RefInputs in, RefOutputTypes out) {
  const Tensor& x = *in[0];
  const AxisView rows = view_around_axis(x.shape(), attr_axis(node, x.shape()));
  Tensor y(out[0].dtype, out[0].shape);
  for (int64_t o = 0; o < rows.outer; ++o) {
    for (int64_t i = 0; i < rows.inner; ++i) {
      double max = -kInf;
      for (int64_t j = 0; j < rows.extent; ++j) max = std::max(max, x.get_double(rows.at(o, j, i)));
      double sum = 0.0;
      for (int64_t j = 0; j < rows.extent; ++j)
        sum += std::exp(x.get_double(rows.at(o, j, i)) - max);
      for (int64_t j = 0; j < rows.extent; ++j) {
        const double shifted = x.get_double(rows.at(o, j, i)) - max;
        y.set_double(rows.at(o, j, i), kLog ? shifted - std::log(sum) : std::exp(shifted) / sum);
      }
    }
  }
  return {y};
}

// LayerNormalization over axes [axis, rank): mean and biased variance per row, then
// y = (x - mean) / sqrt(var + epsilon) * scale + bias. Outputs 1 and 2 (Mean, InvStdDev)
// are produced when the node declares them.
std::vector<Tensor> layer_normalization(const Node& node, RefInputs in, RefOutputTypes out) {
  const Tensor& x = *in[0];
  const int axis = attr_axis(node, x.shape());
  const double epsilon = AttrReader(node).get_float("epsilon");
  int64_t rows = 1;
  for (int d = 0; d < axis; ++d) rows *= x.shape()[d];
  const Shape normalized(
      std::vector<int64_t>(x.shape().dims().begin() + axis, x.shape().dims().end()));
  const int64_t row_size = normalized.numel();
  const Tensor scale = broadcast_to(*in[1], normalized);
  // An absent bias adds nothing (adding +0 would still turn a -0 result into +0).
  std::optional<Tensor> bias;
  if (const Tensor* given = optional_input(in, 2); given != nullptr) {
    bias = broadcast_to(*given, normalized);
  }

  std::vector<Tensor> results;
  for (const TypeInfo& type : out) results.emplace_back(type.dtype, type.shape);
  // An empty row has no statistics: its mean is 0/0 = NaN, as the formula says.
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t base = r * row_size;
    double sum = 0.0;
    for (int64_t j = 0; j < row_size; ++j) sum += x.get_double(base + j);
    const double mean = sum / static_cast<double>(row_size);
    double squares = 0.0;
    for (int64_t j = 0; j < row_size; ++j) {
      const double d = x.get_double(base + j) - mean;
      squares += d * d;
    }
    const double variance = squares / static_cast<double>(row_size);
    const double inv_std_dev = 1.0 / std::sqrt(variance + epsilon);
    for (int64_t j = 0; j < row_size; ++j) {
      double value = (x.get_double(base + j) - mean) * inv_std_dev * scale.get_double(j);
      if (bias) value += bias->get_double(j);
      results[0].set_double(base + j, value);
    }
    if (results.size() > 1) results[1].set_double(r, mean);
    if (results.size() > 2) results[2].set_double(r, inv_std_dev);
  }
  return results;
}

// Inference BatchNormalization: every element of channel c (axis 1) is normalized by the given
// statistics of c.
std::vector<Tensor> batch_normalization(const Node& node, RefInputs in, RefOutputTypes out) {
  const Tensor& x = *in[0];
  const double epsilon = AttrReader(node).get_float("epsilon");
  Tensor y(out[0].dtype, out[0].shape);
  for_each_index(x.shape(), [&](const std::vector<int64_t>& index, int64_t flat) {
    const int64_t c = index[1];
    const double normalized =
        (x.get_double(flat) - in[3]->get_double(c)) / std::sqrt(in[4]->get_double(c) + epsilon);
    y.set_double(flat, normalized * in[1]->get_double(c) + in[2]->get_double(c));
  });
  return {y};
}

// The row-major offsets of x's elements, grouped by their index on the axes not in `reduced`:
// one group per index of the kept axes, each group in row-major order of the reduced axes.
std::vector<std::vector<int64_t>> groups_over(const Shape& shape,
                                              const std::vector<bool>& reduced) {
  std::vector<int64_t> kept_dims;
  for (int d = 0; d < shape.rank(); ++d) {
    if (!reduced[static_cast<size_t>(d)]) kept_dims.push_back(shape[d]);
  }
  const Shape kept(kept_dims);
  std::vector<std::vector<int64_t>> groups(static_cast<size_t>(kept.numel()));
  for_each_index(shape, [&](const std::vector<int64_t>& index, int64_t flat) {
    std::vector<int64_t> kept_index;
    for (int d = 0; d < shape.rank(); ++d) {
      if (!reduced[static_cast<size_t>(d)]) kept_index.push_back(index[static_cast<size_t>(d)]);
    }
    groups[static_cast<size_t>(flat_offset(kept_index, kept))].push_back(flat);
  });
  return groups;
}

struct Moments {
  double mean;
  double variance;  // biased: the mean of squared deviations
};
Moments moments_of(const Tensor& x, const std::vector<int64_t>& members) {
  double sum = 0.0;
  for (int64_t at : members) sum += x.get_double(at);
  const double mean = sum / static_cast<double>(members.size());
  double squares = 0.0;
  for (int64_t at : members) squares += (x.get_double(at) - mean) * (x.get_double(at) - mean);
  return {mean, squares / static_cast<double>(members.size())};
}

// InstanceNormalization: each [n, c] plane by its own mean and variance, then scale and bias.
std::vector<Tensor> instance_normalization(const Node& node, RefInputs in, RefOutputTypes out) {
  const Tensor& x = *in[0];
  const double epsilon = AttrReader(node).get_float("epsilon");
  std::vector<bool> reduced(static_cast<size_t>(x.shape().rank()), true);
  reduced[0] = reduced[1] = false;
  Tensor y(out[0].dtype, out[0].shape);
  const int64_t channels = x.shape()[1];
  const std::vector<std::vector<int64_t>> planes = groups_over(x.shape(), reduced);
  for (size_t p = 0; p < planes.size(); ++p) {
    if (planes[p].empty()) continue;
    const Moments m = moments_of(x, planes[p]);
    const auto c = static_cast<int64_t>(p) % channels;
    for (int64_t at : planes[p]) {
      const double normalized = (x.get_double(at) - m.mean) / std::sqrt(m.variance + epsilon);
      y.set_double(at, normalized * in[1]->get_double(c) + in[2]->get_double(c));
    }
  }
  return {y};
}

// MeanVarianceNormalization: (x - mean) / (sqrt(variance) + epsilon) over `axes`.
std::vector<Tensor> mean_variance_normalization(const Node& node, RefInputs in,
                                                RefOutputTypes out) {
  const Tensor& x = *in[0];
  const AttrReader attrs(node);
  const double epsilon = attrs.get_float("epsilon");
  std::vector<bool> reduced(static_cast<size_t>(x.shape().rank()), false);
  for (int64_t a : attrs.get_ints("axes")) {
    reduced[static_cast<size_t>(*normalize_axis(a, x.shape().rank()))] = true;
  }
  Tensor y(out[0].dtype, out[0].shape);
  for (const std::vector<int64_t>& group : groups_over(x.shape(), reduced)) {
    if (group.empty()) continue;
    const Moments m = moments_of(x, group);
    for (int64_t at : group) {
      y.set_double(at, (x.get_double(at) - m.mean) / (std::sqrt(m.variance) + epsilon));
    }
  }
  return {y};
}

// LRN: y = x / (bias + alpha / size * sum of squares over the channel window)^beta, the window
// [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to the channels that exist.
std::vector<Tensor> lrn(const Node& node, RefInputs in, RefOutputTypes out) {
  const Tensor& x = *in[0];
  const AttrReader attrs(node);
  const double alpha = attrs.get_float("alpha");
  const double beta = attrs.get_float("beta");
  const double bias = attrs.get_float("bias");
  const int64_t size = attrs.get_int("size");
  const AxisView v = view_around_axis(x.shape(), 1);
  Tensor y(out[0].dtype, out[0].shape);
  for (int64_t n = 0; n < v.outer; ++n) {
    for (int64_t c = 0; c < v.extent; ++c) {
      const int64_t first = std::max<int64_t>(0, c - (size - 1) / 2);
      const int64_t last = std::min<int64_t>(v.extent - 1, c + size / 2);  // ceil((size-1)/2)
      for (int64_t s = 0; s < v.inner; ++s) {
        double squares = 0.0;
        for (int64_t i = first; i <= last; ++i) {
          squares += x.get_double(v.at(n, i, s)) * x.get_double(v.at(n, i, s));
        }
        const double denominator =
            std::pow(bias + alpha / static_cast<double>(size) * squares, beta);
        y.set_double(v.at(n, c, s), x.get_double(v.at(n, c, s)) / denominator);
      }
    }
  }
  return {y};
}

// Hardmax: 1 at the first maximum along the axis, 0 elsewhere; the first NaN counts as the
// maximum (as ArgMax does).
std::vector<Tensor> hardmax(const Node& node, RefInputs in, RefOutputTypes out) {
  const Tensor& x = *in[0];
  const AxisView rows = view_around_axis(x.shape(), attr_axis(node, x.shape()));
  Tensor y(out[0].dtype, out[0].shape);  // zero-filled
  for (int64_t o = 0; o < rows.outer; ++o) {
    for (int64_t i = 0; i < rows.inner; ++i) {
      if (rows.extent == 0) continue;
      int64_t best = 0;
      for (int64_t j = 0; j < rows.extent; ++j) {
        const double value = x.get_double(rows.at(o, j, i));
        if (std::isnan(value)) {
          best = j;
          break;
        }
        if (value > x.get_double(rows.at(o, best, i))) best = j;
      }
      y.set_double(rows.at(o, best, i), 1.0);
    }
  }
  return {y};
}

}  // namespace

void register_normalization(RefTable& table) {
  register_kernel(table, OpKind::Softmax, softmax<false>);
  register_kernel(table, OpKind::LogSoftmax, softmax<true>);
  register_kernel(table, OpKind::LayerNormalization, layer_normalization);
  register_kernel(table, OpKind::BatchNormalization, batch_normalization);
  register_kernel(table, OpKind::InstanceNormalization, instance_normalization);
  register_kernel(table, OpKind::MeanVarianceNormalization, mean_variance_normalization);
  register_kernel(table, OpKind::LRN, lrn);
  register_kernel(table, OpKind::Hardmax, hardmax);
}

}  // namespace volta::reference
