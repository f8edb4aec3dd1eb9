// Reference math, activation and logic ops added for ONNX import. Operands are broadcast to
// the output shape first, then each op is one flat loop: floats in double, rounded once when
// stored; integers in int64, wrapped to the dtype by the store.

#include <cmath>
#include <limits>
#include <string>

#include "ref_util.h"

namespace volta::reference {
namespace {

// y[i] = fn(x[i]) in double.
template <class Fn>
std::vector<Tensor> map_double(const Tensor& x, Fn fn) {
  Tensor y(x.dtype(), x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) y.set_double(i, fn(x.get_double(i)));
  return {y};
}

// Both operands broadcast to the output's shape.
struct Operands {
  Tensor a, b;
};
Operands broadcast_pair(RefInputs in, const TypeInfo& out) {
  return {broadcast_to(*in[0], out.shape), broadcast_to(*in[1], out.shape)};
}

double attr(const Node& node, std::string_view name) { return AttrReader(node).get_float(name); }

// ---- Trigonometric and hyperbolic ----------------------------------------------------------

std::vector<Tensor> sin(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], [](double x) { return std::sin(x); });
}

std::vector<Tensor> cos(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], [](double x) { return std::cos(x); });
}

std::vector<Tensor> tan(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], [](double x) { return std::tan(x); });
}

std::vector<Tensor> asin(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], [](double x) { return std::asin(x); });
}

std::vector<Tensor> acos(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], [](double x) { return std::acos(x); });
}

std::vector<Tensor> atan(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], [](double x) { return std::atan(x); });
}

std::vector<Tensor> sinh(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], [](double x) { return std::sinh(x); });
}

std::vector<Tensor> cosh(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], [](double x) { return std::cosh(x); });
}

std::vector<Tensor> asinh(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], [](double x) { return std::asinh(x); });
}

std::vector<Tensor> acosh(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], [](double x) { return std::acosh(x); });
}

std::vector<Tensor> atanh(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], [](double x) { return std::atanh(x); });
}

std::vector<Tensor> floor(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], [](double x) { return std::floor(x); });
}

std::vector<Tensor> ceil(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], [](double x) { return std::ceil(x); });
}

// Halves to even, like numpy.round: std::round takes a half away from zero, so a half goes
// to 2 round(x / 2) instead (x - trunc(x) and x / 2 are exact).
double round_half_even(double x) {
  const bool half = std::fabs(x - std::trunc(x)) == 0.5;
  return half ? 2.0 * std::round(x / 2.0) : std::round(x);
}

std::vector<Tensor> round(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], round_half_even);
}

std::vector<Tensor> sign(const Node&, RefInputs in, RefOutputTypes) {
  const Tensor& x = *in[0];
  Tensor y(x.dtype(), x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (is_floating(x.dtype())) {
      const double v = x.get_double(i);
      y.set_double(i, std::isnan(v) ? v : (v > 0.0 ? 1.0 : (v < 0.0 ? -1.0 : 0.0)));
    } else {
      const int64_t v = x.get_int(i);
      y.set_int(i, v > 0 ? 1 : (v < 0 ? -1 : 0));
    }
  }
  return {y};
}

// ---- Mod -----------------------------------------------------------------------------------

// Floats: r = a - trunc(a / b) * b exactly (std::fmod); fmod=0 moves a remainder whose sign
// differs from b's by b, and gives a zero remainder b's sign (numpy.mod).
double float_mod(double a, double b, bool c_fmod) {
  const double r = std::fmod(a, b);
  if (c_fmod || std::isnan(r)) return r;
  if (r == 0.0) return std::copysign(0.0, b);
  return (r < 0.0) != (b < 0.0) ? r + b : r;
}

// Integers: the remainder of truncated division, then (fmod=0) moved into b's sign.
int64_t integer_mod(int64_t a, int64_t b, bool c_fmod, int64_t element) {
  if (b == 0) {
    kernel_fail("Mod: integer division by zero: divisor element " + std::to_string(element) +
                " (of B broadcast to the output shape) is 0; integer divisors must be nonzero");
  }
  if (b == -1) return 0;  // INT64_MIN % -1 overflows in C++
  const int64_t r = a % b;
  if (c_fmod || r == 0) return r;
  return (r < 0) != (b < 0) ? r + b : r;
}

std::vector<Tensor> mod(const Node& node, RefInputs in, RefOutputTypes out) {
  const bool c_fmod = AttrReader(node).get_int("fmod") != 0;
  const Operands x = broadcast_pair(in, out[0]);
  Tensor y(out[0].dtype, out[0].shape);
  for (int64_t i = 0; i < y.numel(); ++i) {
    if (is_floating(y.dtype())) {
      y.set_double(i, float_mod(x.a.get_double(i), x.b.get_double(i), c_fmod));
    } else {
      y.set_int(i, integer_mod(x.a.get_int(i), x.b.get_int(i), c_fmod, i));
    }
  }
  return {y};
}

// ---- Activations ---------------------------------------------------------------------------

std::vector<Tensor> elu(const Node& node, RefInputs in, RefOutputTypes) {
  const double alpha = attr(node, "alpha");
  return map_double(*in[0], [alpha](double x) { return x < 0.0 ? alpha * std::expm1(x) : x; });
}

std::vector<Tensor> selu(const Node& node, RefInputs in, RefOutputTypes) {
  const double alpha = attr(node, "alpha");
  const double gamma = attr(node, "gamma");
  return map_double(*in[0], [alpha, gamma](double x) {
    return x > 0.0 ? gamma * x : gamma * alpha * std::expm1(x);
  });
}

std::vector<Tensor> celu(const Node& node, RefInputs in, RefOutputTypes) {
  const double alpha = attr(node, "alpha");
  return map_double(*in[0], [alpha](double x) {
    if (std::isnan(x)) return x;
    return std::max(0.0, x) + std::min(0.0, alpha * std::expm1(x / alpha));
  });
}

// min(1, max(0, v)) with NaN kept.
double clamp01(double v) { return std::isnan(v) ? v : std::min(1.0, std::max(0.0, v)); }

std::vector<Tensor> hard_sigmoid(const Node& node, RefInputs in, RefOutputTypes) {
  const double alpha = attr(node, "alpha");
  const double beta = attr(node, "beta");
  return map_double(*in[0], [alpha, beta](double x) { return clamp01(alpha * x + beta); });
}

std::vector<Tensor> hard_swish(const Node&, RefInputs in, RefOutputTypes) {
  // 0 below -3 (as -0, the sign x * 0 has for finite x), -inf included.
  return map_double(*in[0], [](double x) { return x < -3.0 ? -0.0 : x * clamp01(x / 6.0 + 0.5); });
}

// log(1 + e^x), arranged so that e^x never overflows.
std::vector<Tensor> softplus(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], [](double x) {
    return x > 0.0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  });
}

std::vector<Tensor> softsign(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], [](double x) {
    return std::isinf(x) ? std::copysign(1.0, x) : x / (1.0 + std::fabs(x));
  });
}

std::vector<Tensor> prelu(const Node&, RefInputs in, RefOutputTypes out) {
  const Operands x = broadcast_pair(in, out[0]);
  Tensor y(out[0].dtype, out[0].shape);
  for (int64_t i = 0; i < y.numel(); ++i) {
    if (is_floating(y.dtype())) {
      const double v = x.a.get_double(i);
      y.set_double(i, v < 0.0 ? x.b.get_double(i) * v : v);
    } else {
      const int64_t v = x.a.get_int(i);
      y.set_int(i, v < 0 ? wrapping_mul(x.b.get_int(i), v) : v);
    }
  }
  return {y};
}

std::vector<Tensor> thresholded_relu(const Node& node, RefInputs in, RefOutputTypes) {
  const double alpha = attr(node, "alpha");
  return map_double(*in[0], [alpha](double x) { return std::isnan(x) || x > alpha ? x : 0.0; });
}

std::vector<Tensor> shrink(const Node& node, RefInputs in, RefOutputTypes) {
  const double bias = attr(node, "bias");
  const double lambd = attr(node, "lambd");
  return map_double(*in[0], [bias, lambd](double x) {
    if (x < -lambd) return x + bias;
    if (x > lambd) return x - bias;
    return std::isnan(x) ? x : 0.0;
  });
}

// ---- Classification and logic --------------------------------------------------------------

template <class Predicate>
std::vector<Tensor> classify(const Tensor& x, Predicate predicate) {
  Tensor y(DType::Bool, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) y.set_int(i, predicate(x.get_double(i)) ? 1 : 0);
  return {y};
}

std::vector<Tensor> is_nan(const Node&, RefInputs in, RefOutputTypes) {
  return classify(*in[0], [](double x) { return std::isnan(x); });
}

std::vector<Tensor> is_inf(const Node& node, RefInputs in, RefOutputTypes) {
  const AttrReader attrs(node);
  const bool positive = attrs.get_int("detect_positive") != 0;
  const bool negative = attrs.get_int("detect_negative") != 0;
  return classify(*in[0], [positive, negative](double x) {
    return std::isinf(x) && (x > 0.0 ? positive : negative);
  });
}

// Comparisons and Xor: a bool per broadcast pair. Comparisons with NaN are false (IEEE).
template <class Compare>
std::vector<Tensor> compare(RefInputs in, RefOutputTypes out, Compare compare_values) {
  const Operands x = broadcast_pair(in, out[0]);
  Tensor y(DType::Bool, out[0].shape);
  for (int64_t i = 0; i < y.numel(); ++i) {
    const bool result = is_floating(x.a.dtype())
                            ? compare_values(x.a.get_double(i), x.b.get_double(i))
                            : compare_values(x.a.get_int(i), x.b.get_int(i));
    y.set_int(i, result ? 1 : 0);
  }
  return {y};
}

std::vector<Tensor> logical_xor(const Node&, RefInputs in, RefOutputTypes out) {
  return compare(in, out, [](auto a, auto b) { return (a != 0) != (b != 0); });
}

std::vector<Tensor> less_or_equal(const Node&, RefInputs in, RefOutputTypes out) {
  return compare(in, out, [](auto a, auto b) { return a <= b; });
}

std::vector<Tensor> greater_or_equal(const Node&, RefInputs in, RefOutputTypes out) {
  return compare(in, out, [](auto a, auto b) { return a >= b; });
}

}  // namespace

void register_math(RefTable& table) {
  using K = OpKind;
  register_kernel(table, K::Sin, sin);
  register_kernel(table, K::Cos, cos);
  register_kernel(table, K::Tan, tan);
  register_kernel(table, K::Asin, asin);
  register_kernel(table, K::Acos, acos);
  register_kernel(table, K::Atan, atan);
  register_kernel(table, K::Sinh, sinh);
  register_kernel(table, K::Cosh, cosh);
  register_kernel(table, K::Asinh, asinh);
  register_kernel(table, K::Acosh, acosh);
  register_kernel(table, K::Atanh, atanh);
  register_kernel(table, K::Floor, floor);
  register_kernel(table, K::Ceil, ceil);
  register_kernel(table, K::Round, round);
  register_kernel(table, K::Sign, sign);
  register_kernel(table, K::Mod, mod);
  register_kernel(table, K::Elu, elu);
  register_kernel(table, K::Selu, selu);
  register_kernel(table, K::Celu, celu);
  register_kernel(table, K::HardSigmoid, hard_sigmoid);
  register_kernel(table, K::HardSwish, hard_swish);
  register_kernel(table, K::Softplus, softplus);
  register_kernel(table, K::Softsign, softsign);
  register_kernel(table, K::PRelu, prelu);
  register_kernel(table, K::ThresholdedRelu, thresholded_relu);
  register_kernel(table, K::Shrink, shrink);
  register_kernel(table, K::IsNaN, is_nan);
  register_kernel(table, K::IsInf, is_inf);
  register_kernel(table, K::Xor, logical_xor);
  register_kernel(table, K::LessOrEqual, less_or_equal);
  register_kernel(table, K::GreaterOrEqual, greater_or_equal);
}

}  // namespace volta::reference
