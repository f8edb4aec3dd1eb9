// ONNX ops of the current release lowered as composites: AffineGrid (20), TensorScatter (24),
// CausalConvWithState and LinearAttention (27). Expected values come from ONNX 1.23.2's reference
// implementation, run once and pasted here.
#define BOOST_TEST_MODULE onnx_current_ops

#include <cstdint>
#include <string>
#include <vector>

#include "onnx_test_models.h"

namespace volta::onnx::test {
namespace {

constexpr int kDouble = pb::TensorProto::DOUBLE;

// ---- AffineGrid ------------------------------------------------------------------------------

Model affine_grid(int64_t align_corners, const std::vector<int64_t>& theta_shape,
                  const std::vector<int64_t>& out_shape, int elem = kFloat) {
  const auto size_len = static_cast<int64_t>(out_shape.size());
  return one_node("AffineGrid", 20, {{"theta", elem, theta_shape}, {"size", kInt64, {size_len}}},
                  {"grid", elem, out_shape}, [align_corners](pb::NodeProto& n) {
                    set_int(n, "align_corners", align_corners);
                  });
}

const Tensor kTheta2d =
    tensor<float>(Shape{2, 2, 3}, {1, 0.5, 0.25, -0.5, 2, -1, 0, 1, 0, 1, 0, 0.5});
const Tensor kTheta3d = tensor<float>(Shape{1, 3, 4}, {1, 0, 0, 0.5, 0, 2, 0, 0, 0.25, 0, 1, -1});

BOOST_AUTO_TEST_CASE(affine_grid_2d_transforms_the_pixel_centre_grid) {
  const Tensor grid = run_cpu(affine_grid(0, {2, 2, 3}, {2, 2, 3, 2}),
                              {kTheta2d, tensor<int64_t>(Shape{4}, {2, 1, 2, 3})})
                          .at(0);
  BOOST_TEST((grid.shape() == Shape{2, 2, 3, 2}));
  check_values(grid,
               {-0.6666666865348816,
                -1.6666666269302368,
                0.0,
                -2.0,
                0.6666666865348816,
                -2.3333332538604736,
                -0.1666666716337204,
                0.3333333432674408,
                0.5,
                0.0,
                1.1666666269302368,
                -0.3333333432674408,
                -0.5,
                -0.1666666716337204,
                -0.5,
                0.5,
                -0.5,
                1.1666666269302368,
                0.5,
                -0.1666666716337204,
                0.5,
                0.5,
                0.5,
                1.1666666269302368},
               1e-6);
}

BOOST_AUTO_TEST_CASE(affine_grid_2d_align_corners_puts_the_corners_at_plus_minus_one) {
  const Tensor theta = tensor<float>(Shape{1, 2, 3}, {1, 0.5, 0.25, -0.5, 2, -1});
  const Tensor grid = run_cpu(affine_grid(1, {1, 2, 3}, {1, 2, 3, 2}),
                              {theta, tensor<int64_t>(Shape{4}, {1, 3, 2, 3})})
                          .at(0);
  check_values(grid, {-1.25, -2.5, -0.25, -3.0, 0.75, -3.5, -0.25, 1.5, 0.75, 1.0, 1.75, 0.5},
               1e-6);
}

BOOST_AUTO_TEST_CASE(affine_grid_3d_orders_the_coordinates_x_y_z) {
  const Tensor size = tensor<int64_t>(Shape{5}, {1, 1, 2, 2, 2});
  check_values(run_cpu(affine_grid(1, {1, 3, 4}, {1, 2, 2, 2, 3}), {kTheta3d, size}).at(0),
               {-0.5, -2.0, -2.25, 1.5, -2.0, -1.75, -0.5, 2.0, -2.25, 1.5, 2.0, -1.75,
                -0.5, -2.0, -0.25, 1.5, -2.0, 0.25,  -0.5, 2.0, -0.25, 1.5, 2.0, 0.25},
               1e-6);
  check_values(run_cpu(affine_grid(0, {1, 3, 4}, {1, 2, 2, 2, 3}), {kTheta3d, size}).at(0),
               {0.0, -1.0, -1.625, 1.0, -1.0, -1.375, 0.0, 1.0, -1.625, 1.0, 1.0, -1.375,
                0.0, -1.0, -0.625, 1.0, -1.0, -0.375, 0.0, 1.0, -0.625, 1.0, 1.0, -0.375},
               1e-6);
}

BOOST_AUTO_TEST_CASE(affine_grid_refuses_other_ranks_mismatched_theta_and_integer_theta) {
  expect_import_error(
      affine_grid(0, {2, 2, 3}, {2, 3, 2}), {kTheta2d, tensor<int64_t>(Shape{3}, {2, 1, 3})},
      ErrorCode::ImportUnsupported, "supported: [N, C, H, W] (2-D) or [N, C, D, H, W] (3-D)");
  expect_import_error(affine_grid(0, {2, 2, 3}, {2, 2, 2, 2, 3}),
                      {kTheta2d, tensor<int64_t>(Shape{5}, {2, 1, 2, 2, 2})},
                      ErrorCode::ImportInvalidModel, "expected [2,3,4]");
  expect_import_error(affine_grid(2, {2, 2, 3}, {2, 2, 3, 2}),
                      {kTheta2d, tensor<int64_t>(Shape{4}, {2, 1, 2, 3})},
                      ErrorCode::ImportInvalidModel, "align_corners must be 0 or 1");
  expect_import_error(affine_grid(0, {1, 2, 3}, {1, 1, 1, 2}, kInt64),
                      {tensor<int64_t>(Shape{1, 2, 3}, {1, 0, 0, 0, 1, 0}),
                       tensor<int64_t>(Shape{4}, {1, 1, 1, 1})},
                      ErrorCode::ImportUnsupported, "supported: f32, f64");
}

}  // namespace
}  // namespace volta::onnx::test
