// Reference elementwise, activation and logical ops. Every operand is first broadcast to the
// output shape (materialized), so each kernel is one flat loop over equal-shaped tensors.
// Floats are computed in double and rounded once when stored; integers in int64, wrapped.

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>
#include <string>
#include <type_traits>

#include "ref_util.h"

namespace volta::reference {
namespace {

// ---- Element maps -------------------------------------------------------------------------

template <class Fn>
Tensor map_float(const Tensor& x, Fn fn) {
  Tensor y(x.dtype(), x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) y.set_double(i, fn(x.get_double(i)));
  return y;
}

template <class Fn>
Tensor map_int(const Tensor& x, Fn fn) {
  Tensor y(x.dtype(), x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) y.set_int(i, fn(x.get_int(i)));
  return y;
}

template <class FloatFn, class IntFn>
Tensor map_numeric(const Tensor& x, FloatFn on_float, IntFn on_int) {
  return is_floating(x.dtype()) ? map_float(x, on_float) : map_int(x, on_int);
}

// y = fn(a, b) with a and b broadcast to out.shape; floats read as double, the rest as int64.
template <class FloatFn, class IntFn>
Tensor zip_numeric(const Tensor& a, const Tensor& b, const TypeInfo& out, FloatFn on_float,
                   IntFn on_int) {
  const Tensor wide_a = broadcast_to(a, out.shape);
  const Tensor wide_b = broadcast_to(b, out.shape);
  const bool floating = is_floating(a.dtype());
  Tensor y(out.dtype, out.shape);
  for (int64_t i = 0; i < y.numel(); ++i) {
    if (floating) {
      y.set_double(i, on_float(wide_a.get_double(i), wide_b.get_double(i)));
    } else {
      y.set_int(i, on_int(wide_a.get_int(i), wide_b.get_int(i)));
    }
  }
  return y;
}

template <class FloatFn>
Tensor zip_float(const Tensor& a, const Tensor& b, const TypeInfo& out, FloatFn on_float) {
  return zip_numeric(a, b, out, on_float, [](int64_t, int64_t) -> int64_t {
    kernel_fail("this op is defined for floating-point inputs only (f32, f64)");
  });
}

// ---- Arithmetic ---------------------------------------------------------------------------

std::vector<Tensor> add(const Node&, RefInputs in, RefOutputTypes out) {
  return {zip_numeric(*in[0], *in[1], out[0], std::plus<double>{}, wrapping_add)};
}

std::vector<Tensor> sub(const Node&, RefInputs in, RefOutputTypes out) {
  return {zip_numeric(*in[0], *in[1], out[0], std::minus<double>{}, wrapping_sub)};
}

std::vector<Tensor> mul(const Node&, RefInputs in, RefOutputTypes out) {
  return {zip_numeric(*in[0], *in[1], out[0], std::multiplies<double>{}, wrapping_mul)};
}

// Integer division truncates toward zero; a zero divisor is an error rather than UB, and
// lowest / -1 wraps like every other integer overflow.
int64_t integer_divide(int64_t a, int64_t b, int64_t element) {
  if (b == 0) {
    kernel_fail("integer division by zero: divisor element " + std::to_string(element) +
                " (of B broadcast to the output shape) is 0; integer divisors must be nonzero");
  }
  return b == -1 ? wrapping_neg(a) : a / b;
}

std::vector<Tensor> div(const Node&, RefInputs in, RefOutputTypes out) {
  if (is_floating(in[0]->dtype())) {
    return {zip_float(*in[0], *in[1], out[0], std::divides<double>{})};
  }
  const Tensor a = broadcast_to(*in[0], out[0].shape);
  const Tensor b = broadcast_to(*in[1], out[0].shape);
  Tensor y(out[0].dtype, out[0].shape);
  for (int64_t i = 0; i < y.numel(); ++i)
    y.set_int(i, integer_divide(a.get_int(i), b.get_int(i), i));
  return {y};
}

std::vector<Tensor> pow(const Node&, RefInputs in, RefOutputTypes out) {
  return {zip_float(*in[0], *in[1], out[0], [](double a, double b) { return std::pow(a, b); })};
}

std::vector<Tensor> neg(const Node&, RefInputs in, RefOutputTypes) {
  return {map_numeric(*in[0], std::negate<double>{}, wrapping_neg)};
}

std::vector<Tensor> abs(const Node&, RefInputs in, RefOutputTypes) {
  return {map_numeric(
      *in[0], [](double x) { return std::fabs(x); }, wrapping_abs)};
}

std::vector<Tensor> sqrt(const Node&, RefInputs in, RefOutputTypes) {
  return {map_float(*in[0], [](double x) { return std::sqrt(x); })};
}

std::vector<Tensor> reciprocal(const Node&, RefInputs in, RefOutputTypes) {
  return {map_float(*in[0], [](double x) { return 1.0 / x; })};
}

std::vector<Tensor> exp(const Node&, RefInputs in, RefOutputTypes) {
  return {map_float(*in[0], [](double x) { return std::exp(x); })};
}

std::vector<Tensor> log(const Node&, RefInputs in, RefOutputTypes) {
  return {map_float(*in[0], [](double x) { return std::log(x); })};
}

// ---- Activations --------------------------------------------------------------------------

std::vector<Tensor> erf(const Node&, RefInputs in, RefOutputTypes) {
  return {map_float(*in[0], [](double x) { return std::erf(x); })};
}

std::vector<Tensor> tanh(const Node&, RefInputs in, RefOutputTypes) {
  return {map_float(*in[0], [](double x) { return std::tanh(x); })};
}

std::vector<Tensor> sigmoid(const Node&, RefInputs in, RefOutputTypes) {
  return {map_float(*in[0], [](double x) { return 1.0 / (1.0 + std::exp(-x)); })};
}

// max(x, 0), written so that NaN passes through instead of comparing its way to 0.
std::vector<Tensor> relu(const Node&, RefInputs in, RefOutputTypes) {
  return {map_numeric(
      *in[0], [](double x) { return std::isnan(x) || x > 0.0 ? x : 0.0; },
      [](int64_t x) { return x > 0 ? x : int64_t{0}; })};
}

std::vector<Tensor> leaky_relu(const Node& node, RefInputs in, RefOutputTypes) {
  const double alpha = AttrReader(node).get_float("alpha");
  return {map_float(*in[0], [alpha](double x) { return x >= 0.0 ? x : alpha * x; })};
}

// Gelu(-Inf) is the limit of x * Phi(x), -0; the formula alone would give -Inf * 0 = NaN.
double gelu_exact(double x) {
  if (x == -std::numeric_limits<double>::infinity()) return -0.0;
  return 0.5 * x * (1.0 + std::erf(x / std::numbers::sqrt2));
}

double gelu_tanh(double x) {
  if (x == -std::numeric_limits<double>::infinity()) return -0.0;
  const double k = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

std::vector<Tensor> gelu(const Node& node, RefInputs in, RefOutputTypes) {
  const bool tanh_form = AttrReader(node).get_string("approximate") == "tanh";
  return {map_float(*in[0], tanh_form ? gelu_tanh : gelu_exact)};
}

// ---- Min / Max (variadic, broadcasting, NaN propagates) -----------------------------------

template <bool kTakeMax>
double pick_float(double a, double b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  return kTakeMax ? std::max(a, b) : std::min(a, b);
}

template <bool kTakeMax>
int64_t pick_int(int64_t a, int64_t b) {
  return kTakeMax ? std::max(a, b) : std::min(a, b);
}

template <bool kTakeMax>
std::vector<Tensor> extremum(const Node&, RefInputs in, RefOutputTypes out) {
  Tensor y = broadcast_to(*in[0], out[0].shape);
  for (size_t k = 1; k < in.size(); ++k) {
    y = zip_numeric(y, *in[k], out[0], pick_float<kTakeMax>, pick_int<kTakeMax>);
  }
  return {y};
}

// ---- Selection and logic ------------------------------------------------------------------

std::vector<Tensor> where(const Node&, RefInputs in, RefOutputTypes out) {
  const Tensor condition = broadcast_to(*in[0], out[0].shape);
  const Tensor x = broadcast_to(*in[1], out[0].shape);
  const Tensor y = broadcast_to(*in[2], out[0].shape);
  Tensor result(out[0].dtype, out[0].shape);
  for (int64_t i = 0; i < result.numel(); ++i) {
    copy_element(condition.get_int(i) != 0 ? x : y, i, result, i);
  }
  return {result};
}

// Comparisons give bool; every comparison with NaN is false (IEEE), which double gives us.
template <class Compare>
std::vector<Tensor> compare(RefInputs in, RefOutputTypes out, Compare compare_values) {
  return {zip_numeric(
      *in[0], *in[1], out[0], [&](double a, double b) { return compare_values(a, b) ? 1.0 : 0.0; },
      [&](int64_t a, int64_t b) { return compare_values(a, b) ? int64_t{1} : int64_t{0}; })};
}

std::vector<Tensor> equal(const Node&, RefInputs in, RefOutputTypes out) {
  return compare(in, out, [](auto a, auto b) { return a == b; });
}

std::vector<Tensor> less(const Node&, RefInputs in, RefOutputTypes out) {
  return compare(in, out, [](auto a, auto b) { return a < b; });
}

std::vector<Tensor> greater(const Node&, RefInputs in, RefOutputTypes out) {
  return compare(in, out, [](auto a, auto b) { return a > b; });
}

std::vector<Tensor> logical_not(const Node&, RefInputs in, RefOutputTypes) {
  return {map_int(*in[0], [](int64_t x) { return x == 0 ? int64_t{1} : int64_t{0}; })};
}

std::vector<Tensor> logical_and(const Node&, RefInputs in, RefOutputTypes out) {
  return compare(in, out, [](auto a, auto b) { return a != 0 && b != 0; });
}

std::vector<Tensor> logical_or(const Node&, RefInputs in, RefOutputTypes out) {
  return compare(in, out, [](auto a, auto b) { return a != 0 || b != 0; });
}

// ---- Cast ---------------------------------------------------------------------------------

// Float to integer truncates toward zero; a value with no integer of the target width
// (NaN, +-Inf, out of range) is an error rather than an unspecified result.
template <class To>
To float_to_integer(double x, int64_t element, DType to) {
  const double truncated = std::trunc(x);
  // lowest() is -2^(bits-1), exact in double, and -lowest() = max() + 1.
  const double lowest = static_cast<double>(std::numeric_limits<To>::lowest());
  if (!(truncated >= lowest && truncated < -lowest)) {
    kernel_fail("Cast: element " + std::to_string(element) + " is " + number_str(x) +
                ", which has no " + std::string(dtype_name(to)) +
                " value (valid: finite values in [" +
                std::to_string(std::numeric_limits<To>::lowest()) + ", " +
                std::to_string(std::numeric_limits<To>::max()) + "] after truncation)");
  }
  return static_cast<To>(truncated);
}

// One element from storage type From to storage type To.
template <class From, class To>
To cast_value(From x, int64_t element, DType to) {
  if constexpr (std::is_same_v<To, uint8_t>) {
    return x != From{0} ? 1 : 0;
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    return float_to_integer<To>(static_cast<double>(x), element, to);
  } else {
    // float -> float rounds to nearest; int -> float rounds to nearest in one step (never
    // through double, which could round twice); int -> int wraps (two's complement).
    return static_cast<To>(x);
  }
}

std::vector<Tensor> cast(const Node&, RefInputs in, RefOutputTypes out) {
  const Tensor& x = *in[0];
  Tensor y(out[0].dtype, out[0].shape);
  visit_dtype(x.dtype(), [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    visit_dtype(y.dtype(), [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      const From* src = x.data_as<From>();
      To* dst = y.data_as<To>();
      for (int64_t i = 0; i < x.numel(); ++i) dst[i] = cast_value<From, To>(src[i], i, y.dtype());
    });
  });
  return {y};
}

// ---- Clip ---------------------------------------------------------------------------------

// An integer bound from a double attribute: min rounds up, max rounds down, both clamped
// to the dtype's range so that, e.g., max = 1e20 on i32 means "no upper bound".
int64_t integer_bound(double bound, bool round_up, DType dtype) {
  const double rounded = round_up ? std::ceil(bound) : std::floor(bound);
  if (rounded <= static_cast<double>(lowest_of(dtype))) return lowest_of(dtype);
  if (rounded >= static_cast<double>(highest_of(dtype))) return highest_of(dtype);
  return static_cast<int64_t>(rounded);
}

std::vector<Tensor> clip(const Node& node, RefInputs in, RefOutputTypes) {
  const AttrReader attrs(node);
  const double lo = attrs.get_float("min");
  const double hi = attrs.get_float("max");
  if (std::isnan(lo) || std::isnan(hi)) {
    kernel_fail("Clip bounds must be numbers, got min " + number_str(lo) + " and max " +
                number_str(hi));
  }
  const Tensor& x = *in[0];
  // max first, then min: when min > max every element becomes max (numpy and ONNX agree).
  auto clip_float = [lo, hi](double v) {
    return std::isnan(v) ? v : std::min(std::max(v, lo), hi);
  };
  const int64_t lo_int = integer_bound(lo, /*round_up=*/true, x.dtype());
  const int64_t hi_int = integer_bound(hi, /*round_up=*/false, x.dtype());
  auto clip_int = [lo_int, hi_int](int64_t v) { return std::min(std::max(v, lo_int), hi_int); };
  return {map_numeric(x, clip_float, clip_int)};
}

}  // namespace

void register_elementwise(RefTable& table) {
  using K = OpKind;
  register_kernel(table, K::Add, add);
  register_kernel(table, K::Sub, sub);
  register_kernel(table, K::Mul, mul);
  register_kernel(table, K::Div, div);
  register_kernel(table, K::Pow, pow);
  register_kernel(table, K::Neg, neg);
  register_kernel(table, K::Abs, abs);
  register_kernel(table, K::Sqrt, sqrt);
  register_kernel(table, K::Reciprocal, reciprocal);
  register_kernel(table, K::Exp, exp);
  register_kernel(table, K::Log, log);
  register_kernel(table, K::Erf, erf);
  register_kernel(table, K::Tanh, tanh);
  register_kernel(table, K::Sigmoid, sigmoid);
  register_kernel(table, K::Relu, relu);
  register_kernel(table, K::LeakyRelu, leaky_relu);
  register_kernel(table, K::Gelu, gelu);
  register_kernel(table, K::Min, extremum<false>);
  register_kernel(table, K::Max, extremum<true>);
  register_kernel(table, K::Where, where);
  register_kernel(table, K::Equal, equal);
  register_kernel(table, K::Less, less);
  register_kernel(table, K::Greater, greater);
  register_kernel(table, K::Not, logical_not);
  register_kernel(table, K::And, logical_and);
  register_kernel(table, K::Or, logical_or);
  register_kernel(table, K::Cast, cast);
  register_kernel(table, K::Clip, clip);
}

}  // namespace volta::reference
