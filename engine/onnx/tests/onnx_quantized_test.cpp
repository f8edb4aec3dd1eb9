// The quantized ONNX ops (lower_elementwise_quantize.cpp, lower_linalg_quantized.cpp,
// lower_convolution_quantized.cpp): per-axis and blocked scales, where the zero point joins
// the rounding, the int32 accumulator's wrap-around, and what is refused. Expected values come
// from ONNX 1.23.2's reference implementation, run once and pasted here, except where a
// comment derives them.
#define BOOST_TEST_MODULE onnx_quantized

#include <cstdint>
#include <string>
#include <vector>

#include "onnx_test_models.h"

namespace volta::onnx::test {
namespace {

constexpr int kInt8 = pb::TensorProto::INT8;

BOOST_AUTO_TEST_CASE(quantize_linear_rounds_half_to_even_then_adds_the_zero_point_per_axis) {
  const Model m = one_node(
      "QuantizeLinear", 13, {{"x", kFloat, {2, 2, 2}}, {"s", kFloat, {2}}, {"z", kInt8, {2}}},
      {"y", kInt8, {2, 2, 2}}, [](pb::NodeProto& n) { set_int(n, "axis", 1); });
  const Tensor y =
      run_cpu(m, {tensor<float>(Shape{2, 2, 2}, {2.5, 3.5, -2.5, 1000, -1000, 0.49, 7, -7}),
                  tensor<float>(Shape{2}, {1, 2}), tensor<int8_t>(Shape{2}, {0, 1})})
          .at(0);
  BOOST_TEST((y.dtype() == DType::I8));
  check_values(y, {2, 4, 0, 127, -128, 0, 5, -3});
}

BOOST_AUTO_TEST_CASE(quantize_linear_21_repeats_each_blocks_scale_and_zero_point) {
  const Model m = one_node("QuantizeLinear", 21,
                           {{"x", kFloat, {2, 4}}, {"s", kFloat, {2, 2}}, {"z", kUint8, {2, 2}}},
                           {"y", kUint8, {2, 4}}, [](pb::NodeProto& n) {
                             set_int(n, "axis", 1);
                             set_int(n, "block_size", 2);
                           });
  check_values(run_cpu(m, {tensor<float>(Shape{2, 4}, {0.5, 1.5, 2.5, 3.5, 10, 20, 30, -40}),
                           tensor<float>(Shape{2, 2}, {1, 2, 4, 8}),
                           tensor<uint8_t>(Shape{2, 2}, {1, 0, 128, 3})})
                   .at(0),
               {1, 3, 1, 2, 130, 133, 7, 0});
}

BOOST_AUTO_TEST_CASE(dequantize_linear_subtracts_the_zero_point_per_axis) {
  const Model m = one_node("DequantizeLinear", 13,
                           {{"x", kUint8, {2, 3}}, {"s", kFloat, {2}}, {"z", kUint8, {2}}},
                           {"y", kFloat, {2, 3}}, [](pb::NodeProto& n) { set_int(n, "axis", 0); });
  check_values(
      run_cpu(m, {tensor<uint8_t>(Shape{2, 3}, {0, 255, 128, 1, 2, 3}),
                  tensor<float>(Shape{2}, {0.5, 0.25}), tensor<uint8_t>(Shape{2}, {128, 1})})
          .at(0),
      {-64.0, 63.5, 0.0, 0.0, 0.25, 0.5});
}

BOOST_AUTO_TEST_CASE(qlinear_matmul_adds_the_zero_point_before_rounding) {
  // a @ I * (1 * 1 / 2) + 1 = {1.5, 2.5, 3.5, 4.5}, which round to even {2, 2, 4, 4};
  // rounding before adding would give {1, 3, 3, 5}.
  const Model m = one_node("QLinearMatMul", 10,
                           {{"a", kUint8, {2, 2}},
                            {"as", kFloat, {}},
                            {"az", kUint8, {}},
                            {"b", kUint8, {2, 2}},
                            {"bs", kFloat, {}},
                            {"bz", kUint8, {}},
                            {"ys", kFloat, {}},
                            {"yz", kUint8, {}}},
                           {"y", kUint8, {2, 2}});
  auto scalar_u8 = [](uint8_t v) { return tensor<uint8_t>(Shape{}, {v}); };
  auto scalar_f32 = [](float v) { return tensor<float>(Shape{}, {v}); };
  check_values(run_cpu(m, {tensor<uint8_t>(Shape{2, 2}, {1, 3, 5, 7}), scalar_f32(1), scalar_u8(0),
                           tensor<uint8_t>(Shape{2, 2}, {1, 0, 0, 1}), scalar_f32(1), scalar_u8(0),
                           scalar_f32(2), scalar_u8(1)})
                   .at(0),
               {2, 2, 4, 4});
}

BOOST_AUTO_TEST_CASE(matmul_integer_takes_per_row_and_per_column_zero_points) {
  const Model m = one_node(
      "MatMulInteger", 10,
      {{"A", kUint8, {2, 3}}, {"B", kUint8, {3, 2}}, {"az", kUint8, {2}}, {"bz", kUint8, {2}}},
      {"y", kInt32, {2, 2}});
  check_values(run_cpu(m, {tensor<uint8_t>(Shape{2, 3}, {10, 20, 30, 40, 50, 60}),
                           tensor<uint8_t>(Shape{3, 2}, {1, 2, 3, 4, 5, 6}),
                           tensor<uint8_t>(Shape{2}, {10, 40}), tensor<uint8_t>(Shape{2}, {1, 2})})
                   .at(0),
               {100, 100, 100, 100});
}

BOOST_AUTO_TEST_CASE(matmul_integer_wraps_its_int32_accumulator_as_onnx_does) {
  // 33100 products of 255 * 255 sum to 2152327500, past INT32_MAX: two's complement wraps it.
  constexpr int64_t k = 33100;
  const Model m = one_node("MatMulInteger", 10, {{"A", kUint8, {1, k}}, {"B", kUint8, {k, 1}}},
                           {"y", kInt32, {1, 1}});
  Tensor a(DType::U8, Shape{1, k});
  Tensor b(DType::U8, Shape{k, 1});
  for (int64_t i = 0; i < k; ++i) {
    a.set_double(i, 255);
    b.set_double(i, 255);
  }
  const int64_t exact = k * 255 * 255;
  check_values(run_cpu(m, {a, b}).at(0), {static_cast<double>(exact - (int64_t{1} << 32))});
}

BOOST_AUTO_TEST_CASE(conv_integer_pads_with_zeros_after_the_zero_point) {
  const Model m = one_node("ConvInteger", 10,
                           {{"x", kUint8, {1, 1, 3, 3}},
                            {"w", kUint8, {2, 1, 2, 2}},
                            {"xz", kUint8, {}},
                            {"wz", kUint8, {2}}},
                           {"y", kInt32, {1, 2, 4, 4}}, [](pb::NodeProto& n) {
                             set_ints(n, "pads", {1, 1, 1, 1});
                           });
  check_values(run_cpu(m, {tensor<uint8_t>(Shape{1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
                           tensor<uint8_t>(Shape{2, 1, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}),
                           tensor<uint8_t>(Shape{}, {1}), tensor<uint8_t>(Shape{2}, {1, 2})})
                   .at(0),
               {0, 3, 8,  4,  9,  19, 25, 10, 21, 37, 43,  16, 6,  7,  8,  0,
                0, 6, 17, 10, 18, 43, 61, 31, 48, 97, 115, 55, 24, 46, 53, 24});
}

BOOST_AUTO_TEST_CASE(qlinear_conv_scales_per_output_channel_and_adds_its_bias) {
  const Model m = one_node("QLinearConv", 10,
                           {{"x", kInt8, {1, 1, 3, 3}},
                            {"xs", kFloat, {}},
                            {"xz", kInt8, {}},
                            {"w", kInt8, {2, 1, 2, 2}},
                            {"ws", kFloat, {2}},
                            {"wz", kInt8, {2}},
                            {"ys", kFloat, {}},
                            {"yz", kInt8, {}},
                            {"B", kInt32, {2}}},
                           {"y", kInt8, {1, 2, 2, 2}});
  check_values(run_cpu(m, {tensor<int8_t>(Shape{1, 1, 3, 3}, {1, -2, 3, -4, 5, -6, 7, -8, 9}),
                           tensor<float>(Shape{}, {0.5}), tensor<int8_t>(Shape{}, {1}),
                           tensor<int8_t>(Shape{2, 1, 2, 2}, {1, -1, 2, -2, 3, -3, 4, -4}),
                           tensor<float>(Shape{2}, {0.25, 1.5}), tensor<int8_t>(Shape{2}, {0, 1}),
                           tensor<float>(Shape{}, {0.75}), tensor<int8_t>(Shape{}, {-3}),
                           tensor<int32_t>(Shape{2}, {5, -7})})
                   .at(0),
               {-5, 1, 1, -6, -33, 23, 27, -41});
}

BOOST_AUTO_TEST_CASE(dynamic_quantize_linear_maps_the_range_with_zero_onto_uint8) {
  const Model m =
      one_node("DynamicQuantizeLinear", 11, {{"x", kFloat, {4}}},
               std::vector<Io>{{"y", kUint8, {4}}, {"s", kFloat, {}}, {"z", kUint8, {}}});
  const std::vector<Tensor> out = run_cpu(m, {tensor<float>(Shape{4}, {-1.5, 0.25, 3, 7.75})});
  check_values(out.at(0), {0, 48, 124, 255});
  check_values(out.at(1), {0.036274511367082596});
  check_values(out.at(2), {41});
  // An all-zero x has an empty range: scale 1 / 255, as ONNX's reference gives.
  const std::vector<Tensor> zeros = run_cpu(m, {tensor<float>(Shape{4}, {0, 0, 0, 0})});
  check_values(zeros.at(0), {0, 0, 0, 0});
  check_values(zeros.at(1), {0.003921568859368563});
  check_values(zeros.at(2), {0});
}

BOOST_AUTO_TEST_CASE(quantized_ops_refuse_types_and_forms_volta_lacks) {
  const Tensor x = tensor<float>(Shape{2}, {1, 2});
  const Tensor s = tensor<float>(Shape{}, {1});
  const Model float8 =
      one_node("QuantizeLinear", 21, {{"x", kFloat, {2}}, {"s", kFloat, {}}}, {"y", kUint8, {2}},
               [](pb::NodeProto& n) { set_int(n, "output_dtype", 17); });
  expect_import_error(float8, {x, s}, ErrorCode::ImportUnsupported, "FLOAT8E4M3FN");
  const Model mismatched =
      one_node("DequantizeLinear", 13, {{"x", kUint8, {2}}, {"s", kFloat, {}}, {"z", kInt8, {}}},
               {"y", kFloat, {2}});
  expect_import_error(mismatched,
                      {tensor<uint8_t>(Shape{2}, {1, 2}), s, tensor<int8_t>(Shape{}, {0})},
                      ErrorCode::ImportInvalidModel, "the zero point is i8");
  const Model float_x =
      one_node("DequantizeLinear", 13, {{"x", kFloat, {2}}, {"s", kFloat, {}}}, {"y", kFloat, {2}});
  expect_import_error(float_x, {x, s}, ErrorCode::ImportUnsupported, "x of dtype f32");
  const Model bad_axis =
      one_node("QuantizeLinear", 13, {{"x", kFloat, {2}}, {"s", kFloat, {3}}}, {"y", kUint8, {2}},
               [](pb::NodeProto& n) { set_int(n, "axis", 0); });
  expect_import_error(bad_axis, {x, tensor<float>(Shape{3}, {1, 2, 3})},
                      ErrorCode::ImportInvalidModel, "must be a scalar or 1-D with 2 entries");
}

}  // namespace
}  // namespace volta::onnx::test
