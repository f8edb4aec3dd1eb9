// Reference Softmax, LogSoftmax and LayerNormalization. Rows are normalized one at a time;
// maxima, sums and statistics are taken in double and each output rounded once.

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

}  // namespace

void register_normalization(RefTable& table) {
  register_kernel(table, OpKind::Softmax, softmax<false>);
  register_kernel(table, OpKind::LogSoftmax, softmax<true>);
  register_kernel(table, OpKind::LayerNormalization, layer_normalization);
}

}  // namespace volta::reference
