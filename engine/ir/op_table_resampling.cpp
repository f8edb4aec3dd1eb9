// The op table's part for family Resampling: Resize and GridSample.
//
// Resize takes the resolved output shape ("sizes") and the per-axis scales its coordinate
// transforms use ("scales"); the ONNX importer turns Resize/Upsample's scales or sizes inputs
// into both. Per axis, output index x maps to the input coordinate
//   half_pixel                 (x + 0.5) / scale - 0.5
//   half_pixel_symmetric       in / 2 * (1 - out / (scale * in)) + (x + 0.5) / scale - 0.5:
//                              half_pixel centred where out is not scale * in
//   pytorch_half_pixel         as half_pixel, but 0 when the output axis has length 1
//   align_corners              x * (in - 1) / (scale * in - 1), 0 when the output length is 1
//   asymmetric                 x / scale
//   tf_half_pixel_for_nearest  (x + 0.5) / scale
//   tf_crop_and_resize         start * (in - 1) + x * (end - start) * (in - 1) / (out - 1), or
//                              (start + end) / 2 * (in - 1) when out is 1; roi = [starts, ends];
//                              a coordinate outside [0, in - 1] gives extrapolation_value
// (align_corners divides by the resized length the scale gives, scale * in: what ONNX's
// reference does when scales are given; it equals out when sizes are). Interpolation, per
// axis: nearest picks one element by nearest_mode; linear uses floor(c), floor(c) + 1 with
// weights 1 - t, t (t = c - floor(c)); cubic uses floor(c) - 1 .. floor(c) + 2 with Keys'
// kernel of coefficient cubic_coeff_a. A whole-number coordinate takes the element there and
// nothing else (so an unchanged axis is copied, infinities next to it notwithstanding). Taps
// outside the input read its edge, or with exclude_outside (linear and cubic; nearest always
// reads the edge) are dropped and the remaining weights renormalized; none left gives NaN.
// antialias (linear and cubic, ONNX's Resize 18) stretches the kernel by 1 / scale on an axis
// scaled down (scale < 1): with support r (1 for linear's triangle 1 - |d|, 2 for Keys') and
// half-width m = ceil(r / scale), the taps are ceil(c) - 1 + [1 - m, m] (2m of them, whole-number
// coordinates included), weighted by the kernel at scale * (c - index), zero beyond r, and
// normalized to sum 1 before exclude_outside; every tap counts (a zero weight times inf is NaN).
// Axes not scaled down take the plain rule. An axis may stretch to at most kMaxStretchTaps taps
// over its outputs.
// A coordinate more than 3 elements (3 + m under antialias) outside the input is taken as that
// far outside (its taps read the same edge elements).
// N-D: a tap's weight is the product of its axes' weights; extrapolation on any axis wins.
//
// GridSample (PyTorch's grid_sample, which ONNX's follows) reads X [N, C, H, W] at the points
// grid [N, Ho, Wo, 2] gives, (x, y) normalized to [-1, 1] over W and H; or X [N, C, D, H, W] at
// grid [N, Do, Ho, Wo, 3], (x, y, z) over W, H and D (bilinear is then trilinear; bicubic is
// rank 4 only, as in ONNX). Per axis of length
// `size`, g maps to the coordinate (g + 1) / 2 * (size - 1) with align_corners (-1 and 1 are
// the corner elements' centres), else ((g + 1) * size - 1) / 2 (-1 and 1 are the outer edges).
// padding_mode then transforms a coordinate: zeros leaves it (elements outside read 0);
// border clamps it to [0, size - 1]; reflection reflects it about the ends (0 and size - 1
// with align_corners, -0.5 and size - 0.5 without), as often as needed, then clamps it.
// nearest takes the element at the transformed coordinate rounded half to even (PyTorch's
// order; onnxruntime rounds before reflecting and differs at exact ties); bilinear floor(c) and
// floor(c) + 1 with weights 1 - t, t (t = c - floor(c)); bicubic floor(c) - 1 .. floor(c) + 2
// with Keys' weights for a = -0.75, the padding transform applied to each of those four
// positions rather than to c. A tap's weight is the product of its per-axis weights; taps
// outside X add nothing, taps inside always count (a zero weight times inf is NaN). A NaN
// grid value gives NaN, as does an infinite one under reflection (or with align_corners on an
// axis of one element: inf * 0); under zeros an infinite one is outside (0), under border at
// the edge.

#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "op_table_builders.h"

namespace volta::op_table {
namespace {

[[noreturn]] void shape_fail(const std::string& message) { throw ShapeError(message); }

// Taps an antialiased axis may hold over all its outputs (16 bytes each in a kernel's table).
constexpr double kMaxStretchTaps = 1 << 24;

// Shortest text that reads back as the same double.
std::string num(double v) {
  char buf[64];
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

// Whether an integer or bool output can hold v exactly (a float output holds its rounding).
bool holds_exactly(DType dtype, double v) {
  if (dtype == DType::Bool) return v == 0.0 || v == 1.0;
  if (is_floating(dtype)) return true;
  return visit_dtype(dtype, [v]<class T>(TypeTag<T>) {
    if constexpr (std::is_integral_v<T>) {
      // [lowest, max + 1): both bounds are powers of two (or zero), exact as doubles.
      const double lowest = static_cast<double>(std::numeric_limits<T>::lowest());
      const double past_max = std::ldexp(1.0, std::numeric_limits<T>::digits);
      return std::trunc(v) == v && v >= lowest && v < past_max;
    } else {
      return true;
    }
  });
}

std::vector<TypeInfo> resize_shape(const InferContext& ctx) {
  const TypeInfo& x = ctx.input(0);
  const int rank = x.shape.rank();
  const std::vector<int64_t>& sizes = ctx.attrs.get_ints("sizes");
  const std::vector<double>& scales = ctx.attrs.get_floats("scales");
  const std::vector<double>& roi = ctx.attrs.get_floats("roi");
  const std::string& mode = ctx.attrs.get_string("mode");
  const std::string& transform = ctx.attrs.get_string("coordinate_transformation_mode");
  const bool antialias = ctx.attrs.get_int("antialias") != 0;
  if (static_cast<int>(sizes.size()) != rank) {
    shape_fail("sizes " + Shape(sizes).str() + " has " + std::to_string(sizes.size()) +
               " entries for an input of rank " + std::to_string(rank));
  }
  if (!scales.empty() && static_cast<int>(scales.size()) != rank) {
    shape_fail("scales has " + std::to_string(scales.size()) + " entries for an input of rank " +
               std::to_string(rank) + " (give one per axis, or none to use sizes / input)");
  }
  if (!roi.empty() && static_cast<int>(roi.size()) != 2 * rank) {
    shape_fail("roi has " + std::to_string(roi.size()) + " entries; an input of rank " +
               std::to_string(rank) + " needs " + std::to_string(2 * rank) + " (starts, ends)");
  }
  for (int a = 0; a < rank; ++a) {
    const auto u = static_cast<size_t>(a);
    if (sizes[u] < 0) shape_fail("sizes " + Shape(sizes).str() + " has a negative entry");
    if (x.shape[a] == 0 && sizes[u] > 0) {
      shape_fail("axis " + std::to_string(a) + " has length 0: nothing to resize to " +
                 std::to_string(sizes[u]));
    }
    if (!scales.empty() && !(scales[u] > 0.0 && std::isfinite(scales[u]))) {
      shape_fail("scale " + num(scales[u]) + " of axis " + std::to_string(a) +
                 " must be finite and > 0");
    }
    const double scale = scales.empty()
                             ? static_cast<double>(sizes[u]) / static_cast<double>(x.shape[a])
                             : scales[u];
    if (antialias && mode != "nearest" && scale < 1.0) {
      // The tap table of a stretched axis holds 2 * ceil(r / scale) taps per output.
      const double taps =
          2.0 * std::ceil((mode == "cubic" ? 2.0 : 1.0) / scale) * static_cast<double>(sizes[u]);
      if (taps > kMaxStretchTaps) {
        shape_fail("antialias on axis " + std::to_string(a) + " with scale " + num(scale) +
                   " stretches the " + mode + " kernel to " + num(taps) + " taps over " +
                   std::to_string(sizes[u]) + " outputs; supported: at most " +
                   num(kMaxStretchTaps));
      }
    }
    if (transform == "align_corners" && sizes[u] > 1 &&
        scale * static_cast<double>(x.shape[a]) <= 1.0) {
      shape_fail("align_corners on axis " + std::to_string(a) + " needs scale * input > 1 (got " +
                 num(scale) + " * " + std::to_string(x.shape[a]) + ") for " +
                 std::to_string(sizes[u]) + " outputs");
    }
  }
  if (mode != "nearest" && !is_floating(x.dtype)) {
    shape_fail("mode " + mode + " interpolates and needs a float input (f32, f64), got " +
               std::string(dtype_name(x.dtype)) + "; nearest copies elements of any dtype");
  }
  if (transform == "tf_crop_and_resize") {
    if (roi.empty()) shape_fail("tf_crop_and_resize needs roi (starts, ends per axis)");
    for (double v : roi) {
      if (!std::isfinite(v)) shape_fail("roi entries must be finite, got " + num(v));
    }
    const double extrapolation = ctx.attrs.get_float("extrapolation_value");
    if (!holds_exactly(x.dtype, extrapolation)) {
      shape_fail("extrapolation_value " + num(extrapolation) + " is not a " +
                 std::string(dtype_name(x.dtype)) +
                 " value (integer and bool outputs take it exactly)");
    }
  }
  return {{x.dtype, Shape(sizes)}};
}

std::vector<TypeInfo> grid_sample_shape(const InferContext& ctx) {
  const TypeInfo& x = ctx.input(0);
  const Shape& grid = ctx.input(1).shape;
  const int rank = x.shape.rank();
  if (rank != 4 && rank != 5) {
    shape_fail("GridSample needs X of rank 4 [N, C, H, W] or 5 [N, C, D, H, W], got " +
               x.shape.str());
  }
  const int spatial = rank - 2;
  if (grid.rank() != rank || grid[rank - 1] != spatial) {
    shape_fail(rank == 4 ? "GridSample needs grid [N, Ho, Wo, 2] (x, y per output point), got " +
                               grid.str()
                         : "GridSample needs grid [N, Do, Ho, Wo, 3] (x, y, z per output point) "
                           "for X of rank 5, got " +
                               grid.str());
  }
  if (grid[0] != x.shape[0]) {
    shape_fail("grid " + grid.str() + " and X " + x.shape.str() + " differ in batch size");
  }
  for (int a = 2; a < rank; ++a) {
    if (x.shape[a] == 0) {
      shape_fail("GridSample needs X with non-empty spatial axes to sample from, got " +
                 x.shape.str());
    }
  }
  if (rank == 5 && ctx.attrs.get_string("mode") == "bicubic") {
    shape_fail("GridSample bicubic samples X of rank 4 only (as ONNX's cubic), got " +
               x.shape.str() + "; supported for rank 5: bilinear (trilinear), nearest");
  }
  std::vector<int64_t> dims = {x.shape[0], x.shape[1]};
  for (int a = 1; a < rank - 1; ++a) dims.push_back(grid[a]);
  return {{x.dtype, Shape(dims)}};
}

}  // namespace

void add_resampling_schemas(std::vector<OpSchema>& t) {
  t.push_back(OpSchema{
      .kind = OpKind::Resize,
      .name = "Resize",
      .family = OpFamily::Resampling,
      .inputs = {{"X", 'T', D::Differentiable}},
      .outputs = {{"Y", 'T'}},
      .type_params = {{'T', kCoreTypes}},
      .attrs = {required("sizes", AttrType::Ints),
                {"scales", AttrType::Floats, AttrValue{std::vector<double>{}}},
                {"roi", AttrType::Floats, AttrValue{std::vector<double>{}}},
                string_attr("mode", "nearest", {"nearest", "linear", "cubic"}),
                string_attr(
                    "coordinate_transformation_mode", "half_pixel",
                    {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                     "asymmetric", "tf_half_pixel_for_nearest", "tf_crop_and_resize"}),
                string_attr("nearest_mode", "round_prefer_floor",
                            {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}),
                {"cubic_coeff_a", AttrType::Float, AttrValue{-0.75}, -kInf, kInf},
                flag("exclude_outside", 0),
                flag("antialias", 0),
                {"extrapolation_value", AttrType::Float, AttrValue{0.0}, -kInf, kInf}},
      .infer = resize_shape,
      .summary = "resample to sizes by nearest, N-linear or N-cubic interpolation; scales "
                 "(default sizes / input) drive the coordinate transform; antialias stretches "
                 "the kernel on axes scaled down",
      .accumulator = Accumulator::InputType});
  t.push_back(OpSchema{
      .kind = OpKind::GridSample,
      .name = "GridSample",
      .family = OpFamily::Resampling,
      .inputs = {{"X", 'T', D::Differentiable}, {"grid", 'T', D::NotDifferentiable}},
      .outputs = {{"Y", 'T'}},
      .type_params = {{'T', kFloatTypes}},
      .attrs = {flag("align_corners", 0),
                string_attr("mode", "bilinear", {"bilinear", "nearest", "bicubic"}),
                string_attr("padding_mode", "zeros", {"zeros", "border", "reflection"})},
      .infer = grid_sample_shape,
      .summary = "sample X [N, C, H, W] (or [N, C, D, H, W]) at the points grid [N, Ho, Wo, 2] "
                 "(or [N, Do, Ho, Wo, 3]) gives, normalized to [-1, 1], by nearest, bilinear "
                 "(trilinear) or bicubic (2-D) interpolation; points outside read zeros, the "
                 "border or a reflection",
      .accumulator = Accumulator::InputType});
}

}  // namespace volta::op_table
