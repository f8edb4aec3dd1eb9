// ONNX ops of the current release lowered as composites: AffineGrid (20), TensorScatter (24),
// CumProd (26), CausalConvWithState and LinearAttention (27), ReduceMax and ReduceMin on bool
// (20); DeformConv (19); and BitCast (26). Resize 18's antialias and GridSample 20's volumes,
// lowered to the internal ops. Expected values come from ONNX 1.23.2's reference implementation,
// run once and pasted here.
#define BOOST_TEST_MODULE onnx_current_ops

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "onnx_test_models.h"

namespace volta::onnx::test {
namespace {

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

// ---- TensorScatter ---------------------------------------------------------------------------

// Values from `first` on, stepping by `step`: the caches count up, the updates down from -1.
Tensor counting(Shape shape, float first, float step) {
  std::vector<float> v(static_cast<size_t>(shape.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = first + step * static_cast<float>(i);
  return Tensor::from<float>(std::move(shape), v);
}

Model tensor_scatter(const std::vector<int64_t>& past, const std::vector<int64_t>& update,
                     bool with_writes, const std::string& mode, int64_t axis) {
  std::vector<Io> inputs = {{"past", kFloat, past}, {"update", kFloat, update}};
  if (with_writes) inputs.push_back({"writes", kInt64, {past[0]}});
  return one_node("TensorScatter", 24, inputs, {"present", kFloat, past},
                  [mode, axis](pb::NodeProto& n) {
                    set_string(n, "mode", mode);
                    set_int(n, "axis", axis);
                  });
}

BOOST_AUTO_TEST_CASE(tensor_scatter_circular_wraps_each_rows_writes_around_the_cache) {
  const Tensor present =
      run_cpu(tensor_scatter({2, 2, 4, 2}, {2, 2, 3, 2}, true, "circular", 2),
              {counting(Shape{2, 2, 4, 2}, 0, 1), counting(Shape{2, 2, 3, 2}, -1, -1),
               tensor<int64_t>(Shape{2}, {1, 3})})
          .at(0);
  BOOST_TEST((present.shape() == Shape{2, 2, 4, 2}));
  check_values(present,
               {0,   1,   -1,  -2,  -3, -4, -5,  -6,  8,   9,   -7,  -8,  -9, -10, -11, -12,
                -15, -16, -17, -18, 20, 21, -13, -14, -21, -22, -23, -24, 28, 29,  -19, -20});
}

BOOST_AUTO_TEST_CASE(tensor_scatter_linear_writes_from_each_rows_index) {
  const Tensor present =
      run_cpu(tensor_scatter({2, 2, 4, 2}, {2, 2, 2, 2}, true, "linear", -2),
              {counting(Shape{2, 2, 4, 2}, 0, 1), counting(Shape{2, 2, 2, 2}, -1, -1),
               tensor<int64_t>(Shape{2}, {2, 0})})
          .at(0);
  check_values(present, {0,  1,   2,   3,   -1, -2, -3, -4, 8,   9,   10,  11,  -5, -6, -7, -8,
                         -9, -10, -11, -12, 20, 21, 22, 23, -13, -14, -15, -16, 28, 29, 30, 31});
  // The last axis, and no write_indices: every row writes from position 0.
  const Tensor last = run_cpu(tensor_scatter({2, 3, 2}, {2, 3, 1}, false, "linear", -1),
                              {counting(Shape{2, 3, 2}, 0, 1), counting(Shape{2, 3, 1}, -1, -1)})
                          .at(0);
  check_values(last, {-1, 1, -2, 3, -3, 5, -4, 7, -5, 9, -6, 11});
}

BOOST_AUTO_TEST_CASE(tensor_scatter_refuses_other_modes_the_batch_axis_and_misfit_updates) {
  const std::vector<Tensor> inputs = {counting(Shape{2, 4, 2}, 0, 1),
                                      counting(Shape{2, 2, 2}, -1, -1)};
  expect_import_error(tensor_scatter({2, 4, 2}, {2, 2, 2}, false, "ring", 1), inputs,
                      ErrorCode::ImportUnsupported, "supported: linear, circular");
  expect_import_error(tensor_scatter({2, 4, 2}, {2, 2, 2}, false, "linear", 0), inputs,
                      ErrorCode::ImportInvalidModel, "it must name a non-batch axis");
  expect_import_error(tensor_scatter({2, 4, 2}, {2, 2, 2}, false, "linear", 2), inputs,
                      ErrorCode::ImportInvalidModel, "does not fit past_cache");
}

// ---- CausalConvWithState ---------------------------------------------------------------------

// CausalConvWithState over x [1, 2, length] with a kernel of 3, its optional inputs named when
// given ("" leaves one out).
Model causal_conv(int64_t length, bool bias, bool past, const std::string& activation = "none") {
  std::vector<Io> inputs = {{"x", kFloat, {1, 2, length}}, {"w", kFloat, {2, 1, 3}}};
  inputs.push_back(bias ? Io{"b", kFloat, {2}} : Io{"", kFloat, {}});
  if (past) inputs.push_back({"state", kFloat, {1, 2, 2}});
  return one_node("CausalConvWithState", 27, inputs,
                  {{"y", kFloat, {1, 2, length}}, {"present", kFloat, {1, 2, 2}}},
                  [activation](pb::NodeProto& n) { set_string(n, "activation", activation); });
}

const Tensor kConvX = tensor<float>(Shape{1, 2, 4}, {1, 2, -1, 0.5, 0, -2, 3, 1});
const Tensor kConvW = tensor<float>(Shape{2, 1, 3}, {0.5, -1, 2, 1, 0.25, -0.5});
const Tensor kConvState = tensor<float>(Shape{1, 2, 2}, {3, -1, 0.5, 2});

BOOST_AUTO_TEST_CASE(causal_conv_pads_with_zeros_and_carries_the_last_positions) {
  const std::vector<Tensor> out = run_cpu(causal_conv(4, false, false), {kConvX, kConvW});
  check_values(out.at(0), {2, 3, -3.5, 3, 0, 1, -2, -1.75}, 1e-6);
  BOOST_TEST((out.at(1).shape() == Shape{1, 2, 2}));
  check_values(out.at(1), {-1, 0.5, 3, 1});
}

BOOST_AUTO_TEST_CASE(causal_conv_reads_past_state_bias_and_silu) {
  const Tensor bias = tensor<float>(Shape{2}, {0.1F, -0.2F});
  const std::vector<Tensor> out =
      run_cpu(causal_conv(4, true, true, "silu"), {kConvX, kConvW, bias, kConvState});
  check_values(out.at(0),
               {4.5542216300964355, 2.4202401638031006, -0.10980457067489624, 2.966367483139038,
                0.5519796013832092, 2.6394922733306885, -0.21945105493068695, -0.24287903308868408},
               1e-6);
  check_values(out.at(1), {-1, 0.5, 3, 1});
  // A decode step shorter than the carry: the state keeps its last position and gains x.
  const std::vector<Tensor> step = run_cpu(
      causal_conv(1, false, true), {tensor<float>(Shape{1, 2, 1}, {1.5, -2}), kConvW, kConvState});
  check_values(step.at(0), {5.5, 2}, 1e-6);
  check_values(step.at(1), {-1, 1.5, 2, -2});
}

BOOST_AUTO_TEST_CASE(causal_conv_refuses_other_activations_and_misshapen_state) {
  expect_import_error(causal_conv(4, false, false, "gelu"), {kConvX, kConvW},
                      ErrorCode::ImportUnsupported, "supported: none, silu, swish");
  const Model wrong_state = one_node("CausalConvWithState", 27,
                                     {{"x", kFloat, {1, 2, 4}},
                                      {"w", kFloat, {2, 1, 3}},
                                      {"", kFloat, {}},
                                      {"state", kFloat, {1, 2, 3}}},
                                     {{"y", kFloat, {1, 2, 4}}, {"present", kFloat, {1, 2, 2}}});
  expect_import_error(wrong_state, {kConvX, kConvW, counting(Shape{1, 2, 3}, 0, 1)},
                      ErrorCode::ImportInvalidModel, "past_state [1,2,3] must be [1,2,2]");
}

// ---- LinearAttention -------------------------------------------------------------------------

// LinearAttention with inputs named in order; "" leaves an optional one out.
Model linear_attention(const std::vector<Io>& inputs, const std::vector<Io>& outputs,
                       const std::string& rule, int64_t q_heads, int64_t kv_heads,
                       float scale = 0) {
  return one_node("LinearAttention", 27, inputs, outputs,
                  [rule, q_heads, kv_heads, scale](pb::NodeProto& n) {
                    set_string(n, "update_rule", rule);
                    set_int(n, "q_num_heads", q_heads);
                    set_int(n, "kv_num_heads", kv_heads);
                    if (scale != 0) set_float(n, "scale", scale);
                  });
}

BOOST_AUTO_TEST_CASE(linear_attention_gated_delta_shares_a_kv_heads_state_across_query_heads) {
  // Two query heads on one key-value head, a decay per key dim, beta per step, a past state.
  const Model model = linear_attention(
      {{"q", kFloat, {1, 2, 4}},
       {"k", kFloat, {1, 2, 2}},
       {"v", kFloat, {1, 2, 2}},
       {"past", kFloat, {1, 1, 2, 2}},
       {"decay", kFloat, {1, 2, 2}},
       {"beta", kFloat, {1, 2, 1}}},
      {{"y", kFloat, {1, 2, 4}}, {"present", kFloat, {1, 1, 2, 2}}}, "gated_delta", 2, 1);
  const std::vector<Tensor> out = run_cpu(
      model, {tensor<float>(Shape{1, 2, 4}, {-1.0, 0.75, -0.25, -1.25, 0.5, -0.5, 1.25, 0.25}),
              tensor<float>(Shape{1, 2, 2}, {-0.75, 1.0, 0.0, -1.0}),
              tensor<float>(Shape{1, 2, 2}, {-0.5, 1.25, 0.25, -0.75}),
              tensor<float>(Shape{1, 1, 2, 2}, {0.0, -1.0, 0.75, -0.25}),
              tensor<float>(Shape{1, 2, 2}, {-0.125, -0.625, 0.25, -0.25}),
              tensor<float>(Shape{1, 2, 1}, {0.5, 0.25})});
  check_values(
      out.at(0),
      {-0.2651650309562683, 0.9359211921691895, -0.016202887520194054, 0.003083969233557582,
       0.18573489785194397, -0.6367329955101013, 0.3675173223018646, -1.2522282600402832},
      1e-6);
  check_values(out.at(1),
               {0.4340549111366272, -1.4807709455490112, -0.09128271043300629, 0.3201819360256195},
               1e-6);
}

BOOST_AUTO_TEST_CASE(linear_attention_linear_accumulates_from_zero_with_an_explicit_scale) {
  const Model model = linear_attention(
      {{"q", kFloat, {2, 3, 2}}, {"k", kFloat, {2, 3, 2}}, {"v", kFloat, {2, 3, 1}}},
      {{"y", kFloat, {2, 3, 1}}, {"present", kFloat, {2, 1, 2, 1}}}, "linear", 1, 1, 0.5F);
  const std::vector<Tensor> out = run_cpu(
      model, {tensor<float>(Shape{2, 3, 2},
                            {0.25, -0.75, 1, 0, -1, 0.75, -0.25, -1.25, 0.5, -0.5, 1.25, 0.25}),
              tensor<float>(Shape{2, 3, 2},
                            {0.5, -0.5, 1.25, 0.25, -0.75, 1, 0, -1, 0.75, -0.25, -1.25, 0.5}),
              tensor<float>(Shape{2, 3, 1}, {0.75, -0.25, -1.25, 0.5, -0.5, 1.25})});
  check_values(out.at(0), {0.1875, 0.03125, -1.1328125, 0.3125, 0.0, -1.1796875}, 1e-6);
  check_values(out.at(1), {1.0, -1.6875, -1.9375, 0.25}, 1e-6);
}

BOOST_AUTO_TEST_CASE(linear_attention_refuses_unknown_rules_and_missing_or_stray_gates) {
  const std::vector<Io> qkv = {
      {"q", kFloat, {1, 1, 2}}, {"k", kFloat, {1, 1, 2}}, {"v", kFloat, {1, 1, 2}}};
  const std::vector<Io> out = {{"y", kFloat, {1, 1, 2}}};
  const std::vector<Tensor> values(3, tensor<float>(Shape{1, 1, 2}, {1, 2}));
  expect_import_error(linear_attention(qkv, out, "softmax", 1, 1), values,
                      ErrorCode::ImportUnsupported, "supported: linear, gated, delta, gated_delta");
  expect_import_error(linear_attention(qkv, out, "gated", 1, 1), values,
                      ErrorCode::ImportInvalidModel, "'gated' requires the decay input");
  std::vector<Io> with_beta = qkv;
  with_beta.push_back({"", kFloat, {}});
  with_beta.push_back({"", kFloat, {}});
  with_beta.push_back({"beta", kFloat, {1, 1, 1}});
  std::vector<Tensor> beta_values = values;
  beta_values.push_back(tensor<float>(Shape{1, 1, 1}, {0.5}));
  expect_import_error(linear_attention(with_beta, out, "linear", 1, 1), beta_values,
                      ErrorCode::ImportInvalidModel, "'linear' forbids the beta input");
  expect_import_error(linear_attention(qkv, out, "linear", 3, 2), values,
                      ErrorCode::ImportInvalidModel, "must be a positive multiple of kv_num_heads");
}

// ---- CumProd ---------------------------------------------------------------------------------

Model cumprod(int elem, const std::vector<int64_t>& shape, int64_t exclusive, int64_t reverse) {
  return one_node("CumProd", 26, {{"x", elem, shape}, {"axis", kInt64, {}}}, {"y", elem, shape},
                  [=](pb::NodeProto& n) {
                    set_int(n, "exclusive", exclusive);
                    set_int(n, "reverse", reverse);
                  });
}

Tensor axis_value(int64_t axis) { return tensor<int64_t>(Shape{}, {axis}); }

BOOST_AUTO_TEST_CASE(cumprod_multiplies_along_the_axis_each_way) {
  const Tensor x = tensor<float>(Shape{2, 3}, {1, 2, 3, -4, 0.5, 2});
  check_values(run_cpu(cumprod(kFloat, {2, 3}, 0, 0), {x, axis_value(1)}).at(0),
               {1, 2, 6, -4, -2, -4});
  check_values(run_cpu(cumprod(kFloat, {2, 3}, 0, 0), {x, axis_value(-2)}).at(0),
               {1, 2, 3, -4, 1, 6});
  check_values(run_cpu(cumprod(kFloat, {2, 3}, 1, 1), {x, axis_value(1)}).at(0),
               {6, 3, 1, 1, 2, 1});
  const Tensor ints = tensor<int32_t>(Shape{4}, {2, -3, 5, 7});
  check_values(run_cpu(cumprod(kInt32, {4}, 1, 0), {ints, axis_value(0)}).at(0), {1, 2, -6, -30});
  check_values(run_cpu(cumprod(kInt32, {4}, 0, 1), {ints, axis_value(0)}).at(0),
               {-210, -105, 35, 7});
}

BOOST_AUTO_TEST_CASE(cumprod_refuses_a_bad_axis_or_flag_a_long_axis_and_bool) {
  const Tensor x(DType::F32, Shape{2, 3});
  expect_import_error(cumprod(kFloat, {2, 3}, 0, 0), {x, axis_value(2)},
                      ErrorCode::ImportInvalidModel, "axis 2 is outside [-2, 1] for input [2,3]");
  expect_import_error(cumprod(kFloat, {2, 3}, 2, 0), {x, axis_value(0)},
                      ErrorCode::ImportInvalidModel, "exclusive must be 0 or 1; got 2");
  expect_import_error(
      cumprod(kFloat, {1025}, 0, 0), {Tensor(DType::F32, Shape{1025}), axis_value(0)},
      ErrorCode::ImportUnsupported,
      "an axis of 1025 elements; supported: at most 1024 (the product is unrolled)");
  expect_import_error(cumprod(kBool, {3}, 0, 0), {Tensor(DType::Bool, Shape{3}), axis_value(0)},
                      ErrorCode::ImportUnsupported, "bool");
}

// ---- ReduceMax and ReduceMin on bool -----------------------------------------------------------

Model bool_reduce(const std::string& op, const std::vector<int64_t>& shape) {
  return one_node(op, 20, {{"x", kBool, shape}, {"axes", kInt64, {1}}},
                  {"y", kBool, {shape[0], 1}});
}

BOOST_AUTO_TEST_CASE(bool_reduce_max_and_min_are_any_and_all_and_empty_sets_give_false_and_true) {
  Tensor x(DType::Bool, Shape{3, 2});
  for (int64_t i : {1, 2, 3}) x.set_int(i, 1);  // rows: {0, 1}, {1, 1}, {0, 0}
  const Tensor axes = tensor<int64_t>(Shape{1}, {1});
  check_values(run_cpu(bool_reduce("ReduceMax", {3, 2}), {x, axes}).at(0), {1, 1, 0});
  check_values(run_cpu(bool_reduce("ReduceMin", {3, 2}), {x, axes}).at(0), {0, 1, 0});
  // A reduction over nothing: the bool type's minimum (false) and maximum (true).
  const Tensor empty(DType::Bool, Shape{2, 0});
  const Tensor max = run_cpu(bool_reduce("ReduceMax", {2, 0}), {empty, axes}).at(0);
  BOOST_TEST((max.dtype() == DType::Bool));
  check_values(max, {0, 0});
  check_values(run_cpu(bool_reduce("ReduceMin", {2, 0}), {empty, axes}).at(0), {1, 1});
}

// ---- BitCast ---------------------------------------------------------------------------------

Model bit_cast(int from, int to, const std::vector<int64_t>& shape) {
  return one_node("BitCast", 26, {{"x", from, shape}}, {"y", to, shape},
                  [to](pb::NodeProto& n) { set_int(n, "to", to); });
}

BOOST_AUTO_TEST_CASE(bit_cast_reads_the_bits_as_the_target_type) {
  const Tensor f = tensor<float>(Shape{4}, {1.0F, -0.0F, std::bit_cast<float>(0xFFC01234U), 0.1F});
  const Tensor i = run_cpu(bit_cast(kFloat, kInt32, {4}), {f}).at(0);
  BOOST_TEST((i.dtype() == DType::I32));
  check_values(i, {1065353216, -2147483648.0, std::bit_cast<int32_t>(0xFFC01234U), 1036831949});
  const Tensor back = run_cpu(bit_cast(kInt32, kFloat, {4}), {i}).at(0);
  BOOST_TEST(back.bit_equal(f));
  const Tensor b = run_cpu(bit_cast(kBool, kUint8, {2}), {Tensor(DType::Bool, Shape{2})}).at(0);
  BOOST_TEST((b.dtype() == DType::U8));
  check_values(b, {0, 0});
}

BOOST_AUTO_TEST_CASE(bit_cast_refuses_another_width_and_types_volta_lacks) {
  const Tensor f(DType::F32, Shape{2});
  expect_import_error(bit_cast(kFloat, kDouble, {2}), {f}, ErrorCode::ImportInvalidModel,
                      "to is DOUBLE (64 bits), the input FLOAT (32 bits): BitCast keeps the width");
  // A float8 target (newer than the ONNX 1.12 headers Volta builds with): refused as the graph's
  // output type, and as the attribute where the output claims another type.
  constexpr int kFloat8E4M3Fn = 17;
  expect_import_error(bit_cast(kFloat, kFloat8E4M3Fn, {2}), {f}, ErrorCode::ImportUnsupported,
                      "graph output 'y' has type FLOAT8E4M3FN");
  const Model mislabelled = one_node("BitCast", 26, {{"x", kFloat, {2}}}, {"y", kInt32, {2}},
                                     [](pb::NodeProto& n) { set_int(n, "to", kFloat8E4M3Fn); });
  expect_import_error(mislabelled, {f}, ErrorCode::ImportUnsupported, "to");
}

// ---- DeformConv --------------------------------------------------------------------------------

// ((i * mul) % mod - centre) * scale for element i: values the test and ONNX's reference (run once
// for the expected values below) both build.
Tensor patterned(Shape shape, int64_t mul, int64_t mod, int64_t centre, float scale) {
  std::vector<float> v(static_cast<size_t>(shape.numel()));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<float>((static_cast<int64_t>(i) * mul) % mod - centre) * scale;
  }
  return Tensor::from<float>(std::move(shape), v);
}

// X [1, 4, 4, 5] in two groups and two offset groups, kernel 2 x 2, dilations [2, 1], strides
// [1, 2], pads [1, 0, 0, 1]: output [1, 2, 3, 3]. "" leaves an optional input out.
Model deform_conv(const std::vector<Io>& inputs, const std::vector<int64_t>& y, int64_t group,
                  int64_t offset_group, bool windowed) {
  return one_node("DeformConv", 22, inputs, {"Y", kFloat, y},
                  [group, offset_group, windowed](pb::NodeProto& n) {
                    set_int(n, "group", group);
                    set_int(n, "offset_group", offset_group);
                    if (!windowed) return;
                    set_ints(n, "dilations", {2, 1});
                    set_ints(n, "strides", {1, 2});
                    set_ints(n, "pads", {1, 0, 0, 1});
                  });
}

const std::vector<Io> kDeformInputs = {{"X", kFloat, {1, 4, 4, 5}},
                                       {"W", kFloat, {2, 2, 2, 2}},
                                       {"offset", kFloat, {1, 16, 3, 3}},
                                       {"B", kFloat, {2}},
                                       {"mask", kFloat, {1, 8, 3, 3}}};

BOOST_AUTO_TEST_CASE(deform_conv_samples_each_tap_at_its_offset_in_groups_with_mask_and_bias) {
  const std::vector<Tensor> inputs = {
      patterned(Shape{1, 4, 4, 5}, 7, 11, 5, 0.25F), patterned(Shape{2, 2, 2, 2}, 5, 7, 3, 0.5F),
      patterned(Shape{1, 16, 3, 3}, 13, 17, 8, 0.1875F), tensor<float>(Shape{2}, {0.5, -1}),
      patterned(Shape{1, 8, 3, 3}, 3, 5, 0, 0.25F)};
  const Tensor y = run_cpu(deform_conv(kDeformInputs, {1, 2, 3, 3}, 2, 2, true), inputs).at(0);
  BOOST_TEST((y.shape() == Shape{1, 2, 3, 3}));
  check_values(
      y,
      {-0.16552734375, -0.095703125, 0.447265625, 0.3154296875, 1.4326171875, 0.453125, 1.58984375,
       0.152099609375, -0.61767578125, -1.6328125, -0.79296875, -1.0, -1.265625, -0.3846435546875,
       -0.8883056640625, -0.6627197265625, -1.0084228515625, -1.1328125},
      1e-5);
}

BOOST_AUTO_TEST_CASE(deform_conv_without_mask_and_bias_takes_the_defaults) {
  const Model m = deform_conv(
      {{"X", kFloat, {1, 1, 3, 3}}, {"W", kFloat, {1, 1, 2, 2}}, {"offset", kFloat, {1, 8, 2, 2}}},
      {1, 1, 2, 2}, 1, 1, false);
  check_values(run_cpu(m, {patterned(Shape{1, 1, 3, 3}, 7, 11, 5, 0.25F),
                           patterned(Shape{1, 1, 2, 2}, 5, 7, 3, 0.5F),
                           patterned(Shape{1, 8, 2, 2}, 13, 17, 8, 0.1875F)})
                   .at(0),
               {-0.337890625, 0.5810546875, -1.8828125, -0.8720703125}, 1e-5);
}

BOOST_AUTO_TEST_CASE(
    deform_conv_refuses_other_ranks_misfit_offsets_groups_and_windows_and_one_pixel_inputs) {
  const Tensor w(DType::F32, Shape{1, 1, 2, 2});
  expect_import_error(
      one_node("DeformConv", 22,
               {{"X", kFloat, {1, 1, 3, 3, 3}},
                {"W", kFloat, {1, 1, 2, 2, 2}},
                {"offset", kFloat, {1, 24, 2, 2, 2}}},
               {"Y", kFloat, {1, 1, 2, 2, 2}}),
      {Tensor(DType::F32, Shape{1, 1, 3, 3, 3}), Tensor(DType::F32, Shape{1, 1, 2, 2, 2}),
       Tensor(DType::F32, Shape{1, 24, 2, 2, 2})},
      ErrorCode::ImportUnsupported, "supported: rank 4 (2-D DeformConv");
  const Model short_offset = deform_conv(
      {{"X", kFloat, {1, 1, 3, 3}}, {"W", kFloat, {1, 1, 2, 2}}, {"offset", kFloat, {1, 4, 2, 2}}},
      {1, 1, 2, 2}, 1, 1, false);
  expect_import_error(
      short_offset,
      {Tensor(DType::F32, Shape{1, 1, 3, 3}), w, Tensor(DType::F32, Shape{1, 4, 2, 2})},
      ErrorCode::ImportInvalidModel, "offset [1,4,2,2] must be [1,8,2,2]");
  const Model two_groups = deform_conv(
      {{"X", kFloat, {1, 1, 3, 3}}, {"W", kFloat, {1, 1, 2, 2}}, {"offset", kFloat, {1, 8, 2, 2}}},
      {1, 1, 2, 2}, 2, 1, false);
  expect_import_error(
      two_groups, {Tensor(DType::F32, Shape{1, 1, 3, 3}), w, Tensor(DType::F32, Shape{1, 8, 2, 2})},
      ErrorCode::ImportInvalidModel, "C must be W's dim 1 times group");
  const Model too_dilated = one_node(
      "DeformConv", 22,
      {{"X", kFloat, {1, 1, 3, 3}}, {"W", kFloat, {1, 1, 2, 2}}, {"offset", kFloat, {1, 8, 1, 2}}},
      {"Y", kFloat, {1, 1, 1, 2}}, [](pb::NodeProto& n) {
        set_ints(n, "dilations", {3, 1});
      });
  expect_import_error(
      too_dilated,
      {Tensor(DType::F32, Shape{1, 1, 3, 3}), w, Tensor(DType::F32, Shape{1, 8, 1, 2})},
      ErrorCode::ImportInvalidModel,
      "spatial axis 0: input 3, kernel 2, stride 1, dilation 3 and pads 0, 0 do "
      "not fit one window");
  const Model one_row = deform_conv(
      {{"X", kFloat, {1, 1, 1, 3}}, {"W", kFloat, {1, 1, 1, 2}}, {"offset", kFloat, {1, 4, 1, 2}}},
      {1, 1, 1, 2}, 1, 1, false);
  expect_import_error(one_row,
                      {Tensor(DType::F32, Shape{1, 1, 1, 3}), Tensor(DType::F32, Shape{1, 1, 1, 2}),
                       Tensor(DType::F32, Shape{1, 4, 1, 2})},
                      ErrorCode::ImportUnsupported,
                      "an input of 1 pixel along spatial axis 0; supported: at least 2");
}

// ---- Resize 18's antialias, GridSample 20's volumes ------------------------------------------

Model resize_downscale(int64_t antialias, const std::string& mode) {
  return one_node("Resize", 19,
                  {{"X", kFloat, {1, 1, 4, 4}}, {"", kFloat, {}}, {"scales", kFloat, {4}}},
                  {"Y", kFloat, {1, 1, 2, 2}}, [antialias, mode](pb::NodeProto& n) {
                    set_int(n, "antialias", antialias);
                    set_string(n, "mode", mode);
                  });
}

const Tensor kCounting4x4 =
    tensor<float>(Shape{1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
const Tensor kHalfScales = tensor<float>(Shape{4}, {1, 1, 0.5, 0.5});

BOOST_AUTO_TEST_CASE(resize_antialias_stretches_linear_and_cubic_on_a_downscale) {
  check_values(run_cpu(resize_downscale(1, "linear"), {kCounting4x4, kHalfScales}).at(0),
               {4.125, 5.875, 11.125, 12.875}, 1e-6);
  check_values(run_cpu(resize_downscale(1, "cubic"), {kCounting4x4, kHalfScales}).at(0),
               {3.451171875, 5.470703125, 11.529296875, 13.548828125}, 1e-6);
  // The plain rule reads the 2 x 2 taps around each point: 3.5, 5.5, 11.5, 13.5.
  check_values(run_cpu(resize_downscale(0, "linear"), {kCounting4x4, kHalfScales}).at(0),
               {3.5, 5.5, 11.5, 13.5}, 1e-6);
  expect_import_error(resize_downscale(2, "linear"), {kCounting4x4, kHalfScales},
                      ErrorCode::ImportInvalidModel, "antialias must be 0 or 1, got 2");
}

Model grid_sample(int opset, const std::vector<int64_t>& x, const std::vector<int64_t>& grid,
                  const std::vector<int64_t>& y, const std::string& mode) {
  return one_node("GridSample", opset, {{"X", kFloat, x}, {"grid", kFloat, grid}}, {"Y", kFloat, y},
                  [mode](pb::NodeProto& n) { set_string(n, "mode", mode); });
}

BOOST_AUTO_TEST_CASE(grid_sample_20_samples_volumes_trilinearly) {
  std::vector<float> values(24);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  const Tensor x = Tensor::from<float>(Shape{1, 1, 2, 3, 4}, values);
  const Tensor grid =
      tensor<float>(Shape{1, 1, 1, 4, 3}, {0, 0, 0, -1, 1, 0.5, 1, -1, -1, 0.3F, -0.2F, 0.9F});
  check_values(run_cpu(grid_sample(20, {1, 1, 2, 3, 4}, {1, 1, 1, 4, 3}, {1, 1, 1, 1, 4}, "linear"),
                       {x, grid})
                   .at(0),
               {11.5, 5.0, 0.375, 10.14}, 1e-5);
}

BOOST_AUTO_TEST_CASE(grid_sample_refuses_cubic_volumes_and_other_ranks) {
  const Tensor x(DType::F32, Shape{1, 1, 2, 2, 2});
  const Tensor grid(DType::F32, Shape{1, 1, 1, 1, 3});
  expect_import_error(grid_sample(20, {1, 1, 2, 2, 2}, {1, 1, 1, 1, 3}, {1, 1, 1, 1, 1}, "cubic"),
                      {x, grid}, ErrorCode::ImportInvalidModel,
                      "mode cubic samples X of rank 4 only, got rank 5");
  expect_import_error(
      grid_sample(16, {1, 1, 2, 2, 2}, {1, 1, 1, 1, 3}, {1, 1, 1, 1, 1}, "bilinear"), {x, grid},
      ErrorCode::ImportInvalidModel, "GridSample 16 takes X of rank 4, got rank 5");
  expect_import_error(grid_sample(20, {1, 1, 4}, {1, 2, 1}, {1, 1, 2}, "linear"),
                      {Tensor(DType::F32, Shape{1, 1, 4}), Tensor(DType::F32, Shape{1, 2, 1})},
                      ErrorCode::ImportUnsupported,
                      "supported: rank 4 or 5 (two or three spatial dims)");
}

}  // namespace
}  // namespace volta::onnx::test
