// VJP rules of the resampling family. Both ops are linear in X: Y = W X for weights that do not
// depend on X, so dX = W^T g. Resize's weights factor per axis and depend on the shapes and
// attributes alone: each axis' [out, in] matrix is built here, on the host, and applied with a
// MatMul (a fixed-order sum). GridSample's weights depend on the grid, a runtime value: its taps
// are found by graph ops and its gradient scattered onto them in index order.

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "vjp.h"

namespace volta::autograd {
namespace {

// Resize's per-axis tap rule, as engine/ir/op_table_resampling.cpp defines it.
struct ResizeAxis {
  std::string mode, transform, nearest_mode;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  double scale = 1.0, roi_start = 0.0, roi_end = 1.0;
  int64_t in = 1, out = 1;

  // The input coordinate of output index x; NaN when tf_crop_and_resize puts it outside.
  double coordinate(int64_t x) const {
    const auto xd = static_cast<double>(x);
    const auto last = static_cast<double>(in - 1);
    if (transform == "half_pixel") return (xd + 0.5) / scale - 0.5;
    if (transform == "half_pixel_symmetric") {
      const double adjustment = static_cast<double>(out) / (scale * static_cast<double>(in));
      const double offset = static_cast<double>(in) / 2.0 * (1.0 - adjustment);
      return offset + (xd + 0.5) / scale - 0.5;
    }
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

  // Antialias on an axis scaled down: the half-width of the stretched kernel's window, else 0.
  int64_t stretch() const {
    if (!antialias || mode == "nearest" || scale >= 1.0) return 0;
    return static_cast<int64_t>(std::ceil((mode == "cubic" ? 2.0 : 1.0) / scale));
  }

  // Row x of the [out, in] weight matrix: taps outside the input read its edge (or, with
  // exclude_outside, are dropped and the rest renormalized); an extrapolated output reads
  // nothing, and nor does one exclude_outside leaves no tap (its forward value is NaN whatever
  // X holds).
  void add_row(int64_t x, std::vector<double>& w) const {
    double c = coordinate(x);
    if (std::isnan(c)) return;
    const int64_t half = stretch();
    const auto reach = static_cast<double>(3 + half);
    c = std::clamp(c, -reach, static_cast<double>(in) + reach);
    const double below = std::floor(c), t = c - below;
    const auto base = static_cast<int64_t>(below);
    std::vector<int64_t> index{base};
    std::vector<double> weight{1.0};
    if (half > 0) {
      const int64_t first = static_cast<int64_t>(std::ceil(c)) - half;
      index.clear();
      weight.clear();
      double sum = 0.0;
      for (int64_t j = first; j < first + 2 * half; ++j) {
        const double d = std::abs(scale * (c - static_cast<double>(j)));
        index.push_back(j);
        weight.push_back(mode == "linear" ? std::max(0.0, 1.0 - d)
                         : d < 2.0        ? cubic(cubic_a, d)
                                          : 0.0);
        sum += weight.back();
      }
      for (double& v : weight) v /= sum;
    } else if (mode == "nearest") {
      const bool up = nearest_mode == "round_prefer_floor"  ? t > 0.5
                      : nearest_mode == "round_prefer_ceil" ? t >= 0.5
                                                            : nearest_mode == "ceil";
      if (t != 0.0 && up) index[0] = base + 1;
    } else if (t != 0.0 && mode == "linear") {
      index = {base, base + 1};
      weight = {1.0 - t, t};
    } else if (t != 0.0) {
      index.clear();
      weight.clear();
      for (int64_t k = 0; k < 4; ++k) {
        index.push_back(base - 1 + k);
        weight.push_back(cubic(cubic_a, t + 1.0 - static_cast<double>(k)));
      }
    }
    const bool exclude = exclude_outside && mode != "nearest";
    double kept_sum = 0.0;
    for (size_t k = 0; k < index.size(); ++k) {
      kept_sum += index[k] >= 0 && index[k] < in ? weight[k] : 0.0;
    }
    for (size_t k = 0; k < index.size(); ++k) {
      const bool inside = index[k] >= 0 && index[k] < in;
      if (exclude && !inside) continue;
      const double v = exclude ? weight[k] / kept_sum : weight[k];
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
                    .antialias = at.get_int("antialias") != 0,
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

// One axis of GridSample's taps, built as f64 graph values from the grid's coordinates on that
// axis ([N, P]), with the forward's formulas in the forward's order (it finds taps in double):
// the unnormalized coordinate, the padding transform, then nearest, bilinear or bicubic taps.
class GridAxis {
 public:
  struct Tap {
    ValueId index;   // f64 [N, P]: a whole number, 0 where the tap is invalid
    ValueId weight;  // f64 [N, P]
    ValueId valid;   // bool [N, P]: the tap is inside the axis (and the point not NaN)
  };

  GridAxis(VjpBuilder& b, int64_t size, bool align_corners, std::string padding)
      : b_(b), size_(size), align_corners_(align_corners), padding_(std::move(padding)) {}

  std::vector<Tap> taps(ValueId g, const std::string& mode) {
    const double n = static_cast<double>(size_);
    const ValueId shifted = add(g, 1.0);
    const ValueId c =
        align_corners_ ? mul(div(shifted, 2.0), n - 1.0) : div(sub(mul(shifted, n), 1.0), 2.0);
    // NaN points, and infinite ones under reflection, give NaN outputs: no tap.
    ValueId defined = b_.add(OpKind::Not, {b_.add(OpKind::IsNaN, {c})});
    if (padding_ == "reflection") {
      defined = b_.add(OpKind::And, {defined, b_.add(OpKind::Not, {b_.add(OpKind::IsInf, {c})})});
    }
    std::vector<std::pair<ValueId, ValueId>> raw;  // (position, weight)
    if (mode == "bicubic") {
      // Clamping or shifting by whole periods reads the same elements (as the forward does).
      ValueId x = c;
      if (padding_ == "zeros") x = clip(c, -3.0, n + 1.0);
      if (padding_ == "border") x = clip(c, -3.0, n + 2.0);
      if (padding_ == "reflection" && period() > 0.0) x = fmod(c, period());
      const ValueId below = b_.add(OpKind::Floor, {x});
      const ValueId t = b_.sub(x, below);
      for (int k = 0; k < 4; ++k) {
        const ValueId d = b_.add(OpKind::Abs, {add(t, 1.0 - k)});
        raw.emplace_back(pad(add(below, k - 1.0)), k == 1 || k == 2 ? cubic_near(d) : cubic_far(d));
      }
    } else {
      ValueId x = pad(c);
      if (padding_ == "zeros") x = clip(x, -2.0, n + 1.0);
      if (mode == "nearest") {
        const ValueId one =
            b_.add(OpKind::Expand, {constant(1.0)}, {{"shape", b_.shape(x).dims()}});
        raw.emplace_back(b_.add(OpKind::Round, {x}), one);  // halves to even
      } else {
        const ValueId below = b_.add(OpKind::Floor, {x});
        const ValueId t = b_.sub(x, below);
        raw.emplace_back(below, b_.sub(constant(1.0), t));
        raw.emplace_back(add(below, 1.0), t);
      }
    }
    std::vector<Tap> out;
    for (const auto& [position, weight] : raw) {
      const ValueId inside =
          b_.add(OpKind::And, {b_.add(OpKind::GreaterOrEqual, {position, constant(0.0)}),
                               b_.add(OpKind::Less, {position, constant(n)})});
      const ValueId valid = b_.add(OpKind::And, {defined, inside});
      out.push_back({b_.add(OpKind::Where, {valid, position, constant(0.0)}), weight, valid});
    }
    return out;
  }

 private:
  ValueId constant(double v) {
    Tensor t(DType::F64, Shape{});
    t.set_double(0, v);
    return b_.constant(std::move(t));
  }
  ValueId add(ValueId v, double k) { return b_.sum(v, constant(k)); }
  ValueId sub(ValueId v, double k) { return b_.sub(v, constant(k)); }
  ValueId mul(ValueId v, double k) { return b_.mul(v, constant(k)); }
  ValueId div(ValueId v, double k) { return b_.div(v, constant(k)); }
  ValueId clip(ValueId v, double lo, double hi) {
    return b_.add(OpKind::Clip, {v}, {{"min", lo}, {"max", hi}});
  }
  ValueId fmod(ValueId v, double k) {
    return b_.add(OpKind::Mod, {v, constant(k)}, {{"fmod", int64_t{1}}});
  }
  double period() const { return 2.0 * static_cast<double>(align_corners_ ? size_ - 1 : size_); }
  // The forward's padding transform of a coordinate.
  ValueId pad(ValueId c) {
    const double last = static_cast<double>(size_ - 1);
    if (padding_ == "border") return clip(c, 0.0, last);
    if (padding_ != "reflection") return c;
    if (period() == 0.0) return b_.mul(c, constant(0.0));  // one element: every point is on it
    const double low = align_corners_ ? 0.0 : -0.5;
    const ValueId r = fmod(b_.add(OpKind::Abs, {sub(c, low)}), period());
    const ValueId folded = b_.add(
        OpKind::Where,
        {b_.add(OpKind::Greater, {r, constant(0.5 * period())}), b_.sub(constant(period()), r), r});
    return clip(add(folded, low), 0.0, last);
  }
  // Keys' kernel (a = -0.75) at distance d <= 1 and 1 < d <= 2.
  ValueId cubic_near(ValueId d) {
    constexpr double a = -0.75;
    return add(b_.mul(b_.mul(sub(mul(d, a + 2.0), a + 3.0), d), d), 1.0);
  }
  ValueId cubic_far(ValueId d) {
    constexpr double a = -0.75;
    return sub(b_.mul(add(b_.mul(sub(mul(d, a), 5.0 * a), d), 8.0 * a), d), 4.0 * a);
  }

  VjpBuilder& b_;
  int64_t size_;
  bool align_corners_;
  std::string padding_;
};

// GridSample: Y[n, c, p] = sum over the taps of point p of wy * wx * X[n, c, y, x] (wz * wy * wx
// * X[n, c, z, y, x] in 3-D), so each tap's g[n, c, p] times its weights is added at its
// element: ScatterElements add over zeros [N, C, volume], in index order (points, then the
// taps of the outer axes before the inner ones), no atomics. Taps are found in f64 as the
// forward finds them (GridAxis); invalid ones (outside X under zeros padding, or of a NaN point)
// add 0 at position 0. A NaN point's output is NaN whatever X holds; it sends no gradient.
void grid_sample_vjp(VjpBuilder& b) {
  const Shape x = b.shape(b.input(0));
  const Shape y = b.shape(b.output());
  const int spatial = x.rank() - 2;
  int64_t points = 1, volume = 1;  // output points and input elements per (n, c)
  for (int a = 2; a < x.rank(); ++a) {
    points *= y[a];
    volume *= x[a];
  }
  const AttrReader at = b.attrs();
  const bool align = at.get_int("align_corners") != 0;
  const std::string& mode = at.get_string("mode");
  const ValueId grid =
      b.add(OpKind::Cast,
            {b.add(OpKind::Reshape, {b.input(1)},
                   {{"shape", std::vector<int64_t>{x[0], points, static_cast<int64_t>(spatial)}}})},
            {{"to", std::string("f64")}});
  const auto coordinate = [&](int64_t k) {
    Tensor index(DType::I64, Shape{});
    index.set_int(0, k);
    return b.add(OpKind::Gather, {grid, b.constant(std::move(index))}, {{"axis", int64_t{2}}});
  };
  // Per spatial axis of X, outermost first; its grid value is component spatial - 1 - a.
  std::vector<std::vector<GridAxis::Tap>> axes;
  axes.reserve(static_cast<size_t>(spatial));
  for (int a = 0; a < spatial; ++a) {
    axes.push_back(GridAxis(b, x[2 + a], align, at.get_string("padding_mode"))
                       .taps(coordinate(spatial - 1 - a), mode));
  }
  const std::vector<int64_t> strides = x.strides();
  const std::string float_name(dtype_name(b.dtype()));
  const auto as_float = [&](ValueId v) { return b.add(OpKind::Cast, {v}, {{"to", float_name}}); };
  const auto unsqueeze = [&](ValueId v) {
    return b.add(OpKind::Unsqueeze, {v}, {{"axes", std::vector<int64_t>{2}}});
  };
  std::vector<ValueId> offsets, weights, valid;
  // Every combination of one tap per axis, the last axis fastest.
  std::vector<size_t> pick(static_cast<size_t>(spatial), 0);
  while (true) {
    ValueId flat, w, ok;
    for (int a = 0; a < spatial; ++a) {
      const GridAxis::Tap& t = axes[static_cast<size_t>(a)][pick[static_cast<size_t>(a)]];
      Tensor stride(DType::F64, Shape{});
      stride.set_double(0, static_cast<double>(strides[static_cast<size_t>(a) + 2]));
      const ValueId scaled =
          a + 1 == spatial ? t.index : b.mul(t.index, b.constant(std::move(stride)));
      flat = a == 0 ? scaled : b.sum(flat, scaled);
      w = a == 0 ? as_float(t.weight) : b.mul(w, as_float(t.weight));
      ok = a == 0 ? t.valid : b.add(OpKind::And, {ok, t.valid});
    }
    offsets.push_back(unsqueeze(b.add(OpKind::Cast, {flat}, {{"to", std::string("i64")}})));
    weights.push_back(unsqueeze(w));
    valid.push_back(unsqueeze(ok));
    int a = spatial - 1;
    for (; a >= 0; --a) {
      const auto u = static_cast<size_t>(a);
      if (++pick[u] < axes[u].size()) break;
      pick[u] = 0;
    }
    if (a < 0) break;
  }
  const auto taps = static_cast<int64_t>(offsets.size());
  const auto join = [&](const std::vector<ValueId>& parts) {
    const ValueId joined =
        parts.size() == 1 ? parts[0] : b.add(OpKind::Concat, parts, {{"axis", int64_t{2}}});
    // [N, P, T] -> [N, 1, P * T]: points, then taps, in order.
    return b.add(OpKind::Reshape, {joined},
                 {{"shape", std::vector<int64_t>{x[0], 1, points * taps}}});
  };
  const std::vector<int64_t> spread_shape = {x[0], x[1], points * taps};
  const ValueId index = b.add(OpKind::Expand, {join(offsets)}, {{"shape", spread_shape}});
  const ValueId g =
      b.add(OpKind::Reshape, {b.grad()}, {{"shape", std::vector<int64_t>{x[0], x[1], points, 1}}});
  const std::vector<int64_t> per_point = {x[0], 1, points, taps};
  const ValueId tap_weights = b.add(OpKind::Reshape, {join(weights)}, {{"shape", per_point}});
  const ValueId tap_valid = b.add(OpKind::Reshape, {join(valid)}, {{"shape", per_point}});
  // Masked after the product, so an infinite g times an invalid tap's weight adds nothing.
  const ValueId updates = b.add(OpKind::Reshape, {b.where(tap_valid, b.mul(g, tap_weights))},
                                {{"shape", spread_shape}});
  const ValueId zeros =
      b.add(OpKind::Expand, {b.scalar(0.0)}, {{"shape", std::vector<int64_t>{x[0], x[1], volume}}});
  const ValueId scattered = b.add(OpKind::ScatterElements, {zeros, index, updates},
                                  {{"axis", int64_t{2}}, {"reduction", std::string("add")}});
  b.set(0, b.add(OpKind::Reshape, {scattered}, {{"shape", x.dims()}}));
}

}  // namespace

void register_resampling_vjps(VjpTable& t) {
  t[static_cast<size_t>(op_index(OpKind::Resize))] = {&resize_vjp, 0b1};
  t[static_cast<size_t>(op_index(OpKind::GridSample))] = {&grid_sample_vjp, 0b1};
}

}  // namespace volta::autograd
