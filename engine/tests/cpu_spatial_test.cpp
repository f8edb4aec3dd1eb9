// CPU kernels of the spatial ops added for ONNX import, against hand-checked values.
#define BOOST_TEST_MODULE cpu_spatial
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>

#include "expect_error.h"
#include "test_util.h"

namespace volta {
namespace {

using test::filled;
using test::run_op;
using Ints = std::vector<int64_t>;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Tensor f32(Shape shape, const std::vector<double>& values) {
  return filled(DType::F32, std::move(shape), values);
}
Tensor i64(Shape shape, const std::vector<double>& values) {
  return filled(DType::I64, std::move(shape), values);
}

Tensor iota(Shape shape) {
  Tensor t(DType::F32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_double(i, static_cast<double>(i));
  return t;
}

Tensor ones(Shape shape) {
  Tensor t(DType::F32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_double(i, 1.0);
  return t;
}

void check_equal(const Tensor& got, const Tensor& want) {
  BOOST_REQUIRE_EQUAL(got.shape().str(), want.shape().str());
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = got.get_double(i), w = want.get_double(i);
    BOOST_CHECK_MESSAGE(g == w || (std::isnan(g) && std::isnan(w)),
                        "element " << i << ": got " << g << ", want " << w);
  }
}

// The ONNX backend test "basic_conv_with_padding": a 3x3 box filter summing 0..24.
BOOST_AUTO_TEST_CASE(conv_box_filter_with_padding) {
  const auto y =
      run_op(OpKind::Conv, {iota({1, 1, 5, 5}), ones({1, 1, 3, 3})}, {{"pads", Ints{1, 1, 1, 1}}});
  check_equal(y[0], f32({1, 1, 5, 5}, {12,  21, 27, 33,  24,  33,  54,  63, 72,  51,  63,  99, 108,
                                       117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84}));
}

// Zero padding is data (numerics policy): a NaN weight reaches every output of its channel,
// also the border outputs whose tap falls into the padding, on the im2col path and on the
// depthwise kernel alike; the other channels stay finite.
BOOST_AUTO_TEST_CASE(conv_nan_weight_over_padding_reaches_every_output_of_its_channel) {
  const Attributes padded = {{"pads", Ints{1, 1, 1, 1}}};
  Tensor w = ones({2, 1, 3, 3});
  w.set_double(0, kNaN);  // channel 0's top-left tap: padding for the whole top row and left column
  Tensor depthwise = w;
  const auto check = [](const Tensor& y) {
    for (int64_t i = 0; i < 25; ++i) {
      BOOST_CHECK_MESSAGE(std::isnan(y.get_double(i)), "channel 0 output " << i << " is finite");
      BOOST_CHECK_MESSAGE(std::isfinite(y.get_double(25 + i)), "channel 1 output " << i);
    }
  };
  Attributes grouped = padded;
  grouped["group"] = int64_t{2};
  check(run_op(OpKind::Conv, {iota({1, 2, 5, 5}), depthwise}, grouped)[0]);  // depthwise kernel
  check(run_op(OpKind::Conv, {iota({1, 1, 5, 5}), w}, padded)[0]);           // im2col + GEMM
  // An infinite weight over a padded zero is NaN too (0 * Inf).
  Tensor inf_w = ones({1, 1, 3, 3});
  inf_w.set_double(0, std::numeric_limits<double>::infinity());
  const Tensor y = run_op(OpKind::Conv, {ones({1, 1, 5, 5}), inf_w}, padded)[0];
  BOOST_TEST(std::isnan(y.get_double(0)));  // tap (0, 0) over the padding
  BOOST_TEST(y.get_double(6) == std::numeric_limits<double>::infinity());  // over the data
}

// Group g sees only its own input channels; the bias is added per output channel.
BOOST_AUTO_TEST_CASE(conv_groups_and_bias) {
  const auto y = run_op(
      OpKind::Conv,
      {f32({1, 2, 1, 3}, {1, 2, 3, 4, 5, 6}), f32({2, 1, 1, 2}, {1, 1, 1, -1}), f32({2}, {10, 20})},
      {{"group", int64_t{2}}});
  check_equal(y[0], f32({1, 2, 1, 2}, {13, 15, 19, 19}));
}

// Strided and dilated taps skip inputs: y[o] = x[2o] + 10 x[2o + 2] for a [1, 10] kernel
// dilated by 2.
BOOST_AUTO_TEST_CASE(conv_strides_and_dilations) {
  const auto y = run_op(OpKind::Conv, {iota({1, 1, 7}), f32({1, 1, 2}, {1, 10})},
                        {{"strides", Ints{2}}, {"dilations", Ints{2}}});
  check_equal(y[0], f32({1, 1, 3}, {20, 42, 64}));
}

// ONNX "convtranspose": every input scatters a 3x3 box of ones into both output channels.
BOOST_AUTO_TEST_CASE(conv_transpose_scatters_boxes) {
  const auto y = run_op(OpKind::ConvTranspose, {iota({1, 1, 3, 3}), ones({1, 2, 3, 3})});
  const std::vector<double> plane = {0,  1,  3, 3,  2,  3,  8,  15, 12, 7,  9,  21, 36,
                                     27, 15, 9, 20, 33, 24, 13, 6,  13, 21, 15, 8};
  std::vector<double> both = plane;
  both.insert(both.end(), plane.begin(), plane.end());
  check_equal(y[0], f32({1, 2, 5, 5}, both));
}

// Stride 2: x = [1, 2] with w = [1, 10, 100] gives the full output [1, 10, 102, 20, 200];
// pads [1, 0] trim its first element, output_padding 1 appends one that only the bias reaches.
BOOST_AUTO_TEST_CASE(conv_transpose_pads_and_output_padding) {
  const auto y = run_op(OpKind::ConvTranspose,
                        {f32({1, 1, 2}, {1, 2}), f32({1, 1, 3}, {1, 10, 100}), f32({1}, {0.5})},
                        {{"strides", Ints{2}}, {"pads", Ints{1, 0}}, {"output_padding", Ints{1}}});
  check_equal(y[0], f32({1, 1, 5}, {10.5, 102.5, 20.5, 200.5, 0.5}));
}

// Ties go to the first maximum in window order; Indices count from the start of X (so
// channel 1 starts at 6), row-major or, with storage_order 1, column-major within a plane.
BOOST_AUTO_TEST_CASE(max_pool_indices_and_ties) {
  const Tensor x = f32({1, 2, 2, 3}, {1, 3, 3, 3, 2, 1, 0, 0, 5, 5, 0, 0});
  const Attributes window = {{"kernel_shape", Ints{2, 2}}};
  const auto row_major = run_op(OpKind::MaxPool, {x}, window, 2);
  check_equal(row_major[0], f32({1, 2, 1, 2}, {3, 3, 5, 5}));
  check_equal(row_major[1], i64({1, 2, 1, 2}, {1, 1, 9, 8}));
  Attributes column = window;
  column["storage_order"] = int64_t{1};
  const auto column_major = run_op(OpKind::MaxPool, {x}, column, 2);
  check_equal(column_major[1], i64({1, 2, 1, 2}, {2, 2, 7, 10}));
}

// NaN wins over any number, and Indices point at the window's first NaN; padding never wins
// even over -inf.
BOOST_AUTO_TEST_CASE(max_pool_nan_and_padding) {
  const auto y = run_op(OpKind::MaxPool, {f32({1, 1, 1, 4}, {1, kNaN, 3, kNaN})},
                        {{"kernel_shape", Ints{1, 2}}}, 2);
  check_equal(y[0], f32({1, 1, 1, 3}, {kNaN, kNaN, kNaN}));
  check_equal(y[1], i64({1, 1, 1, 3}, {1, 1, 3}));
  const double inf = std::numeric_limits<double>::infinity();
  const auto padded = run_op(OpKind::MaxPool, {f32({1, 1, 2}, {-inf, -1})},
                             {{"kernel_shape", Ints{2}}, {"pads", Ints{1, 1}}}, 2);
  check_equal(padded[0], f32({1, 1, 3}, {-inf, -1, -1}));
  check_equal(padded[1], i64({1, 1, 3}, {0, 1, 1}));
}

// A corner window of a 1-padded 2x2 input holds one element: its mean is that element, or a
// quarter of it when the three padding positions count.
BOOST_AUTO_TEST_CASE(average_pool_count_include_pad) {
  const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  const Attributes window = {{"kernel_shape", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}};
  check_equal(run_op(OpKind::AveragePool, {x}, window)[0],
              f32({1, 1, 3, 3}, {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4}));
  Attributes include = window;
  include["count_include_pad"] = int64_t{1};
  check_equal(run_op(OpKind::AveragePool, {x}, include)[0],
              f32({1, 1, 3, 3}, {0.25, 0.75, 0.5, 1, 2.5, 1.5, 0.75, 1.75, 1}));
}

// ceil_mode keeps a last, partial window ([4] and the end pad) as long as it starts inside
// the input; count_include_pad counts the pad position it covers but not what lies beyond.
BOOST_AUTO_TEST_CASE(average_pool_ceil_mode) {
  const Tensor x = iota({1, 1, 5});
  Attributes attrs = {{"kernel_shape", Ints{2}}, {"strides", Ints{2}}, {"ceil_mode", int64_t{1}}};
  check_equal(run_op(OpKind::AveragePool, {x}, attrs)[0], f32({1, 1, 3}, {0.5, 2.5, 4}));
  attrs["pads"] = Ints{0, 1};
  attrs["count_include_pad"] = int64_t{1};
  check_equal(run_op(OpKind::AveragePool, {x}, attrs)[0], f32({1, 1, 3}, {0.5, 2.5, 2}));
  // Stride 3 would start a third window at 6, past the input: it is dropped.
  attrs["strides"] = Ints{3};
  check_equal(run_op(OpKind::AveragePool, {x}, attrs)[0], f32({1, 1, 2}, {0.5, 3.5}));
}

BOOST_AUTO_TEST_CASE(lp_pool_norms) {
  const Tensor x = f32({1, 1, 2}, {3, -4});
  const Attributes window = {{"kernel_shape", Ints{2}}};
  check_equal(run_op(OpKind::LpPool, {x}, window)[0], f32({1, 1, 1}, {5}));
  Attributes p1 = window;
  p1["p"] = int64_t{1};
  check_equal(run_op(OpKind::LpPool, {x}, p1)[0], f32({1, 1, 1}, {7}));
  Attributes p3 = window;
  p3["p"] = int64_t{3};
  test::check_close(run_op(OpKind::LpPool, {x}, p3)[0], f32({1, 1, 1}, {std::cbrt(91.0)}));
}

BOOST_AUTO_TEST_CASE(global_pools) {
  const Tensor x = f32({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, kNaN, -3});
  check_equal(run_op(OpKind::GlobalAveragePool, {x})[0], f32({1, 2, 1, 1}, {2.5, kNaN}));
  check_equal(run_op(OpKind::GlobalMaxPool, {x})[0], f32({1, 2, 1, 1}, {4, kNaN}));
  test::check_close(run_op(OpKind::GlobalLpPool, {x})[0],
                    f32({1, 2, 1, 1}, {std::sqrt(30.0), kNaN}));
}

// f32 window sums run in double (the op table's Wide accumulator): the mean of the largest
// finite f32 is itself and the 2-norm of 1e30s is finite, where an f32 sum overflows.
BOOST_AUTO_TEST_CASE(f32_pool_sums_do_not_overflow) {
  const double largest = std::numeric_limits<float>::max();
  const Tensor big = f32({1, 1, 2, 2}, {largest, largest, largest, largest});
  const Attributes window = {{"kernel_shape", Ints{2, 2}}};
  check_equal(run_op(OpKind::AveragePool, {big}, window)[0], f32({1, 1, 1, 1}, {largest}));
  check_equal(run_op(OpKind::GlobalAveragePool, {big})[0], f32({1, 1, 1, 1}, {largest}));
  const Tensor x = f32({1, 1, 2, 2}, {1e30, 1e30, 1e30, 1e30});
  test::check_close(run_op(OpKind::LpPool, {x}, window)[0], f32({1, 1, 1, 1}, {2e30}), 0, 1e-6);
  test::check_close(run_op(OpKind::GlobalLpPool, {x})[0], f32({1, 1, 1, 1}, {2e30}), 0, 1e-6);
}

// Conv's filter gradient of the box filter above with dY all ones: each weight sums the inputs
// its tap reads over all windows, 0..24 less the rows and columns that fall into the padding;
// depthwise (the direct kernel) gives the same per channel.
BOOST_AUTO_TEST_CASE(conv_grad_filter_sums_each_taps_inputs) {
  const Attributes window = {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}};
  const std::vector<double> sums = {144, 190, 160, 230, 300, 250, 224, 290, 240};
  check_equal(run_op(OpKind::ConvGradFilter, {iota({1, 1, 5, 5}), ones({1, 1, 5, 5})}, window)[0],
              f32({1, 1, 3, 3}, sums));
  Tensor x(DType::F32, Shape{1, 2, 5, 5});
  for (int64_t i = 0; i < x.numel(); ++i) x.set_double(i, static_cast<double>(i % 25));
  Attributes depthwise = window;
  depthwise["group"] = int64_t{2};
  std::vector<double> both = sums;
  both.insert(both.end(), sums.begin(), sums.end());
  check_equal(run_op(OpKind::ConvGradFilter, {x, ones({1, 2, 5, 5})}, depthwise)[0],
              f32({2, 1, 3, 3}, both));
  test::expect_error_containing(
      [&] {
        run_op(OpKind::ConvGradFilter, {iota({1, 1, 5, 5}), ones({1, 1, 6, 5})}, window);
      },
      ErrorCode::VerifyShape,
      {"spatial axis 0: dY [1,1,6,5] has 6 window positions, the padded X [1,1,5,5] fits 5"});
}

// A window that holds only padding has nothing to pool: the shape rule rejects it.
BOOST_AUTO_TEST_CASE(window_over_padding_only_is_rejected) {
  test::expect_error_containing(
      [] {
        run_op(OpKind::MaxPool, {iota({1, 1, 4})},
               {{"kernel_shape", Ints{2}}, {"pads", Ints{0, 3}}});
      },
      ErrorCode::VerifyShape, {"the window of output 4 covers only padding"});
  test::expect_error_containing(
      [] {
        run_op(OpKind::Conv, {iota({1, 4, 5, 5}), ones({6, 3, 3, 3})}, {{"group", int64_t{2}}});
      },
      ErrorCode::VerifyShape, {"does not match 4 input channels with group 2"});
}

// Batches larger than one im2col / col2im step, on any thread count, give the bits of
// one image at a time: the work split never changes an element's sum.
BOOST_AUTO_TEST_CASE(batch_steps_and_threads_do_not_change_bits) {
  struct Case {
    OpKind op;
    Shape x, w;
  };
  for (const Case& c : {Case{OpKind::Conv, {9, 16, 64, 64}, {4, 16, 3, 3}},
                        Case{OpKind::ConvTranspose, {5, 8, 64, 64}, {8, 16, 4, 4}}}) {
    const Tensor x = test::uniform(DType::F32, c.x, 1);
    const Tensor w = test::uniform(DType::F32, c.w, 2);
    const Tensor b = test::uniform(DType::F32, Shape{c.op == OpKind::Conv ? c.w[0] : c.w[1]}, 3);
    const Attributes attrs = {{"pads", Ints{1, 1, 1, 1}}};
    const Tensor whole = run_op(c.op, {x, w, b}, attrs, 1, 1)[0];
    BOOST_CHECK(whole.bit_equal(run_op(c.op, {x, w, b}, attrs, 1, 4)[0]));
    const int64_t image_in = x.numel() / c.x[0];
    const int64_t image_out = whole.numel() / c.x[0];
    Shape one = c.x;
    one[0] = 1;
    for (int64_t n = 0; n < c.x[0]; ++n) {
      Tensor xn(DType::F32, one);
      for (int64_t i = 0; i < image_in; ++i) xn.set_double(i, x.get_double(n * image_in + i));
      const Tensor yn = run_op(c.op, {xn, w, b}, attrs, 1, 3)[0];
      bool same = true;
      for (int64_t i = 0; i < image_out; ++i) {
        same = same && yn.get_double(i) == whole.get_double(n * image_out + i);
      }
      BOOST_CHECK_MESSAGE(same, op_name(c.op) << " image " << n << " differs from the batch");
    }
  }
}

}  // namespace
}  // namespace volta
