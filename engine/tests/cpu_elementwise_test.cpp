#define BOOST_TEST_MODULE cpu_elementwise
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <vector>

#include "../backends/cpu/cpu_kernel.h"
#include "test_util.h"
#include "volta/ir/op_schema.h"

namespace volta {
namespace {

using test::check_close;
using test::run_op;

constexpr float kInfF = std::numeric_limits<float>::infinity();
constexpr float kNaNF = std::numeric_limits<float>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int64_t kChunk = cpu::kElementwiseChunk;

template <class T>
Tensor tensor(Shape shape, std::vector<T> values) {
  return Tensor::from<T>(std::move(shape), std::span<const T>(values));
}
template <class T>
Tensor scalar(T value) {
  return tensor<T>(Shape{}, {value});
}
// A bool tensor: each value != 0 is true.
Tensor bools(Shape shape, const std::vector<int>& values) {
  Tensor t(DType::Bool, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) t.set_int(static_cast<int64_t>(i), values[i]);
  return t;
}

Tensor run1(OpKind op, const std::vector<Tensor>& inputs, Attributes attrs = {}, int threads = 1) {
  return run_op(op, inputs, std::move(attrs), 1, threads)[0];
}

template <class T>
std::vector<T> values_of(const Tensor& t) {
  const T* p = t.data_as<T>();
  return std::vector<T>(p, p + t.numel());
}
// A bool tensor's values as 0 and 1.
std::vector<uint8_t> bool_values(const Tensor& t) {
  std::vector<uint8_t> out;
  for (const bool b : values_of<bool>(t)) out.push_back(b ? 1 : 0);
  return out;
}

// Runs `op` and expects a KernelFailure whose message contains every given fragment.
void expect_kernel_failure(OpKind op, const std::vector<Tensor>& inputs, Attributes attrs,
                           const std::vector<std::string>& fragments) {
  try {
    run1(op, inputs, std::move(attrs));
    BOOST_FAIL("expected a kernel failure from " << op_name(op));
  } catch (const VoltaError& e) {
    BOOST_TEST(static_cast<int>(e.code()) == static_cast<int>(ErrorCode::KernelFailure));
    for (const std::string& fragment : fragments) {
      BOOST_TEST(e.message().find(fragment) != std::string::npos,
                 "message '" << e.message() << "' lacks '" << fragment << "'");
    }
  }
}

// Flat index of the input element that output element `flat` reads under numpy broadcasting,
// worked out digit by digit (independent of the engine's broadcast_strides).
int64_t broadcast_source(const Shape& out, const Shape& in, int64_t flat) {
  int64_t index = 0;
  int64_t in_stride = 1;
  for (int d = out.rank() - 1; d >= 0; --d) {
    const int64_t digit = flat % out[d];
    flat /= out[d];
    const int in_axis = d - (out.rank() - in.rank());
    if (in_axis < 0) continue;
    if (in[in_axis] != 1) index += digit * in_stride;
    in_stride *= in[in_axis];
  }
  return index;
}

// Values -limit .. limit in a fixed pseudo-random order, of the given dtype.
Tensor ramp(DType dtype, Shape shape, double limit = 10.0) {
  Tensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double unit = static_cast<double>((i * 7919) % 2003) / 1001.0 - 1.0;  // [-1, 1]
    if (is_floating(dtype)) {
      t.set_double(i, unit * limit);
    } else {
      t.set_int(i, static_cast<int64_t>(std::lround(unit * limit)));
    }
  }
  return t;
}

// ULP error of an f32 result against the exact (double) value: |got - exact| over the f32
// spacing at the exact value (subnormal spacing below FLT_MIN). Matching NaNs and results
// equal to the rounded exact value count as 0.
double ulp_error(float got, double exact) {
  if (std::isnan(exact) || std::isnan(got)) return std::isnan(exact) && std::isnan(got) ? 0 : kInf;
  const float rounded = static_cast<float>(exact);
  if (got == rounded) return 0;
  if (std::isinf(got) || std::isinf(rounded)) return kInf;
  int exponent = 0;
  std::frexp(exact, &exponent);
  const double spacing = std::ldexp(1.0, std::max(exponent - 24, -149));
  return std::abs(static_cast<double>(got) - exact) / spacing;
}

// Every 2003rd f32 bit pattern: all signs, exponents, subnormals, infinities and NaNs.
Tensor f32_sweep() {
  constexpr uint64_t kStep = 2003;
  std::vector<float> values;
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += kStep) {
    values.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  }
  const auto n = static_cast<int64_t>(values.size());
  return tensor<float>(Shape{n}, std::move(values));
}

// The GELU forms in double, with their limits at +-inf (where the formulas give inf * 0).
double gelu_exact(double x) {
  if (std::isinf(x)) return x > 0 ? x : -0.0;
  return 0.5 * x * std::erfc(-x / std::numbers::sqrt2);
}
double gelu_tanh_exact(double x) {
  if (std::isinf(x)) return x > 0 ? x : -0.0;
  const double u = std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x);
  return x / (1.0 + std::exp(-2.0 * u));  // x (1 + tanh u) / 2 without its cancellation
}
double sigmoid_exact(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// ---------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(coverage)

// Every op of the elementwise, activation and logical families has a bit-exact CPU kernel for
// every dtype the op table allows it (the families come from the op table, so a new op is
// covered without editing this list).
BOOST_AUTO_TEST_CASE(every_dtype_the_op_table_allows_has_a_kernel) {
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  const Capabilities caps = cpu->capabilities();
  int checked = 0;
  for (const OpSchema& s : all_op_schemas()) {
    if (s.family != OpFamily::Elementwise && s.family != OpFamily::Activation &&
        s.family != OpFamily::Logical) {
      continue;
    }
    ++checked;
    const OpCapability& cap = caps[static_cast<size_t>(op_index(s.kind))];
    BOOST_TEST_CONTEXT(s.name) {
      BOOST_TEST(cap.supported);
      BOOST_TEST(static_cast<int>(cap.determinism) ==
                 static_cast<int>(KernelDeterminism::BitExact));
      const TypeParam* t = s.find_type_param('T');
      BOOST_REQUIRE(t != nullptr);
      BOOST_TEST(cap.dtypes.bits() == t->allowed.bits(),
                 "kernels cover " << cap.dtypes.str() << ", the op allows " << t->allowed.str());
    }
  }
  BOOST_TEST(checked >= 28);
}

BOOST_AUTO_TEST_CASE(variant_names_say_dtype_op_and_implementation) {
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  auto variant = [&](OpKind op, DType dtype, Attributes attrs = {}) {
    Graph g = test::single_op_graph(op, {TypeInfo{dtype, Shape{4}}}, std::move(attrs));
    return compile(g, *cpu, DeterminismMode::Strict, {.optimize = false}).steps[0].kernel.variant;
  };
  BOOST_TEST(variant(OpKind::Exp, DType::F32).starts_with("f32_exp_"));
  BOOST_TEST(variant(OpKind::Exp, DType::F64) == "f64_exp_libm");
  BOOST_TEST(variant(OpKind::Gelu, DType::F32, {{"approximate", std::string("tanh")}})
                 .starts_with("f32_gelu_tanh_"));
  BOOST_TEST(variant(OpKind::Gelu, DType::F32).starts_with("f32_gelu_erf_"));
  BOOST_TEST(
      variant(OpKind::Cast, DType::F32, {{"to", std::string("i64")}}).starts_with("f32_cast_i64_"));
  BOOST_TEST(variant(OpKind::Neg, DType::I32).starts_with("i32_neg_"));
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(arithmetic)

BOOST_AUTO_TEST_CASE(float_add_sub_mul_div) {
  for (DType dtype : {DType::F32, DType::F64}) {
    BOOST_TEST_CONTEXT(dtype_name(dtype)) {
      Tensor a(dtype, Shape{5});
      Tensor b(dtype, Shape{5});
      const double av[] = {1.5, -2.0, 0.25, 8.0, 1.0};
      const double bv[] = {2.0, 4.0, -0.5, -3.0, 0.0};
      for (int i = 0; i < 5; ++i) {
        a.set_double(i, av[i]);
        b.set_double(i, bv[i]);
      }
      auto expect = [&](OpKind op, std::vector<double> want) {
        Tensor w(dtype, Shape{5});
        for (int i = 0; i < 5; ++i) w.set_double(i, want[static_cast<size_t>(i)]);
        check_close(run1(op, {a, b}), w, 0, 1e-7);
      };
      expect(OpKind::Add, {3.5, 2.0, -0.25, 5.0, 1.0});
      expect(OpKind::Sub, {-0.5, -6.0, 0.75, 11.0, 1.0});
      expect(OpKind::Mul, {3.0, -8.0, -0.125, -24.0, 0.0});
      expect(OpKind::Div, {0.75, -0.5, -0.5, -8.0 / 3.0, kInf});  // 1 / 0 = inf
    }
  }
}

BOOST_AUTO_TEST_CASE(integer_add_sub_mul_div) {
  const std::vector<int32_t> a = {7, -7, 7, -7, 0, 100};
  const std::vector<int32_t> b = {2, 2, -2, -2, 5, 7};
  auto run32 = [&](OpKind op) {
    return values_of<int32_t>(
        run1(op, {tensor<int32_t>(Shape{6}, a), tensor<int32_t>(Shape{6}, b)}));
  };
  BOOST_TEST(run32(OpKind::Add) == (std::vector<int32_t>{9, -5, 5, -9, 5, 107}),
             boost::test_tools::per_element());
  BOOST_TEST(run32(OpKind::Sub) == (std::vector<int32_t>{5, -9, 9, -5, -5, 93}),
             boost::test_tools::per_element());
  BOOST_TEST(run32(OpKind::Mul) == (std::vector<int32_t>{14, -14, -14, 14, 0, 700}),
             boost::test_tools::per_element());
  // Truncation toward zero, not floor.
  BOOST_TEST(run32(OpKind::Div) == (std::vector<int32_t>{3, -3, -3, 3, 0, 14}),
             boost::test_tools::per_element());

  const Tensor big = tensor<int64_t>(Shape{2}, {int64_t{1} << 40, -(int64_t{1} << 40) - 3});
  const Tensor three = tensor<int64_t>(Shape{2}, {3, 3});
  BOOST_TEST(values_of<int64_t>(run1(OpKind::Div, {big, three})) ==
                 (std::vector<int64_t>{366503875925, -366503875926}),
             boost::test_tools::per_element());
  BOOST_TEST(values_of<int64_t>(run1(OpKind::Mul, {big, three})) ==
                 (std::vector<int64_t>{3298534883328, -3298534883337}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(integer_overflow_wraps) {
  constexpr int32_t kMax32 = std::numeric_limits<int32_t>::max();
  constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
  constexpr int64_t kMax64 = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();
  const Tensor a32 = tensor<int32_t>(Shape{3}, {kMax32, kMin32, 65536});
  const Tensor b32 = tensor<int32_t>(Shape{3}, {1, 1, 65536});
  BOOST_TEST(values_of<int32_t>(run1(OpKind::Add, {a32, b32})) ==
                 (std::vector<int32_t>{kMin32, kMin32 + 1, 131072}),
             boost::test_tools::per_element());
  BOOST_TEST(values_of<int32_t>(run1(OpKind::Sub, {a32, b32})) ==
                 (std::vector<int32_t>{kMax32 - 1, kMax32, 0}),
             boost::test_tools::per_element());
  BOOST_TEST(values_of<int32_t>(run1(OpKind::Mul, {a32, b32})) ==
                 (std::vector<int32_t>{kMax32, kMin32, 0}),  // 2^32 wraps to 0
             boost::test_tools::per_element());
  const Tensor mins = tensor<int64_t>(Shape{2}, {kMin64, kMax64});
  const Tensor minus_one = tensor<int64_t>(Shape{2}, {-1, -1});
  BOOST_TEST(values_of<int64_t>(run1(OpKind::Div, {mins, minus_one})) ==
                 (std::vector<int64_t>{kMin64, -kMax64}),
             boost::test_tools::per_element());
  BOOST_TEST(
      values_of<int64_t>(run1(OpKind::Neg, {mins})) == (std::vector<int64_t>{kMin64, -kMax64}),
      boost::test_tools::per_element());
  BOOST_TEST(
      values_of<int64_t>(run1(OpKind::Abs, {mins})) == (std::vector<int64_t>{kMin64, kMax64}),
      boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(integer_division_by_zero_is_a_kernel_failure) {
  const Tensor a = tensor<int32_t>(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  expect_kernel_failure(OpKind::Div, {a, tensor<int32_t>(Shape{3}, {1, 2, 0})}, {},
                        {"Div", "division by zero", "output element 2"});
  expect_kernel_failure(OpKind::Div, {a, scalar<int32_t>(0)}, {}, {"output element 0"});
  // The first zero divisor is named, whatever chunk and thread find zeros.
  Tensor divisors(DType::I64, Shape{3 * kChunk});
  for (int64_t i = 0; i < divisors.numel(); ++i) divisors.set_int(i, 1);
  divisors.set_int(kChunk + 7, 0);
  divisors.set_int(2 * kChunk + 1, 0);
  try {
    run1(OpKind::Div, {Tensor(DType::I64, Shape{3 * kChunk}), divisors}, {}, 4);
    BOOST_FAIL("expected a kernel failure");
  } catch (const VoltaError& e) {
    BOOST_TEST(e.message().find("output element " + std::to_string(kChunk + 7)) !=
               std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(pow) {
  for (DType dtype : {DType::F32, DType::F64}) {
    Tensor a(dtype, Shape{5});
    Tensor b(dtype, Shape{5});
    const double av[] = {2.0, 4.0, 9.0, 0.0, kNaN};
    const double bv[] = {3.0, 0.5, -0.5, -1.0, 0.0};
    const double want[] = {8.0, 2.0, 1.0 / 3.0, kInf, 1.0};  // pow(x, 0) = 1 even for NaN
    Tensor w(dtype, Shape{5});
    for (int i = 0; i < 5; ++i) {
      a.set_double(i, av[i]);
      b.set_double(i, bv[i]);
      w.set_double(i, want[i]);
    }
    check_close(run1(OpKind::Pow, {a, b}), w, 0, 1e-7);
  }
}

// An exponent of 2 squares: a * a, correctly rounded, bit for bit, whether the exponent is one
// splatted scalar (the vectorized path) or a 2 among other exponents (per element), across a
// chunk edge, with the special values pow and the square agree on.
BOOST_AUTO_TEST_CASE(pow_by_two_is_the_correctly_rounded_square) {
  const int64_t n = kChunk + 37;
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    x[static_cast<size_t>(i)] =
        std::ldexp(1.0F + static_cast<float>(i) * 0x1.3p-17F, static_cast<int>(i % 64) - 32) *
        (i % 3 == 0 ? -1.0F : 1.0F);
  }
  const std::vector<float> special = {0.0F, -0.0F, kInfF, -kInfF, kNaNF, 1e30F, 1e-30F};
  std::copy(special.begin(), special.end(), x.begin());
  std::vector<float> exponents(static_cast<size_t>(n), 2.0F);
  for (int64_t i = 0; i < n; i += 5) exponents[static_cast<size_t>(i)] = 3.0F;
  const Tensor a = tensor<float>(Shape{n}, x);
  for (const int threads : {1, 2}) {
    const std::vector<float> splat =
        values_of<float>(run1(OpKind::Pow, {a, scalar<float>(2.0F)}, {}, threads));
    const std::vector<float> mixed =
        values_of<float>(run1(OpKind::Pow, {a, tensor<float>(Shape{n}, exponents)}, {}, threads));
    for (int64_t i = 0; i < n; ++i) {
      const float v = x[static_cast<size_t>(i)];
      const float square = v * v;
      BOOST_TEST(std::bit_cast<uint32_t>(splat[static_cast<size_t>(i)]) ==
                 std::bit_cast<uint32_t>(square));
      const float want = i % 5 == 0 ? std::pow(v, 3.0F) : square;
      BOOST_TEST(std::bit_cast<uint32_t>(mixed[static_cast<size_t>(i)]) ==
                 std::bit_cast<uint32_t>(want));
    }
  }
}

BOOST_AUTO_TEST_CASE(neg_abs_relu_on_every_numeric_dtype) {
  for (DType dtype : {DType::F32, DType::F64, DType::I32, DType::I64}) {
    BOOST_TEST_CONTEXT(dtype_name(dtype)) {
      Tensor x(dtype, Shape{4});
      const int64_t xv[] = {-3, 0, 5, -1};
      for (int i = 0; i < 4; ++i) x.set_int(i, xv[i]);
      auto expect = [&](OpKind op, std::vector<int64_t> want) {
        const Tensor y = run1(op, {x});
        for (int i = 0; i < 4; ++i) BOOST_TEST(y.get_int(i) == want[static_cast<size_t>(i)]);
      };
      expect(OpKind::Neg, {3, 0, -5, 1});
      expect(OpKind::Abs, {3, 0, 5, 1});
      expect(OpKind::Relu, {0, 0, 5, 0});
    }
  }
}

BOOST_AUTO_TEST_CASE(float_unary_special_values) {
  const Tensor x = tensor<float>(Shape{6}, {-2.0f, -0.0f, 0.0f, 4.0f, kInfF, kNaNF});
  check_close(run1(OpKind::Sqrt, {x}), tensor<float>(Shape{6}, {kNaNF, -0.0f, 0, 2, kInfF, kNaNF}));
  check_close(run1(OpKind::Reciprocal, {x}),
              tensor<float>(Shape{6}, {-0.5f, -kInfF, kInfF, 0.25f, 0, kNaNF}));
  check_close(run1(OpKind::Relu, {x}), tensor<float>(Shape{6}, {0, 0, 0, 4, kInfF, kNaNF}));
  check_close(run1(OpKind::Abs, {x}), tensor<float>(Shape{6}, {2, 0, 0, 4, kInfF, kNaNF}));
  check_close(run1(OpKind::LeakyRelu, {x}, {{"alpha", 0.5}}),
              tensor<float>(Shape{6}, {-1, 0, 0, 4, kInfF, kNaNF}));
  BOOST_TEST(std::signbit(values_of<float>(run1(OpKind::Neg, {x}))[2]));  // -(+0) = -0
  const Tensor xd = tensor<double>(Shape{4}, {-2.0, -0.0, 0.25, kInf});
  check_close(run1(OpKind::Sqrt, {xd}), tensor<double>(Shape{4}, {kNaN, -0.0, 0.5, kInf}), 0, 0);
  check_close(run1(OpKind::Reciprocal, {xd}), tensor<double>(Shape{4}, {-0.5, -kInf, 4, 0}), 0, 0);
}

BOOST_AUTO_TEST_CASE(math_functions_match_double_formulas) {
  struct Case {
    OpKind op;
    Attributes attrs;
    double (*exact)(double);
    bool positive_only;
  };
  const Case cases[] = {
      {OpKind::Exp, {}, [](double x) { return std::exp(x); }, false},
      {OpKind::Log, {}, [](double x) { return std::log(x); }, true},
      {OpKind::Erf, {}, [](double x) { return std::erf(x); }, false},
      {OpKind::Tanh, {}, [](double x) { return std::tanh(x); }, false},
      {OpKind::Sigmoid, {}, sigmoid_exact, false},
      {OpKind::Gelu, {}, gelu_exact, false},
      {OpKind::Gelu, {{"approximate", std::string("tanh")}}, gelu_tanh_exact, false},
      {OpKind::LeakyRelu, {{"alpha", 0.25}}, [](double x) { return x >= 0 ? x : 0.25 * x; }, false},
  };
  for (const Case& c : cases) {
    for (DType dtype : {DType::F32, DType::F64}) {
      BOOST_TEST_CONTEXT(op_name(c.op) << " " << c.attrs.size() << " " << dtype_name(dtype)) {
        Tensor x = ramp(dtype, Shape{3, 37}, 6.0);
        if (c.positive_only) {
          for (int64_t i = 0; i < x.numel(); ++i) x.set_double(i, std::abs(x.get_double(i)) + 0.01);
        }
        Tensor want(dtype, x.shape());
        for (int64_t i = 0; i < x.numel(); ++i) want.set_double(i, c.exact(x.get_double(i)));
        const double tolerance = dtype == DType::F32 ? 6e-7 : 1e-14;  // a few ULP
        check_close(run1(c.op, {x}, c.attrs), want, 1e-30, tolerance);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(math_functions_at_limits) {
  const Tensor x = tensor<float>(Shape{5}, {-kInfF, kInfF, kNaNF, 0.0f, -0.0f});
  const Tensor xd = tensor<double>(Shape{5}, {-kInf, kInf, kNaN, 0.0, -0.0});
  struct Case {
    OpKind op;
    Attributes attrs;
    std::vector<double> want;
  };
  const Case cases[] = {
      {OpKind::Exp, {}, {0, kInf, kNaN, 1, 1}},
      {OpKind::Log, {}, {kNaN, kInf, kNaN, -kInf, -kInf}},
      {OpKind::Erf, {}, {-1, 1, kNaN, 0, 0}},
      {OpKind::Tanh, {}, {-1, 1, kNaN, 0, 0}},
      {OpKind::Sigmoid, {}, {0, 1, kNaN, 0.5, 0.5}},
      {OpKind::Gelu, {}, {0, kInf, kNaN, 0, 0}},
      {OpKind::Gelu, {{"approximate", std::string("tanh")}}, {0, kInf, kNaN, 0, 0}},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(op_name(c.op)) {
      Tensor want(DType::F32, Shape{5});
      Tensor want_d(DType::F64, Shape{5});
      for (int i = 0; i < 5; ++i) {
        want.set_double(i, c.want[static_cast<size_t>(i)]);
        want_d.set_double(i, c.want[static_cast<size_t>(i)]);
      }
      check_close(run1(c.op, {x}, c.attrs), want, 0, 0);
      check_close(run1(c.op, {xd}, c.attrs), want_d, 0, 0);
    }
  }
  // Odd functions keep the sign of zero; log of the smallest subnormal is finite.
  BOOST_TEST(std::signbit(values_of<float>(run1(OpKind::Tanh, {x}))[4]));
  BOOST_TEST(std::signbit(values_of<float>(run1(OpKind::Erf, {x}))[4]));
  // Gelu keeps both zeros' signs and gives -0 at -inf.
  const std::vector<float> gelu = values_of<float>(run1(OpKind::Gelu, {x}));
  BOOST_TEST(std::signbit(gelu[0]));
  BOOST_TEST(!std::signbit(gelu[3]));
  BOOST_TEST(std::signbit(gelu[4]));
  const float tiny = std::numeric_limits<float>::denorm_min();
  check_close(run1(OpKind::Log, {scalar<float>(tiny)}), scalar<float>(-103.278929f), 0, 1e-7);
  check_close(run1(OpKind::Exp, {scalar<float>(-103.5f)}), scalar<float>(tiny), 0, 0);
  check_close(run1(OpKind::Exp, {scalar<float>(88.8f)}), scalar<float>(kInfF), 0, 0);
  // Past its bounds exp takes the limits without computing them: +0 (not -0) and +inf.
  const Tensor far = tensor<float>(Shape{4}, {-104.5f, -1e9f, 89.5f, 1e30f});
  const std::vector<uint32_t> limits = {0, 0, 0x7f800000u, 0x7f800000u};
  const std::vector<float> exp_far = values_of<float>(run1(OpKind::Exp, {far}));
  for (size_t i = 0; i < limits.size(); ++i)
    BOOST_TEST(std::bit_cast<uint32_t>(exp_far[i]) == limits[i]);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(accuracy)

// The vectorized f32 functions against double <cmath> over a sweep of every f32 range; the
// bounds are the ones documented in vector_math.h (measured over all 2^32 inputs).
BOOST_AUTO_TEST_CASE(f32_functions_are_within_their_documented_ulp_bounds) {
  const Tensor x = f32_sweep();
  struct Case {
    OpKind op;
    Attributes attrs;
    double (*exact)(double);
    double max_ulp;
  };
  const Case cases[] = {
      {OpKind::Exp, {}, [](double v) { return std::exp(v); }, 1.0},
      {OpKind::Log, {}, [](double v) { return std::log(v); }, 1.0},
      {OpKind::Tanh, {}, [](double v) { return std::tanh(v); }, 1.6},
      {OpKind::Erf, {}, [](double v) { return std::erf(v); }, 1.5},
      {OpKind::Sigmoid, {}, sigmoid_exact, 2.5},
      {OpKind::Gelu, {}, gelu_exact, 2.7},
      {OpKind::Gelu, {{"approximate", std::string("tanh")}}, gelu_tanh_exact, 2.0},
  };
  const float* xs = x.data_as<float>();
  for (const Case& c : cases) {
    const Tensor y = run1(c.op, {x}, c.attrs);
    const float* ys = y.data_as<float>();
    double worst = 0;
    float worst_at = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double e = ulp_error(ys[i], c.exact(xs[i]));
      if (e > worst) {
        worst = e;
        worst_at = xs[i];
      }
    }
    const std::string name = std::string(op_name(c.op)) + (c.attrs.empty() ? "" : " (tanh)");
    BOOST_TEST_MESSAGE(name << ": max " << worst << " ULP at " << worst_at);
    BOOST_TEST(worst <= c.max_ulp, name << ": " << worst << " ULP at " << worst_at);
  }
}

// Gelu (erf) over every 31st f32 where its f32 evaluation is hardest: the negative side
// across the seams of its three polynomials (1/2 and 7/4), the exponential's subnormal
// results near -14.5, and the positive side's subtraction.
BOOST_AUTO_TEST_CASE(gelu_is_within_its_ulp_bound_across_its_pieces) {
  std::vector<float> values;
  const std::pair<float, float> ranges[] = {{-2.5f, -0.25f}, {-14.6f, -12.5f}, {0.25f, 2.5f}};
  for (const auto& [from, to] : ranges) {
    for (float v = from; v < to;) {
      values.push_back(v);
      for (int k = 0; k < 31; ++k) v = std::nextafter(v, to);
    }
  }
  const auto n = static_cast<int64_t>(values.size());
  const Tensor x = tensor<float>(Shape{n}, values);
  const std::vector<float> y = values_of<float>(run1(OpKind::Gelu, {x}));
  double worst = 0;
  float worst_at = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    const double e = ulp_error(y[i], gelu_exact(values[i]));
    if (e > worst) {
      worst = e;
      worst_at = values[i];
    }
  }
  BOOST_TEST_MESSAGE("Gelu: max " << worst << " ULP at " << worst_at);
  BOOST_TEST(worst <= 2.7, worst << " ULP at " << worst_at);
}

// Vector lanes and scalar remainders compute identical bits: the same values at shifted
// positions (so each falls once in a full block and once in a remainder) give equal results.
BOOST_AUTO_TEST_CASE(results_do_not_depend_on_position) {
  constexpr int64_t n = 1000;
  const Tensor x = ramp(DType::F32, Shape{n}, 30.0);
  Tensor shifted(DType::F32, Shape{n - 5});
  std::memcpy(shifted.data(), x.data_as<float>() + 5, sizeof(float) * (n - 5));
  for (OpKind op : {OpKind::Exp, OpKind::Tanh, OpKind::Erf, OpKind::Sigmoid, OpKind::Gelu}) {
    const std::vector<float> y = values_of<float>(run1(op, {x}));
    const std::vector<float> ys = values_of<float>(run1(op, {shifted}));
    for (int64_t i = 0; i < n - 5; ++i) {
      BOOST_TEST(std::bit_cast<uint32_t>(y[static_cast<size_t>(i + 5)]) ==
                 std::bit_cast<uint32_t>(ys[static_cast<size_t>(i)]));
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(broadcasting)

// Add and Sub over broadcast shapes, against sums indexed by broadcast_source.
BOOST_AUTO_TEST_CASE(binary_ops_broadcast_like_numpy) {
  const std::pair<Shape, Shape> shapes[] = {
      {Shape{}, Shape{2, 3}},         // scalar lhs
      {Shape{2, 3}, Shape{}},         // scalar rhs
      {Shape{2, 3}, Shape{3}},        // row
      {Shape{2, 3}, Shape{2, 1}},     // column
      {Shape{3, 1}, Shape{1, 4}},     // both sides
      {Shape{2, 1, 3}, Shape{4, 1}},  // general
      {Shape{1, 5}, Shape{1, 5}},     // size-1 dims only
      {Shape{2, 3, 4}, Shape{1, 3, 1}}, {Shape{37}, Shape{1}},
  };
  for (const auto& [sa, sb] : shapes) {
    for (DType dtype : {DType::F32, DType::I64}) {
      BOOST_TEST_CONTEXT(sa.str() << " - " << sb.str() << " " << dtype_name(dtype)) {
        const Tensor a = ramp(dtype, sa, 50.0);
        const Tensor b = ramp(dtype, sb, 7.0);
        const Tensor y = run1(OpKind::Sub, {a, b});
        const Shape out = *broadcast_shapes(sa, sb);
        BOOST_REQUIRE_EQUAL(y.shape().str(), out.str());
        Tensor want(dtype, out);  // the exact difference, rounded to the dtype
        for (int64_t i = 0; i < y.numel(); ++i) {
          want.set_double(i, a.get_double(broadcast_source(out, sa, i)) -
                                 b.get_double(broadcast_source(out, sb, i)));
        }
        BOOST_TEST(y.bit_equal(want));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(min_max_are_variadic_broadcasting_and_propagate_nan) {
  const Tensor a = tensor<float>(Shape{2, 1}, {1.0f, kNaNF});
  const Tensor b = tensor<float>(Shape{3}, {0.0f, 2.0f, -5.0f});
  const Tensor c = scalar<float>(1.5f);
  check_close(run1(OpKind::Max, {a, b, c}),
              tensor<float>(Shape{2, 3}, {1.5f, 2.0f, 1.5f, kNaNF, kNaNF, kNaNF}));
  check_close(run1(OpKind::Min, {a, b, c}),
              tensor<float>(Shape{2, 3}, {0.0f, 1.0f, -5.0f, kNaNF, kNaNF, kNaNF}));
  // NaN in a later operand propagates too.
  check_close(run1(OpKind::Max, {b, scalar<float>(kNaNF)}),
              tensor<float>(Shape{3}, {kNaNF, kNaNF, kNaNF}));
  check_close(run1(OpKind::Min, {b}), b);  // one operand: itself
  for (DType dtype : {DType::F64, DType::I32, DType::I64}) {
    Tensor x(dtype, Shape{4});
    Tensor y(dtype, Shape{2, 1});
    const int64_t xv[] = {-3, 7, 0, 2};
    for (int i = 0; i < 4; ++i) x.set_int(i, xv[i]);
    y.set_int(0, 1);
    y.set_int(1, -1);
    const Tensor mx = run1(OpKind::Max, {x, y});
    const Tensor mn = run1(OpKind::Min, {y, x, y});
    const int64_t want_max[] = {1, 7, 1, 2, -1, 7, 0, 2};
    const int64_t want_min[] = {-3, 1, 0, 1, -3, -1, -1, -1};
    for (int i = 0; i < 8; ++i) {
      BOOST_TEST(mx.get_int(i) == want_max[i]);
      BOOST_TEST(mn.get_int(i) == want_min[i]);
    }
  }
}

BOOST_AUTO_TEST_CASE(where_broadcasts_all_three_operands) {
  const Tensor condition = bools(Shape{3, 1}, {1, 0, 7});  // any nonzero byte is true
  for (DType dtype : {DType::F32, DType::F64, DType::I32, DType::I64, DType::Bool}) {
    BOOST_TEST_CONTEXT(dtype_name(dtype)) {
      Tensor x(dtype, Shape{1, 4});
      for (int i = 0; i < 4; ++i) x.set_int(i, i % 2);
      Tensor y(dtype, Shape{});
      y.set_int(0, dtype == DType::Bool ? 1 : 5);
      const Tensor out = run1(OpKind::Where, {condition, x, y});
      BOOST_REQUIRE(out.shape().str() == "[3,4]");
      for (int64_t i = 0; i < 12; ++i) {
        const int64_t want = (i / 4 == 1) ? y.get_int(0) : (i % 4) % 2;
        BOOST_TEST(out.get_int(i) == want);
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(logical)

BOOST_AUTO_TEST_CASE(comparisons_on_every_dtype) {
  for (DType dtype : {DType::F32, DType::F64, DType::I32, DType::I64}) {
    BOOST_TEST_CONTEXT(dtype_name(dtype)) {
      Tensor a(dtype, Shape{3});
      Tensor b(dtype, Shape{});
      const int64_t av[] = {-1, 2, 5};
      for (int i = 0; i < 3; ++i) a.set_int(i, av[i]);
      b.set_int(0, 2);
      BOOST_TEST(bool_values(run1(OpKind::Equal, {a, b})) == (std::vector<uint8_t>{0, 1, 0}),
                 boost::test_tools::per_element());
      BOOST_TEST(bool_values(run1(OpKind::Less, {a, b})) == (std::vector<uint8_t>{1, 0, 0}),
                 boost::test_tools::per_element());
      BOOST_TEST(bool_values(run1(OpKind::Greater, {a, b})) == (std::vector<uint8_t>{0, 0, 1}),
                 boost::test_tools::per_element());
    }
  }
  BOOST_TEST(bool_values(run1(OpKind::Equal,
                              {bools(Shape{4}, {0, 1, 2, 0}), bools(Shape{4}, {0, 1, 1, 1})})) ==
                 (std::vector<uint8_t>{1, 1, 1, 0}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(comparisons_with_nan_are_false) {
  const Tensor a = tensor<float>(Shape{4}, {kNaNF, kNaNF, 1.0f, -0.0f});
  const Tensor b = tensor<float>(Shape{4}, {kNaNF, 1.0f, kNaNF, 0.0f});
  BOOST_TEST(bool_values(run1(OpKind::Equal, {a, b})) == (std::vector<uint8_t>{0, 0, 0, 1}),
             boost::test_tools::per_element());
  BOOST_TEST(bool_values(run1(OpKind::Less, {a, b})) == (std::vector<uint8_t>{0, 0, 0, 0}),
             boost::test_tools::per_element());
  BOOST_TEST(bool_values(run1(OpKind::Greater, {a, b})) == (std::vector<uint8_t>{0, 0, 0, 0}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(not_and_or_truth_tables) {
  const Tensor a = bools(Shape{2, 1}, {0, 1});
  const Tensor b = bools(Shape{2}, {0, 3});
  BOOST_TEST(bool_values(run1(OpKind::And, {a, b})) == (std::vector<uint8_t>{0, 0, 0, 1}),
             boost::test_tools::per_element());
  BOOST_TEST(bool_values(run1(OpKind::Or, {a, b})) == (std::vector<uint8_t>{0, 1, 1, 1}),
             boost::test_tools::per_element());
  BOOST_TEST(bool_values(run1(OpKind::Not, {bools(Shape{3}, {0, 1, 2})})) ==
                 (std::vector<uint8_t>{1, 0, 0}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(conversion)

Attributes to_attr(std::string_view dtype) { return {{"to", std::string(dtype)}}; }

// Every (from, to) pair on values every dtype holds exactly.
BOOST_AUTO_TEST_CASE(cast_between_every_pair_of_dtypes) {
  const DType all[] = {DType::F32, DType::F64, DType::I32, DType::I64, DType::Bool};
  for (DType from : all) {
    Tensor x(from, Shape{2, 2});
    const int64_t values[] = {0, 1, from == DType::Bool ? 1 : 2, from == DType::Bool ? 0 : 100};
    for (int i = 0; i < 4; ++i) x.set_int(i, values[i]);
    for (DType to : all) {
      BOOST_TEST_CONTEXT(dtype_name(from) << " -> " << dtype_name(to)) {
        const Tensor y = run1(OpKind::Cast, {x}, to_attr(dtype_name(to)));
        BOOST_TEST(static_cast<int>(y.dtype()) == static_cast<int>(to));
        for (int i = 0; i < 4; ++i) {
          const int64_t want = to == DType::Bool ? (values[i] != 0) : values[i];
          BOOST_TEST(y.get_int(i) == want);
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(float_to_int_truncates_toward_zero) {
  const Tensor x = tensor<float>(Shape{6}, {-2.7f, -0.5f, -0.0f, 0.5f, 2.7f, 16777216.0f});
  BOOST_TEST(values_of<int32_t>(run1(OpKind::Cast, {x}, to_attr("i32"))) ==
                 (std::vector<int32_t>{-2, 0, 0, 0, 2, 16777216}),
             boost::test_tools::per_element());
  const Tensor near_limits = tensor<double>(Shape{2}, {-2147483648.9, 2147483647.9});
  BOOST_TEST(values_of<int32_t>(run1(OpKind::Cast, {near_limits}, to_attr("i32"))) ==
                 (std::vector<int32_t>{std::numeric_limits<int32_t>::min(),
                                       std::numeric_limits<int32_t>::max()}),
             boost::test_tools::per_element());
  const Tensor d =
      tensor<double>(Shape{4}, {-2147483648.9, 2147483647.9, 1e18, -9223372036854775808.0});
  BOOST_TEST(values_of<int64_t>(run1(OpKind::Cast, {d}, to_attr("i64"))) ==
                 (std::vector<int64_t>{-2147483648, 2147483647, 1000000000000000000,
                                       std::numeric_limits<int64_t>::min()}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(unconvertible_floats_are_a_kernel_failure) {
  expect_kernel_failure(OpKind::Cast, {tensor<float>(Shape{3}, {1.0f, 2.0f, kNaNF})},
                        to_attr("i32"),
                        {"Cast", "value nan", "element 2", "i32", "[-2147483648, 2147483647]"});
  expect_kernel_failure(OpKind::Cast, {tensor<double>(Shape{1}, {-kInf})}, to_attr("i64"),
                        {"value -inf", "i64"});
  expect_kernel_failure(OpKind::Cast, {tensor<float>(Shape{2}, {0.0f, 2147483648.0f})},
                        to_attr("i32"), {"value 2147483648", "element 1"});
  expect_kernel_failure(OpKind::Cast, {tensor<double>(Shape{1}, {-2147483649.0})}, to_attr("i32"),
                        {"value -2147483649"});
  expect_kernel_failure(OpKind::Cast, {tensor<double>(Shape{1}, {9223372036854775808.0})},
                        to_attr("i64"), {"value 9223372036854775808"});
}

BOOST_AUTO_TEST_CASE(integer_and_float_conversions) {
  const Tensor i64 = tensor<int64_t>(
      Shape{4}, {(int64_t{1} << 32) + 5, int64_t{1} << 31, -1, (int64_t{1} << 53) + 1});
  BOOST_TEST(values_of<int32_t>(run1(OpKind::Cast, {i64}, to_attr("i32"))) ==
                 (std::vector<int32_t>{5, std::numeric_limits<int32_t>::min(), -1, 1}),
             boost::test_tools::per_element());  // wraps
  BOOST_TEST(values_of<double>(run1(OpKind::Cast, {i64}, to_attr("f64")))[3] ==
             9007199254740992.0);  // 2^53 + 1 rounds to even
  BOOST_TEST(values_of<int64_t>(run1(OpKind::Cast, {tensor<int32_t>(Shape{2}, {-7, 9})},
                                     to_attr("i64"))) == (std::vector<int64_t>{-7, 9}),
             boost::test_tools::per_element());
  check_close(run1(OpKind::Cast, {tensor<double>(Shape{3}, {1e300, -1e300, 0.1})}, to_attr("f32")),
              tensor<float>(Shape{3}, {kInfF, -kInfF, 0.1f}), 0, 0);
  check_close(run1(OpKind::Cast, {tensor<float>(Shape{2}, {0.1f, kNaNF})}, to_attr("f64")),
              tensor<double>(Shape{2}, {static_cast<double>(0.1f), kNaN}), 0, 0);
  check_close(run1(OpKind::Cast, {tensor<int32_t>(Shape{2}, {16777217, -3})}, to_attr("f32")),
              tensor<float>(Shape{2}, {16777216.0f, -3.0f}), 0, 0);
}

BOOST_AUTO_TEST_CASE(bool_conversions) {
  const Tensor f = tensor<float>(Shape{5}, {0.0f, -0.0f, 0.5f, kNaNF, -kInfF});
  BOOST_TEST(bool_values(run1(OpKind::Cast, {f}, to_attr("bool"))) ==
                 (std::vector<uint8_t>{0, 0, 1, 1, 1}),
             boost::test_tools::per_element());
  BOOST_TEST(bool_values(run1(OpKind::Cast, {tensor<int64_t>(Shape{3}, {0, -4, 1})},
                              to_attr("bool"))) == (std::vector<uint8_t>{0, 1, 1}),
             boost::test_tools::per_element());
  const Tensor b = bools(Shape{3}, {0, 1, 5});
  for (std::string_view dtype : {"f32", "f64", "i32", "i64", "bool"}) {
    const Tensor y = run1(OpKind::Cast, {b}, to_attr(dtype));
    BOOST_TEST_CONTEXT(dtype) {
      BOOST_TEST(y.get_double(0) == 0.0);
      BOOST_TEST(y.get_double(1) == 1.0);
      BOOST_TEST(y.get_double(2) == 1.0);
    }
  }
}

BOOST_AUTO_TEST_CASE(cast_to_the_same_dtype_copies) {
  const Tensor x = ramp(DType::F64, Shape{3, 5});
  BOOST_TEST(run1(OpKind::Cast, {x}, to_attr("f64")).bit_equal(x));
}

BOOST_AUTO_TEST_CASE(bit_cast_keeps_every_bit) {
  // A NaN with a payload and its sign, -0, infinities, a subnormal: each comes back as the
  // integer of its bits and returns unchanged, across a chunk edge and at 1 and 3 threads.
  std::vector<uint32_t> bits(kChunk + 7);
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = static_cast<uint32_t>(i) * 2654435761U;
  const std::vector<uint32_t> specials = {0xFFC12345U, 0x7F800001U, 0x80000000U,
                                          0x7F800000U, 0x00000001U, 0xFF800000U};
  std::copy(specials.begin(), specials.end(), bits.begin() + kChunk - 2);
  const Tensor u = tensor<uint32_t>(Shape{static_cast<int64_t>(bits.size())}, bits);
  for (int threads : {1, 3}) {
    const Tensor f = run_op(OpKind::BitCast, {u}, to_attr("f32"), 1, threads)[0];
    BOOST_REQUIRE((f.dtype() == DType::F32));
    for (size_t i = 0; i < bits.size(); ++i) {
      BOOST_TEST(std::bit_cast<uint32_t>(f.data_as<float>()[i]) == bits[i]);
    }
    const Tensor i32 = run_op(OpKind::BitCast, {f}, to_attr("i32"), 1, threads)[0];
    BOOST_TEST((i32.dtype() == DType::I32));
    BOOST_TEST(std::memcmp(i32.data(), u.data(), u.nbytes()) == 0);
  }
  const Tensor h =
      run1(OpKind::BitCast, {tensor<int16_t>(Shape{2}, {0x7C00, -32768})}, to_attr("f16"));
  BOOST_TEST(h.get_double(0) == kInf);
  BOOST_TEST(std::signbit(h.get_double(1)));
  BOOST_TEST(h.get_double(1) == 0.0);
}

BOOST_AUTO_TEST_CASE(bit_cast_to_bool_is_zero_or_one) {
  const Tensor bytes = tensor<uint8_t>(Shape{4}, {0, 1, 2, 255});
  const Tensor b = run1(OpKind::BitCast, {bytes}, to_attr("bool"));
  BOOST_TEST(bool_values(b) == (std::vector<uint8_t>{0, 1, 1, 1}),
             boost::test_tools::per_element());
  const Tensor back = run1(OpKind::BitCast, {b}, to_attr("i8"));
  BOOST_TEST(values_of<int8_t>(back) == (std::vector<int8_t>{0, 1, 1, 1}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(bit_cast_between_widths_is_refused) {
  try {
    run1(OpKind::BitCast, {tensor<float>(Shape{2}, {1.0f, 2.0f})}, to_attr("f64"));
    BOOST_FAIL("a BitCast from f32 to f64 was accepted");
  } catch (const VoltaError& e) {
    BOOST_TEST(e.message().find("BitCast from f32 (32 bits) to f64 (64 bits): the two types "
                                "must have the same width") != std::string::npos,
               e.message());
  }
}

BOOST_AUTO_TEST_CASE(clip) {
  const Tensor x = tensor<float>(Shape{6}, {-3.0f, -0.5f, 0.25f, 2.0f, kNaNF, kInfF});
  check_close(run1(OpKind::Clip, {x}, {{"min", -1.0}, {"max", 1.0}}),
              tensor<float>(Shape{6}, {-1, -0.5f, 0.25f, 1, kNaNF, 1}), 0, 0);
  check_close(run1(OpKind::Clip, {x}), x, 0, 0);  // defaults: no bounds
  check_close(run1(OpKind::Clip, {x}, {{"min", 0.1}}),
              tensor<float>(Shape{6}, {0.1f, 0.1f, 0.25f, 2, kNaNF, kInfF}), 0, 0);
  // min > max gives max.
  check_close(run1(OpKind::Clip, {x}, {{"min", 2.0}, {"max", 1.0}}),
              tensor<float>(Shape{6}, {1, 1, 1, 1, kNaNF, 1}), 0, 0);
  // Integers: min rounds up, max rounds down, and bounds past the type's range saturate.
  const Tensor i = tensor<int32_t>(Shape{5}, {-5, -1, 0, 2, 3});
  BOOST_TEST(values_of<int32_t>(run1(OpKind::Clip, {i}, {{"min", -1.5}, {"max", 2.5}})) ==
                 (std::vector<int32_t>{-1, -1, 0, 2, 2}),
             boost::test_tools::per_element());
  BOOST_TEST(values_of<int32_t>(run1(OpKind::Clip, {i}, {{"min", 1e30}})) ==
                 (std::vector<int32_t>(5, std::numeric_limits<int32_t>::max())),
             boost::test_tools::per_element());
  const Tensor l = tensor<int64_t>(Shape{2}, {-9, 9});
  BOOST_TEST(values_of<int64_t>(run1(OpKind::Clip, {l}, {{"min", -2.0}, {"max", -1e30}})) ==
                 (std::vector<int64_t>(2, std::numeric_limits<int64_t>::lowest())),
             boost::test_tools::per_element());
  check_close(run1(OpKind::Clip, {tensor<double>(Shape{2}, {-7.0, 7.0})}, {{"max", 0.5}}),
              tensor<double>(Shape{2}, {-7.0, 0.5}), 0, 0);
  expect_kernel_failure(OpKind::Clip, {x}, {{"min", kNaN}}, {"Clip", "min is NaN"});
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(shapes_and_threads)

BOOST_AUTO_TEST_CASE(empty_tensors) {
  const Tensor e = tensor<float>(Shape{0, 3}, {});
  BOOST_TEST(run1(OpKind::Add, {e, tensor<float>(Shape{3}, {1, 2, 3})}).shape().str() == "[0,3]");
  BOOST_TEST(run1(OpKind::Exp, {e}).numel() == 0);
  BOOST_TEST(run1(OpKind::Max, {e, scalar<float>(1.0f), e}).shape().str() == "[0,3]");
  BOOST_TEST(run1(OpKind::Cast, {e}, {{"to", std::string("i32")}}).shape().str() == "[0,3]");
  BOOST_TEST(run1(OpKind::Where, {bools(Shape{0, 1}, {}), e, e}).shape().str() == "[0,3]");
  BOOST_TEST(run1(OpKind::Div, {tensor<int32_t>(Shape{0}, {}), scalar<int32_t>(0)}).numel() == 0);
}

BOOST_AUTO_TEST_CASE(rank_zero_scalars) {
  check_close(run1(OpKind::Add, {scalar<float>(1.5f), scalar<float>(2.0f)}), scalar<float>(3.5f));
  check_close(run1(OpKind::Exp, {scalar<double>(1.0)}), scalar<double>(std::numbers::e), 0, 1e-15);
  BOOST_TEST(run1(OpKind::Less, {scalar<int32_t>(1), scalar<int32_t>(2)}).get_int(0) == 1);
  BOOST_TEST(run1(OpKind::Cast, {scalar<float>(-3.5f)}, {{"to", std::string("i64")}}).get_int(0) ==
             -3);
}

// Sizes around the chunk: every op family gives the formula's values and identical bits on
// 1 and 4 threads, including rows that straddle chunk boundaries.
BOOST_AUTO_TEST_CASE(chunk_edges_are_thread_count_invariant) {
  for (int64_t n : {kChunk - 1, kChunk, kChunk + 1, 3 * kChunk + 5}) {
    BOOST_TEST_CONTEXT("n = " << n) {
      const Tensor x = ramp(DType::F32, Shape{n}, 20.0);
      const Tensor row = ramp(DType::F32, Shape{1, 7}, 3.0);
      const Tensor x2 = ramp(DType::F32, Shape{n, 1}, 5.0);
      struct Run {
        OpKind op;
        std::vector<Tensor> inputs;
        Attributes attrs;
      };
      const Run runs[] = {
          {OpKind::Exp, {x}, {}},
          {OpKind::Gelu, {x}, {}},
          {OpKind::Mul, {x2, row}, {}},  // [n, 7]: rows cross chunk edges
          {OpKind::Max, {x2, row, scalar<float>(0.5f)}, {}},
          {OpKind::Cast, {x}, {{"to", std::string("i32")}}},
      };
      for (const Run& r : runs) {
        const Tensor one = run1(r.op, r.inputs, r.attrs, 1);
        const Tensor four = run1(r.op, r.inputs, r.attrs, 4);
        BOOST_TEST(one.bit_equal(four), op_name(r.op) << " differs between 1 and 4 threads");
      }
      const Tensor product = run1(OpKind::Mul, {x2, row}, {}, 4);
      const Tensor maximum = run1(OpKind::Max, {x2, row, scalar<float>(0.5f)}, {}, 4);
      const Tensor exp = run1(OpKind::Exp, {x}, {}, 4);
      for (int64_t i = 0; i < n * 7; ++i) {
        const float a = x2.data_as<float>()[i / 7];
        const float b = row.data_as<float>()[i % 7];
        if (product.data_as<float>()[i] != a * b) BOOST_FAIL("Mul at " << i);
        if (maximum.data_as<float>()[i] != std::max({a, b, 0.5f})) BOOST_FAIL("Max at " << i);
      }
      for (int64_t i = 0; i < n; ++i) {
        const double want = std::exp(static_cast<double>(x.data_as<float>()[i]));
        if (ulp_error(exp.data_as<float>()[i], want) > 1.0) BOOST_FAIL("Exp at " << i);
      }
    }
  }
}

// A graph whose intermediates the planner places in their input's buffer: the kernels read
// each element before writing it, so in-place runs give the out-of-place results.
BOOST_AUTO_TEST_CASE(in_place_outputs_share_their_input_buffer) {
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  constexpr int64_t n = 2 * kChunk + 3;
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{n});
  const ValueId y = g.add_input("y", DType::F32, Shape{n});
  const ValueId relu = g.add(OpKind::Relu, {x});
  const ValueId exp = g.add(OpKind::Exp, {relu});      // takes relu's buffer
  const ValueId sum = g.add(OpKind::Add, {exp, exp});  // takes exp's, read twice
  const ValueId neg = g.add(OpKind::Neg, {y});
  const ValueId max = g.add(OpKind::Max, {neg, sum, neg});  // takes neg's, read twice
  g.set_outputs({max});
  const ExecutionPlan plan = compile(g, *cpu, DeterminismMode::Strict, {.optimize = true});
  auto shares = [&](ValueId v) {
    return plan.memory.allocations[static_cast<size_t>(v.index)]->shares_with;
  };
  BOOST_TEST(shares(exp).index == relu.index);
  BOOST_TEST(shares(sum).index == exp.index);
  BOOST_TEST(shares(max).index == neg.index);

  const Tensor xs = ramp(DType::F32, Shape{n}, 4.0);
  const Tensor ys = ramp(DType::F32, Shape{n}, 100.0);
  for (int threads : {1, 4}) {
    const std::unique_ptr<ExecutionContext> ctx_context = cpu->make_context({.threads = threads});
    ExecutionContext& ctx = *ctx_context;
    const Tensor out = execute(plan, *cpu, ctx, std::vector<Tensor>{xs, ys})[0];
    for (int64_t i = 0; i < n; ++i) {
      const double r = std::max(0.0f, xs.data_as<float>()[i]);
      const double want = std::max(-static_cast<double>(ys.data_as<float>()[i]), 2.0 * std::exp(r));
      const double got = out.data_as<float>()[i];
      if (std::abs(got - want) > 2e-7 * std::abs(want)) {
        BOOST_FAIL("element " << i << ": got " << got << ", want " << want);
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace volta
