// Reference Resize and GridSample.
//
// Resize (semantics: engine/ir/op_table_resampling.cpp) works one output element at a time: each
// axis maps the element's index to an input coordinate and a short list of (input index,
// weight) taps; the element is the sum, in double, of every combination of taps weighted by
// the product of their weights. Nearest copies the one element it picks.
// GridSample (semantics: engine/ir/op_table_resampling.cpp) finds, for each output element, the
// taps of its grid point on each spatial axis (input index, weight) and sums X over every
// combination of them, in double, weighted by the product of their weights.

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "ref_util.h"

namespace volta::reference {
namespace {

struct Tap {
  int64_t index;
  double weight;
};

// The sum, over every combination of one tap per axis (the last axis fastest), of the product
// of their weights times value(their indices). Every axis has at least one tap.
template <class Value>
double sum_over_taps(const std::vector<const std::vector<Tap>*>& axes, const Value& value) {
  std::vector<size_t> pick(axes.size(), 0);
  std::vector<int64_t> at(axes.size());
  double sum = 0.0;
  while (true) {
    double weight = 1.0;
    for (size_t a = 0; a < axes.size(); ++a) {
      const Tap& t = (*axes[a])[pick[a]];
      weight *= t.weight;
      at[a] = t.index;
    }
    sum += weight * value(at);
    size_t a = axes.size();
    while (a > 0 && ++pick[a - 1] == axes[a - 1]->size()) pick[--a] = 0;
    if (a == 0) return sum;
  }
}

// What one axis contributes to one output element.
struct AxisSample {
  bool outside = false;   // tf_crop_and_resize: outside the input, the output is extrapolated
  std::vector<Tap> taps;  // empty (and not outside): exclude_outside left none, NaN
};

struct ResizeAttrs {
  std::string mode, transform, nearest_mode;
  double cubic_a, extrapolation;
  bool exclude_outside, antialias;
  std::vector<double> scales, roi;
};

ResizeAttrs read_attrs(const Node& node, const Shape& in, const Shape& out) {
  const AttrReader attrs(node);
  ResizeAttrs r{attrs.get_string("mode"),
                attrs.get_string("coordinate_transformation_mode"),
                attrs.get_string("nearest_mode"),
                attrs.get_float("cubic_coeff_a"),
                attrs.get_float("extrapolation_value"),
                attrs.get_int("exclude_outside") != 0,
                attrs.get_int("antialias") != 0,
                attrs.get_floats("scales"),
                attrs.get_floats("roi")};
  // No scales: each axis is scaled by output length / input length.
  if (r.scales.empty()) {
    for (int d = 0; d < in.rank(); ++d) {
      r.scales.push_back(static_cast<double>(out[d]) / static_cast<double>(in[d]));
    }
  }
  return r;
}

// Keys' cubic kernel: (a+2)|d|^3 - (a+3)|d|^2 + 1 within 1, a|d|^3 - 5a|d|^2 + 8a|d| - 4a
// within 2.
double keys(double a, double d) {
  const double s = std::fabs(d);
  if (s <= 1.0) return (a + 2.0) * s * s * s - (a + 3.0) * s * s + 1.0;
  return a * s * s * s - 5.0 * a * s * s + 8.0 * a * s - 4.0 * a;
}

AxisSample sample_axis(const ResizeAttrs& r, int axis, int rank, int64_t x, int64_t in,
                       int64_t out) {
  const double scale = r.scales[static_cast<size_t>(axis)];
  const double xr = static_cast<double>(x);
  const double in_last = static_cast<double>(in) - 1.0;
  double c = 0.0;
  if (r.transform == "half_pixel") {
    c = (xr + 0.5) / scale - 0.5;
  } else if (r.transform == "half_pixel_symmetric") {
    // ONNX's: offset = in / 2 * (1 - out / (scale * in)), then as half_pixel.
    const double adjustment = static_cast<double>(out) / (scale * static_cast<double>(in));
    const double offset = static_cast<double>(in) / 2.0 * (1.0 - adjustment);
    c = offset + (xr + 0.5) / scale - 0.5;
  } else if (r.transform == "pytorch_half_pixel") {
    c = out == 1 ? 0.0 : (xr + 0.5) / scale - 0.5;
  } else if (r.transform == "align_corners") {
    c = out == 1 ? 0.0 : xr * in_last / (scale * static_cast<double>(in) - 1.0);
  } else if (r.transform == "asymmetric") {
    c = xr / scale;
  } else if (r.transform == "tf_half_pixel_for_nearest") {
    c = (xr + 0.5) / scale;
  } else if (r.transform == "tf_crop_and_resize") {
    const double start = r.roi[static_cast<size_t>(axis)];
    const double end = r.roi[static_cast<size_t>(rank) + static_cast<size_t>(axis)];
    if (out == 1) {
      c = (start + end) / 2.0 * in_last;
    } else {
      c = start * in_last + xr * (end - start) * in_last / static_cast<double>(out - 1);
    }
    if (c < 0.0 || c > in_last) return {true, {}};
  } else {
    kernel_fail("Resize: unknown coordinate_transformation_mode " + r.transform);
  }
  // Antialias on an axis scaled down: the kernel (support 1 or 2) stretched by 1 / scale, over
  // the 2m taps around c, m = ceil(support / scale).
  const bool stretched = r.antialias && r.mode != "nearest" && scale < 1.0;
  const double support = r.mode == "cubic" ? 2.0 : 1.0;
  const double m = stretched ? std::ceil(support / scale) : 0.0;
  // Beyond 3 (+ m) elements outside, the taps are the edge's (or all excluded) anyway.
  c = std::min(std::max(c, -3.0 - m), static_cast<double>(in) + 3.0 + m);
  const double lo = std::floor(c);
  const double frac = c - lo;
  const auto i = static_cast<int64_t>(lo);

  AxisSample s;
  if (stretched) {
    double total = 0.0;
    for (double j = std::ceil(c) - m; j < std::ceil(c) + m; j += 1.0) {
      const double d = std::fabs(c - j) * scale;
      const double w = d >= support ? 0.0 : r.mode == "linear" ? 1.0 - d : keys(r.cubic_a, d);
      s.taps.push_back({static_cast<int64_t>(j), w});
      total += w;
    }
    for (Tap& t : s.taps) t.weight /= total;
  } else if (frac == 0.0) {
    s.taps = {{i, 1.0}};
  } else if (r.mode == "nearest") {
    bool take_upper = false;
    if (r.nearest_mode == "round_prefer_floor") take_upper = frac > 0.5;
    if (r.nearest_mode == "round_prefer_ceil") take_upper = frac >= 0.5;
    if (r.nearest_mode == "ceil") take_upper = true;
    s.taps = {{take_upper ? i + 1 : i, 1.0}};
  } else if (r.mode == "linear") {
    s.taps = {{i, 1.0 - frac}, {i + 1, frac}};
  } else {
    s.taps = {{i - 1, keys(r.cubic_a, frac + 1.0)},
              {i, keys(r.cubic_a, frac)},
              {i + 1, keys(r.cubic_a, 1.0 - frac)},
              {i + 2, keys(r.cubic_a, 2.0 - frac)}};
  }
  if (r.exclude_outside && r.mode != "nearest") {
    std::vector<Tap> inside;
    double total = 0.0;
    for (const Tap& t : s.taps) {
      if (t.index >= 0 && t.index < in) {
        inside.push_back(t);
        total += t.weight;
      }
    }
    for (Tap& t : inside) t.weight /= total;
    s.taps = inside;
  }
  // Taps outside the input read its edge.
  for (Tap& t : s.taps) t.index = std::min(std::max<int64_t>(t.index, 0), in - 1);
  return s;
}

std::vector<Tensor> resize(const Node& node, RefInputs in, RefOutputTypes out) {
  const Tensor& x = *in[0];
  const Shape& in_shape = x.shape();
  const Shape& out_shape = out[0].shape;
  const int rank = in_shape.rank();
  const ResizeAttrs r = read_attrs(node, in_shape, out_shape);
  Tensor y(out[0].dtype, out_shape);
  for_each_index(out_shape, [&](const std::vector<int64_t>& index, int64_t flat) {
    std::vector<AxisSample> samples;
    bool outside = false, no_taps = false;
    for (int d = 0; d < rank; ++d) {
      samples.push_back(
          sample_axis(r, d, rank, index[static_cast<size_t>(d)], in_shape[d], out_shape[d]));
      outside = outside || samples.back().outside;
      no_taps = no_taps || (!samples.back().outside && samples.back().taps.empty());
    }
    if (outside) return y.set_double(flat, r.extrapolation);
    if (no_taps) return y.set_double(flat, std::numeric_limits<double>::quiet_NaN());
    if (r.mode == "nearest") {
      std::vector<int64_t> source(static_cast<size_t>(rank));
      for (int d = 0; d < rank; ++d) {
        source[static_cast<size_t>(d)] = samples[static_cast<size_t>(d)].taps[0].index;
      }
      return copy_element(x, flat_offset(source, in_shape), y, flat);
    }
    std::vector<const std::vector<Tap>*> taps;
    taps.reserve(samples.size());
    for (const AxisSample& sample : samples) taps.push_back(&sample.taps);
    const double sum = sum_over_taps(taps, [&](const std::vector<int64_t>& at) {
      return x.get_double(flat_offset(at, in_shape));
    });
    y.set_double(flat, sum);
  });
  return {y};
}

// ---- GridSample ------------------------------------------------------------------------------

struct GridAxis {
  bool nan = false;       // the output is NaN
  std::vector<Tap> taps;  // inside the input only
};

// The axis' ends a reflection mirrors at: the corner elements' centres with align_corners,
// else the outer edges of the corner elements.
std::pair<double, double> reflection_ends(int64_t size, bool align_corners) {
  const auto n = static_cast<double>(size);
  return align_corners ? std::pair{0.0, n - 1.0} : std::pair{-0.5, n - 0.5};
}

// Mirrors c at the ends until it lies between them. A position and the one shifted by a
// whole back-and-forth (twice the span) reflect to the same point.
double reflect_between_ends(double c, int64_t size, bool align_corners) {
  const auto [low, high] = reflection_ends(size, align_corners);
  const double span = high - low;
  if (span == 0.0) return low;
  const double r = std::fmod(std::fabs(c - low), 2.0 * span);
  return r <= span ? low + r : high - (r - span);
}

double padded(const std::string& padding, bool align_corners, double c, int64_t size) {
  const double last = static_cast<double>(size) - 1.0;
  if (padding == "border") return std::min(std::max(c, 0.0), last);
  if (padding == "reflection") {
    return std::min(std::max(reflect_between_ends(c, size, align_corners), 0.0), last);
  }
  return c;  // zeros: positions outside read nothing
}

GridAxis grid_axis(const std::string& mode, const std::string& padding, bool align_corners,
                   double g, int64_t size) {
  const auto n = static_cast<double>(size);
  double c = align_corners ? (g + 1.0) / 2.0 * (n - 1.0) : ((g + 1.0) * n - 1.0) / 2.0;
  GridAxis axis;
  if (std::isnan(c) || (padding == "reflection" && std::isinf(c))) {
    axis.nan = true;
    return axis;
  }
  const auto add = [&](double position, double weight) {
    if (position >= 0.0 && position <= n - 1.0) {
      axis.taps.push_back({static_cast<int64_t>(position), weight});
    }
  };
  if (mode == "bicubic") {
    // Far outside, border reads the edge element only: a nearer point (finite, where c may
    // be infinite) reads the same. Reflection repeats every 2 * span: the point shifted by
    // whole periods (fmod is exact) reads the same elements.
    if (padding == "border") c = std::min(std::max(c, -3.0), n + 2.0);
    if (padding == "reflection") {
      const auto [low, high] = reflection_ends(size, align_corners);
      if (high > low) c = std::fmod(c, 2.0 * (high - low));
    }
    const double lo = std::floor(c);
    const double t = c - lo;
    // Four positions around c, each padded on its own.
    add(padded(padding, align_corners, lo - 1.0, size), keys(-0.75, t + 1.0));
    add(padded(padding, align_corners, lo, size), keys(-0.75, t));
    add(padded(padding, align_corners, lo + 1.0, size), keys(-0.75, 1.0 - t));
    add(padded(padding, align_corners, lo + 2.0, size), keys(-0.75, 2.0 - t));
    return axis;
  }
  c = padded(padding, align_corners, c, size);
  if (mode == "nearest") {
    // Round half to even, spelled out.
    double r = std::floor(c);
    const double frac = c - r;
    if (frac > 0.5 || (frac == 0.5 && std::fmod(r, 2.0) != 0.0)) r += 1.0;
    add(r, 1.0);
    return axis;
  }
  const double lo = std::floor(c);
  add(lo, 1.0 - (c - lo));
  add(lo + 1.0, c - lo);
  return axis;
}

std::vector<Tensor> grid_sample(const Node& node, RefInputs in, RefOutputTypes out) {
  const Tensor& x = *in[0];
  const Tensor& grid = *in[1];
  const AttrReader attrs(node);
  const std::string& mode = attrs.get_string("mode");
  const std::string& padding = attrs.get_string("padding_mode");
  const bool align_corners = attrs.get_int("align_corners") != 0;
  const int spatial = x.shape().rank() - 2;  // H, W or D, H, W
  Tensor y(out[0].dtype, out[0].shape);
  for_each_index(out[0].shape, [&](const std::vector<int64_t>& index, int64_t flat) {
    // The point's grid values: x (the last axis) first.
    std::vector<int64_t> grid_at = {index[0]};
    grid_at.insert(grid_at.end(), index.begin() + 2, index.end());
    grid_at.push_back(0);
    const int64_t g = flat_offset(grid_at, grid.shape());
    std::vector<GridAxis> axes;
    for (int a = 0; a < spatial; ++a) {
      axes.push_back(grid_axis(mode, padding, align_corners, grid.get_double(g + spatial - 1 - a),
                               x.shape()[2 + a]));
      if (axes.back().nan) return y.set_double(flat, std::numeric_limits<double>::quiet_NaN());
    }
    for (const GridAxis& axis : axes) {
      if (axis.taps.empty()) return y.set_double(flat, 0.0);  // outside, zeros padding
    }
    std::vector<int64_t> source = {index[0], index[1]};
    source.resize(static_cast<size_t>(spatial) + 2);
    const auto offset = [&](const std::vector<int64_t>& at) {
      std::copy(at.begin(), at.end(), source.begin() + 2);
      return flat_offset(source, x.shape());
    };
    std::vector<const std::vector<Tap>*> taps;
    std::vector<int64_t> first;
    taps.reserve(axes.size());
    first.reserve(axes.size());
    for (const GridAxis& axis : axes) {
      taps.push_back(&axis.taps);
      first.push_back(axis.taps[0].index);
    }
    if (mode == "nearest") return copy_element(x, offset(first), y, flat);
    const double sum = sum_over_taps(
        taps, [&](const std::vector<int64_t>& at) { return x.get_double(offset(at)); });
    y.set_double(flat, sum);
  });
  return {y};
}

}  // namespace

void register_resampling(RefTable& table) {
  register_kernel(table, OpKind::Resize, resize);
  register_kernel(table, OpKind::GridSample, grid_sample);
}

}  // namespace volta::reference
