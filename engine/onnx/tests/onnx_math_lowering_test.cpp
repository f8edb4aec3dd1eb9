// ONNX lowerings of the elementwise, math and activation ops (lower_elementwise.cpp) on what the
// backend test corpus does not cover: legacy broadcasting and its errors, version-1 Cast,
// old attribute defaults, PRelu's per-channel slope before version 7, Pow across dtypes,
// f16 and bf16 on ops without a half kernel (computed in f32 between Casts), and the
// diagnostics for dtypes and attribute values Volta does not take.
#define BOOST_TEST_MODULE onnx_math_lowering
#include <cfloat>
#include <cmath>
#include <limits>

#include "onnx_test_models.h"

namespace volta::onnx::test {
namespace {

BOOST_AUTO_TEST_CASE(legacy_broadcast_aligns_b_with_a_at_axis) {
  const Model model = one_node("Add", 6, {{"a", kFloat, {2, 3, 2}}, {"b", kFloat, {3}}},
                               {"y", kFloat, {2, 3, 2}}, [](pb::NodeProto& n) {
                                 set_int(n, "broadcast", 1);
                                 set_int(n, "axis", 1);
                               });
  const Tensor a(DType::F32, Shape{2, 3, 2});  // zeros
  const Tensor b = tensor<float>(Shape{3}, {10, 20, 30});
  check_values(run_cpu(model, {a, b})[0], {10, 10, 20, 20, 30, 30, 10, 10, 20, 20, 30, 30});
}

BOOST_AUTO_TEST_CASE(legacy_broadcast_errors_name_the_shapes) {
  const Model unequal =
      one_node("Mul", 6, {{"a", kFloat, {2, 3}}, {"b", kFloat, {3}}}, {"y", kFloat, {2, 3}});
  expect_import_error(unequal, {Tensor(DType::F32, Shape{2, 3}), Tensor(DType::F32, Shape{3})},
                      ErrorCode::ImportInvalidModel,
                      "A [2,3] and B [3] differ in shape without broadcast=1");
  const Model misaligned = one_node("Sub", 6, {{"a", kFloat, {2, 3}}, {"b", kFloat, {3}}},
                                    {"y", kFloat, {2, 3}}, [](pb::NodeProto& n) {
                                      set_int(n, "broadcast", 1);
                                      set_int(n, "axis", 0);
                                    });
  expect_import_error(misaligned, {Tensor(DType::F32, Shape{2, 3}), Tensor(DType::F32, Shape{3})},
                      ErrorCode::ImportInvalidModel,
                      "B [3] does not broadcast to A [2,3] at axis 0");
}

BOOST_AUTO_TEST_CASE(cast_version_1_names_its_target_type) {
  const Model model = one_node("Cast", 1, {{"x", kFloat, {3}}}, {"y", kInt32, {3}},
                               [](pb::NodeProto& n) { set_string(n, "to", "INT32"); });
  const std::vector<Tensor> y = run_cpu(model, {tensor<float>(Shape{3}, {1.7f, -2.2f, 3.0f})});
  BOOST_TEST((y[0].dtype() == DType::I32));
  check_values(y[0], {1, -2, 3});
  // (The output is declared INT32: a COMPLEX64 graph output would be rejected before lowering.)
  const Model complex = one_node("Cast", 1, {{"x", kFloat, {3}}}, {"y", kInt32, {3}},
                                 [](pb::NodeProto& n) { set_string(n, "to", "COMPLEX64"); });
  expect_import_error(complex, {Tensor(DType::F32, Shape{3})}, ErrorCode::ImportUnsupported,
                      "to is \"COMPLEX64\"; supported: FLOAT, DOUBLE, INT64, INT32, BOOL, "
                      "FLOAT16, BFLOAT16, INT8, UINT8, INT16, UINT16, UINT32, UINT64");
  const Model half = one_node("Cast", 1, {{"x", kFloat, {3}}}, {"y", 10, {3}},
                              [](pb::NodeProto& n) { set_string(n, "to", "FLOAT16"); });
  const std::vector<Tensor> h = run_cpu(half, {tensor<float>(Shape{3}, {1.0f, 0.1f, 70000.0f})});
  BOOST_TEST((h[0].dtype() == DType::F16));
  const auto* bits = static_cast<const uint16_t*>(h[0].data());
  BOOST_TEST(
      (std::vector<uint16_t>(bits, bits + 3) == std::vector<uint16_t>{0x3C00, 0x2E66, 0x7C00}));
}

BOOST_AUTO_TEST_CASE(bit_shift_reads_its_direction) {
  auto model = [](const char* direction) {
    return one_node("BitShift", 11, {{"x", 2, {3}}, {"y", 2, {3}}}, {"z", 2, {3}},
                    [direction](pb::NodeProto& n) { set_string(n, "direction", direction); });
  };
  const std::vector<Tensor> inputs = {tensor<uint8_t>(Shape{3}, {0x81, 1, 255}),
                                      tensor<uint8_t>(Shape{3}, {1, 8, 4})};
  const std::vector<Tensor> left = run_cpu(model("LEFT"), inputs);
  BOOST_TEST((left[0].dtype() == DType::U8));
  check_values(left[0], {2, 0, 240});
  check_values(run_cpu(model("RIGHT"), inputs)[0], {64, 0, 15});
  expect_import_error(model("UP"), inputs, ErrorCode::ImportInvalidModel,
                      "direction is \"UP\"; ONNX allows \"LEFT\" and \"RIGHT\"");
}

BOOST_AUTO_TEST_CASE(selu_defaults_follow_the_version) {
  const Tensor x = tensor<float>(Shape{1}, {-1.0f});
  const double em1 = std::expm1(-1.0);
  for (int opset : {1, 6}) {
    BOOST_TEST_CONTEXT("opset " << opset) {
      const Model model = one_node("Selu", opset, {{"x", kFloat, {1}}}, {"y", kFloat, {1}});
      const double alpha = opset == 1 ? 1.6732f : 1.67326319217681884765625;
      const double gamma = opset == 1 ? 1.0507f : 1.05070102214813232421875;
      check_values(run_cpu(model, {x})[0], {gamma * alpha * em1}, 1e-6);
    }
  }
}

BOOST_AUTO_TEST_CASE(clip_bounds_by_version) {
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor x = tensor<float>(Shape{3}, {-inf, 0.5f, inf});
  // Version 6 defaults its bounds to +-FLT_MAX; version 1 leaves an absent bound open.
  const Model v6 = one_node("Clip", 6, {{"x", kFloat, {3}}}, {"y", kFloat, {3}},
                            [](pb::NodeProto& n) { set_float(n, "min", 0.0f); });
  check_values(run_cpu(v6, {x})[0], {0.0, 0.5, FLT_MAX});
  const Model v1 = one_node("Clip", 1, {{"x", kFloat, {3}}}, {"y", kFloat, {3}},
                            [](pb::NodeProto& n) { set_float(n, "max", 0.25f); });
  const Tensor y1 = run_cpu(v1, {x})[0];
  BOOST_TEST(y1.data_as<float>()[0] == -inf);
  BOOST_TEST(y1.data_as<float>()[1] == 0.25f);
  BOOST_TEST(y1.data_as<float>()[2] == 0.25f);
  // From version 11 the bounds are inputs, specialized on by value.
  const Model v11 = one_node(
      "Clip", 11, {{"x", kFloat, {3}}, {"lo", kFloat, {}}, {"hi", kFloat, {}}}, {"y", kFloat, {3}});
  check_values(run_cpu(v11, {tensor<float>(Shape{3}, {-2.0f, 0.5f, 2.0f}),
                             tensor<float>(Shape{}, {-1.0f}), tensor<float>(Shape{}, {1.0f})})[0],
               {-1.0, 0.5, 1.0});
}

BOOST_AUTO_TEST_CASE(prelu_before_version_7_has_one_slope_per_channel) {
  const Tensor x = tensor<float>(Shape{1, 2, 2}, {-1, -1, -1, 2});
  const Tensor slope = tensor<float>(Shape{2}, {0.5f, 0.25f});
  const Model v6 = one_node("PRelu", 6, {{"x", kFloat, {1, 2, 2}}, {"slope", kFloat, {2}}},
                            {"y", kFloat, {1, 2, 2}});
  check_values(run_cpu(v6, {x, slope})[0], {-0.5, -0.5, -0.25, 2});  // slope along dim 1
  const Model v9 = one_node("PRelu", 9, {{"x", kFloat, {1, 2, 2}}, {"slope", kFloat, {2}}},
                            {"y", kFloat, {1, 2, 2}});
  check_values(run_cpu(v9, {x, slope})[0], {-0.5, -0.25, -0.5, 2});  // numpy: along the last dim
}

BOOST_AUTO_TEST_CASE(pow_across_dtypes_is_computed_in_double) {
  const Model ints =
      one_node("Pow", 15, {{"x", kInt64, {3}}, {"y", kInt64, {3}}}, {"z", kInt64, {3}});
  const std::vector<Tensor> z =
      run_cpu(ints, {tensor<int64_t>(Shape{3}, {3, -2, 7}), tensor<int64_t>(Shape{3}, {4, 3, 0})});
  BOOST_TEST((z[0].dtype() == DType::I64));
  check_values(z[0], {81, -8, 1});
  // An integer base with a float exponent truncates the power, as numpy's astype does.
  const Model mixed =
      one_node("Pow", 12, {{"x", kInt32, {2}}, {"y", kFloat, {2}}}, {"z", kInt32, {2}});
  check_values(
      run_cpu(mixed, {tensor<int32_t>(Shape{2}, {2, 3}), tensor<float>(Shape{2}, {0.5f, 2.0f})})[0],
      {1, 9});
}

BOOST_AUTO_TEST_CASE(mean_divides_the_chained_sum_by_the_count) {
  const Model model = one_node(
      "Mean", 13, {{"a", kFloat, {2}}, {"b", kFloat, {1}}, {"c", kFloat, {2}}}, {"y", kFloat, {2}});
  check_values(run_cpu(model, {tensor<float>(Shape{2}, {1, 2}), tensor<float>(Shape{1}, {3}),
                               tensor<float>(Shape{2}, {5, 10})})[0],
               {3, 5});
  // Before version 8 the inputs of the variadic ops have one shape.
  const Model v6 = one_node("Sum", 6, {{"a", kFloat, {2}}, {"b", kFloat, {1}}}, {"y", kFloat, {2}});
  expect_import_error(v6, {Tensor(DType::F32, Shape{2}), Tensor(DType::F32, Shape{1})},
                      ErrorCode::ImportInvalidModel, "before version 8 all inputs have one shape");
}

BOOST_AUTO_TEST_CASE(unsupported_dtypes_and_attribute_values_are_named) {
  const Model sin = one_node("Sin", 7, {{"x", kInt32, {2}}}, {"y", kInt32, {2}});
  expect_import_error(sin, {Tensor(DType::I32, Shape{2})}, ErrorCode::ImportUnsupported,
                      "input 0 is INT32; supported: FLOAT, DOUBLE");
  const Model mod = one_node("Mod", 13, {{"a", kInt64, {2}}, {"b", kInt64, {2}}},
                             {"c", kInt64, {2}}, [](pb::NodeProto& n) { set_int(n, "fmod", 2); });
  expect_import_error(mod, {Tensor(DType::I64, Shape{2}), Tensor(DType::I64, Shape{2})},
                      ErrorCode::ImportInvalidModel, "fmod is 2; it must be 0 or 1");
}

// A half tensor of `values` (each exact in the format).
Tensor halves(DType dtype, Shape shape, std::initializer_list<double> values) {
  Tensor t(dtype, std::move(shape));
  int64_t i = 0;
  for (const double v : values) t.set_double(i++, v);
  return t;
}

int count_ops(const Graph& graph, OpKind op) {
  int count = 0;
  for (int i = 0; i < graph.num_nodes(); ++i) count += graph.node(i).op == op ? 1 : 0;
  return count;
}

BOOST_AUTO_TEST_CASE(halves_on_an_op_without_a_half_kernel_compute_in_f32_and_round_once) {
  // 1 + 2^-11 + 2^-11 is 1 + 2^-10 in f32, exact in f16; summed in f16 each step would tie back
  // to 1. The MatMul runs in f32 between Casts: one rounding, at the end.
  const double e = std::ldexp(1.0, -11);
  const Model matmul =
      one_node("MatMul", 13, {{"a", 10, {1, 3}}, {"b", 10, {3, 1}}}, {"y", 10, {}});
  const std::vector<Tensor> inputs = {halves(DType::F16, Shape{1, 3}, {1, e, e}),
                                      halves(DType::F16, Shape{3, 1}, {1, 1, 1})};
  const Tensor y = run_cpu(matmul, inputs).at(0);
  BOOST_TEST((y.dtype() == DType::F16));
  check_values(y, {1 + 2 * e});
  const Graph graph = matmul.import_for(inputs, cpu_import()).graph;
  BOOST_TEST(count_ops(graph, OpKind::Cast) == 3);  // a and b to f32, the product back
  // bf16 (8 significant bits): 1 + 2^-8 + 2^-8 = 1 + 2^-7, likewise lost to ties step by step.
  const double b = std::ldexp(1.0, -8);
  const Model sum = one_node("ReduceSum", 13, {{"x", 16, {3}}}, {"y", 16, {}},
                             [](pb::NodeProto& n) { set_int(n, "keepdims", 0); });
  const Tensor s = run_cpu(sum, {halves(DType::BF16, Shape{3}, {1, b, b})}).at(0);
  BOOST_TEST((s.dtype() == DType::BF16));
  check_values(s, {1 + 2 * b});
  // Inputs of one type parameter in two different dtypes are still refused.
  const Model mixed = one_node("MatMul", 13, {{"a", 10, {1, 1}}, {"b", 16, {1, 1}}}, {"y", 10, {}});
  expect_import_error(mixed,
                      {halves(DType::F16, Shape{1, 1}, {1}), halves(DType::BF16, Shape{1, 1}, {1})},
                      ErrorCode::ImportUnsupported, "lowering onto MatMul");
}

}  // namespace
}  // namespace volta::onnx::test
