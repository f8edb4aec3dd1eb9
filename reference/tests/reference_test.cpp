#define BOOST_TEST_MODULE reference
#include "volta/reference/reference.h"

#include <bit>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <string_view>

#include "volta/ir/graph.h"
#include "volta/ir/random.h"
#include "volta/model/builtin_models.h"

// Every expected value below is written out by hand (or from a closed form noted beside it);
// none is produced by the code under test. Cases from the ONNX operator docs say so.

namespace volta::reference {
namespace {

using K = OpKind;
using Ints = std::vector<int64_t>;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int32_t kI32Max = std::numeric_limits<int32_t>::max();
constexpr int32_t kI32Min = std::numeric_limits<int32_t>::lowest();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::lowest();

Tensor f32(Shape shape, std::initializer_list<float> values) {
  return Tensor::from<float>(std::move(shape), values);
}
Tensor f64(Shape shape, std::initializer_list<double> values) {
  return Tensor::from<double>(std::move(shape), values);
}
Tensor i64(Shape shape, std::initializer_list<int64_t> values) {
  return Tensor::from<int64_t>(std::move(shape), values);
}
Tensor i32(Shape shape, std::initializer_list<int32_t> values) {
  return Tensor::from<int32_t>(std::move(shape), values);
}
Tensor boolean(Shape shape, std::initializer_list<bool> values) {
  return Tensor::from<bool>(std::move(shape), values);
}
// Small exact values in any dtype (bool: nonzero is true).
Tensor make(DType dtype, Shape shape, std::initializer_list<double> values) {
  Tensor t(dtype, std::move(shape));
  int64_t i = 0;
  for (double v : values) t.set_double(i++, v);
  BOOST_REQUIRE_EQUAL(i, t.numel());
  return t;
}

// Evaluates one node through evaluate(): each operand is a graph input, std::nullopt leaves
// an optional input out, and the node's outputs are the graph's outputs.
std::vector<Tensor> run(OpKind op, const std::vector<std::optional<Tensor>>& operands,
                        Attributes attrs = {}, int num_outputs = 1) {
  Graph graph;
  std::vector<ValueId> ids;
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!operands[i]) {
      ids.push_back(kNoValue);
      continue;
    }
    ids.push_back(
        graph.add_input("in" + std::to_string(i), operands[i]->dtype(), operands[i]->shape()));
    inputs.push_back(*operands[i]);
  }
  graph.set_outputs(graph.add_node(op, ids, std::move(attrs), "op", num_outputs));
  return evaluate(graph, inputs);
}

Tensor run1(OpKind op, const std::vector<std::optional<Tensor>>& operands, Attributes attrs = {}) {
  std::vector<Tensor> results = run(op, operands, std::move(attrs));
  BOOST_REQUIRE_EQUAL(results.size(), 1u);
  return results[0];
}

std::string describe(const Tensor& t) {
  std::ostringstream out;
  out << dtype_name(t.dtype()) << t.shape().str() << "{";
  for (int64_t i = 0; i < t.numel(); ++i) {
    out << (i ? "," : "");
    if (is_floating(t.dtype())) {
      out << t.get_double(i);
    } else {
      out << t.get_int(i);
    }
  }
  return out.str() + "}";
}

// Same dtype and shape; values equal, floats within a relative tolerance fitting their dtype
// (the reference rounds once, so this only absorbs the rounding of the literals), NaN where
// NaN is expected, infinities exact.
void check_close(const Tensor& got, const Tensor& want) {
  BOOST_REQUIRE_MESSAGE(got.dtype() == want.dtype() && got.shape() == want.shape(),
                        "got " << describe(got) << ", want " << describe(want));
  const double tolerance = got.dtype() == DType::F32 ? 1e-6 : 1e-13;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double g = got.get_double(i);
    const double w = want.get_double(i);
    const bool ok = std::isnan(w)   ? std::isnan(g)
                    : std::isinf(w) ? g == w
                                    : std::fabs(g - w) <= tolerance * std::max(1.0, std::fabs(w));
    BOOST_CHECK_MESSAGE(
        ok, "element " << i << ": got " << describe(got) << ", want " << describe(want));
  }
}

// Bitwise equality: integers, bools, and anything that only moves bytes.
void check_equal(const Tensor& got, const Tensor& want) {
  BOOST_CHECK_MESSAGE(got.bit_equal(want), "got " << describe(got) << ", want " << describe(want));
}

// `body` must throw a VoltaError with `code` whose message contains `fragment`.
template <class Body>
void check_fails(Body body, ErrorCode code, std::string_view fragment) {
  try {
    body();
    BOOST_ERROR("expected a " << error_code_name(code) << " error containing '" << fragment << "'");
  } catch (const VoltaError& e) {
    BOOST_CHECK_EQUAL(error_code_name(e.code()), error_code_name(code));
    BOOST_CHECK_MESSAGE(e.message().find(fragment) != std::string::npos,
                        "message '" << e.message() << "' lacks '" << fragment << "'");
  }
}

BOOST_AUTO_TEST_CASE(every_op_in_the_table_has_a_reference_kernel) {
  for (const OpSchema& schema : all_op_schemas()) {
    BOOST_CHECK_MESSAGE(reference_kernel(schema.kind) != nullptr,
                        schema.name << " has no reference kernel");
  }
}

// ---- Arithmetic ---------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(add_broadcasts_a_row_over_a_matrix) {
  check_close(run1(K::Add, {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3}, {10, 20, 30})}),
              f32({2, 3}, {11, 22, 33, 14, 25, 36}));
  check_equal(run1(K::Add, {i64({2}, {1, -5}), i64({}, {7})}), i64({2}, {8, 2}));
}

BOOST_AUTO_TEST_CASE(sub_broadcasts_both_operands) {
  check_close(run1(K::Sub, {f64({2, 1}, {1, 2}), f64({1, 2}, {0.5, 1})}),
              f64({2, 2}, {0.5, 0, 1.5, 1}));
  check_equal(run1(K::Sub, {i64({2}, {10, 3}), i64({}, {4})}), i64({2}, {6, -1}));
}

BOOST_AUTO_TEST_CASE(mul_forms_an_outer_product_by_broadcasting) {
  check_close(run1(K::Mul, {f64({2, 1}, {2, 3}), f64({1, 3}, {1, 10, 100})}),
              f64({2, 3}, {2, 20, 200, 3, 30, 300}));
  check_equal(run1(K::Mul, {i32({2}, {3, -4}), i32({2}, {5, 6})}), i32({2}, {15, -24}));
}

BOOST_AUTO_TEST_CASE(div_follows_ieee_for_floats_and_truncates_integers) {
  check_close(run1(K::Div, {f32({4}, {1, -3, 1, 0}), f32({4}, {4, 2, 0, 0})}),
              f32({4}, {0.25f, -1.5f, INFINITY, NAN}));
  check_equal(run1(K::Div, {i32({4}, {7, -7, 7, -7}), i32({4}, {2, 2, -2, -2})}),
              i32({4}, {3, -3, -3, 3}));
  // lowest / -1 overflows: it wraps like every other integer overflow.
  check_equal(run1(K::Div, {i64({1}, {kI64Min}), i64({1}, {-1})}), i64({1}, {kI64Min}));
  check_equal(run1(K::Div, {i32({1}, {kI32Min}), i32({1}, {-1})}), i32({1}, {kI32Min}));
}

BOOST_AUTO_TEST_CASE(integer_div_by_zero_is_a_kernel_failure) {
  check_fails(
      [] {
        run1(K::Div, {i64({3}, {1, 2, 3}), i64({3}, {1, 0, 1})});
      },
      ErrorCode::KernelFailure, "divisor element 1");
  check_fails(
      [] {
        run1(K::Div, {i32({2}, {1, 2}), i32({}, {0})});
      },
      ErrorCode::KernelFailure, "integer divisors must be nonzero");
}

BOOST_AUTO_TEST_CASE(pow_raises_floats) {
  check_close(run1(K::Pow, {f32({3}, {2, 3, 4}), f32({1}, {2})}), f32({3}, {4, 9, 16}));
  check_close(run1(K::Pow, {f64({2}, {4, 2}), f64({2}, {0.5, -1})}), f64({2}, {2, 0.5}));
}

BOOST_AUTO_TEST_CASE(neg_and_abs_wrap_the_lowest_integer) {
  check_close(run1(K::Neg, {f32({3}, {1.5f, -2, 0})}), f32({3}, {-1.5f, 2, 0}));
  check_equal(run1(K::Neg, {i32({3}, {5, -7, kI32Min})}), i32({3}, {-5, 7, kI32Min}));
  check_close(run1(K::Abs, {f64({3}, {-1.5, 2, -0.0})}), f64({3}, {1.5, 2, 0}));
  check_equal(run1(K::Abs, {i64({3}, {-3, 4, kI64Min})}), i64({3}, {3, 4, kI64Min}));
}

BOOST_AUTO_TEST_CASE(sqrt_reciprocal_exp_log) {
  check_close(run1(K::Sqrt, {f32({4}, {4, 2.25f, 0, -1})}), f32({4}, {2, 1.5f, 0, NAN}));
  check_close(run1(K::Reciprocal, {f64({3}, {2, -4, 0})}), f64({3}, {0.5, -0.25, kInf}));
  check_close(run1(K::Exp, {f64({3}, {0, 1, -kInf})}), f64({3}, {1, 2.718281828459045, 0}));
  check_close(run1(K::Log, {f32({4}, {1, 2.718281828459045f, 0, -1})}),
              f32({4}, {0, 1, -INFINITY, NAN}));
}

// ---- Activations --------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(erf_tanh_sigmoid_at_known_points) {
  check_close(run1(K::Erf, {f64({3}, {0, 1, -1})}),
              f64({3}, {0, 0.8427007929497149, -0.8427007929497149}));
  check_close(run1(K::Tanh, {f64({3}, {0, 1, -kInf})}), f64({3}, {0, 0.7615941559557649, -1}));
  check_close(run1(K::Sigmoid, {f64({4}, {0, 1, -1000, 1000})}),
              f64({4}, {0.5, 0.7310585786300049, 0, 1}));
  check_close(run1(K::Sigmoid, {f32({1}, {1})}), f32({1}, {0.7310585786300049f}));
}

BOOST_AUTO_TEST_CASE(relu_keeps_positives_and_nan) {
  check_close(run1(K::Relu, {f32({4}, {-1, 0, 2, NAN})}), f32({4}, {0, 0, 2, NAN}));
  check_equal(run1(K::Relu, {i64({2}, {-3, 4})}), i64({2}, {0, 4}));
  check_equal(run1(K::Relu, {i32({2}, {kI32Min, 9})}), i32({2}, {0, 9}));
}

BOOST_AUTO_TEST_CASE(leaky_relu_scales_negatives_by_alpha) {
  check_close(run1(K::LeakyRelu, {f32({3}, {-2, 3, 0})}, {{"alpha", 0.1}}),
              f32({3}, {-0.2f, 3, 0}));
  check_close(run1(K::LeakyRelu, {f64({2}, {-100, 5})}), f64({2}, {-1, 5}));  // alpha 0.01
}

BOOST_AUTO_TEST_CASE(gelu_exact_and_tanh_forms) {
  // 0.5 x (1 + erf(x / sqrt 2)) and 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
  check_close(run1(K::Gelu, {f64({3}, {0, 1, -1})}),
              f64({3}, {0, 0.8413447460685429, -0.15865525393145707}));
  check_close(run1(K::Gelu, {f64({3}, {0, 1, -1})}, {{"approximate", std::string("tanh")}}),
              f64({3}, {0, 0.8411919906082768, -0.15880800939172324}));
}

// ---- Min / Max / Where / logic ------------------------------------------------------------

BOOST_AUTO_TEST_CASE(min_and_max_take_many_broadcasting_inputs_and_propagate_nan) {
  const Tensor a = f32({2, 2}, {1, 5, NAN, 4});
  const Tensor b = f32({2}, {3, 3});
  const Tensor c = f32({}, {2});
  check_close(run1(K::Min, {a, b, c}), f32({2, 2}, {1, 2, NAN, 2}));
  check_close(run1(K::Max, {a, b, c}), f32({2, 2}, {3, 5, NAN, 4}));
  // NaN in the second operand propagates too.
  check_close(run1(K::Max, {f64({1}, {1}), f64({1}, {kNaN})}), f64({1}, {kNaN}));
  check_equal(run1(K::Min, {i64({2}, {1, 9}), i64({2}, {5, 5})}), i64({2}, {1, 5}));
  check_equal(run1(K::Max, {i32({2}, {1, 9})}), i32({2}, {1, 9}));
}

BOOST_AUTO_TEST_CASE(where_selects_and_broadcasts) {
  // ONNX Where doc example.
  check_close(run1(K::Where, {boolean({2, 2}, {1, 0, 1, 1}), f32({2, 2}, {1, 2, 3, 4}),
                              f32({2, 2}, {9, 8, 7, 6})}),
              f32({2, 2}, {1, 8, 3, 4}));
  check_close(run1(K::Where, {boolean({2}, {1, 0}), f64({2, 2}, {1, 2, 3, 4}), f64({}, {-1})}),
              f64({2, 2}, {1, -1, 3, -1}));
}

BOOST_AUTO_TEST_CASE(comparisons_give_bool_and_are_false_with_nan) {
  check_equal(run1(K::Equal, {i32({3}, {1, 2, 3}), i32({3}, {1, 5, 3})}), boolean({3}, {1, 0, 1}));
  check_equal(run1(K::Equal, {f32({2}, {NAN, 1}), f32({2}, {NAN, 1})}), boolean({2}, {0, 1}));
  check_equal(run1(K::Equal, {boolean({2}, {1, 0}), boolean({2}, {1, 1})}), boolean({2}, {1, 0}));
  check_equal(run1(K::Less, {f32({4}, {1, 2, NAN, 3}), f32({4}, {2, 2, 1, NAN})}),
              boolean({4}, {1, 0, 0, 0}));
  check_equal(run1(K::Less, {i64({2}, {1, 5}), i64({}, {3})}), boolean({2}, {1, 0}));
  check_equal(run1(K::Greater, {f64({3}, {1, 2, kNaN}), f64({3}, {0, 2, 0})}),
              boolean({3}, {1, 0, 0}));
  check_equal(run1(K::Greater, {i32({2}, {kI32Max, -1}), i32({2}, {kI32Min, 0})}),
              boolean({2}, {1, 0}));
}

BOOST_AUTO_TEST_CASE(not_and_or_truth_tables) {
  check_equal(run1(K::Not, {boolean({2}, {1, 0})}), boolean({2}, {0, 1}));
  const Tensor a = boolean({2, 2}, {0, 0, 1, 1});
  const Tensor b = boolean({2}, {0, 1});
  check_equal(run1(K::And, {a, b}), boolean({2, 2}, {0, 0, 0, 1}));
  check_equal(run1(K::Or, {a, b}), boolean({2, 2}, {0, 1, 1, 1}));
}

// ---- Cast and Clip ------------------------------------------------------------------------

Attributes to(std::string dtype) { return {{"to", std::move(dtype)}}; }

BOOST_AUTO_TEST_CASE(cast_truncates_floats_and_wraps_integers) {
  check_equal(run1(K::Cast, {f32({4}, {1.9f, -1.9f, 0.5f, -0.0f})}, to("i32")),
              i32({4}, {1, -1, 0, 0}));
  check_equal(run1(K::Cast, {f32({4}, {0, -0.0f, NAN, -2})}, to("bool")),
              boolean({4}, {0, 0, 1, 1}));
  check_equal(run1(K::Cast, {i64({3}, {(int64_t{1} << 32) + 5, int64_t{1} << 31, -1})}, to("i32")),
              i32({3}, {5, kI32Min, -1}));
  check_equal(run1(K::Cast, {boolean({2}, {1, 0})}, to("f32")), f32({2}, {1, 0}));
  check_equal(run1(K::Cast, {i32({2}, {-7, 3})}, to("f64")), f64({2}, {-7, 3}));
  check_equal(run1(K::Cast, {f64({2}, {0.1, -kInf})}, to("f32")), f32({2}, {0.1f, -INFINITY}));
  check_equal(run1(K::Cast, {f64({2}, {-9.2e18, 9.2e18})}, to("i64")),
              i64({2}, {-9200000000000000000, 9200000000000000000}));
}

BOOST_AUTO_TEST_CASE(cast_int64_to_f32_rounds_once) {
  // 2^60 + 2^36 + 1 lies just above the midpoint of two f32 neighbours, 2^60 and 2^60 + 2^37:
  // rounding once gives the upper one; going through double first lands exactly on the
  // midpoint and then rounds to even, the lower one.
  const int64_t x = (int64_t{1} << 60) + (int64_t{1} << 36) + 1;
  const float want = static_cast<float>(std::ldexp(1.0, 60) + std::ldexp(1.0, 37));
  check_equal(run1(K::Cast, {i64({1}, {x})}, to("f32")), Tensor::from<float>({1}, {want}));
}

BOOST_AUTO_TEST_CASE(cast_of_nan_inf_or_out_of_range_to_int_is_a_kernel_failure) {
  check_fails(
      [] {
        run1(K::Cast, {f32({2}, {1, NAN})}, to("i32"));
      },
      ErrorCode::KernelFailure, "element 1 is nan");
  check_fails([] { run1(K::Cast, {f64({1}, {kInf})}, to("i64")); }, ErrorCode::KernelFailure,
              "element 0 is inf");
  check_fails([] { run1(K::Cast, {f64({1}, {2147483648.0})}, to("i32")); },
              ErrorCode::KernelFailure, "[-2147483648, 2147483647]");
  check_fails([] { run1(K::Cast, {f64({1}, {9.3e18})}, to("i64")); }, ErrorCode::KernelFailure,
              "no i64 value");
  // Just inside the range truncates instead of failing.
  check_equal(run1(K::Cast, {f64({2}, {2147483647.9, -2147483648.9})}, to("i32")),
              i32({2}, {kI32Max, kI32Min}));
}

BOOST_AUTO_TEST_CASE(clip_bounds_floats_and_rounds_integer_bounds_inward) {
  check_close(run1(K::Clip, {f32({4}, {-2, 0.5f, 2, NAN})}, {{"min", -1.0}, {"max", 1.0}}),
              f32({4}, {-1, 0.5f, 1, NAN}));
  // Integer bounds: min -1.5 rounds up to -1, max 2.5 rounds down to 2.
  check_equal(run1(K::Clip, {i32({3}, {-5, 0, 5})}, {{"min", -1.5}, {"max", 2.5}}),
              i32({3}, {-1, 0, 2}));
  // Bounds beyond the dtype's range do not bound it.
  check_equal(run1(K::Clip, {i32({2}, {kI32Min, kI32Max})}, {{"min", -1e20}, {"max", 1e20}}),
              i32({2}, {kI32Min, kI32Max}));
  check_equal(run1(K::Clip, {i64({2}, {kI64Min, 3})}, {{"max", 0.0}}), i64({2}, {kI64Min, 0}));
  // min > max: every element becomes max (numpy / ONNX).
  check_close(run1(K::Clip, {f64({2}, {-5, 5})}, {{"min", 2.0}, {"max", 1.0}}), f64({2}, {1, 1}));
}

BOOST_AUTO_TEST_CASE(clip_with_a_nan_bound_is_a_kernel_failure) {
  check_fails(
      [] {
        run1(K::Clip, {f32({1}, {1})}, {{"min", kNaN}});
      },
      ErrorCode::KernelFailure, "Clip bounds must be numbers, got min nan");
}

// ---- Linalg -------------------------------------------------------------------------------

const Tensor kA23 = f64({2, 3}, {1, 2, 3, 4, 5, 6});
const Tensor kB32 = f64({3, 2}, {7, 8, 9, 10, 11, 12});

BOOST_AUTO_TEST_CASE(matmul_of_matrices) {
  // [1 2 3; 4 5 6] @ [7 8; 9 10; 11 12] = [58 64; 139 154].
  check_close(run1(K::MatMul, {kA23, kB32}), f64({2, 2}, {58, 64, 139, 154}));
  check_close(
      run1(K::MatMul, {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3, 2}, {7, 8, 9, 10, 11, 12})}),
      f32({2, 2}, {58, 64, 139, 154}));
}

BOOST_AUTO_TEST_CASE(matmul_promotes_vectors_and_drops_the_promoted_axis) {
  check_close(run1(K::MatMul, {f64({3}, {1, 2, 3}), f64({3}, {4, 5, 6})}), f64({}, {32}));
  check_close(run1(K::MatMul, {f64({3}, {1, 2, 3}), kB32}), f64({2}, {58, 64}));
  check_close(run1(K::MatMul, {kA23, f64({3}, {1, 0, -1})}), f64({2}, {-2, -2}));
}

BOOST_AUTO_TEST_CASE(matmul_broadcasts_batch_axes) {
  // Two 1x2 rows times [1 0; 0 2].
  check_close(run1(K::MatMul, {f64({2, 1, 2}, {1, 2, 3, 4}), f64({2, 2}, {1, 0, 0, 2})}),
              f64({2, 1, 2}, {1, 4, 3, 8}));
  // Batch [2,1] x batch [3] -> [2,3]: rows [1 2], [3 4] against columns [1 1], [0 1], [2 0].
  check_close(
      run1(K::MatMul, {f64({2, 1, 1, 2}, {1, 2, 3, 4}), f64({3, 2, 1}, {1, 1, 0, 1, 2, 0})}),
      f64({2, 3, 1, 1}, {3, 2, 2, 7, 4, 6}));
  // An empty inner dimension sums nothing.
  check_close(run1(K::MatMul, {f64({2, 0}, {}), f64({0, 3}, {})}), f64({2, 3}, {0, 0, 0, 0, 0, 0}));
}

BOOST_AUTO_TEST_CASE(gemm_scales_transposes_and_adds_a_broadcast_c) {
  check_close(run1(K::Gemm, {kA23, kB32, f64({2}, {1, -1})}, {{"alpha", 2.0}, {"beta", 0.5}}),
              f64({2, 2}, {116.5, 127.5, 278.5, 307.5}));
  // The same product from transposed storage, without C.
  check_close(run1(K::Gemm, {f64({3, 2}, {1, 4, 2, 5, 3, 6}), f64({2, 3}, {7, 9, 11, 8, 10, 12})},
                   {{"transA", int64_t{1}}, {"transB", int64_t{1}}}),
              f64({2, 2}, {58, 64, 139, 154}));
  check_close(run1(K::Gemm, {kA23, kB32, f64({}, {10})}), f64({2, 2}, {68, 74, 149, 164}));
  check_close(run1(K::Gemm, {kA23, kB32, f64({2, 1}, {1, 2})}), f64({2, 2}, {59, 65, 141, 156}));
  check_close(run1(K::Gemm, {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3, 2}, {7, 8, 9, 10, 11, 12}),
                             std::nullopt}),
              f32({2, 2}, {58, 64, 139, 154}));
}

// ---- Normalization ------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(softmax_is_shift_invariant_along_the_axis) {
  // e^[1,2,3] / sum.
  const auto want = {0.09003057317038046, 0.24472847105479767, 0.6652409557748219};
  check_close(run1(K::Softmax, {f64({1, 3}, {1, 2, 3})}), f64({1, 3}, want));
  check_close(run1(K::Softmax, {f32({3}, {1000, 1001, 1002})}),
              f32({3}, {0.09003057317038046f, 0.24472847105479767f, 0.6652409557748219f}));
  // Along axis 0: column [0, ln 3] gives [1/4, 3/4].
  check_close(
      run1(K::Softmax, {f64({2, 2}, {0, 0, 1.0986122886681098, 0})}, {{"axis", int64_t{0}}}),
      f64({2, 2}, {0.25, 0.5, 0.75, 0.5}));
}

BOOST_AUTO_TEST_CASE(softmax_row_with_nan_is_nan_and_others_are_untouched) {
  check_close(run1(K::Softmax, {f64({2, 2}, {1, kNaN, 0, 0})}),
              f64({2, 2}, {kNaN, kNaN, 0.5, 0.5}));
}

BOOST_AUTO_TEST_CASE(log_softmax) {
  // [1,2,3] - 3 - log(sum e^([1,2,3] - 3)).
  check_close(run1(K::LogSoftmax, {f64({3}, {1, 2, 3})}),
              f64({3}, {-2.4076059644443806, -1.4076059644443804, -0.4076059644443804}));
  check_close(run1(K::LogSoftmax, {f32({2}, {1000, 1000})}),
              f32({2}, {-0.6931471805599453f, -0.6931471805599453f}));
}

BOOST_AUTO_TEST_CASE(layer_normalization_with_scale_bias_and_statistics) {
  // Rows [1,2,3] and [2,4,6]: means 2 and 4, variances 2/3 and 8/3, so both normalize to
  // [-a, 0, a] with a = sqrt(3/2) = 1.224744871391589 (epsilon 0).
  const std::vector<Tensor> out =
      run(K::LayerNormalization,
          {f64({2, 3}, {1, 2, 3, 2, 4, 6}), f64({3}, {1, 2, 0.5}), f64({3}, {0, 1, -1})},
          {{"epsilon", 0.0}}, 3);
  BOOST_REQUIRE_EQUAL(out.size(), 3u);
  check_close(out[0], f64({2, 3}, {-1.224744871391589, 1, -0.38762756430420553, -1.224744871391589,
                                   1, -0.38762756430420553}));
  check_close(out[1], f64({2, 1}, {2, 4}));
  check_close(out[2], f64({2, 1}, {1.224744871391589, 0.6123724356957945}));
}

BOOST_AUTO_TEST_CASE(layer_normalization_default_epsilon_without_bias) {
  // 1 / sqrt(2/3 + 1e-5) = 1.2247356859083902.
  check_close(run1(K::LayerNormalization, {f32({3}, {1, 2, 3}), f32({3}, {1, 1, 1})}),
              f32({3}, {-1.2247356859083902f, 0, 1.2247356859083902f}));
  // axis 0 normalizes everything: mean 2.5, variance 1.25.
  check_close(run1(K::LayerNormalization, {f64({2, 2}, {1, 2, 3, 4}), f64({1}, {1})},
                   {{"axis", int64_t{0}}, {"epsilon", 0.0}}),
              f64({2, 2}, {-1.3416407864998738, -0.4472135954999579, 0.4472135954999579,
                           1.3416407864998738}));
}

// ---- Reductions ---------------------------------------------------------------------------

// ONNX ReduceSum / ReduceMean doc data: [[[1,2],[3,4]],[[5,6],[7,8]],[[9,10],[11,12]]].
Tensor twelve(DType dtype = DType::F64) {
  return make(dtype, {3, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
}
Attributes axes(Ints a, int64_t keepdims = 1) {
  return {{"axes", std::move(a)}, {"keepdims", keepdims}};
}

BOOST_AUTO_TEST_CASE(reduce_sum_over_axes_keepdims_all_and_noop) {
  check_close(run1(K::ReduceSum, {twelve()}, axes({1})), f64({3, 1, 2}, {4, 6, 12, 14, 20, 22}));
  check_close(run1(K::ReduceSum, {twelve()}, axes({-1}, 0)), f64({3, 2}, {3, 7, 11, 15, 19, 23}));
  check_close(run1(K::ReduceSum, {twelve()}), f64({1, 1, 1}, {78}));
  check_equal(run1(K::ReduceSum, {twelve(DType::I64)}, axes({0, 2}, 0)), i64({2}, {33, 45}));
  // noop_with_empty_axes and no axes: the identity.
  check_close(run1(K::ReduceSum, {twelve()}, {{"noop_with_empty_axes", int64_t{1}}}), twelve());
  check_close(run1(K::ReduceSumSquare, {f64({2}, {-3, 4})}, {{"noop_with_empty_axes", int64_t{1}}}),
              f64({2}, {-3, 4}));
}

BOOST_AUTO_TEST_CASE(reduce_mean) {
  check_close(run1(K::ReduceMean, {twelve()}, axes({1})), f64({3, 1, 2}, {2, 3, 6, 7, 10, 11}));
  check_close(run1(K::ReduceMean, {twelve(DType::F32)}, axes({}, 0)), f32({}, {6.5f}));
}

BOOST_AUTO_TEST_CASE(reduce_max_and_min) {
  // ONNX ReduceMax / ReduceMin doc data.
  const Tensor x = f32({3, 2, 2}, {5, 1, 20, 2, 30, 1, 40, 2, 55, 1, 60, 2});
  check_close(run1(K::ReduceMax, {x}, axes({1})), f32({3, 1, 2}, {20, 2, 40, 2, 60, 2}));
  check_close(run1(K::ReduceMin, {x}, axes({1})), f32({3, 1, 2}, {5, 1, 30, 1, 55, 1}));
  check_equal(run1(K::ReduceMax, {i32({3}, {kI32Min, -4, -9})}, axes({0}, 0)), i32({}, {-4}));
  check_equal(run1(K::ReduceMin, {i64({3}, {kI64Max, 4, 9})}, axes({0}, 0)), i64({}, {4}));
}

BOOST_AUTO_TEST_CASE(reduce_prod_sum_square_l1_l2) {
  check_close(run1(K::ReduceProd, {twelve()}, axes({1})), f64({3, 1, 2}, {3, 8, 35, 48, 99, 120}));
  check_close(run1(K::ReduceSumSquare, {twelve()}, axes({1})),
              f64({3, 1, 2}, {10, 20, 74, 100, 202, 244}));
  check_close(run1(K::ReduceL1, {twelve()}, axes({2})), f64({3, 2, 1}, {3, 7, 11, 15, 19, 23}));
  check_equal(run1(K::ReduceL1, {i64({3}, {-3, 4, -5})}, axes({0}, 0)), i64({}, {12}));
  check_equal(run1(K::ReduceProd, {i32({3}, {-2, 3, 4})}, axes({0}, 0)), i32({}, {-24}));
  check_equal(run1(K::ReduceSumSquare, {i64({2}, {-3, 4})}, axes({0}, 0)), i64({}, {25}));
  // sqrt(1+4), sqrt(9+16), ... = sqrt(a^2 + b^2) for consecutive pairs.
  check_close(run1(K::ReduceL2, {twelve()}, axes({2})),
              f64({3, 2, 1}, {2.23606797749979, 5.0, 7.810249675906654, 10.63014581273465,
                              13.45362404707371, 16.278820596099706}));
}

BOOST_AUTO_TEST_CASE(reduce_log_sum_exp_is_stable_and_handles_infinities) {
  // log(e^0 + e^0) = ln 2; the second row would overflow without the max shift.
  check_close(run1(K::ReduceLogSumExp, {f64({2, 2}, {0, 0, 1000, 1000})}, axes({1}, 0)),
              f64({2}, {0.6931471805599453, 1000.6931471805599}));
  check_close(
      run1(K::ReduceLogSumExp, {f64({3, 2}, {-kInf, -kInf, kInf, 1, kNaN, 1})}, axes({1}, 0)),
      f64({3}, {-kInf, kInf, kNaN}));
}

BOOST_AUTO_TEST_CASE(empty_reductions_give_the_identity_of_each_fold) {
  const Tensor empty = f64({0}, {});
  auto reduce_empty = [&](OpKind op, const Tensor& x) { return run1(op, {x}, axes({}, 0)); };
  check_close(reduce_empty(K::ReduceSum, empty), f64({}, {0}));
  check_close(reduce_empty(K::ReduceSumSquare, empty), f64({}, {0}));
  check_close(reduce_empty(K::ReduceL1, empty), f64({}, {0}));
  check_close(reduce_empty(K::ReduceL2, empty), f64({}, {0}));
  check_close(reduce_empty(K::ReduceProd, empty), f64({}, {1}));
  check_close(reduce_empty(K::ReduceMean, empty), f64({}, {kNaN}));
  check_close(reduce_empty(K::ReduceMax, empty), f64({}, {-kInf}));
  check_close(reduce_empty(K::ReduceMin, empty), f64({}, {kInf}));
  check_close(reduce_empty(K::ReduceLogSumExp, empty), f64({}, {-kInf}));
  check_equal(reduce_empty(K::ReduceMax, i32({0}, {})), i32({}, {kI32Min}));
  check_equal(reduce_empty(K::ReduceMin, i32({0}, {})), i32({}, {kI32Max}));
  check_equal(reduce_empty(K::ReduceMax, i64({0}, {})), i64({}, {kI64Min}));
  check_equal(reduce_empty(K::ReduceMin, i64({0}, {})), i64({}, {kI64Max}));
  check_equal(reduce_empty(K::ReduceProd, i64({0}, {})), i64({}, {1}));
  // Reducing an axis of size 0 while keeping one of size 2: two empty groups.
  check_close(run1(K::ReduceSum, {f32({0, 2}, {})}, axes({0})), f32({1, 2}, {0, 0}));
  // Keeping an axis of size 0: no groups at all.
  check_close(run1(K::ReduceMax, {f32({0, 2}, {})}, axes({1})), f32({0, 1}, {}));
}

BOOST_AUTO_TEST_CASE(reductions_propagate_nan) {
  const Tensor x = f32({3}, {1, NAN, 3});
  for (OpKind op : {K::ReduceSum, K::ReduceMean, K::ReduceMax, K::ReduceMin, K::ReduceProd,
                    K::ReduceSumSquare, K::ReduceL1, K::ReduceL2, K::ReduceLogSumExp}) {
    BOOST_TEST_CONTEXT(op_name(op)) { check_close(run1(op, {x}, axes({}, 0)), f32({}, {NAN})); }
  }
}

BOOST_AUTO_TEST_CASE(argmax_and_argmin_with_ties_and_select_last_index) {
  // ONNX ArgMax / ArgMin doc data.
  const Tensor x = f32({2, 2}, {2, 1, 3, 10});
  check_equal(run1(K::ArgMax, {x}), i64({1, 2}, {1, 1}));
  check_equal(run1(K::ArgMax, {x}, {{"axis", int64_t{1}}, {"keepdims", int64_t{0}}}),
              i64({2}, {0, 1}));
  check_equal(run1(K::ArgMin, {x}), i64({1, 2}, {0, 0}));
  const Tensor ties = i32({2, 2}, {2, 2, 3, 10});
  check_equal(run1(K::ArgMax, {ties}, {{"axis", int64_t{1}}}), i64({2, 1}, {0, 1}));
  check_equal(run1(K::ArgMax, {ties}, {{"axis", int64_t{1}}, {"select_last_index", int64_t{1}}}),
              i64({2, 1}, {1, 1}));
  check_equal(run1(K::ArgMin, {ties}, {{"axis", int64_t{-1}}, {"select_last_index", int64_t{1}}}),
              i64({2, 1}, {1, 0}));
  check_equal(run1(K::ArgMin, {i64({3}, {kI64Max, kI64Min, kI64Min + 1})}), i64({1}, {1}));
}

BOOST_AUTO_TEST_CASE(argmax_and_argmin_count_nan_as_the_extreme) {
  const Tensor x = f64({5}, {1, kNaN, 5, kNaN, -7});
  check_equal(run1(K::ArgMax, {x}), i64({1}, {1}));
  check_equal(run1(K::ArgMin, {x}), i64({1}, {1}));
  check_equal(run1(K::ArgMax, {x}, {{"select_last_index", int64_t{1}}}), i64({1}, {3}));
  check_equal(run1(K::ArgMin, {x}, {{"select_last_index", int64_t{1}}}), i64({1}, {3}));
}

BOOST_AUTO_TEST_CASE(cumsum_inclusive_exclusive_and_reverse) {
  // ONNX CumSum doc examples.
  const Tensor x = f64({5}, {1, 2, 3, 4, 5});
  auto cumsum = [&](int64_t exclusive, int64_t reverse) {
    return run1(K::CumSum, {x},
                {{"axis", int64_t{0}}, {"exclusive", exclusive}, {"reverse", reverse}});
  };
  check_close(cumsum(0, 0), f64({5}, {1, 3, 6, 10, 15}));
  check_close(cumsum(1, 0), f64({5}, {0, 1, 3, 6, 10}));
  check_close(cumsum(0, 1), f64({5}, {15, 14, 12, 9, 5}));
  check_close(cumsum(1, 1), f64({5}, {14, 12, 9, 5, 0}));
  const Tensor m = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  check_close(run1(K::CumSum, {m}, {{"axis", int64_t{0}}}), f32({2, 3}, {1, 2, 3, 5, 7, 9}));
  check_close(run1(K::CumSum, {m}, {{"axis", int64_t{-1}}}), f32({2, 3}, {1, 3, 6, 4, 9, 15}));
  check_equal(run1(K::CumSum, {i64({3}, {5, -2, 7})}, {{"axis", int64_t{0}}}),
              i64({3}, {5, 3, 10}));
}

// ---- Integer wrap-around ------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(int32_arithmetic_wraps_around) {
  check_equal(run1(K::Add, {i32({2}, {kI32Max, -5}), i32({2}, {1, 5})}), i32({2}, {kI32Min, 0}));
  check_equal(run1(K::Sub, {i32({1}, {kI32Min}), i32({1}, {1})}), i32({1}, {kI32Max}));
  check_equal(run1(K::Mul, {i32({2}, {65536, 65537}), i32({2}, {65536, 65537})}),
              i32({2}, {0, 131073}));  // 65537^2 = 2^32 + 2^17 + 1
  check_equal(run1(K::ReduceSum, {i32({2}, {kI32Max, 1})}, axes({}, 0)), i32({}, {kI32Min}));
  check_equal(run1(K::CumSum, {i32({2}, {kI32Max, 1})}, {{"axis", int64_t{0}}}),
              i32({2}, {kI32Max, kI32Min}));
  check_equal(run1(K::Add, {i64({1}, {kI64Max}), i64({1}, {1})}), i64({1}, {kI64Min}));
}

// ---- Every dtype the table allows ---------------------------------------------------------

BOOST_AUTO_TEST_CASE(binary_arithmetic_in_every_numeric_dtype) {
  for (DType d : {DType::F32, DType::F64, DType::I32, DType::I64}) {
    BOOST_TEST_CONTEXT(dtype_name(d)) {
      const Tensor a = make(d, {3}, {6, -7, 8});
      const Tensor b = make(d, {3}, {3, 2, -4});
      check_equal(run1(K::Add, {a, b}), make(d, {3}, {9, -5, 4}));
      check_equal(run1(K::Sub, {a, b}), make(d, {3}, {3, -9, 12}));
      check_equal(run1(K::Mul, {a, b}), make(d, {3}, {18, -14, -32}));
      check_equal(run1(K::Div, {a, b}), make(d, {3}, {2, is_floating(d) ? -3.5 : -3, -2}));
      check_equal(run1(K::Min, {a, b}), make(d, {3}, {3, -7, -4}));
      check_equal(run1(K::Max, {a, b}), make(d, {3}, {6, 2, 8}));
      check_equal(run1(K::Neg, {a}), make(d, {3}, {-6, 7, -8}));
      check_equal(run1(K::Abs, {a}), make(d, {3}, {6, 7, 8}));
      check_equal(run1(K::Relu, {a}), make(d, {3}, {6, 0, 8}));
      check_equal(run1(K::Clip, {a}, {{"min", -1.0}, {"max", 7.0}}), make(d, {3}, {6, -1, 7}));
      check_equal(run1(K::Less, {a, b}), boolean({3}, {0, 1, 0}));
      check_equal(run1(K::Greater, {a, b}), boolean({3}, {1, 0, 1}));
      check_equal(run1(K::ReduceSum, {a}, axes({}, 0)), make(d, {}, {7}));
      check_equal(run1(K::ReduceProd, {a}, axes({}, 0)), make(d, {}, {-336}));
      check_equal(run1(K::ReduceMax, {a}, axes({}, 0)), make(d, {}, {8}));
      check_equal(run1(K::ReduceMin, {a}, axes({}, 0)), make(d, {}, {-7}));
      check_equal(run1(K::ReduceSumSquare, {a}, axes({}, 0)), make(d, {}, {149}));
      check_equal(run1(K::ReduceL1, {a}, axes({}, 0)), make(d, {}, {21}));
      check_equal(run1(K::ArgMax, {a}), i64({1}, {2}));
      check_equal(run1(K::ArgMin, {a}), i64({1}, {1}));
      check_equal(run1(K::CumSum, {a}, {{"axis", int64_t{0}}}), make(d, {3}, {6, -1, 7}));
    }
  }
}

Tensor rounded_to_f32(const Tensor& t) {
  Tensor y(DType::F32, t.shape());
  for (int64_t i = 0; i < t.numel(); ++i) y.set_double(i, t.get_double(i));
  return y;
}

BOOST_AUTO_TEST_CASE(f32_results_are_the_f64_results_rounded_once) {
  // An f32 input is exact in f64 and the reference computes in double either way, so each
  // f32 output must be bit-identical to the f64 output rounded to f32.
  const Tensor x32 = random_tensor(DType::F32, {2, 3}, 11, 0.25, 2.0);
  Tensor x64(DType::F64, x32.shape());
  for (int64_t i = 0; i < x32.numel(); ++i) x64.set_double(i, x32.get_double(i));
  const Attributes none;
  const std::vector<std::pair<OpKind, Attributes>> unary = {
      {K::Sqrt, none},
      {K::Reciprocal, none},
      {K::Exp, none},
      {K::Log, none},
      {K::Erf, none},
      {K::Tanh, none},
      {K::Sigmoid, none},
      {K::LeakyRelu, none},
      {K::Gelu, none},
      {K::Gelu, {{"approximate", std::string("tanh")}}},
      {K::Softmax, none},
      {K::LogSoftmax, none},
      {K::ReduceSum, axes({1})},
      {K::ReduceMean, axes({1})},
      {K::ReduceL2, axes({0})},
      {K::ReduceLogSumExp, axes({1})},
      {K::CumSum, {{"axis", int64_t{1}}}},
      {K::Transpose, none},
  };
  for (const auto& [op, attrs] : unary) {
    BOOST_TEST_CONTEXT(op_name(op)) {
      check_equal(run1(op, {x32}, attrs), rounded_to_f32(run1(op, {x64}, attrs)));
    }
  }
  check_equal(run1(K::Pow, {x32, x32}), rounded_to_f32(run1(K::Pow, {x64, x64})));
  const Tensor x32t = run1(K::Transpose, {x32});
  const Tensor x64t = run1(K::Transpose, {x64});
  check_equal(run1(K::MatMul, {x32, x32t}), rounded_to_f32(run1(K::MatMul, {x64, x64t})));
  const Attributes gemm_attrs = {{"transA", int64_t{1}}, {"alpha", 0.5}, {"beta", 3.0}};
  check_equal(run1(K::Gemm, {x32t, x32t, f32({}, {0.75f})}, gemm_attrs),
              rounded_to_f32(run1(K::Gemm, {x64t, x64t, f64({}, {0.75})}, gemm_attrs)));
  const std::vector<Tensor> norm32 =
      run(K::LayerNormalization, {x32, f32({3}, {0.5f, 1, 2}), f32({3}, {1, 0, -1})}, {}, 3);
  const std::vector<Tensor> norm64 =
      run(K::LayerNormalization, {x64, f64({3}, {0.5, 1, 2}), f64({3}, {1, 0, -1})}, {}, 3);
  for (size_t i = 0; i < norm32.size(); ++i) check_equal(norm32[i], rounded_to_f32(norm64[i]));
}

BOOST_AUTO_TEST_CASE(movement_where_and_equal_in_every_dtype) {
  for (DType d : {DType::F32, DType::F64, DType::I32, DType::I64, DType::Bool}) {
    BOOST_TEST_CONTEXT(dtype_name(d)) {
      // [[1,0,1],[1,1,0]]: values every dtype holds.
      const Tensor x = make(d, {2, 3}, {1, 0, 1, 1, 1, 0});
      check_equal(run1(K::Transpose, {x}), make(d, {3, 2}, {1, 1, 0, 1, 1, 0}));
      check_equal(run1(K::Gather, {x, i64({2}, {2, 0})}, {{"axis", int64_t{1}}}),
                  make(d, {2, 2}, {1, 1, 0, 1}));
      check_equal(
          run1(K::Slice, {x},
               {{"starts", Ints{-1}}, {"ends", Ints{-4}}, {"axes", Ints{1}}, {"steps", Ints{-1}}}),
          make(d, {2, 3}, {1, 0, 1, 0, 1, 1}));
      check_equal(run1(K::Concat, {x, x}, {{"axis", int64_t{0}}}),
                  make(d, {4, 3}, {1, 0, 1, 1, 1, 0, 1, 0, 1, 1, 1, 0}));
      check_equal(run1(K::Reshape, {x}, {{"shape", Ints{3, 2}}}),
                  make(d, {3, 2}, {1, 0, 1, 1, 1, 0}));
      check_equal(run1(K::Expand, {make(d, {1}, {1})}, {{"shape", Ints{2}}}), make(d, {2}, {1, 1}));
      check_equal(run1(K::Where, {boolean({3}, {1, 0, 0}), x, make(d, {}, {0})}),
                  make(d, {2, 3}, {1, 0, 0, 1, 0, 0}));
      check_equal(run1(K::Equal, {x, make(d, {3}, {1, 1, 0})}),
                  boolean({2, 3}, {1, 0, 0, 1, 1, 1}));
      check_equal(run1(K::Identity, {x}), x);
    }
  }
}

// ---- Movement -----------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(reshape_infers_and_copies_dims) {
  const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  check_equal(run1(K::Reshape, {x}, {{"shape", Ints{3, -1}}}), f32({3, 2}, {1, 2, 3, 4, 5, 6}));
  check_equal(run1(K::Reshape, {x}, {{"shape", Ints{0, 3}}}), x);
  check_equal(run1(K::Reshape, {f32({1}, {7})}, {{"shape", Ints{}}}), f32({}, {7}));
}

BOOST_AUTO_TEST_CASE(transpose_default_reverses_axes_and_perm_permutes) {
  check_equal(run1(K::Transpose, {i32({2, 3}, {1, 2, 3, 4, 5, 6})}),
              i32({3, 2}, {1, 4, 2, 5, 3, 6}));
  // y[k][0][j] = x[0][j][k] with x[0][j][k] = 3j + k.
  check_equal(run1(K::Transpose, {i64({1, 2, 3}, {0, 1, 2, 3, 4, 5})}, {{"perm", Ints{2, 0, 1}}}),
              i64({3, 1, 2}, {0, 3, 1, 4, 2, 5}));
  check_equal(run1(K::Transpose, {f32({}, {3})}), f32({}, {3}));
}

BOOST_AUTO_TEST_CASE(concat_joins_along_the_axis) {
  const Tensor a = f32({2, 1}, {1, 2});
  const Tensor b = f32({2, 2}, {3, 4, 5, 6});
  check_equal(run1(K::Concat, {a, b}, {{"axis", int64_t{1}}}), f32({2, 3}, {1, 3, 4, 2, 5, 6}));
  check_equal(run1(K::Concat, {a, b}, {{"axis", int64_t{-1}}}), f32({2, 3}, {1, 3, 4, 2, 5, 6}));
  check_equal(
      run1(K::Concat, {i64({1}, {1}), i64({0}, {}), i64({2}, {2, 3})}, {{"axis", int64_t{0}}}),
      i64({3}, {1, 2, 3}));
}

BOOST_AUTO_TEST_CASE(split_evenly_or_by_sizes) {
  const Tensor x = f32({6}, {1, 2, 3, 4, 5, 6});
  const std::vector<Tensor> even = run(K::Split, {x}, {}, 3);
  BOOST_REQUIRE_EQUAL(even.size(), 3u);
  check_equal(even[0], f32({2}, {1, 2}));
  check_equal(even[1], f32({2}, {3, 4}));
  check_equal(even[2], f32({2}, {5, 6}));
  // ONNX Split doc example with split = [2, 4].
  const std::vector<Tensor> sized = run(K::Split, {x}, {{"split", Ints{2, 4}}}, 2);
  BOOST_REQUIRE_EQUAL(sized.size(), 2u);
  check_equal(sized[0], f32({2}, {1, 2}));
  check_equal(sized[1], f32({4}, {3, 4, 5, 6}));
  const std::vector<Tensor> cols = run(K::Split, {i32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})},
                                       {{"axis", int64_t{1}}, {"split", Ints{1, 3}}}, 2);
  BOOST_REQUIRE_EQUAL(cols.size(), 2u);
  check_equal(cols[0], i32({2, 1}, {1, 5}));
  check_equal(cols[1], i32({2, 3}, {2, 3, 4, 6, 7, 8}));
}

BOOST_AUTO_TEST_CASE(slice_with_steps_clamping_and_negative_steps) {
  const Tensor x = f32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  // ONNX Slice doc examples.
  check_equal(run1(K::Slice, {x},
                   {{"starts", Ints{1, 0}},
                    {"ends", Ints{2, 3}},
                    {"axes", Ints{0, 1}},
                    {"steps", Ints{1, 2}}}),
              f32({1, 2}, {5, 7}));
  check_equal(run1(K::Slice, {x}, {{"starts", Ints{0, 1}}, {"ends", Ints{-1, 1000}}}),
              f32({1, 3}, {2, 3, 4}));
  check_equal(
      run1(K::Slice, {x},
           {{"starts", Ints{-1}}, {"ends", Ints{-1000}}, {"axes", Ints{1}}, {"steps", Ints{-1}}}),
      f32({2, 4}, {4, 3, 2, 1, 8, 7, 6, 5}));
  check_equal(
      run1(K::Slice, {x},
           {{"starts", Ints{3}}, {"ends", Ints{0}}, {"axes", Ints{1}}, {"steps", Ints{-2}}}),
      f32({2, 2}, {4, 2, 8, 6}));
  check_equal(run1(K::Slice, {x}, {{"starts", Ints{2}}, {"ends", Ints{2}}, {"axes", Ints{1}}}),
              f32({2, 0}, {}));
}

BOOST_AUTO_TEST_CASE(gather_along_axes_with_negative_indices) {
  // ONNX Gather doc examples.
  const Tensor rows = f32({3, 2}, {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f});
  check_equal(run1(K::Gather, {rows, i64({2, 2}, {0, 1, 1, 2})}),
              f32({2, 2, 2}, {1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f}));
  const Tensor square = f32({3, 3}, {1.0f, 1.2f, 1.9f, 2.3f, 3.4f, 3.9f, 4.5f, 5.7f, 5.9f});
  check_equal(run1(K::Gather, {square, i32({1, 2}, {0, 2})}, {{"axis", int64_t{1}}}),
              f32({3, 1, 2}, {1.0f, 1.9f, 2.3f, 3.9f, 4.5f, 5.9f}));
  check_equal(run1(K::Gather, {rows, i32({2}, {-1, -3})}), f32({2, 2}, {4.5f, 5.7f, 1.0f, 1.2f}));
  check_equal(run1(K::Gather, {rows, i64({}, {1})}), f32({2}, {2.3f, 3.4f}));
}

BOOST_AUTO_TEST_CASE(gather_out_of_range_is_a_kernel_failure_naming_the_index) {
  const Tensor rows = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  check_fails(
      [&] {
        run1(K::Gather, {rows, i64({2}, {0, 3})});
      },
      ErrorCode::KernelFailure,
      "Gather index 3 (element 1 of indices) is out of range for axis 0 of size 3 "
      "(valid: [-3, 2])");
  check_fails(
      [&] {
        run1(K::Gather, {rows, i32({1}, {-4})});
      },
      ErrorCode::KernelFailure, "Gather index -4");
  // Every index is checked, even when nothing would be copied.
  check_fails(
      [] {
        run1(K::Gather, {f32({2, 0}, {}), i64({1}, {5})});
      },
      ErrorCode::KernelFailure, "Gather index 5");
}

BOOST_AUTO_TEST_CASE(expand_broadcasts_bidirectionally) {
  // ONNX Expand doc example: [3,1] with shape [2,1,6] gives [2,3,6]; here [2,1,2].
  check_equal(run1(K::Expand, {f32({3, 1}, {1, 2, 3})}, {{"shape", Ints{2, 1, 2}}}),
              f32({2, 3, 2}, {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  check_equal(run1(K::Expand, {i64({}, {4})}, {{"shape", Ints{2, 2}}}), i64({2, 2}, {4, 4, 4, 4}));
}

BOOST_AUTO_TEST_CASE(squeeze_unsqueeze_flatten_keep_element_order) {
  const Tensor x = f32({1, 3, 1}, {1, 2, 3});
  check_equal(run1(K::Squeeze, {x}, {{"axes", Ints{0}}}), f32({3, 1}, {1, 2, 3}));
  check_equal(run1(K::Squeeze, {x}), f32({3}, {1, 2, 3}));
  check_equal(run1(K::Unsqueeze, {f32({3}, {1, 2, 3})}, {{"axes", Ints{0, -1}}}), x);
  const Tensor cube = i32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  check_equal(run1(K::Flatten, {cube}, {{"axis", int64_t{2}}}),
              i32({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}));
  check_equal(run1(K::Flatten, {cube}, {{"axis", int64_t{0}}}),
              i32({1, 8}, {1, 2, 3, 4, 5, 6, 7, 8}));
}

BOOST_AUTO_TEST_CASE(identity_and_movement_keep_nan_payload_bits) {
  const float payload_nan = std::bit_cast<float>(uint32_t{0x7fc01234});
  const Tensor x = f32({2}, {payload_nan, 1});
  check_equal(run1(K::Identity, {x}), x);
  check_equal(run1(K::Transpose, {x}), x);
  check_equal(run1(K::Where, {boolean({2}, {1, 1}), x, f32({}, {0})}), x);
}

BOOST_AUTO_TEST_CASE(constant_yields_its_attribute) {
  const Tensor value = i64({2}, {4, -2});
  Graph graph;
  graph.set_outputs({graph.add(K::Constant, {}, {{"value", value}}, "c")});
  const std::vector<Tensor> out = evaluate(graph, {});
  BOOST_REQUIRE_EQUAL(out.size(), 1u);
  check_equal(out[0], value);
}

// ---- Empty tensors and scalars ------------------------------------------------------------

BOOST_AUTO_TEST_CASE(empty_tensors_and_scalars_flow_through) {
  check_close(run1(K::Add, {f32({0, 3}, {}), f32({3}, {1, 2, 3})}), f32({0, 3}, {}));
  check_close(run1(K::Exp, {f64({}, {0})}), f64({}, {1}));
  check_close(run1(K::Softmax, {f32({0, 4}, {})}), f32({0, 4}, {}));
  check_close(run1(K::MatMul, {f32({0, 2, 3}, {}), f32({3, 1}, {1, 2, 3})}), f32({0, 2, 1}, {}));
  check_equal(run1(K::Transpose, {boolean({2, 0}, {})}), boolean({0, 2}, {}));
  check_close(run1(K::LayerNormalization, {f32({0, 3}, {}), f32({3}, {1, 1, 1})}), f32({0, 3}, {}));
  check_close(run1(K::ReduceSum, {f64({}, {5})}), f64({}, {5}));
}

// ---- Graphs -------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(evaluate_runs_a_multi_node_graph_in_order) {
  // y = Relu(x @ W + b), then split into columns and joined back in reverse order.
  Graph graph;
  const ValueId x = graph.add_input("x", DType::F64, {2, 2});
  const ValueId w = graph.add_parameter("w", f64({2, 2}, {1, -1, 2, 0}));
  const ValueId b = graph.add_parameter("b", f64({2}, {0.5, 1}));
  const ValueId h = graph.add(K::Relu, {graph.add(K::Add, {graph.add(K::MatMul, {x, w}), b})});
  const std::vector<ValueId> cols =
      graph.add_node(K::Split, {h}, {{"axis", int64_t{1}}}, "split", 2);
  const ValueId swapped = graph.add(K::Concat, {cols[1], cols[0]}, {{"axis", int64_t{1}}});
  graph.set_outputs({h, swapped});
  // x = [1 2; -3 1]: x @ W = [5 -1; -1 3]; + b = [5.5 0; -0.5 4]; Relu = [5.5 0; 0 4].
  const std::vector<Tensor> out = evaluate(graph, std::vector<Tensor>{f64({2, 2}, {1, 2, -3, 1})});
  BOOST_REQUIRE_EQUAL(out.size(), 2u);
  check_close(out[0], f64({2, 2}, {5.5, 0, 0, 4}));
  check_close(out[1], f64({2, 2}, {0, 5.5, 4, 0}));
}

BOOST_AUTO_TEST_CASE(evaluate_rejects_inputs_that_do_not_match_the_graph) {
  Graph graph;
  graph.set_outputs({graph.add(K::Neg, {graph.add_input("x", DType::F32, {2})})});
  check_fails(
      [&] {
        evaluate(graph, std::vector<Tensor>{f32({3}, {1, 2, 3})});
      },
      ErrorCode::InputMismatch, "input 0 'x' expects f32[2], got f32[3]");
  check_fails([&] { evaluate(graph, std::vector<Tensor>{}); }, ErrorCode::InputMismatch,
              "the graph takes 1 input, 0 given");
}

BOOST_AUTO_TEST_CASE(kernel_failures_name_the_node) {
  Graph graph;
  const ValueId a = graph.add_input("a", DType::I64, {1});
  const ValueId b = graph.add_input("b", DType::I64, {1});
  graph.set_outputs({graph.add(K::Div, {a, b}, {}, "ratio")});
  check_fails(
      [&] {
        evaluate(graph, std::vector<Tensor>{i64({1}, {1}), i64({1}, {0})});
      },
      ErrorCode::KernelFailure, "reference: node 'ratio' (Div): integer division by zero");
}

BOOST_AUTO_TEST_CASE(transformer_block_evaluates_to_finite_values_of_the_input_shape) {
  const TransformerBlockConfig config;
  const Graph graph = transformer_block_graph(config);
  const Tensor x = random_tensor(DType::F32, {config.batch, config.seq, config.d_model}, 7, -1, 1);
  const std::vector<Tensor> out = evaluate(graph, std::vector<Tensor>{x});
  BOOST_REQUIRE_EQUAL(out.size(), 1u);
  BOOST_CHECK_EQUAL(out[0].shape().str(), x.shape().str());
  BOOST_CHECK(out[0].dtype() == DType::F32);
  for (int64_t i = 0; i < out[0].numel(); ++i) {
    BOOST_REQUIRE_MESSAGE(std::isfinite(out[0].get_double(i)), "element " << i << " is not finite");
  }
  // The residual path keeps the output near the input but the block does change it.
  BOOST_CHECK(!out[0].bit_equal(x));
  // One thread, fixed order: a second evaluation gives the same bits.
  BOOST_CHECK(evaluate(graph, std::vector<Tensor>{x})[0].bit_equal(out[0]));
}

// Every node reads a state's value from before the run, wherever it sits in program order;
// the state then holds its next value.
BOOST_AUTO_TEST_CASE(states_are_read_before_the_run_updates_them) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{2});
  const ValueId w = g.add_state("w", DType::F32, Shape{2});
  const ValueId next = g.add_node(K::Add, {w, x}, {}, "w_next")[0];
  g.set_state_update(w, next);
  g.set_outputs({g.add_node(K::Mul, {w, x}, {}, "y")[0], next});
  Tensor state = Tensor::from<float>(Shape{2}, {1, 2});
  std::vector<Tensor*> states{&state};
  const std::vector<Tensor> out =
      evaluate(g, std::vector<Tensor>{Tensor::from<float>(Shape{2}, {10, 20})}, states);
  BOOST_CHECK_EQUAL(out[0].get_double(1), 40.0);  // the old w
  BOOST_CHECK_EQUAL(out[1].get_double(1), 22.0);
  BOOST_CHECK(state.bit_equal(out[1]));
  BOOST_CHECK_THROW(evaluate(g, std::vector<Tensor>{Tensor::from<float>(Shape{2}, {1, 1})}),
                    VoltaError);  // its state is not bound
}

}  // namespace
}  // namespace volta::reference
