// CPU kernels of Resize, Det and GridSample, against hand-checked values (and, where the arithmetic
// is long, the numbers of ONNX's backend test data).
#define BOOST_TEST_MODULE cpu_resize
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <string>

#include "expect_error.h"
#include "test_util.h"

namespace volta::test {
namespace {

using Ints = std::vector<int64_t>;
using Floats = std::vector<double>;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Attributes resize_attrs(Ints sizes, const std::string& mode, const std::string& transform) {
  return {
      {"sizes", std::move(sizes)}, {"mode", mode}, {"coordinate_transformation_mode", transform}};
}

Tensor resize(const Tensor& x, Attributes attrs, int threads = 1) {
  return run_op(OpKind::Resize, {x}, std::move(attrs), 1, threads)[0];
}

// Output j of a 4 -> 8 resize samples at j / 2 (asymmetric): halves are where the nearest
// modes differ, and 3.5 rounds up past the end, which clamps to the last element.
BOOST_AUTO_TEST_CASE(nearest_modes_break_ties_as_named) {
  const Tensor x = filled(DType::F32, {4}, {10, 20, 30, 40});
  const std::vector<std::pair<std::string, std::vector<double>>> want = {
      {"round_prefer_floor", {10, 10, 20, 20, 30, 30, 40, 40}},
      {"round_prefer_ceil", {10, 20, 20, 30, 30, 40, 40, 40}},
      {"floor", {10, 10, 20, 20, 30, 30, 40, 40}},
      {"ceil", {10, 20, 20, 30, 30, 40, 40, 40}}};
  for (const auto& [mode, values] : want) {
    BOOST_TEST_CONTEXT(mode) {
      Attributes a = resize_attrs({8}, "nearest", "asymmetric");
      a["nearest_mode"] = mode;
      check_close(resize(x, a), filled(DType::F32, {8}, values), 0, 0);
    }
  }
}

// half_pixel, 2 -> 4: coordinates -0.25, 0.25, 0.75, 1.25; the outer taps clamp to the edge.
BOOST_AUTO_TEST_CASE(linear_half_pixel_clamps_at_the_edges) {
  const Tensor x = filled(DType::F64, {2}, {1, 3});
  check_close(resize(x, resize_attrs({4}, "linear", "half_pixel")),
              filled(DType::F64, {4}, {1, 1.5, 2.5, 3}), 0, 0);
}

// ONNX resize_downsample_scales_linear_align_corners: with scales given, align_corners
// divides by scale * input - 1 = 1.4, so output 1 samples 3 / 1.4 = 2.142857...
BOOST_AUTO_TEST_CASE(align_corners_uses_the_scale_when_scales_are_given) {
  const Tensor x = filled(DType::F32, {1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  Attributes a = resize_attrs({1, 1, 1, 2}, "linear", "align_corners");
  a["scales"] = Floats{1, 1, 0.6000000238418579, 0.6000000238418579};
  check_close(resize(x, a),
              filled(DType::F32, {1, 1, 1, 2}, {1, 1 + 3 / (0.6000000238418579 * 4 - 1)}), 1e-6,
              1e-6);
}

// A sample point on an input element takes that element alone, so resizing to the same
// shape is the identity even next to infinities and NaN.
BOOST_AUTO_TEST_CASE(whole_coordinates_read_one_element) {
  const Tensor x = filled(DType::F32, {5}, {kInf, 1, kNaN, -2, 4});
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    BOOST_TEST_CONTEXT(mode) {
      check_close(resize(x, resize_attrs({5}, mode, "half_pixel")), x, 0, 0);
    }
  }
}

// Scales that disagree with sizes sample past the end (coordinates 0, 4, 8 of 4 elements):
// those read the last element, or with exclude_outside have no tap left and are NaN.
BOOST_AUTO_TEST_CASE(sample_points_past_the_input_read_its_edge_or_are_excluded) {
  const Tensor x = filled(DType::F32, {4}, {1, 2, 3, 4});
  Attributes a = resize_attrs({3}, "linear", "asymmetric");
  a["scales"] = Floats{0.25};
  check_close(resize(x, a), filled(DType::F32, {3}, {1, 4, 4}), 0, 0);
  a["exclude_outside"] = int64_t{1};
  check_close(resize(x, a), filled(DType::F32, {3}, {1, kNaN, kNaN}), 0, 0);
}

// ONNX resize_tf_crop_and_resize: roi rows [0.4, 1.2] and columns [0.6, 1.7] of a 4x4 input;
// sample points past the last row or column give the extrapolation value.
BOOST_AUTO_TEST_CASE(crop_and_resize_extrapolates_outside_the_input) {
  std::vector<double> values(16);
  for (int i = 0; i < 16; ++i) values[static_cast<size_t>(i)] = i + 1;
  const Tensor x = filled(DType::F32, {1, 1, 4, 4}, values);
  Attributes a = resize_attrs({1, 1, 3, 3}, "linear", "tf_crop_and_resize");
  a["roi"] = Floats{0, 0, 0.4, 0.6, 1, 1, 1.2, 1.7};
  a["extrapolation_value"] = 10.0;
  check_close(resize(x, a),
              filled(DType::F32, {1, 1, 3, 3}, {7.6, 10, 10, 12.4, 10, 10, 10, 10, 10}), 1e-5,
              1e-6);
}

// ONNX resize_downsample_scales_cubic (a = -0.75) and its exclude_outside, a = -0.5 twin.
BOOST_AUTO_TEST_CASE(cubic_matches_onnx_reference_numbers) {
  std::vector<double> values(16);
  for (int i = 0; i < 16; ++i) values[static_cast<size_t>(i)] = i + 1;
  const Tensor x = filled(DType::F32, {1, 1, 4, 4}, values);
  Attributes a = resize_attrs({1, 1, 3, 3}, "cubic", "half_pixel");
  a["scales"] = Floats{1, 1, 0.800000011920929, 0.800000011920929};
  check_close(resize(x, a),
              filled(DType::F32, {1, 1, 3, 3},
                     {1.47119140625, 2.78125, 4.08251953125, 6.71142578125, 8.021484375,
                      9.32275390625, 11.91650390625, 13.2265625, 14.52783203125}),
              1e-5, 1e-6);
  a["cubic_coeff_a"] = -0.5;
  a["exclude_outside"] = int64_t{1};
  check_close(resize(x, a),
              filled(DType::F32, {1, 1, 3, 3},
                     {1.3681267, 2.6695013, 4.0133367, 6.573625, 7.875, 9.218835, 11.948966,
                      13.250341, 14.594176}),
              1e-5, 1e-6);
}

BOOST_AUTO_TEST_CASE(nearest_copies_integers_and_bools) {
  const Tensor x = Tensor::from<int64_t>({2, 2}, {int64_t{1} << 60, -7, 3, 9});
  const Tensor y = resize(x, resize_attrs({2, 4}, "nearest", "asymmetric"));
  BOOST_TEST(y.bit_equal(
      Tensor::from<int64_t>({2, 4}, {int64_t{1} << 60, int64_t{1} << 60, -7, -7, 3, 3, 9, 9})));
  const Tensor b = Tensor::from<bool>({3}, {1, 0, 1});
  BOOST_TEST(resize(b, resize_attrs({6}, "nearest", "asymmetric"))
                 .bit_equal(Tensor::from<bool>({6}, {1, 1, 0, 0, 1, 1})));
}

// Antialias, 4 -> 2 (scale 0.5, half_pixel: coordinates 0.5 and 2.5): linear's triangle
// stretched to half-width 2 takes taps c - 1.5 .. c + 1.5 with weights 1, 3, 3, 1 over 8, the
// outer ones reading the edge (or, excluded, dropped and the rest renormalized); cubic's 8
// taps. Numbers from ONNX's reference (onnx.reference's _interpolate_nd with its antialias
// coefficients), which the hand sums for linear confirm: 1 + 3 + 6 + 3 over 8 is 1.625.
BOOST_AUTO_TEST_CASE(antialias_stretches_the_kernel_on_axes_scaled_down) {
  const Tensor x = filled(DType::F64, {4}, {1, 2, 3, 4});
  Attributes a = resize_attrs({2}, "linear", "half_pixel");
  a["antialias"] = int64_t{1};
  check_close(resize(x, a), filled(DType::F64, {2}, {1.625, 3.375}), 1e-15, 1e-15);
  a["exclude_outside"] = int64_t{1};
  check_close(resize(x, a), filled(DType::F64, {2}, {1.5 / 0.875, 2.875 / 0.875}), 1e-15, 1e-15);
  a = resize_attrs({2}, "cubic", "half_pixel");
  a["antialias"] = int64_t{1};
  check_close(resize(x, a), filled(DType::F64, {2}, {1.490234375, 3.509765625}), 1e-15, 1e-15);
  // Without antialias the same resize reads 2 taps: 1.5 and 3.5.
  check_close(resize(x, resize_attrs({2}, "linear", "half_pixel")),
              filled(DType::F64, {2}, {1.5, 3.5}), 0, 0);
}

// An axis scaled up keeps the plain rule under antialias (the same bits), and nearest ignores
// it; a stretched window next to an infinity takes it, even where its weight is zero.
BOOST_AUTO_TEST_CASE(antialias_leaves_axes_scaled_up_and_nearest_alone) {
  const Tensor x = uniform(DType::F32, {3, 5}, 11);
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    BOOST_TEST_CONTEXT(mode) {
      Attributes a = resize_attrs({7, 11}, mode, "half_pixel");
      const Tensor plain = resize(x, a);
      a["antialias"] = int64_t{1};
      BOOST_TEST(resize(x, a).bit_equal(plain));
    }
  }
  // 4 -> 2 asymmetric: output 1 sits on element 2; its window (half-width 2) is elements 0..3,
  // weights 0, 1/4, 1/2, 1/4: element 0's infinity times its zero weight is NaN, as in ONNX's
  // reference (a dot product over the window).
  const Tensor with_inf = filled(DType::F32, {4}, {kInf, 2, 3, 4});
  Attributes a = resize_attrs({2}, "linear", "asymmetric");
  a["antialias"] = int64_t{1};
  BOOST_TEST(std::isnan(resize(with_inf, a).get_double(1)));
  const Tensor finite = filled(DType::F32, {4}, {1, 2, 3, 4});
  check_close(resize(finite, a), filled(DType::F32, {2}, {1.25, 3}), 0, 0);
}

BOOST_AUTO_TEST_CASE(large_resize_is_thread_count_invariant) {
  const Tensor x = uniform(DType::F32, {2, 3, 37, 41}, 7);
  const Attributes a = resize_attrs({2, 3, 91, 67}, "cubic", "half_pixel");
  BOOST_TEST(resize(x, a, 1).bit_equal(resize(x, a, 4)));
  Attributes stretched = resize_attrs({2, 3, 11, 19}, "cubic", "half_pixel");
  stretched["antialias"] = int64_t{1};
  stretched["exclude_outside"] = int64_t{1};
  BOOST_TEST(resize(x, stretched, 1).bit_equal(resize(x, stretched, 4)));
}

BOOST_AUTO_TEST_CASE(resize_rejects_what_it_cannot_do) {
  const auto build = [](DType dtype, const Shape& shape, const Attributes& attrs) {
    return [=] { single_op_graph(OpKind::Resize, {TypeInfo{dtype, shape}}, attrs); };
  };
  expect_error_containing(build(DType::I32, {4}, resize_attrs({8}, "linear", "half_pixel")),
                          ErrorCode::VerifyShape,
                          {"mode linear interpolates and needs a float input (f32, f64), got i32"});
  expect_error_containing(build(DType::F32, {4, 4}, resize_attrs({8}, "nearest", "half_pixel")),
                          ErrorCode::VerifyShape,
                          {"sizes [8] has 1 entries for an input of rank 2"});
  expect_error_containing(build(DType::F32, {4}, resize_attrs({3}, "linear", "tf_crop_and_resize")),
                          ErrorCode::VerifyShape, {"tf_crop_and_resize needs roi"});
  Attributes stretched = resize_attrs({1000}, "linear", "asymmetric");
  stretched["antialias"] = int64_t{1};
  stretched["scales"] = Floats{1e-6};
  expect_error_containing(build(DType::F32, {2000}, stretched), ErrorCode::VerifyShape,
                          {"antialias on axis 0 with scale 1e-06 stretches the linear kernel to",
                           "supported: at most 16777216"});
}

Tensor det(const Tensor& x, int threads = 1) { return run_op(OpKind::Det, {x}, {}, 1, threads)[0]; }

BOOST_AUTO_TEST_CASE(det_of_small_matrices) {
  // 1*4 - 2*3 = -2. The 3x3 has a zero first pivot (row swaps); by cofactors along row 0:
  // 0 - 1 * (8 - 12) + 2 * (-3 - 0) = -2.
  check_close(det(filled(DType::F32, {2, 2}, {1, 2, 3, 4})), filled(DType::F32, {}, {-2}), 1e-6);
  check_close(det(filled(DType::F64, {3, 3}, {0, 1, 2, 1, 0, 3, 4, -3, 8})),
              filled(DType::F64, {}, {-2}), 1e-12);
  // A batch of two, one singular (a zero column): exactly 0.
  check_close(det(filled(DType::F64, {2, 2, 2}, {2, 0, 0, 3, 1, 0, 2, 0})),
              filled(DType::F64, {2}, {6, 0}), 0, 0);
}

BOOST_AUTO_TEST_CASE(det_of_empty_matrices_is_one_and_nan_propagates) {
  check_close(det(Tensor(DType::F32, {3, 0, 0})), filled(DType::F32, {3}, {1, 1, 1}), 0, 0);
  check_close(det(filled(DType::F32, {2, 2}, {1, kNaN, 3, 4})), filled(DType::F32, {}, {kNaN}));
  // NaN below or beside a zero pivot, whose column elimination skips, still counts.
  check_close(det(filled(DType::F32, {2, 2}, {0, 0, kNaN, 0})), filled(DType::F32, {}, {kNaN}));
  check_close(det(filled(DType::F32, {2, 2}, {0, kNaN, 0, 1})), filled(DType::F32, {}, {kNaN}));
}

BOOST_AUTO_TEST_CASE(det_is_thread_count_invariant) {
  const Tensor x = uniform(DType::F32, {4000, 3, 3}, 11);
  BOOST_TEST(det(x, 1).bit_equal(det(x, 3)));
}

// ---- GridSample ------------------------------------------------------------------------------

Attributes sampling(const std::string& mode, const std::string& padding, int64_t align = 0) {
  return {{"mode", mode}, {"padding_mode", padding}, {"align_corners", align}};
}

Tensor grid_sample(const Tensor& x, const Tensor& grid, Attributes attrs, int threads = 1) {
  return run_op(OpKind::GridSample, {x, grid}, std::move(attrs), 1, threads)[0];
}

// X = [[1, 2], [3, 4]]; without align_corners g maps to ((g + 1) * 2 - 1) / 2 = g + 0.5.
// (0, 0) is the centre (2.5); (-1, -1) is -0.5 on both axes: half of each weight falls
// outside, so zeros gives 1 / 4, border clamps to element 0 (1); (1, 1) is 1.5: 4 / 4 = 1, or
// 4; (-0.5, 0) is x = 0 exactly, y = 0.5: (1 + 3) / 2. (-2, -2) is -1.5, which reflection
// about -0.5 takes to 0.5: the centre again; zeros reads nothing there and border element 0.
BOOST_AUTO_TEST_CASE(grid_sample_bilinear_pads_as_named) {
  const Tensor x = filled(DType::F32, {1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor grid = filled(DType::F32, {1, 1, 5, 2}, {0, 0, -1, -1, 1, 1, -0.5, 0, -2, -2});
  check_close(grid_sample(x, grid, sampling("bilinear", "zeros")),
              filled(DType::F32, {1, 1, 1, 5}, {2.5, 0.25, 1, 2, 0}), 0, 0);
  check_close(grid_sample(x, grid, sampling("bilinear", "border")),
              filled(DType::F32, {1, 1, 1, 5}, {2.5, 1, 4, 2, 1}), 0, 0);
  check_close(grid_sample(x, grid, sampling("bilinear", "reflection")),
              filled(DType::F32, {1, 1, 1, 5}, {2.5, 1, 4, 2, 2.5}), 0, 0);
  // align_corners: g maps to (g + 1) / 2, so -1 and 1 are elements 0 and 1 exactly, and
  // (-0.5, 0) is x = 0.25: rows 0.75 * 1 + 0.25 * 2 and 0.75 * 3 + 0.25 * 4, averaged. -2 is
  // -0.5, reflected about 0 to 0.5.
  check_close(grid_sample(x, grid, sampling("bilinear", "reflection", 1)),
              filled(DType::F32, {1, 1, 1, 5}, {2.5, 1, 4, 2.25, 2.5}), 0, 0);
  check_close(grid_sample(x, grid, sampling("bilinear", "zeros", 1)),
              filled(DType::F32, {1, 1, 1, 5}, {2.5, 1, 4, 2.25, 0.25}), 0, 0);
}

// One row [10, 20, 30, 40]: g maps to 2g + 1.5, so -0.5, 0, 0.5 are the ties 0.5, 1.5, 2.5,
// rounded to the even element 0, 2, 2; -1 is -0.5, rounded to 0 (inside); 1 is 3.5, rounded
// to 4: outside (zeros: 0), or the last element once border clamps it to 3.
BOOST_AUTO_TEST_CASE(grid_sample_nearest_rounds_half_to_even) {
  const Tensor x = filled(DType::F64, {1, 1, 1, 4}, {10, 20, 30, 40});
  const Tensor grid = filled(DType::F64, {1, 1, 5, 2}, {-1, 0, -0.5, 0, 0, 0, 0.5, 0, 1, 0});
  check_close(grid_sample(x, grid, sampling("nearest", "zeros")),
              filled(DType::F64, {1, 1, 1, 5}, {10, 10, 30, 30, 0}), 0, 0);
  check_close(grid_sample(x, grid, sampling("nearest", "border")),
              filled(DType::F64, {1, 1, 1, 5}, {10, 10, 30, 30, 40}), 0, 0);
}

// One row [1, 2, 4, 8] (H = 1: y is 0 exactly and reads row 0 alone). g = -1 maps to -0.5:
// taps -2, -1, 0, 1 with Keys' weights (a = -0.75) -0.09375, 0.59375, 0.59375, -0.09375.
//   zeros:      0.59375 * 1 - 0.09375 * 2                              = 0.40625
//   border:     taps -2, -1 read element 0: 0.5 * 1 + 0.59375 - 0.1875 = 0.90625
//   reflection: -2 -> 1 and -1 -> 0 (about -0.5): -0.1875 + 0.59375 * 2 - 0.1875 = 0.8125
// (padding the point itself first would give element 0 alone: 1). g = -0.5 maps to 0.5:
// taps -1 .. 2, and -1 reads element 0 under both border and reflection:
//   zeros: 0.59375 * 3 - 0.09375 * 4 = 1.40625; border, reflection: 1.40625 - 0.09375 = 1.3125.
BOOST_AUTO_TEST_CASE(grid_sample_bicubic_pads_each_tap) {
  const Tensor x = filled(DType::F32, {1, 1, 1, 4}, {1, 2, 4, 8});
  const Tensor grid = filled(DType::F32, {1, 1, 2, 2}, {-1, 0, -0.5, 0});
  check_close(grid_sample(x, grid, sampling("bicubic", "zeros")),
              filled(DType::F32, {1, 1, 1, 2}, {0.40625, 1.40625}), 1e-7, 0);
  check_close(grid_sample(x, grid, sampling("bicubic", "border")),
              filled(DType::F32, {1, 1, 1, 2}, {0.90625, 1.3125}), 1e-7, 0);
  check_close(grid_sample(x, grid, sampling("bicubic", "reflection")),
              filled(DType::F32, {1, 1, 1, 2}, {0.8125, 1.3125}), 1e-7, 0);
  // align_corners, g = 0: 1.5, taps 0 .. 3 weighted -0.09375, 0.59375, 0.59375, -0.09375.
  check_close(
      grid_sample(x, filled(DType::F32, {1, 1, 1, 2}, {0, 0}), sampling("bicubic", "zeros", 1)),
      filled(DType::F32, {1, 1, 1, 1}, {-0.09375 + 0.59375 * 6 - 0.75}), 1e-7, 0);
}

// NaN gives NaN; an infinite x is outside under zeros (0), at the last column under border
// ((2 + 4) / 2), and NaN under reflection. Inside taps count even at weight 0: the point on
// element (0, 0) with align_corners also reads its right neighbour, inf, at weight 0.
BOOST_AUTO_TEST_CASE(grid_sample_non_finite_values) {
  const Tensor x = filled(DType::F32, {1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor grid = filled(DType::F32, {1, 1, 3, 2}, {kNaN, 0, 0, kNaN, kInf, 0});
  check_close(grid_sample(x, grid, sampling("bilinear", "zeros")),
              filled(DType::F32, {1, 1, 1, 3}, {kNaN, kNaN, 0}), 0, 0);
  check_close(grid_sample(x, grid, sampling("bicubic", "border")),
              filled(DType::F32, {1, 1, 1, 3}, {kNaN, kNaN, 3}), 1e-6, 0);
  check_close(grid_sample(x, grid, sampling("nearest", "reflection")),
              filled(DType::F32, {1, 1, 1, 3}, {kNaN, kNaN, kNaN}), 0, 0);
  const Tensor with_inf = filled(DType::F32, {1, 1, 2, 2}, {1, kInf, 3, 4});
  check_close(grid_sample(with_inf, filled(DType::F32, {1, 1, 1, 2}, {-1, -1}),
                          sampling("bilinear", "zeros", 1)),
              filled(DType::F32, {1, 1, 1, 1}, {kNaN}), 0, 0);
}

// A volume X[z][y][x] = 4z + 2y + x (2 x 2 x 2), which trilinear interpolation reproduces
// exactly: with align_corners, g maps to (g + 1) / 2 on each axis; the grid stores x, y, z.
BOOST_AUTO_TEST_CASE(grid_sample_volumes_interpolate_trilinearly) {
  const Tensor x = filled(DType::F32, {1, 1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  const Tensor grid = filled(DType::F32, {1, 1, 1, 3, 3}, {0, 0, 0, -1, 1, 0.5, 1, -1, -1});
  check_close(grid_sample(x, grid, sampling("bilinear", "zeros", 1)),
              filled(DType::F32, {1, 1, 1, 1, 3}, {3.5, 5, 1}), 0, 0);
  // Nearest, border: (0.6, 0.2, 0.95) rounds to (1, 0, 1); a point past every edge clamps to
  // the far corner.
  const Tensor far = filled(DType::F32, {1, 1, 1, 2, 3}, {0.2F, -0.6F, 0.9F, 3, 3, 3});
  check_close(grid_sample(x, far, sampling("nearest", "border", 1)),
              filled(DType::F32, {1, 1, 1, 1, 2}, {5, 7}), 0, 0);
  // Zeros padding: the far point reads nothing.
  check_close(grid_sample(x, far, sampling("bilinear", "zeros", 1)),
              filled(DType::F32, {1, 1, 1, 1, 2}, {0.6 + 0.2 * 2 + 0.95 * 4, 0}), 1e-5, 1e-6);
}

BOOST_AUTO_TEST_CASE(grid_sample_is_thread_count_invariant) {
  const Tensor x = uniform(DType::F32, {2, 3, 17, 19}, 3);
  const Tensor grid = uniform(DType::F32, {2, 45, 33, 2}, 4, -1.2, 1.2);
  for (const char* mode : {"nearest", "bilinear", "bicubic"}) {
    BOOST_TEST_CONTEXT(mode) {
      const Attributes a = sampling(mode, "reflection");
      BOOST_TEST(grid_sample(x, grid, a, 1).bit_equal(grid_sample(x, grid, a, 4)));
    }
  }
  const Tensor volume = uniform(DType::F32, {2, 3, 7, 9, 11}, 5);
  const Tensor volume_grid = uniform(DType::F32, {2, 5, 12, 13, 3}, 6, -1.2, 1.2);
  for (const char* mode : {"nearest", "bilinear"}) {
    BOOST_TEST_CONTEXT(mode << " volume") {
      const Attributes a = sampling(mode, "zeros");
      BOOST_TEST(
          grid_sample(volume, volume_grid, a, 1).bit_equal(grid_sample(volume, volume_grid, a, 4)));
    }
  }
}

BOOST_AUTO_TEST_CASE(grid_sample_rejects_what_it_cannot_do) {
  const auto build = [](const Shape& x, const Shape& grid) {
    return [=] {
      single_op_graph(OpKind::GridSample, {TypeInfo{DType::F32, x}, TypeInfo{DType::F32, grid}},
                      {});
    };
  };
  expect_error_containing(build({1, 1, 4, 4}, {1, 2, 2, 3}), ErrorCode::VerifyShape,
                          {"GridSample needs grid [N, Ho, Wo, 2] (x, y per output point), got "
                           "[1,2,2,3]"});
  expect_error_containing(build({2, 1, 4, 4}, {1, 2, 2, 2}), ErrorCode::VerifyShape,
                          {"differ in batch size"});
  expect_error_containing(build({1, 1, 0, 4}, {1, 2, 2, 2}), ErrorCode::VerifyShape,
                          {"GridSample needs X with non-empty spatial axes to sample from"});
  expect_error_containing(build({1, 4, 4}, {1, 2, 2, 2}), ErrorCode::VerifyShape,
                          {"GridSample needs X of rank 4 [N, C, H, W] or 5 [N, C, D, H, W]"});
  expect_error_containing(build({1, 1, 2, 4, 4}, {1, 2, 2, 2}), ErrorCode::VerifyShape,
                          {"GridSample needs grid [N, Do, Ho, Wo, 3] (x, y, z per output point) "
                           "for X of rank 5, got [1,2,2,2]"});
  expect_error_containing(
      [] {
        single_op_graph(
            OpKind::GridSample,
            {TypeInfo{DType::F32, {1, 1, 2, 4, 4}}, TypeInfo{DType::F32, {1, 2, 2, 2, 3}}},
            {{"mode", std::string("bicubic")}});
      },
      ErrorCode::VerifyShape, {"GridSample bicubic samples X of rank 4 only"});
}

}  // namespace
}  // namespace volta::test
