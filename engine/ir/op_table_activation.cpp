// The op table's part for family Activation: the elementwise non-linearities. Every one keeps
// NaN as NaN.

#include <string>

#include "op_table_builders.h"

namespace volta::op_table {
namespace {

// The activations compute in f32 or f64; f16 and bf16 widen to f32 and round once.
constexpr DTypeSet kActivationTypes = kFloatTypes | kHalfTypes;

// PRelu: the slope broadcasts to X in one direction only, so the output has X's shape.
std::vector<TypeInfo> prelu_shape(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  const Shape& slope = ctx.input(1).shape;
  const std::optional<Shape> b = broadcast_shapes(x, slope);
  if (!b || *b != x) {
    throw ShapeError("slope shape " + slope.str() + " does not broadcast to X shape " + x.str() +
                     " (PRelu broadcasts the slope to X, never X to the slope)");
  }
  return {ctx.input(0)};
}

AttrSpec float_attr(std::string_view name, double def) {
  return {name, AttrType::Float, AttrValue{def}};
}

OpSchema activation(OpKind kind, std::string_view name, Differentiability x,
                    std::string_view summary, std::vector<AttrSpec> attrs = {}) {
  return unary(kind, name, OpFamily::Activation, kActivationTypes, x, InputDomain::Any, summary,
               std::move(attrs));
}

}  // namespace

void add_activation_schemas(std::vector<OpSchema>& t) {
  using K = OpKind;
  using F = OpFamily;
  const InputDomain any = InputDomain::Any;

  t.push_back(unary(K::Erf, "Erf", F::Activation, kActivationTypes, D::Differentiable, any,
                    "error function"));
  t.push_back(unary(K::Tanh, "Tanh", F::Activation, kActivationTypes, D::Differentiable, any,
                    "hyperbolic tangent"));
  t.push_back(unary(K::Sigmoid, "Sigmoid", F::Activation, kActivationTypes, D::Differentiable, any,
                    "1 / (1 + e^-X)"));
  t.push_back(unary(K::Relu, "Relu", F::Activation, kNumericTypes | kHalfTypes, D::Differentiable,
                    any, "max(X, 0)"));
  t.push_back(unary(K::LeakyRelu, "LeakyRelu", F::Activation, kFloatTypes, D::Differentiable, any,
                    "X if X >= 0 else alpha * X", {{"alpha", AttrType::Float, AttrValue{0.01}}}));
  t.push_back(unary(K::Gelu, "Gelu", F::Activation, kActivationTypes, D::Differentiable, any,
                    "X * Phi(X); approximate=\"tanh\" uses the tanh form",
                    {{"approximate",
                      AttrType::String,
                      AttrValue{std::string("none")},
                      std::nullopt,
                      std::nullopt,
                      {"none", "tanh"}}}));
  t.push_back(activation(K::Elu, "Elu", D::Differentiable, "X if X >= 0 else alpha * (e^X - 1)",
                         {float_attr("alpha", 1.0)}));
  t.push_back(activation(K::Selu, "Selu", D::Differentiable,
                         "gamma * (X if X > 0 else alpha * (e^X - 1))",
                         {float_attr("alpha", 1.67326319217681884765625),
                          float_attr("gamma", 1.05070102214813232421875)}));
  t.push_back(activation(K::Celu, "Celu", D::Differentiable,
                         "max(0, X) + min(0, alpha * (e^(X / alpha) - 1))",
                         {float_attr("alpha", 1.0)}));
  t.push_back(activation(K::HardSigmoid, "HardSigmoid", D::Differentiable,
                         "max(0, min(1, alpha * X + beta))",
                         {float_attr("alpha", 0.2), float_attr("beta", 0.5)}));
  t.push_back(activation(K::HardSwish, "HardSwish", D::Differentiable,
                         "X * max(0, min(1, X / 6 + 0.5)); 0 at -Inf"));
  t.push_back(activation(K::Softplus, "Softplus", D::Differentiable,
                         "log(e^X + 1), computed as max(X, 0) + log1p(e^-|X|)"));
  t.push_back(
      activation(K::Softsign, "Softsign", D::Differentiable, "X / (1 + |X|); +-1 at +-Inf"));
  OpSchema prelu = binary(K::PRelu, "PRelu", kNumericTypes | kHalfTypes, D::Differentiable, any,
                          "X if X >= 0 else slope * X; slope broadcasts to X");
  prelu.family = F::Activation;
  prelu.inputs = {{"X", 'T', D::Differentiable}, {"slope", 'T', D::Differentiable}};
  prelu.outputs = {{"Y", 'T'}};
  prelu.infer = prelu_shape;
  prelu.traits = {};  // the slope broadcasts to X only
  t.push_back(std::move(prelu));
  t.push_back(activation(K::ThresholdedRelu, "ThresholdedRelu", D::Differentiable,
                         "X if X > alpha else 0 (NaN stays NaN)", {float_attr("alpha", 1.0)}));
  t.push_back(activation(K::Shrink, "Shrink", D::Differentiable,
                         "X + bias if X < -lambd, X - bias if X > lambd, else 0 (NaN stays NaN)",
                         {float_attr("bias", 0.0), float_attr("lambd", 0.5)}));
}

}  // namespace volta::op_table
