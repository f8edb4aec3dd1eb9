// VJP rules of the resampling family. Both ops are linear in X: Y = W X for weights that do not
// depend on X, so dX = W^T g. Resize's weights factor per axis and depend on the shapes and
// attributes alone: each axis' [out, in] matrix is built here, on the host, and applied with a
// MatMul (a fixed-order sum). GridSample's weights depend on the grid, a runtime value: they are
// sampled from X's basis images by GridSample itself, so they are the forward's by construction.

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "vjp.h"

namespace volta::autograd {
namespace {

// Resize's per-axis tap rule, as engine/ir/op_table_resampling.cpp defines it.
struct ResizeAxis {
  std::string mode, transform, nearest_mode;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double scale = 1.0, roi_start = 0.0, roi_end = 1.0;
  int64_t in = 1, out = 1;

  // The input coordinate of output index x; NaN when tf_crop_and_resize puts it outside.
  double coordinate(int64_t x) const {
    const auto xd = static_cast<double>(x);
    const auto last = static_cast<double>(in - 1);
    if (transform == "half_pixel") return (xd + 0.5) / scale - 0.5;
    if (transform == "pytorch_half_pixel") return out > 1 ? (xd + 0.5) / scale - 0.5 : 0.0;
    if (transform == "align_corners") {
      return out == 1 ? 0.0 : xd * last / (scale * static_cast<double>(in) - 1.0);
    }
    if (transform == "asymmetric") return xd / scale;
    if (transform == "tf_half_pixel_for_nearest") return (xd + 0.5) / scale;
    const double c = out > 1 ? roi_start * last +
                                   xd * (roi_end - roi_start) * last / static_cast<double>(out - 1)
                             : 0.5 * (roi_start + roi_end) * last;
    return c < 0.0 || c > last ? std::nan("") : c;
  }

  static double cubic(double a, double d) {
    d = std::abs(d);
    if (d <= 1.0) return ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0;
    return ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a;
  }

  // Row x of the [out, in] weight matrix: taps outside the input read its edge (or, with
  // exclude_outside, are dropped and the rest renormalized); an extrapolated output reads
  // nothing, and nor does one exclude_outside leaves no tap (its forward value is NaN whatever
  // X holds).
  void add_row(int64_t x, std::vector<double>& w) const {
    double c = coordinate(x);
    if (std::isnan(c)) return;
    c = std::clamp(c, -3.0, static_cast<double>(in) + 3.0);
    const double below = std::floor(c), t = c - below;
    const auto base = static_cast<int64_t>(below);
    std::array<int64_t, 4> index{};
    std::array<double, 4> weight{};
    size_t n = 1;
    index[0] = base;
    weight[0] = 1.0;
    if (mode == "nearest") {
      const bool up = nearest_mode == "round_prefer_floor"  ? t > 0.5
                      : nearest_mode == "round_prefer_ceil" ? t >= 0.5
                                                            : nearest_mode == "ceil";
      if (t != 0.0 && up) index[0] = base + 1;
    } else if (t != 0.0 && mode == "linear") {
      index = {base, base + 1};
      weight = {1.0 - t, t};
      n = 2;
    } else if (t != 0.0) {
      for (size_t k = 0; k < 4; ++k) {
        index[k] = base - 1 + static_cast<int64_t>(k);
        weight[k] = cubic(cubic_a, t + 1.0 - static_cast<double>(k));
      }
      n = 4;
    }
    double kept_sum = 0.0;
    for (size_t k = 0; k < n; ++k) kept_sum += index[k] >= 0 && index[k] < in ? weight[k] : 0.0;
    for (size_t k = 0; k < n; ++k) {
      const bool inside = index[k] >= 0 && index[k] < in;
      if (exclude_outside && mode != "nearest" && !inside) continue;
      const double v = exclude_outside && mode != "nearest" ? weight[k] / kept_sum : weight[k];
      w[static_cast<size_t>(x * in + std::clamp<int64_t>(index[k], 0, in - 1))] += v;
    }
  }
};

// Resize: dX = g with each axis' weight matrix W [out, in] applied transposed, g[..., out] @ W
// along that axis (moved last for the MatMul and back). Axes whose matrix is the identity (the
// unchanged batch and channel axes, typically) are skipped.
void resize_vjp(VjpBuilder& b) {
  const AttrReader at = b.attrs();
  const Shape in = b.shape(b.input(0));
  const Shape out = b.shape(b.output());
  const std::vector<double>& scales = at.get_floats("scales");
  const std::vector<double>& roi = at.get_floats("roi");
  const int rank = in.rank();
  ValueId g = b.grad();
  for (int a = 0; a < rank; ++a) {
    const auto u = static_cast<size_t>(a);
    ResizeAxis axis{.mode = at.get_string("mode"),
                    .transform = at.get_string("coordinate_transformation_mode"),
                    .nearest_mode = at.get_string("nearest_mode"),
                    .cubic_a = at.get_float("cubic_coeff_a"),
                    .exclude_outside = at.get_int("exclude_outside") != 0,
                    .in = in[a],
                    .out = out[a]};
    axis.scale =
        scales.empty() ? static_cast<double>(out[a]) / static_cast<double>(in[a]) : scales[u];
    if (!roi.empty()) {
      axis.roi_start = roi[u];
      axis.roi_end = roi[u + static_cast<size_t>(rank)];
    }
    std::vector<double> w(static_cast<size_t>(out[a] * in[a]), 0.0);
    for (int64_t x = 0; x < out[a]; ++x) axis.add_row(x, w);
    bool identity = in[a] == out[a];
    for (int64_t i = 0; i < out[a] * in[a] && identity; ++i) {
      identity = w[static_cast<size_t>(i)] == (i / in[a] == i % in[a] ? 1.0 : 0.0);
    }
    if (identity) continue;
    Tensor matrix(b.dtype(), Shape{out[a], in[a]});
    for (int64_t i = 0; i < matrix.numel(); ++i) matrix.set_double(i, w[static_cast<size_t>(i)]);
    std::vector<int64_t> to_last, back(static_cast<size_t>(rank));
    for (int d = 0; d < rank; ++d) {
      if (d != a) to_last.push_back(d);
    }
    to_last.push_back(a);
    for (size_t d = 0; d < to_last.size(); ++d) {
      back[static_cast<size_t>(to_last[d])] = static_cast<int64_t>(d);
    }
    const bool last = a == rank - 1;
    const ValueId moved = last ? g : b.add(OpKind::Transpose, {g}, {{"perm", to_last}});
    const ValueId product = b.add(OpKind::MatMul, {moved, b.constant(std::move(matrix))});
    g = last ? product : b.add(OpKind::Transpose, {product}, {{"perm", back}});
  }
  b.set(0, g == b.grad() ? b.add(OpKind::Identity, {g}) : g);
}

// The most weights GridSample's rule materializes: N * H * W * Ho * Wo.
inline constexpr int64_t kMaxGridSampleWeights = int64_t{1} << 24;

// GridSample: Y[n, c, p] = sum over k of W[n, k, p] X[n, c, k] (k = h * W + w), W given by the
// grid, the mode and the padding mode. W[n, k, p] is GridSample of the basis image that is 1 at
// k and 0 elsewhere, so all H * W basis images sampled at once (one per channel) give W exactly
// as the forward weighs its taps; dX[n, c, k] = sum over p of g[n, c, p] W[n, k, p], a batched
// MatMul. That holds N * H * W * Ho * Wo weights (and as many basis elements): above
// kMaxGridSampleWeights the rule refuses by name rather than allocate them (a scatter of each
// point's taps is the rule large images need). A NaN grid point makes its weights, and so the
// gradients of its image, NaN.
void grid_sample_vjp(VjpBuilder& b) {
  const Shape x = b.shape(b.input(0));
  const Shape y = b.shape(b.output());
  const int64_t pixels = x[2] * x[3], points = y[2] * y[3];
  const double weights_needed =
      static_cast<double>(x[0]) * static_cast<double>(pixels) * static_cast<double>(points);
  if (weights_needed > static_cast<double>(kMaxGridSampleWeights)) {
    fail(ErrorCode::InvalidArgument,
         "no VJP rule yet for GridSample node '" + b.node().name + "' from X " + x.str() +
             " to Y " + y.str() + " (supported: N * H * W * Ho * Wo up to " +
             std::to_string(kMaxGridSampleWeights) + ", the dense weights the rule forms)");
  }
  Tensor basis(b.dtype(), Shape{1, pixels, x[2], x[3]});
  for (int64_t k = 0; k < pixels; ++k) basis.set_double(k * pixels + k, 1.0);
  const ValueId images = b.add(OpKind::Expand, {b.constant(std::move(basis))},
                               {{"shape", std::vector<int64_t>{x[0], pixels, x[2], x[3]}}});
  const ValueId sampled = b.add(OpKind::GridSample, {images, b.input(1)}, b.node().attrs);
  const ValueId weights =
      b.add(OpKind::Reshape, {sampled}, {{"shape", std::vector<int64_t>{x[0], pixels, points}}});
  const ValueId transposed =
      b.add(OpKind::Transpose, {weights}, {{"perm", std::vector<int64_t>{0, 2, 1}}});
  const ValueId g =
      b.add(OpKind::Reshape, {b.grad()}, {{"shape", std::vector<int64_t>{x[0], x[1], points}}});
  const ValueId spread = b.add(OpKind::MatMul, {g, transposed});
  b.set(0, b.add(OpKind::Reshape, {spread}, {{"shape", x.dims()}}));
}

}  // namespace

void register_resampling_vjps(VjpTable& t) {
  t[static_cast<size_t>(op_index(OpKind::Resize))] = {&resize_vjp, 0b1};
  t[static_cast<size_t>(op_index(OpKind::GridSample))] = {&grid_sample_vjp, 0b1};
}

}  // namespace volta::autograd
