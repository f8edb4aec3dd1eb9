// Reference activations: the elementwise non-linearities (element maps: ref_elementwise.h).

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "ref_elementwise.h"

namespace volta::reference {
namespace {

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

std::vector<Tensor> elu(const Node& node, RefInputs in, RefOutputTypes) {
  const double alpha = float_attr(node, "alpha");
  return map_double(*in[0], [alpha](double x) { return x < 0.0 ? alpha * std::expm1(x) : x; });
}

std::vector<Tensor> selu(const Node& node, RefInputs in, RefOutputTypes) {
  const double alpha = float_attr(node, "alpha");
  const double gamma = float_attr(node, "gamma");
  return map_double(*in[0], [alpha, gamma](double x) {
    return x > 0.0 ? gamma * x : gamma * alpha * std::expm1(x);
  });
}

std::vector<Tensor> celu(const Node& node, RefInputs in, RefOutputTypes) {
  const double alpha = float_attr(node, "alpha");
  return map_double(*in[0], [alpha](double x) {
    if (std::isnan(x)) return x;
    return std::max(0.0, x) + std::min(0.0, alpha * std::expm1(x / alpha));
  });
}

// min(1, max(0, v)) with NaN kept.
double clamp01(double v) { return std::isnan(v) ? v : std::min(1.0, std::max(0.0, v)); }

std::vector<Tensor> hard_sigmoid(const Node& node, RefInputs in, RefOutputTypes) {
  const double alpha = float_attr(node, "alpha");
  const double beta = float_attr(node, "beta");
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
  const double alpha = float_attr(node, "alpha");
  return map_double(*in[0], [alpha](double x) { return std::isnan(x) || x > alpha ? x : 0.0; });
}

std::vector<Tensor> shrink(const Node& node, RefInputs in, RefOutputTypes) {
  const double bias = float_attr(node, "bias");
  const double lambd = float_attr(node, "lambd");
  return map_double(*in[0], [bias, lambd](double x) {
    if (x < -lambd) return x + bias;
    if (x > lambd) return x - bias;
    return std::isnan(x) ? x : 0.0;
  });
}

}  // namespace

void register_activation(RefTable& table) {
  using K = OpKind;
  register_kernel(table, K::Erf, erf);
  register_kernel(table, K::Tanh, tanh);
  register_kernel(table, K::Sigmoid, sigmoid);
  register_kernel(table, K::Relu, relu);
  register_kernel(table, K::LeakyRelu, leaky_relu);
  register_kernel(table, K::Gelu, gelu);
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
}

}  // namespace volta::reference
