// Reference pooling: MaxPool, AveragePool, LpPool and their global forms, every output element
// computed on its own from its window (ref_window.h), sums in double rounded once when stored.

#include <cmath>
#include <limits>
#include <optional>
#include <span>

#include "ref_window.h"

namespace volta::reference {
namespace {

// Whether tap k of output o lies inside the padded input [-pad_begin, size + pad_end).
bool in_padded_input(const Spatial& s, const Shape& x, std::span<const int64_t> o,
                     std::span<const int64_t> k) {
  for (size_t a = 0; a < s.rank(); ++a) {
    const int64_t pos = o[a + 2] * s.strides[a] - s.pad_begin(a) + k[a] * s.dilations[a];
    if (pos < -s.pad_begin(a) || pos >= x[static_cast<int>(a) + 2] + s.pad_end(a)) return false;
  }
  return true;
}

// MaxPool: the largest input value in the window; NaN if the window holds one. Indices: the
// flat index into X of the first NaN, or else of the first maximum, in window order;
// storage_order 1 numbers the spatial positions column-major (first spatial axis fastest).
std::vector<Tensor> max_pool(const Node& node, RefInputs in, RefOutputTypes out) {
  const AttrReader attrs(node);
  const Tensor& x = *in[0];
  const Spatial s = read_spatial(attrs, attrs.get_ints("kernel_shape"));
  const bool column_major = attrs.get_int("storage_order") != 0;
  const std::vector<int64_t> sizes = spatial_dims(x.shape());
  const int64_t plane_size = Shape(sizes).numel();
  std::vector<Tensor> result = {Tensor(out[0].dtype, out[0].shape)};
  if (out.size() > 1) result.emplace_back(out[1].dtype, out[1].shape);
  for_each_index(out[0].shape, [&](const std::vector<int64_t>& o, int64_t flat) {
    bool found = false;
    double best = 0.0;
    std::vector<int64_t> best_pos;
    for_each_index(Shape(s.kernel), [&](const std::vector<int64_t>& k, int64_t) {
      const auto pos = tap_position(s, x.shape(), o, k);
      if (!pos) return;
      const double v = x.get_double(x_offset(x.shape(), o[0], o[1], *pos));
      if (!found || v > best || (std::isnan(v) && !std::isnan(best))) {
        found = true;
        best = v;
        best_pos = *pos;
      }
    });
    if (!found) kernel_fail("MaxPool window over padding only");  // the shape rule forbids it
    result[0].set_double(flat, best);
    if (result.size() > 1) {
      int64_t index = x_offset(x.shape(), o[0], o[1], best_pos);
      if (column_major) {
        int64_t within = 0, scale = 1;
        for (size_t a = 0; a < sizes.size(); ++a) {
          within += best_pos[a] * scale;
          scale *= sizes[a];
        }
        index = (o[0] * x.shape()[1] + o[1]) * plane_size + within;
      }
      result[1].set_int(flat, index);
    }
  });
  return result;
}

// AveragePool and LpPool: a sum over the window's input elements, then the mean or the root.
template <bool kLp>
std::vector<Tensor> sum_pool(const Node& node, RefInputs in, RefOutputTypes out) {
  const AttrReader attrs(node);
  const Tensor& x = *in[0];
  const Spatial s = read_spatial(attrs, attrs.get_ints("kernel_shape"));
  const bool include_pad = !kLp && attrs.get_int("count_include_pad") != 0;
  const double p = kLp ? static_cast<double>(attrs.get_int("p")) : 1.0;
  Tensor y(out[0].dtype, out[0].shape);
  for_each_index(y.shape(), [&](const std::vector<int64_t>& o, int64_t flat) {
    double sum = 0.0;
    int64_t inside = 0, padded = 0;
    for_each_index(Shape(s.kernel), [&](const std::vector<int64_t>& k, int64_t) {
      if (in_padded_input(s, x.shape(), o, k)) ++padded;
      const auto pos = tap_position(s, x.shape(), o, k);
      if (!pos) return;
      const double v = x.get_double(x_offset(x.shape(), o[0], o[1], *pos));
      sum += kLp ? std::pow(std::abs(v), p) : v;
      ++inside;
    });
    if constexpr (kLp) {
      y.set_double(flat, std::pow(sum, 1.0 / p));
    } else {
      y.set_double(flat, sum / static_cast<double>(include_pad ? padded : inside));
    }
  });
  return {y};
}

enum class Global { Average, Max, Lp };

template <Global kKind>
std::vector<Tensor> global_pool(const Node& node, RefInputs in, RefOutputTypes out) {
  const Tensor& x = *in[0];
  const double p = kKind == Global::Lp ? static_cast<double>(AttrReader(node).get_int("p")) : 1.0;
  const int64_t planes = x.shape()[0] * x.shape()[1];
  const int64_t size = planes == 0 ? 0 : x.numel() / planes;
  Tensor y(out[0].dtype, out[0].shape);
  for (int64_t plane = 0; plane < planes; ++plane) {
    double acc = kKind == Global::Max ? -std::numeric_limits<double>::infinity() : 0.0;
    for (int64_t i = 0; i < size; ++i) {
      const double v = x.get_double(plane * size + i);
      if constexpr (kKind == Global::Max) {
        if (!std::isnan(acc) && (std::isnan(v) || v > acc)) acc = v;  // NaN sticks
      } else if constexpr (kKind == Global::Lp) {
        acc += std::pow(std::abs(v), p);
      } else {
        acc += v;
      }
    }
    if constexpr (kKind == Global::Average) acc /= static_cast<double>(size);
    if constexpr (kKind == Global::Lp) acc = std::pow(acc, 1.0 / p);
    y.set_double(plane, acc);
  }
  return {y};
}

}  // namespace

void register_pooling(RefTable& table) {
  register_kernel(table, OpKind::MaxPool, max_pool);
  register_kernel(table, OpKind::AveragePool, sum_pool<false>);
  register_kernel(table, OpKind::LpPool, sum_pool<true>);
  register_kernel(table, OpKind::GlobalAveragePool, global_pool<Global::Average>);
  register_kernel(table, OpKind::GlobalMaxPool, global_pool<Global::Max>);
  register_kernel(table, OpKind::GlobalLpPool, global_pool<Global::Lp>);
}

}  // namespace volta::reference
