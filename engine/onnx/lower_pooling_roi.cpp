// ONNX RoiAlign (10; 16: coordinate_transformation_mode; 22: bf16) as a composition of exact
// internal ops, in the order of ONNX's reference implementation (and ONNX Runtime's). For RoI
// r, output bin (ph, pw) and sample (iy, ix) of the bin's grid,
//   y = (start_h + ph * bin_h) + ((iy + 0.5) * bin_h) / grid_h      (x likewise)
// is interpolated from the four pixels around it. The four products weight * pixel are kept
// apart: mode "avg" adds them and averages over the grid, mode "max" takes the largest of all
// of them, as ONNX defines it. A sample outside [-1, H] x [-1, W] reads pixel (0, 0) of its
// image with weight 0, as ONNX's reference does.
//
// All samples are one tensor [R, PH, Gh, PW, Gw, C], so the grid must be known at import:
// sampling_ratio > 0 gives it; sampling_ratio 0 (each RoI's grid is ceil(its size / the output
// size)) reads the RoIs at import (constants, or graph inputs the plan is specialized on) and
// masks each RoI's samples beyond its own grid. f16 and bf16 are computed in f32 and rounded
// once. The gathered samples are refused past 2^28 elements.

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "lowering.h"

namespace volta::onnx {
namespace {

constexpr int64_t kMaxSamples = int64_t{1} << 28;

// One RoiAlign node's inputs and attributes, in the arithmetic dtype (f32 or f64).
struct RoiAlign {
  LoweringContext& ctx;
  DType dt;
  ValueId rois;  // [R, 4]: x1, y1, x2, y2
  int64_t count;
  double scale;
  bool half_pixel;

  ValueId scalar(double v) const { return scalar_constant(ctx, dt, v); }
  ValueId add(OpKind op, std::vector<ValueId> in, Attributes attrs = {}) const {
    return ctx.add(op, std::move(in), std::move(attrs));
  }
  ValueId reshape(ValueId v, Ints shape) const {
    return add(OpKind::Reshape, {v}, {{"shape", std::move(shape)}});
  }
  // `values` as a constant of `shape` in `dtype`.
  ValueId constant(DType dtype, Ints shape, const std::vector<double>& values) const {
    Tensor t(dtype, Shape(std::move(shape)));
    for (size_t i = 0; i < values.size(); ++i) t.set_double(static_cast<int64_t>(i), values[i]);
    return ctx.constant(std::move(t));
  }
};

// The grid of samples of every RoI along one axis: one size for all (sampling_ratio > 0), or
// each RoI's own (adaptive), padded to the largest.
struct Grid {
  int64_t size = 1;              // Gh or Gw
  std::vector<int64_t> per_roi;  // adaptive only: each RoI's grid (<= 0: no samples)
  bool adaptive() const { return !per_roi.empty(); }
  // per_roi as a constant [R, 1, 1] in the arithmetic dtype.
  ValueId per_roi_constant(const RoiAlign& r) const {
    return r.constant(r.dt, {r.count, 1, 1}, std::vector<double>(per_roi.begin(), per_roi.end()));
  }
};

// Each RoI's adaptive grid along the axis whose start coordinate is column `first`: the
// ceiling of its size over `pooled`, computed at import in the arithmetic type A from the
// coordinates scaled and shifted as the graph scales and shifts them.
template <class A>
std::vector<int64_t> adaptive_grid(const RoiAlign& r, const Tensor& rois, int64_t first,
                                   int64_t pooled) {
  std::vector<int64_t> grid(static_cast<size_t>(r.count));
  const A offset = r.half_pixel ? A(0.5) : A(0);
  for (int64_t i = 0; i < r.count; ++i) {
    auto coordinate = [&](int64_t column) {
      const A scaled = static_cast<A>(rois.get_double(i * 4 + column)) * static_cast<A>(r.scale);
      return scaled - offset;
    };
    const A start = coordinate(first);
    const A end = coordinate(first + 2);
    A size = end - start;
    if (!r.half_pixel) size = std::max(size, A(1));
    const A cells = std::ceil(size / static_cast<A>(pooled));
    if (!std::isfinite(cells)) {
      r.ctx.invalid("RoI " + std::to_string(i) + " has a non-finite coordinate; sampling_ratio 0 " +
                    "sizes each RoI's sampling grid from its coordinates");
    }
    grid[static_cast<size_t>(i)] = static_cast<int64_t>(cells);
  }
  return grid;
}

Grid grid_of(const RoiAlign& r, int64_t sampling_ratio, int64_t first, int64_t pooled) {
  if (sampling_ratio > 0) return {sampling_ratio, {}};
  const Tensor& rois =
      r.ctx.constant_input(1, "rois (sampling_ratio 0 sizes each RoI's sampling grid from them)");
  Grid g;
  g.per_roi = r.dt == DType::F64 ? adaptive_grid<double>(r, rois, first, pooled)
                                 : adaptive_grid<float>(r, rois, first, pooled);
  g.size = std::max<int64_t>(1, *std::max_element(g.per_roi.begin(), g.per_roi.end()));
  return g;
}

// The samples along one axis, each [R, P, G]: the pixels below and above each sample, their
// weights, and whether the sample lies inside [-1, extent].
struct AxisSamples {
  ValueId low, high;                // f64/f32 pixel positions (0 outside)
  ValueId low_weight, high_weight;  // 1 - l and l
  ValueId inside;                   // bool
};

AxisSamples sample_axis(const RoiAlign& r, int64_t first, int64_t pooled, int64_t extent,
                        const Grid& grid) {
  // rois[:, column] as [R, 1, 1] in pixel coordinates.
  auto corner = [&](int64_t column) {
    ValueId c = r.add(OpKind::Gather, {r.rois, scalar_constant(r.ctx, DType::I64, column)},
                      {{"axis", int64_t{1}}});
    c = r.add(OpKind::Mul, {r.reshape(c, {r.count, 1, 1}), r.scalar(r.scale)});
    return r.half_pixel ? r.add(OpKind::Sub, {c, r.scalar(0.5)}) : c;
  };
  const ValueId start = corner(first);
  ValueId size = r.add(OpKind::Sub, {corner(first + 2), start});
  if (!r.half_pixel) size = r.add(OpKind::Max, {size, r.scalar(1.0)});  // malformed RoIs: 1x1
  const ValueId bin = r.add(OpKind::Div, {size, r.scalar(static_cast<double>(pooled))});

  std::vector<double> bins(static_cast<size_t>(pooled));
  std::iota(bins.begin(), bins.end(), 0.0);
  std::vector<double> halves(static_cast<size_t>(grid.size));
  std::iota(halves.begin(), halves.end(), 0.5);
  ValueId cells = r.scalar(static_cast<double>(grid.size));
  if (grid.adaptive()) {
    cells = grid.per_roi_constant(r);
  }
  const ValueId bin_start = r.add(
      OpKind::Add, {start, r.add(OpKind::Mul, {r.constant(r.dt, {1, pooled, 1}, bins), bin})});
  const ValueId within = r.add(
      OpKind::Div, {r.add(OpKind::Mul, {r.constant(r.dt, {1, 1, grid.size}, halves), bin}), cells});
  const ValueId at = r.add(OpKind::Add, {bin_start, within});

  const ValueId last = r.scalar(static_cast<double>(extent - 1));
  const ValueId inside =
      r.add(OpKind::And, {r.add(OpKind::GreaterOrEqual, {at, r.scalar(-1.0)}),
                          r.add(OpKind::LessOrEqual, {at, r.scalar(static_cast<double>(extent))})});
  const ValueId clamped = r.add(OpKind::Max, {at, r.scalar(0.0)});
  const ValueId floor = r.add(OpKind::Floor, {clamped});
  const ValueId edge = r.add(OpKind::GreaterOrEqual, {floor, last});
  const ValueId low = r.add(OpKind::Where, {edge, last, floor});
  const ValueId high = r.add(OpKind::Where, {edge, last, r.add(OpKind::Add, {low, r.scalar(1.0)})});
  const ValueId l =
      r.add(OpKind::Sub, {r.add(OpKind::Where, {edge, low, clamped}), low});  // 0 at the edge
  // Positions of samples outside are never read (their index becomes 0): zeroed here so that
  // the cast to i64 sees no NaN or huge value.
  const ValueId zero = r.scalar(0.0);
  return {r.add(OpKind::Where, {inside, low, zero}), r.add(OpKind::Where, {inside, high, zero}),
          r.add(OpKind::Sub, {r.scalar(1.0), l}), l, inside};
}

// Whether each sample lies in its RoI's own grid, [R, 1, G] (adaptive grids only).
ValueId in_grid(const RoiAlign& r, const Grid& grid) {
  std::vector<double> index(static_cast<size_t>(grid.size));
  std::iota(index.begin(), index.end(), 0.0);
  return r.add(OpKind::Less,
               {r.constant(r.dt, {1, 1, grid.size}, index), grid.per_roi_constant(r)});
}

void lower_roi_align(LoweringContext& ctx) {
  const TypeInfo x = ctx.input_type(0);
  const TypeInfo rois = ctx.input_type(1);
  const TypeInfo batch = ctx.input_type(2);
  if (!(kFloatTypes | kHalfTypes).contains(x.dtype)) {
    ctx.unsupported("X of dtype " + std::string(dtype_name(x.dtype)) +
                    "; supported: " + (kFloatTypes | kHalfTypes).str());
  }
  if (x.shape.rank() != 4) {
    ctx.unsupported("X of shape " + x.shape.str() + "; supported: [N, C, H, W]");
  }
  if (rois.dtype != x.dtype) {
    ctx.invalid("rois of dtype " + std::string(dtype_name(rois.dtype)) + " must have X's dtype " +
                std::string(dtype_name(x.dtype)));
  }
  if (rois.shape.rank() != 2 || rois.shape[1] != 4) {
    ctx.invalid("rois of shape " + rois.shape.str() + " must be [num_rois, 4]");
  }
  if (!kIndexTypes.contains(batch.dtype) || batch.shape.rank() != 1 ||
      batch.shape[0] != rois.shape[0]) {
    ctx.invalid("batch_indices " + type_text(batch) + " must be i64[" +
                std::to_string(rois.shape[0]) + "], one per RoI");
  }
  const std::string mode = ctx.attr_string("mode", "avg");
  if (mode != "avg" && mode != "max") {
    ctx.unsupported("mode '" + mode + "'; supported: avg, max");
  }
  const std::string transform =
      ctx.since_version() >= 16 ? ctx.attr_string("coordinate_transformation_mode", "half_pixel")
                                : "output_half_pixel";
  if (transform != "half_pixel" && transform != "output_half_pixel") {
    ctx.unsupported("coordinate_transformation_mode '" + transform +
                    "'; supported: half_pixel, output_half_pixel");
  }
  const int64_t pooled_h = ctx.attr_int("output_height", 1);
  const int64_t pooled_w = ctx.attr_int("output_width", 1);
  const int64_t sampling_ratio = ctx.attr_int("sampling_ratio", 0);
  if (pooled_h < 1 || pooled_w < 1 || sampling_ratio < 0) {
    ctx.invalid("output_height " + std::to_string(pooled_h) + ", output_width " +
                std::to_string(pooled_w) + " and sampling_ratio " + std::to_string(sampling_ratio) +
                " must be >= 1, >= 1 and >= 0");
  }
  const DType dt = x.dtype == DType::F64 ? DType::F64 : DType::F32;
  const RoiAlign r{ctx,
                   dt,
                   as_dtype(ctx, ctx.input(1), dt),
                   rois.shape[0],
                   static_cast<double>(static_cast<float>(ctx.attr_float("spatial_scale", 1.0))),
                   transform == "half_pixel"};
  const int64_t n = x.shape[0], channels = x.shape[1], height = x.shape[2], width = x.shape[3];
  const Grid grid_h = grid_of(r, sampling_ratio, 1, pooled_h);
  const Grid grid_w = grid_of(r, sampling_ratio, 0, pooled_w);
  const int64_t samples = r.count * pooled_h * grid_h.size * pooled_w * grid_w.size;
  if (channels != 0 && samples > kMaxSamples / channels) {
    ctx.unsupported(std::to_string(samples) + " samples of " + std::to_string(channels) +
                    " channels; supported: up to 2^28 sampled values (RoIs x output bins x " +
                    "sampling grid x channels)");
  }

  const AxisSamples ys = sample_axis(r, 1, pooled_h, height, grid_h);
  const AxisSamples xs = sample_axis(r, 0, pooled_w, width, grid_w);
  const Ints y_shape = {r.count, pooled_h, grid_h.size, 1, 1};
  const Ints x_shape = {r.count, 1, 1, pooled_w, grid_w.size};
  const ValueId inside =
      r.add(OpKind::And, {r.reshape(ys.inside, y_shape), r.reshape(xs.inside, x_shape)});

  // Each RoI's image as the offset of its first pixel in X viewed as [N * H * W, C]. ONNX gives
  // a negative batch index no meaning: it is moved below -N, where Gather refuses it.
  ValueId b = as_dtype(ctx, ctx.input(2), DType::I64);
  b = r.add(OpKind::Where,
            {r.add(OpKind::Less, {b, scalar_constant(ctx, DType::I64, 0.0)}),
             r.add(OpKind::Sub, {b, scalar_constant(ctx, DType::I64, static_cast<double>(n))}), b});
  std::vector<double> offsets(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    offsets[static_cast<size_t>(i)] = static_cast<double>(i * height * width);
  const ValueId base = r.reshape(
      r.add(OpKind::Gather, {r.constant(DType::I64, {n}, offsets), b}, {{"axis", int64_t{0}}}),
      {r.count, 1, 1, 1, 1});
  const ValueId pixels = r.reshape(
      r.add(OpKind::Transpose, {as_dtype(ctx, ctx.input(0), dt)}, {{"perm", Ints{0, 2, 3, 1}}}),
      {n * height * width, channels});

  // The four products weight * pixel, [R, PH, Gh, PW, Gw, C], in ONNX's order.
  std::vector<ValueId> products;
  const ValueId zero_index = scalar_constant(ctx, DType::I64, 0.0);
  for (const auto& [y, wy] :
       {std::pair{ys.low, ys.low_weight}, std::pair{ys.high, ys.high_weight}}) {
    for (const auto& [xp, wx] :
         {std::pair{xs.low, xs.low_weight}, std::pair{xs.high, xs.high_weight}}) {
      const ValueId flat =
          r.add(OpKind::Add,
                {r.add(OpKind::Mul, {r.reshape(y, y_shape), r.scalar(static_cast<double>(width))}),
                 r.reshape(xp, x_shape)});
      const ValueId index = r.add(
          OpKind::Add,
          {r.add(OpKind::Where, {inside, as_dtype(ctx, flat, DType::I64), zero_index}), base});
      const ValueId weight =
          r.add(OpKind::Where,
                {inside, r.add(OpKind::Mul, {r.reshape(wy, y_shape), r.reshape(wx, x_shape)}),
                 r.scalar(0.0)});
      const ValueId value = r.add(OpKind::Gather, {pixels, index}, {{"axis", int64_t{0}}});
      products.push_back(
          r.add(OpKind::Mul, {r.add(OpKind::Unsqueeze, {weight}, {{"axes", Ints{5}}}), value}));
    }
  }
  const bool average = mode == "avg";
  ValueId combined = products[0];
  for (size_t i = 1; i < products.size(); ++i) {
    combined = r.add(average ? OpKind::Add : OpKind::Max, {combined, products[i]});
  }
  const bool adaptive = grid_h.adaptive();
  if (adaptive) {
    const ValueId mine =
        r.add(OpKind::And, {r.reshape(in_grid(r, grid_h), {r.count, 1, grid_h.size, 1, 1, 1}),
                            r.reshape(in_grid(r, grid_w), {r.count, 1, 1, 1, grid_w.size, 1})});
    const double outside = average ? 0.0 : -std::numeric_limits<double>::infinity();
    combined = r.add(OpKind::Where, {mine, combined, r.scalar(outside)});
  }
  const Attributes grid_axes = {{"axes", Ints{2, 4}}, {"keepdims", int64_t{0}}};
  ValueId y = r.add(average ? OpKind::ReduceSum : OpKind::ReduceMax, {combined}, grid_axes);
  if (average) {
    // ONNX divides by max(Gh * Gw, 1) of each RoI.
    ValueId cells = r.scalar(static_cast<double>(sampling_ratio * sampling_ratio));
    if (adaptive) {
      std::vector<double> count(static_cast<size_t>(r.count));
      for (size_t i = 0; i < count.size(); ++i) {
        count[i] = static_cast<double>(std::max<int64_t>(grid_h.per_roi[i] * grid_w.per_roi[i], 1));
      }
      cells = r.constant(dt, {r.count, 1, 1, 1}, count);
    }
    y = r.add(OpKind::Div, {y, cells});
  } else if (adaptive) {
    // A RoI without samples gives 0, not the max of nothing.
    std::vector<double> some(static_cast<size_t>(r.count));
    for (size_t i = 0; i < some.size(); ++i) {
      some[i] = grid_h.per_roi[i] > 0 && grid_w.per_roi[i] > 0 ? 1.0 : 0.0;
    }
    y = r.add(OpKind::Where, {r.constant(DType::Bool, {r.count, 1, 1, 1}, some), y, r.scalar(0.0)});
  }
  y = r.add(OpKind::Transpose, {y}, {{"perm", Ints{0, 3, 1, 2}}});
  ctx.set_output(0, as_dtype(ctx, y, x.dtype));
}

}  // namespace

void register_pooling_roi_lowerings(LoweringTable& table) {
  table.add_composite("RoiAlign", OpFamily::Pooling, 10, &lower_roi_align);
}

}  // namespace volta::onnx
