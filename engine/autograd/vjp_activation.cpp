// VJP rules of the activation family. Where an activation has a kink, the subgradient it takes
// there is written beside its rule.

#include <cmath>
#include <numbers>

#include "vjp.h"

namespace volta::autograd {
namespace {

// y = tanh(x): dx = g * (1 - y^2).
void tanh_vjp(VjpBuilder& b) {
  const ValueId y = b.output();
  b.set(0, b.mul(b.grad(), b.sub(b.scalar(1.0), b.mul(y, y))));
}

// y = sigmoid(x): dx = g * y * (1 - y).
void sigmoid_vjp(VjpBuilder& b) {
  const ValueId y = b.output();
  b.set(0, b.mul(b.grad(), b.mul(y, b.sub(b.scalar(1.0), y))));
}

// Relu: g where x > 0; at x = 0 the subgradient 0.
void relu_vjp(VjpBuilder& b) {
  b.set(0, b.where(b.add(OpKind::Greater, {b.input(0), b.scalar(0.0)}), b.grad()));
}

// LeakyRelu: g where x >= 0 (the forward's own split), alpha * g below.
void leaky_relu_vjp(VjpBuilder& b) {
  const ValueId x = b.input(0);
  const ValueId below = b.mul(b.grad(), b.scalar(b.attrs().get_float("alpha")));
  b.set(0,
        b.add(OpKind::Where, {b.add(OpKind::GreaterOrEqual, {x, b.scalar(0.0)}), b.grad(), below}));
}

// y = erf(x): dx = g * 2 / sqrt(pi) * exp(-x^2).
void erf_vjp(VjpBuilder& b) {
  const ValueId x = b.input(0);
  const ValueId gauss = b.add(OpKind::Exp, {b.neg(b.mul(x, x))});
  b.set(0, b.mul(b.grad(), b.mul(gauss, b.scalar(2.0 / std::sqrt(std::numbers::pi)))));
}

// Gelu (erf form): y = x * Phi(x), dx = g * (Phi(x) + x * phi(x)), with
// Phi(x) = (1 + erf(x / sqrt 2)) / 2 and phi(x) = exp(-x^2 / 2) / sqrt(2 pi).
// Tanh form: y = x * s, s = (1 + tanh(u)) / 2, u = c (x + 0.044715 x^3), c = sqrt(2 / pi):
// dx = g * (s + x * (1 - tanh(u)^2) / 2 * c * (1 + 3 * 0.044715 x^2)).
void gelu_vjp(VjpBuilder& b) {
  const ValueId x = b.input(0);
  const ValueId x2 = b.mul(x, x);
  ValueId slope;
  if (b.attrs().get_string("approximate") == "tanh") {
    const double c = std::sqrt(2.0 / std::numbers::pi);
    const ValueId inner = b.sum(x, b.mul(b.scalar(0.044715), b.mul(x2, x)));
    const ValueId t = b.add(OpKind::Tanh, {b.mul(b.scalar(c), inner)});
    const ValueId s = b.mul(b.scalar(0.5), b.sum(b.scalar(1.0), t));
    const ValueId dt = b.mul(b.scalar(0.5 * c), b.sub(b.scalar(1.0), b.mul(t, t)));
    const ValueId du = b.sum(b.scalar(1.0), b.mul(b.scalar(3.0 * 0.044715), x2));
    slope = b.sum(s, b.mul(x, b.mul(dt, du)));
  } else {
    const ValueId cdf = b.mul(
        b.scalar(0.5),
        b.sum(b.scalar(1.0), b.add(OpKind::Erf, {b.mul(x, b.scalar(1.0 / std::numbers::sqrt2))})));
    const ValueId pdf = b.mul(b.add(OpKind::Exp, {b.mul(x2, b.scalar(-0.5))}),
                              b.scalar(1.0 / std::sqrt(2.0 * std::numbers::pi)));
    slope = b.sum(cdf, b.mul(x, pdf));
  }
  b.set(0, b.mul(b.grad(), slope));
}

// y = log(1 + e^x): dx = g * sigmoid(x).
void softplus_vjp(VjpBuilder& b) {
  b.set(0, b.mul(b.grad(), b.add(OpKind::Sigmoid, {b.input(0)})));
}

ValueId positive(VjpBuilder& b) { return b.add(OpKind::Greater, {b.input(0), b.scalar(0.0)}); }

// y = x / (1 + |x|): dx = g / (1 + |x|)^2.
void softsign_vjp(VjpBuilder& b) {
  const ValueId d = b.sum(b.scalar(1.0), b.add(OpKind::Abs, {b.input(0)}));
  b.set(0, b.div(b.grad(), b.mul(d, d)));
}

// Elu: g for x > 0, else g * (y + alpha) (= alpha e^x); at 0 the left side.
void elu_vjp(VjpBuilder& b) {
  const ValueId left = b.mul(b.grad(), b.sum(b.output(), b.scalar(b.attrs().get_float("alpha"))));
  b.set(0, b.add(OpKind::Where, {positive(b), b.grad(), left}));
}

// Selu: gamma g for x > 0, else g * (y + gamma alpha); at 0 the left side.
void selu_vjp(VjpBuilder& b) {
  const double alpha = b.attrs().get_float("alpha"), gamma = b.attrs().get_float("gamma");
  const ValueId left = b.mul(b.grad(), b.sum(b.output(), b.scalar(gamma * alpha)));
  b.set(0, b.add(OpKind::Where, {positive(b), b.mul(b.grad(), b.scalar(gamma)), left}));
}

// Celu: g for x > 0, else g e^(x / alpha); at 0 the left side (1 either way).
void celu_vjp(VjpBuilder& b) {
  const ValueId scaled = b.div(b.input(0), b.scalar(b.attrs().get_float("alpha")));
  const ValueId left = b.mul(b.grad(), b.add(OpKind::Exp, {scaled}));
  b.set(0, b.add(OpKind::Where, {positive(b), b.grad(), left}));
}

// HardSigmoid: alpha g where 0 < alpha x + beta < 1, 0 where it is clamped (ends included).
void hard_sigmoid_vjp(VjpBuilder& b) {
  const double alpha = b.attrs().get_float("alpha");
  const ValueId z =
      b.sum(b.mul(b.input(0), b.scalar(alpha)), b.scalar(b.attrs().get_float("beta")));
  const ValueId inside = b.add(OpKind::And, {b.add(OpKind::Greater, {z, b.scalar(0.0)}),
                                             b.add(OpKind::Less, {z, b.scalar(1.0)})});
  b.set(0, b.where(inside, b.mul(b.grad(), b.scalar(alpha))));
}

// HardSwish: y = x * clamp(x / 6 + 1/2, 0, 1): 0 below -3, g above 3, g (x / 3 + 1/2)
// between (ends to the clamped sides).
void hard_swish_vjp(VjpBuilder& b) {
  const ValueId x = b.input(0);
  const ValueId middle = b.mul(b.grad(), b.sum(b.div(x, b.scalar(3.0)), b.scalar(0.5)));
  const ValueId above = b.add(OpKind::GreaterOrEqual, {x, b.scalar(3.0)});
  const ValueId below = b.add(OpKind::LessOrEqual, {x, b.scalar(-3.0)});
  const ValueId upper = b.add(OpKind::Where, {above, b.grad(), middle});
  b.set(0, b.add(OpKind::Where, {below, b.scalar(0.0), upper}));
}

// ThresholdedRelu: g where x > alpha.
void thresholded_relu_vjp(VjpBuilder& b) {
  b.set(0, b.where(b.add(OpKind::Greater, {b.input(0), b.scalar(b.attrs().get_float("alpha"))}),
                   b.grad()));
}

// Shrink: g where |x| > lambd (the shifted sides), 0 in the dead zone.
void shrink_vjp(VjpBuilder& b) {
  const ValueId outside = b.add(
      OpKind::Greater, {b.add(OpKind::Abs, {b.input(0)}), b.scalar(b.attrs().get_float("lambd"))});
  b.set(0, b.where(outside, b.grad()));
}

// PRelu: y = x for x >= 0, slope * x below: dx = g or g * slope, dslope = g * x below 0,
// each summed to its operand's shape.
void prelu_vjp(VjpBuilder& b) {
  const ValueId x = b.input(0), slope = b.input(1);
  const ValueId negative = b.add(OpKind::Less, {x, b.scalar(0.0)});
  if (b.wants(0)) {
    const ValueId dx = b.add(OpKind::Where, {negative, b.mul(b.grad(), slope), b.grad()});
    b.set(0, b.sum_to(dx, b.shape(x)));
  }
  if (b.wants(1)) b.set(1, b.sum_to(b.where(negative, b.mul(b.grad(), x)), b.shape(slope)));
}

}  // namespace

void register_activation_vjps(VjpTable& t) {
  const auto add = [&](OpKind op, VjpRule rule) {
    t[static_cast<size_t>(op_index(op))] = {rule, 0b1};
  };
  add(OpKind::Tanh, &tanh_vjp);
  add(OpKind::Sigmoid, &sigmoid_vjp);
  add(OpKind::Relu, &relu_vjp);
  add(OpKind::LeakyRelu, &leaky_relu_vjp);
  add(OpKind::Erf, &erf_vjp);
  add(OpKind::Gelu, &gelu_vjp);
  add(OpKind::Softplus, &softplus_vjp);
  add(OpKind::Softsign, &softsign_vjp);
  add(OpKind::Elu, &elu_vjp);
  add(OpKind::Selu, &selu_vjp);
  add(OpKind::Celu, &celu_vjp);
  add(OpKind::HardSigmoid, &hard_sigmoid_vjp);
  add(OpKind::HardSwish, &hard_swish_vjp);
  add(OpKind::ThresholdedRelu, &thresholded_relu_vjp);
  add(OpKind::Shrink, &shrink_vjp);
  t[static_cast<size_t>(op_index(OpKind::PRelu))] = {&prelu_vjp, 0b11};
}

}  // namespace volta::autograd
