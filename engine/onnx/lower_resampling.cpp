// ONNX lowerings of Resize, Upsample and GridSample onto the internal Resize and GridSample, and
// AffineGrid as a composite. Resize's scales and sizes inputs, and AffineGrid's size, must be known
// at import time; they become attributes of the internal op or constants.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>

#include "lowering.h"

namespace volta::onnx {
namespace {

using Floats = std::vector<double>;

std::string ints_str(const Ints& v) { return Shape(v).str(); }

// Shortest text that reads back as the same double.
std::string num(double v) {
  char buf[64];
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

// Input i when it is given and not an empty tensor (Resize's way of leaving one out).
bool given(LoweringContext& ctx, int i, std::string_view what) {
  return i < ctx.num_inputs() && ctx.has_input(i) && ctx.constant_input(i, what).numel() > 0;
}

Floats constant_floats(LoweringContext& ctx, int i, std::string_view what) {
  const Tensor& t = ctx.constant_input(i, what);
  if (!is_floating(t.dtype()) || t.shape().rank() != 1) {
    ctx.invalid(std::string(what) + " must be a 1-D float tensor; got " +
                std::string(dtype_name(t.dtype())) + " of shape " + t.shape().str());
  }
  Floats out(static_cast<size_t>(t.numel()));
  for (int64_t k = 0; k < t.numel(); ++k) out[static_cast<size_t>(k)] = t.get_double(k);
  return out;
}

std::string one_of(LoweringContext& ctx, std::string_view attr, const std::string& value,
                   const std::vector<std::string_view>& allowed) {
  std::string list;
  for (std::string_view a : allowed) {
    if (a == value) return value;
    list += (list.empty() ? "" : ", ") + std::string(a);
  }
  ctx.unsupported(std::string(attr) + " '" + value + "'; supported: " + list);
}

// ---- Resize and Upsample -------------------------------------------------------------------

// What every version resolves to: the internal Resize's attributes.
struct ResizeRequest {
  std::string mode;
  std::string transform;
  std::string nearest_mode = "round_prefer_floor";
  double cubic_a = -0.75;
  int64_t exclude_outside = 0;
  int64_t antialias = 0;  // Resize 18
  double extrapolation = 0.0;
  Floats scales;  // empty when sizes are given
  Ints sizes;     // empty when scales are given
  Floats roi;     // tf_crop_and_resize only
  // keep_aspect_ratio_policy not_larger / not_smaller: sizes and the one scale both resolved.
  bool sizes_and_scales = false;
};

// Checks the request against X, resolves the output shape and emits the internal Resize.
void emit_resize(LoweringContext& ctx, ResizeRequest r) {
  const TypeInfo& x = ctx.input_type(0);
  const int rank = x.shape.rank();
  if (r.mode != "nearest" && !(kFloatTypes | kHalfTypes).contains(x.dtype)) {
    ctx.unsupported("mode " + r.mode + " on a " + std::string(dtype_name(x.dtype)) + " input; " +
                    "supported: " + (kFloatTypes | kHalfTypes).str() +
                    " (nearest copies any dtype)");
  }
  require_dtype(ctx, OpKind::Resize, x.dtype);
  if (!r.sizes_and_scales && r.scales.empty() == r.sizes.empty()) {
    ctx.invalid(r.scales.empty() ? "neither scales nor sizes is given; give one"
                                 : "scales and sizes are both given; give one");
  }
  const bool crop = r.transform == "tf_crop_and_resize";
  if (crop && static_cast<int>(r.roi.size()) != 2 * rank) {
    ctx.invalid("tf_crop_and_resize needs roi with " + std::to_string(2 * rank) +
                " values (starts, ends) for an input of rank " + std::to_string(rank) + "; got " +
                std::to_string(r.roi.size()));
  }
  if (r.sizes_and_scales) {
    // Resolved by apply_aspect_policy.
  } else if (!r.scales.empty()) {
    if (static_cast<int>(r.scales.size()) != rank) {
      ctx.invalid("scales has " + std::to_string(r.scales.size()) +
                  " values for an input of rank " + std::to_string(rank));
    }
    // ONNX: floor(input * scale), of the roi's extent under tf_crop_and_resize.
    for (int a = 0; a < rank; ++a) {
      const double scale = r.scales[static_cast<size_t>(a)];
      if (!(scale > 0.0 && std::isfinite(scale))) {
        ctx.invalid("scale " + num(scale) + " of axis " + std::to_string(a) +
                    " must be finite and > 0");
      }
      double extent = static_cast<double>(x.shape[a]);
      if (crop) {
        extent *= r.roi[static_cast<size_t>(rank) + static_cast<size_t>(a)] -
                  r.roi[static_cast<size_t>(a)];
      }
      r.sizes.push_back(static_cast<int64_t>(std::floor(std::max(0.0, extent * scale))));
    }
  } else if (static_cast<int>(r.sizes.size()) != rank) {
    ctx.invalid("sizes " + ints_str(r.sizes) + " has " + std::to_string(r.sizes.size()) +
                " values for an input of rank " + std::to_string(rank));
  }
  Attributes attrs = {
      {"sizes", r.sizes}, {"mode", r.mode}, {"coordinate_transformation_mode", r.transform}};
  if (!r.scales.empty()) attrs["scales"] = r.scales;
  if (r.mode == "nearest") attrs["nearest_mode"] = r.nearest_mode;
  if (r.mode == "cubic") attrs["cubic_coeff_a"] = r.cubic_a;
  if (r.mode != "nearest") attrs["exclude_outside"] = r.exclude_outside;
  if (r.mode != "nearest" && r.antialias != 0) attrs["antialias"] = r.antialias;
  if (crop) {
    attrs["roi"] = r.roi;
    attrs["extrapolation_value"] = r.extrapolation;
  }
  ctx.set_output(0, ctx.add(OpKind::Resize, {ctx.input(0)}, std::move(attrs)));
}

// Resize 10 and Upsample: the scales alone, asymmetric coordinates (x / scale), and nearest
// rounding down: PyTorch's nearest, which these versions were exported from, and what their
// integer-scale examples give.
ResizeRequest scales_only_request(LoweringContext& ctx, Floats scales) {
  ResizeRequest r;
  r.mode = one_of(ctx, "mode", ctx.attr_string("mode", "nearest"), {"nearest", "linear"});
  r.transform = "asymmetric";
  r.nearest_mode = "floor";
  r.scales = std::move(scales);
  return r;
}

// Resize 18's axes: roi, scales and sizes name only those axes; the others keep their extent.
void expand_to_axes(LoweringContext& ctx, ResizeRequest& r, const Ints& axes) {
  const Shape& shape = ctx.input_type(0).shape;
  const int64_t rank = shape.rank();
  Ints resolved;
  for (int64_t a : axes) {
    const int64_t axis = a < 0 ? a + rank : a;
    if (axis < 0 || axis >= rank) {
      ctx.invalid("axis " + std::to_string(a) + " is out of range for rank " +
                  std::to_string(rank));
    }
    resolved.push_back(axis);
  }
  const size_t n = resolved.size();
  auto check = [&](size_t size, size_t per_axis, std::string_view what) {
    if (size != per_axis * n) {
      ctx.invalid(std::string(what) + " has " + std::to_string(size) + " values for " +
                  std::to_string(n) + " axes");
    }
  };
  if (!r.scales.empty()) {
    check(r.scales.size(), 1, "scales");
    Floats full(static_cast<size_t>(rank), 1.0);
    for (size_t i = 0; i < n; ++i) full[static_cast<size_t>(resolved[i])] = r.scales[i];
    r.scales = std::move(full);
  }
  if (!r.sizes.empty()) {
    check(r.sizes.size(), 1, "sizes");
    Ints full = shape.dims();
    for (size_t i = 0; i < n; ++i) full[static_cast<size_t>(resolved[i])] = r.sizes[i];
    r.sizes = std::move(full);
  }
  if (!r.roi.empty()) {
    check(r.roi.size(), 2, "roi");
    Floats full(static_cast<size_t>(2 * rank), 0.0);
    std::fill(full.begin() + rank, full.end(), 1.0);
    for (size_t i = 0; i < n; ++i) {
      full[static_cast<size_t>(resolved[i])] = r.roi[i];
      full[static_cast<size_t>(resolved[i] + rank)] = r.roi[n + i];
    }
    r.roi = std::move(full);
  }
}

// Resize 18's keep_aspect_ratio_policy with sizes: one scale for every resized axis, the
// smallest (not_larger) or largest (not_smaller) of sizes / extent, and each such axis sized
// round-half-up(scale * extent), as ONNX defines it.
void apply_aspect_policy(LoweringContext& ctx, ResizeRequest& r, const std::string& policy,
                         const Ints& axes) {
  const Shape& shape = ctx.input_type(0).shape;
  const int rank = shape.rank();
  if (static_cast<int>(r.sizes.size()) != rank) return;  // emit_resize says what is wrong
  std::vector<bool> resized(static_cast<size_t>(rank), axes.empty());
  for (int64_t a : axes) resized[static_cast<size_t>(a < 0 ? a + rank : a)] = true;
  std::optional<double> scale;
  for (int a = 0; a < rank; ++a) {
    if (!resized[static_cast<size_t>(a)]) continue;
    const double s =
        static_cast<double>(r.sizes[static_cast<size_t>(a)]) / static_cast<double>(shape[a]);
    if (!scale || (policy == "not_larger" ? s < *scale : s > *scale)) scale = s;
  }
  r.scales.assign(static_cast<size_t>(rank), 1.0);
  for (int a = 0; a < rank; ++a) {
    if (!resized[static_cast<size_t>(a)] || !scale) continue;
    r.scales[static_cast<size_t>(a)] = *scale;
    // Half up, as ONNX's int(x + 0.5): x > 0, where llround's half away from zero is the same.
    r.sizes[static_cast<size_t>(a)] = std::llround(*scale * static_cast<double>(shape[a]));
  }
  r.sizes_and_scales = true;
}

void lower_resize(LoweringContext& ctx) {
  if (ctx.since_version() < 11) {
    return emit_resize(ctx, scales_only_request(ctx, constant_floats(ctx, 1, "scales")));
  }
  ResizeRequest r;
  r.mode = one_of(ctx, "mode", ctx.attr_string("mode", "nearest"), {"nearest", "linear", "cubic"});
  r.transform = ctx.attr_string("coordinate_transformation_mode", "half_pixel");
  // Version 11's name for it; later versions still meet it in converted models.
  if (r.transform == "tf_half_pixel_for_nn") r.transform = "tf_half_pixel_for_nearest";
  if (r.transform == "half_pixel_symmetric" && ctx.since_version() < 19) {
    ctx.invalid("coordinate_transformation_mode half_pixel_symmetric arrives in version 19");
  }
  // The internal op's modes are ONNX's.
  one_of(ctx, "coordinate_transformation_mode", r.transform,
         op_schema(OpKind::Resize).find_attr("coordinate_transformation_mode")->allowed_strings);
  r.nearest_mode =
      one_of(ctx, "nearest_mode", ctx.attr_string("nearest_mode", "round_prefer_floor"),
             {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"});
  r.cubic_a = ctx.attr_float("cubic_coeff_a", -0.75);
  r.exclude_outside = ctx.attr_int("exclude_outside", 0);
  if (r.exclude_outside != 0 && r.exclude_outside != 1) {
    ctx.invalid("exclude_outside must be 0 or 1, got " + std::to_string(r.exclude_outside));
  }
  r.extrapolation = ctx.attr_float("extrapolation_value", 0.0);
  // roi only matters to tf_crop_and_resize; elsewhere it is not even read.
  if (r.transform == "tf_crop_and_resize" && given(ctx, 1, "roi")) {
    r.roi = constant_floats(ctx, 1, "roi");
  }
  if (given(ctx, 2, "scales")) r.scales = constant_floats(ctx, 2, "scales");
  if (given(ctx, 3, "sizes")) r.sizes = ctx.constant_ints(3, "sizes");
  if (ctx.since_version() >= 18) {
    r.antialias = ctx.attr_int("antialias", 0);
    if (r.antialias != 0 && r.antialias != 1) {
      ctx.invalid("antialias must be 0 or 1, got " + std::to_string(r.antialias));
    }
    const Ints axes = ctx.attr_ints("axes", Ints{});
    if (!axes.empty()) expand_to_axes(ctx, r, axes);
    const std::string policy = one_of(ctx, "keep_aspect_ratio_policy",
                                      ctx.attr_string("keep_aspect_ratio_policy", "stretch"),
                                      {"stretch", "not_larger", "not_smaller"});
    if (policy != "stretch" && !r.sizes.empty()) apply_aspect_policy(ctx, r, policy, axes);
  }
  emit_resize(ctx, std::move(r));
}

void lower_upsample(LoweringContext& ctx) {
  switch (ctx.since_version()) {
    case 7:
      return emit_resize(ctx, scales_only_request(ctx, ctx.attr_floats("scales", std::nullopt)));
    case 9:
      return emit_resize(ctx, scales_only_request(ctx, constant_floats(ctx, 1, "scales")));
    default:
      ctx.unsupported(
          "Upsample is deprecated from opset 10 (use Resize); supported: versions 7 "
          "and 9");
  }
}

// GridSample 16: X may be of any dtype in ONNX, grid of a float one; Volta samples floats,
// with X and grid of one dtype.
void lower_grid_sample(LoweringContext& ctx) {
  const DType x = ctx.input_type(0).dtype;
  const DType grid = ctx.input_type(1).dtype;
  const DTypeSet allowed = op_schema(OpKind::GridSample).type_params.front().allowed;
  if (!allowed.contains(x)) {
    ctx.unsupported("X of dtype " + std::string(dtype_name(x)) + "; supported: " + allowed.str() +
                    ", with grid of the same dtype");
  }
  if (grid != x) {
    ctx.unsupported("grid of dtype " + std::string(dtype_name(grid)) + " for X of dtype " +
                    std::string(dtype_name(x)) + "; supported: grid of X's dtype");
  }
  const int64_t align_corners = ctx.attr_int("align_corners", 0);
  if (align_corners != 0 && align_corners != 1) {
    ctx.invalid("align_corners must be 0 or 1, got " + std::to_string(align_corners));
  }
  // Version 20 renames the modes (linear, cubic) and allows any spatial rank; Volta samples 2
  // or 3, and cubic only 2, as ONNX defines it.
  const bool v20 = ctx.since_version() >= 20;
  const int rank = ctx.input_type(0).shape.rank();
  if (!v20 && rank != 4) {
    ctx.invalid("GridSample " + std::to_string(ctx.since_version()) +
                " takes X of rank 4, got rank " + std::to_string(rank));
  }
  if (rank != 4 && rank != 5) {
    ctx.unsupported("X of rank " + std::to_string(rank) +
                    "; supported: rank 4 or 5 (two or three spatial dims)");
  }
  std::string mode =
      v20 ? one_of(ctx, "mode", ctx.attr_string("mode", "linear"), {"linear", "nearest", "cubic"})
          : one_of(ctx, "mode", ctx.attr_string("mode", "bilinear"),
                   {"bilinear", "nearest", "bicubic"});
  if (mode == "cubic" && rank != 4) {
    ctx.invalid("mode cubic samples X of rank 4 only, got rank " + std::to_string(rank));
  }
  if (mode == "linear") mode = "bilinear";
  if (mode == "cubic") mode = "bicubic";
  const std::string padding = one_of(ctx, "padding_mode", ctx.attr_string("padding_mode", "zeros"),
                                     {"zeros", "border", "reflection"});
  ctx.set_output(
      0, ctx.add(OpKind::GridSample, {ctx.input(0), ctx.input(1)},
                 {{"align_corners", align_corners}, {"mode", mode}, {"padding_mode", padding}}));
}

// ---- AffineGrid ------------------------------------------------------------------------------

// The normalized coordinate of position i of an axis of n positions: -1 and 1 at the corner
// pixels' centres under align_corners, else at their outer edges. A lone position sits at 0 under
// align_corners, as in PyTorch's affine_grid (ONNX's reference divides by zero there).
double grid_coordinate(int64_t i, int64_t n, bool align_corners) {
  const auto di = static_cast<double>(i);
  const auto dn = static_cast<double>(n);
  if (align_corners) return n == 1 ? 0.0 : -1.0 + 2.0 * di / (dn - 1.0);
  return -1.0 + (2.0 * di + 1.0) / dn;
}

// The homogeneous base grid [positions, dims + 1]: each row (x, y[, z], 1), x the fastest axis.
Tensor affine_base_grid(DType dtype, const Ints& spatial, bool align_corners) {
  const auto dims = static_cast<int64_t>(spatial.size());
  int64_t positions = 1;
  for (int64_t s : spatial) positions *= s;
  Tensor grid(dtype, Shape{positions, dims + 1});
  for (int64_t p = 0; p < positions; ++p) {
    int64_t rest = p;
    // The last spatial axis (W) varies fastest and is the grid's first coordinate (x).
    for (int64_t a = dims - 1; a >= 0; --a) {
      const int64_t n = spatial[static_cast<size_t>(a)];
      grid.set_double(p * (dims + 1) + (dims - 1 - a), grid_coordinate(rest % n, n, align_corners));
      rest /= n;
    }
    grid.set_double(p * (dims + 1) + dims, 1.0);
  }
  return grid;
}

// AffineGrid 20: grid [N, (D,) H, W, dims] = base grid [positions, dims + 1] @ theta^T, the base
// grid computed here from size (known at import time) and theta any runtime value.
void lower_affine_grid(LoweringContext& ctx) {
  const TypeInfo& theta = ctx.input_type(0);
  if (!kFloatTypes.contains(theta.dtype)) {
    ctx.unsupported("theta of dtype " + std::string(dtype_name(theta.dtype)) +
                    "; supported: f32, f64");
  }
  const int64_t align_corners = ctx.attr_int("align_corners", 0);
  if (align_corners != 0 && align_corners != 1) {
    ctx.invalid("align_corners must be 0 or 1, got " + std::to_string(align_corners));
  }
  const Ints size = ctx.constant_ints(1, "AffineGrid size");
  if (size.size() != 4 && size.size() != 5) {
    ctx.unsupported("size " + ints_str(size) +
                    "; supported: [N, C, H, W] (2-D) or [N, C, D, H, W] (3-D)");
  }
  for (int64_t s : size) {
    if (s <= 0) ctx.invalid("size " + ints_str(size) + " must be positive");
  }
  const auto dims = static_cast<int64_t>(size.size()) - 2;
  const Ints want_theta = {size[0], dims, dims + 1};
  if (theta.shape.dims() != want_theta) {
    ctx.invalid("theta of shape " + theta.shape.str() + " for size " + ints_str(size) +
                "; expected " + ints_str(want_theta));
  }
  const Ints spatial(size.begin() + 2, size.end());
  int64_t positions = 1;
  for (int64_t s : spatial) positions *= s;
  check_constant_size(ctx, Shape{positions, dims + 1});
  const ValueId base = ctx.constant(affine_base_grid(theta.dtype, spatial, align_corners == 1));
  const ValueId theta_t =
      ctx.add(OpKind::Transpose, {ctx.input(0)}, {{"perm", Ints{0, 2, 1}}});  // [N, dims+1, dims]
  const ValueId grid = ctx.add(OpKind::MatMul, {base, theta_t});  // [N, positions, dims]
  Ints out = {size[0]};
  out.insert(out.end(), spatial.begin(), spatial.end());
  out.push_back(dims);
  ctx.set_output(0, ctx.add(OpKind::Reshape, {grid}, {{"shape", out}}));
}

}  // namespace

void register_resampling_lowerings(LoweringTable& table) {
  table.add("Resize", OpKind::Resize, 10, &lower_resize);
  table.add("Upsample", OpKind::Resize, 7, &lower_upsample);
  table.add("GridSample", OpKind::GridSample, 16, &lower_grid_sample);
  table.add_composite("AffineGrid", OpFamily::Resampling, 20, &lower_affine_grid);
}

}  // namespace volta::onnx
