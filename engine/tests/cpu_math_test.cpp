// CPU kernels of the math ops added for ONNX import, against hand-checked values: rounding
// halves, Mod's two sign conventions, NaN through the piecewise activations, and the
// accuracy of the vectorized expm1 / log1p.
#define BOOST_TEST_MODULE cpu_math
#include <bit>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>

#include "../backends/cpu/kernels/vector_math.h"
#include "expect_error.h"
#include "test_util.h"

namespace volta {
namespace {

using test::check_close;
using test::filled;
using test::run_op;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Tensor run1(OpKind op, const std::vector<Tensor>& inputs, Attributes attrs = {}) {
  return run_op(op, inputs, std::move(attrs))[0];
}

Tensor vec(DType dtype, const std::vector<double>& values) {
  return filled(dtype, Shape{static_cast<int64_t>(values.size())}, values);
}

// Exact comparison, against `want` rounded to got's dtype, that also tells -0 from +0.
void check_exact(const Tensor& got, const std::vector<double>& want) {
  const Tensor rounded = vec(got.dtype(), want);
  BOOST_REQUIRE_EQUAL(got.numel(), rounded.numel());
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double g = got.get_double(i);
    const double w = rounded.get_double(i);
    const bool same =
        std::isnan(w) ? std::isnan(g) : (g == w && std::signbit(g) == std::signbit(w));
    BOOST_CHECK_MESSAGE(same, "element " << i << ": got " << g << ", want " << w);
  }
}

void check_bools(const Tensor& got, const std::vector<int>& want) {
  BOOST_REQUIRE(got.dtype() == DType::Bool);
  BOOST_REQUIRE_EQUAL(got.numel(), static_cast<int64_t>(want.size()));
  for (int64_t i = 0; i < got.numel(); ++i) {
    BOOST_CHECK_MESSAGE(got.get_int(i) == want[static_cast<size_t>(i)],
                        "element " << i << ": got " << got.get_int(i));
  }
}

// ---------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(rounding)

BOOST_AUTO_TEST_CASE(round_takes_halves_to_even_and_keeps_the_sign_of_zero) {
  for (DType d : {DType::F32, DType::F64}) {
    BOOST_TEST_CONTEXT(dtype_name(d)) {
      const Tensor x = vec(d, {0.5, 1.5, 2.5, -0.5, -2.5, -3.5, 0.4999999701976776, -0.4, 8388609.0,
                               1e20, kInf, -kInf, kNaN});
      check_exact(run1(OpKind::Round, {x}),
                  {0.0, 2.0, 2.0, -0.0, -2.0, -4.0, 0.0, -0.0, 8388609.0, 1e20, kInf, -kInf, kNaN});
    }
  }
}

BOOST_AUTO_TEST_CASE(floor_and_ceil_follow_numpy_signed_zeros) {
  for (DType d : {DType::F32, DType::F64}) {
    BOOST_TEST_CONTEXT(dtype_name(d)) {
      const Tensor x = vec(d, {-0.5, 0.5, -0.0, 2.0, -2.5, 2.5, 1e20, -kInf, kNaN});
      check_exact(run1(OpKind::Floor, {x}), {-1.0, 0.0, -0.0, 2.0, -3.0, 2.0, 1e20, -kInf, kNaN});
      check_exact(run1(OpKind::Ceil, {x}), {-0.0, 1.0, -0.0, 2.0, -2.0, 3.0, 1e20, -kInf, kNaN});
    }
  }
  // Past 2^52 every double is an integer; 2^52 + 0.5 does not exist, 2^51 + 0.5 does.
  const Tensor big = vec(DType::F64, {2251799813685248.5, -2251799813685248.5});
  check_exact(run1(OpKind::Floor, {big}), {2251799813685248.0, -2251799813685249.0});
  check_exact(run1(OpKind::Round, {big}), {2251799813685248.0, -2251799813685248.0});
}

BOOST_AUTO_TEST_CASE(sign_of_zero_is_zero_and_nan_stays_nan) {
  check_exact(run1(OpKind::Sign, {vec(DType::F32, {kNaN, -0.0, 0.0, -3.0, 2.0, -kInf, 1e-45})}),
              {kNaN, 0.0, 0.0, -1.0, 1.0, -1.0, 1.0});
  check_exact(run1(OpKind::Sign, {vec(DType::I32, {-5, 0, 7})}), {-1, 0, 1});
  check_exact(run1(OpKind::Sign, {vec(DType::I64, {-9e15, 0, 9e15})}), {-1, 0, 1});
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(mod)

const Attributes kFmod{{"fmod", int64_t{1}}};

BOOST_AUTO_TEST_CASE(integer_mod_takes_the_divisor_sign_fmod_the_dividend_sign) {
  for (DType d : {DType::I32, DType::I64}) {
    BOOST_TEST_CONTEXT(dtype_name(d)) {
      const Tensor a = vec(d, {-4, 7, 5, -7, 4, -4, 0});
      const Tensor b = vec(d, {3, -3, -3, 2, -2, -2, 5});
      check_exact(run1(OpKind::Mod, {a, b}), {2, -2, -1, 1, 0, 0, 0});         // Python %
      check_exact(run1(OpKind::Mod, {a, b}, kFmod), {-1, 1, 2, -1, 0, 0, 0});  // C %
    }
  }
  // lowest % -1 is 0 in both conventions (in C++ it would overflow).
  const Tensor lowest = vec(DType::I32, {-2147483648.0});
  const Tensor minus_one = vec(DType::I32, {-1});
  check_exact(run1(OpKind::Mod, {lowest, minus_one}), {0});
  check_exact(run1(OpKind::Mod, {lowest, minus_one}, kFmod), {0});
}

BOOST_AUTO_TEST_CASE(float_mod_matches_numpy_mod_and_fmod) {
  // ONNX's test_mod_mixed_sign_float64 inputs: np.fmod and np.mod of them.
  const Tensor a = vec(DType::F64, {-4.3, 7.2, 5.0, 4.3, -7.2, 8.0});
  const Tensor b = vec(DType::F64, {2.1, -3.4, 8.0, -2.1, 3.4, 5.0});
  check_close(run1(OpKind::Mod, {a, b}, kFmod), vec(DType::F64, {-0.1, 0.4, 5.0, 0.1, -0.4, 3.0}),
              1e-12, 0);
  check_close(run1(OpKind::Mod, {a, b}), vec(DType::F64, {2.0, -3.0, 5.0, -2.0, 3.0, 3.0}), 1e-12,
              0);
  // A zero remainder takes the divisor's sign; a finite dividend modulo Inf of the other sign
  // is Inf (numpy.mod); modulo 0 is NaN.
  const Tensor za = vec(DType::F32, {6.0, -6.0, -1.0, 1.0, 3.0});
  const Tensor zb = vec(DType::F32, {-3.0, 3.0, kInf, kInf, 0.0});
  check_exact(run1(OpKind::Mod, {za, zb}), {-0.0, 0.0, kInf, 1.0, kNaN});
  check_exact(run1(OpKind::Mod, {za, zb}, kFmod), {0.0, -0.0, -1.0, 1.0, kNaN});
}

BOOST_AUTO_TEST_CASE(integer_mod_by_zero_names_the_element) {
  const Tensor a = vec(DType::I64, {1, 2, 3});
  const Tensor b = vec(DType::I64, {1, 0, 2});
  for (const Attributes& attrs : {Attributes{}, kFmod}) {
    test::expect_error_containing(
        [&] {
          run1(OpKind::Mod, {a, b}, attrs);
        },
        ErrorCode::KernelFailure, {"Mod: integer division by zero", "output element 1"});
  }
}

BOOST_AUTO_TEST_CASE(kernels_are_chosen_by_the_fmod_attribute) {
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  auto variant = [&](DType d, Attributes attrs) {
    const TypeInfo t{d, Shape{4}};
    Graph g = test::single_op_graph(OpKind::Mod, {t, t}, std::move(attrs));
    return compile(g, *cpu, DeterminismMode::Strict, {.optimize = false}).steps[0].kernel.variant;
  };
  BOOST_TEST(variant(DType::F32, {}) == "f32_mod_libm");
  BOOST_TEST(variant(DType::F32, kFmod) == "f32_fmod_libm");
  BOOST_TEST(variant(DType::I64, kFmod) == "i64_fmod_scalar");
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(activations)

BOOST_AUTO_TEST_CASE(exponential_units) {
  const double e1 = std::expm1(-1.0);  // e^-1 - 1
  const Tensor x = vec(DType::F64, {-1.0, 0.0, 2.0, -kInf, kNaN});
  check_close(run1(OpKind::Elu, {x}, {{"alpha", 2.0}}),
              vec(DType::F64, {2.0 * e1, 0.0, 2.0, -2.0, kNaN}), 1e-15, 1e-15);
  // Selu's defaults are the f32 values of ONNX's constants.
  const double alpha = 1.67326319217681884765625;
  const double gamma = 1.05070102214813232421875;
  check_close(run1(OpKind::Selu, {x}),
              vec(DType::F64, {gamma * alpha * e1, 0.0, gamma * 2.0, -gamma * alpha, kNaN}), 1e-15,
              1e-15);
  // Celu(x) = max(0, x) + min(0, alpha (e^(x / alpha) - 1)).
  check_close(run1(OpKind::Celu, {x}, {{"alpha", 2.0}}),
              vec(DType::F64, {2.0 * std::expm1(-0.5), 0.0, 2.0, -2.0, kNaN}), 1e-15, 1e-15);
  // f32 near 0: e^x - 1 is computed without cancellation.
  const Tensor tiny = vec(DType::F32, {-1e-7, -3e-4});
  check_close(run1(OpKind::Elu, {tiny}), vec(DType::F32, {std::expm1(-1e-7), std::expm1(-3e-4)}), 0,
              1e-6);
}

BOOST_AUTO_TEST_CASE(hard_sigmoid_and_hard_swish_clamp_and_keep_nan) {
  const Tensor x = vec(DType::F32, {-4.0, -2.5, 0.0, 1.0, 2.5, 4.0, kNaN});
  check_close(run1(OpKind::HardSigmoid, {x}),  // alpha 0.2, beta 0.5
              vec(DType::F32, {0.0, 0.0, 0.5, 0.7, 1.0, 1.0, kNaN}), 1e-7, 0);
  check_close(run1(OpKind::HardSigmoid, {x}, {{"alpha", 0.5}, {"beta", 0.25}}),
              vec(DType::F32, {0.0, 0.0, 0.25, 0.75, 1.0, 1.0, kNaN}), 1e-7, 0);
  // x * max(0, min(1, x / 6 + 1/2)): 0 below -3 (-inf included), x above 3.
  check_close(run1(OpKind::HardSwish, {x}),
              vec(DType::F32, {0.0, -2.5 / 12.0, 0.0, 2.0 / 3.0, 2.5 * 11.0 / 12.0, 4.0, kNaN}),
              1e-7, 1e-6);
  check_exact(run1(OpKind::HardSwish, {vec(DType::F64, {-kInf, kInf})}), {-0.0, kInf});
}

BOOST_AUTO_TEST_CASE(softplus_is_stable_at_both_ends_and_softsign_has_limits) {
  for (DType d : {DType::F32, DType::F64}) {
    BOOST_TEST_CONTEXT(dtype_name(d)) {
      const Tensor x = vec(d, {-80.0, -20.0, 0.0, 20.0, 100.0, kInf, -kInf, kNaN});
      // log(1 + e^x): e^x itself far below 0, x + e^-x far above, both without overflow.
      check_close(
          run1(OpKind::Softplus, {x}),
          vec(d, {std::exp(-80.0), std::exp(-20.0), std::log(2.0), 20.0, 100.0, kInf, 0.0, kNaN}),
          0, 1e-6);
      check_close(
          run1(OpKind::Softsign, {x}),
          vec(d, {-80.0 / 81.0, -20.0 / 21.0, 0.0, 20.0 / 21.0, 100.0 / 101.0, 1.0, -1.0, kNaN}), 0,
          3e-7);
    }
  }
}

BOOST_AUTO_TEST_CASE(thresholded_relu_and_shrink_keep_nan) {
  const Tensor x = vec(DType::F32, {-2.0, -1.0, 0.5, 1.0, 1.5, kNaN});
  check_exact(run1(OpKind::ThresholdedRelu, {x}), {0.0, 0.0, 0.0, 0.0, 1.5, kNaN});  // alpha 1
  check_exact(run1(OpKind::ThresholdedRelu, {x}, {{"alpha", -1.5}}),
              {0.0, -1.0, 0.5, 1.0, 1.5, kNaN});
  // ONNX's test_shrink_soft: lambd 1.5, bias 1.5 on [-2, -1, 0, 1, 2].
  const Tensor s = vec(DType::F32, {-2.0, -1.0, 0.0, 1.0, 2.0, kNaN});
  check_exact(run1(OpKind::Shrink, {s}, {{"lambd", 1.5}, {"bias", 1.5}}),
              {-0.5, 0.0, 0.0, 0.0, 0.5, kNaN});
  check_exact(run1(OpKind::Shrink, {s}, {{"lambd", 1.5}}), {-2.0, 0.0, 0.0, 0.0, 2.0, kNaN});
}

BOOST_AUTO_TEST_CASE(prelu_broadcasts_the_slope_to_x) {
  const Tensor x = filled(DType::F32, Shape{2, 3}, {-1, 2, -3, 4, -5, 6});
  const Tensor slope = vec(DType::F32, {0.5, 0.25, 0.125});
  check_exact(run1(OpKind::PRelu, {x, slope}), {-0.5, 2, -0.375, 4, -1.25, 6});
  const Tensor ix = filled(DType::I64, Shape{2, 2}, {-3, 3, -4, 4});
  const Tensor islope = filled(DType::I64, Shape{2, 1}, {2, -1});
  check_exact(run1(OpKind::PRelu, {ix, islope}), {-6, 3, 4, 4});
  // X never broadcasts to the slope.
  const TypeInfo small{DType::F32, Shape{3}};
  const TypeInfo big{DType::F32, Shape{2, 3}};
  BOOST_CHECK_THROW(test::single_op_graph(OpKind::PRelu, {small, big}), VoltaError);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(classification_and_logic)

BOOST_AUTO_TEST_CASE(is_nan_and_is_inf) {
  for (DType d : {DType::F32, DType::F64}) {
    const Tensor x = vec(d, {kNaN, kInf, -kInf, 0.0, 1e38});
    check_bools(run1(OpKind::IsNaN, {x}), {1, 0, 0, 0, 0});
    check_bools(run1(OpKind::IsInf, {x}), {0, 1, 1, 0, 0});
    check_bools(run1(OpKind::IsInf, {x}, {{"detect_negative", int64_t{0}}}), {0, 1, 0, 0, 0});
    check_bools(run1(OpKind::IsInf, {x}, {{"detect_positive", int64_t{0}}}), {0, 0, 1, 0, 0});
    check_bools(run1(OpKind::IsInf, {x},
                     {{"detect_positive", int64_t{0}}, {"detect_negative", int64_t{0}}}),
                {0, 0, 0, 0, 0});
  }
}

BOOST_AUTO_TEST_CASE(xor_and_ordered_comparisons) {
  const Tensor a = filled(DType::Bool, Shape{2, 2}, {0, 0, 1, 1});
  const Tensor b = filled(DType::Bool, Shape{2}, {0, 1});
  check_bools(run1(OpKind::Xor, {a, b}), {0, 1, 1, 0});
  const Tensor x = vec(DType::F32, {1.0, 2.0, 3.0, kNaN, kInf});
  const Tensor y = vec(DType::F32, {2.0, 2.0, 2.0, kNaN, kInf});
  check_bools(run1(OpKind::LessOrEqual, {x, y}), {1, 1, 0, 0, 1});
  check_bools(run1(OpKind::GreaterOrEqual, {x, y}), {0, 1, 1, 0, 1});
  const Tensor i = vec(DType::I64, {-1, 0, 1});
  check_bools(run1(OpKind::GreaterOrEqual, {i, vec(DType::I64, {0})}), {0, 1, 1});
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(vector_math)

// ULP error as vector_math.h defines it.
double ulp_error(float got, double exact) {
  if (std::isnan(exact) || std::isnan(got)) return std::isnan(exact) && std::isnan(got) ? 0 : kInf;
  if (got == static_cast<float>(exact)) return 0;
  if (std::isinf(got) || std::isinf(exact)) return kInf;
  int exponent = 0;
  std::frexp(exact, &exponent);
  return std::abs(static_cast<double>(got) - exact) /
         std::ldexp(1.0, std::max(exponent - 24, -149));
}

// Every 2003rd f32 bit pattern, as cpu_elementwise_test sweeps the other functions.
template <class Fn, class Exact>
double worst_ulp(Fn fn, Exact exact, float lowest) {
  double worst = 0;
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 2003) {
    const float x = std::bit_cast<float>(static_cast<uint32_t>(bits));
    if (!(x >= lowest) && !std::isnan(x)) continue;
    worst = std::max(worst, ulp_error(fn(x), exact(static_cast<double>(x))));
  }
  return worst;
}

BOOST_AUTO_TEST_CASE(expm1_and_log1p_stay_within_their_documented_bounds) {
  using namespace cpu::vmath;
  const float all = -std::numeric_limits<float>::infinity();
  BOOST_TEST(worst_ulp(
                 expm1_f32, [](double x) { return std::expm1(x); }, all) <= 3.33);
  BOOST_TEST(worst_ulp(
                 log1p_f32, [](double x) { return std::log1p(x); }, -1.0f) <= 2.47);
  BOOST_TEST(expm1_f32(-0.0f) == 0.0f);
  BOOST_TEST(std::signbit(expm1_f32(-0.0f)));
  BOOST_TEST(log1p_f32(-1.0f) == -std::numeric_limits<float>::infinity());
  BOOST_TEST(std::isnan(log1p_f32(-2.0f)));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace volta
