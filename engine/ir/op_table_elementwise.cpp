// The op table's part for Sin ... GreaterOrEqual: math, activations and logic added for ONNX
// import.

#include <string>

#include "op_table_builders.h"

namespace volta::op_table {
namespace {

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

// IsNaN, IsInf: a bool per element.
std::vector<TypeInfo> bool_like_input0(const InferContext& ctx) {
  return {{DType::Bool, ctx.input(0).shape}};
}

AttrSpec float_attr(std::string_view name, double def) {
  return {name, AttrType::Float, AttrValue{def}};
}

OpSchema float_unary(OpKind kind, std::string_view name, OpFamily family, InputDomain domain,
                     int onnx_since, std::string_view summary, std::vector<AttrSpec> attrs = {}) {
  return unary(kind, name, family, kFloatTypes, domain, summary, std::move(attrs), onnx_since);
}

// Piecewise-constant maps: defined everywhere, zero gradient almost everywhere.
OpSchema rounding(OpKind kind, std::string_view name, DTypeSet types, int onnx_since,
                  std::string_view summary) {
  OpSchema s =
      unary(kind, name, OpFamily::Elementwise, types, InputDomain::Any, summary, {}, onnx_since);
  s.differentiability = D::NotDifferentiable;
  return s;
}

OpSchema classify(OpKind kind, std::string_view name, std::vector<AttrSpec> attrs, NanMode nan_mode,
                  int onnx_since, std::string_view summary) {
  return OpSchema{.kind = kind,
                  .name = name,
                  .family = OpFamily::Logical,
                  .inputs = {{"X", 'T'}},
                  .outputs = {{"Y", 'B'}},
                  .type_params = {{'T', kFloatTypes}, {'B', kBoolType}},
                  .attrs = std::move(attrs),
                  .infer = bool_like_input0,
                  .summary = summary,
                  .differentiability = D::NotDifferentiable,
                  .nan_mode = nan_mode,
                  .onnx_since = onnx_since};
}

}  // namespace

void add_math_schemas(std::vector<OpSchema>& t) {
  using K = OpKind;
  using F = OpFamily;
  const InputDomain any = InputDomain::Any;

  // Trigonometric and hyperbolic functions. Domains keep parity cases finite.
  t.push_back(float_unary(K::Sin, "Sin", F::Elementwise, any, 7, "sine"));
  t.push_back(float_unary(K::Cos, "Cos", F::Elementwise, any, 7, "cosine"));
  t.push_back(float_unary(K::Tan, "Tan", F::Elementwise, any, 7, "tangent"));
  t.push_back(
      float_unary(K::Asin, "Asin", F::Elementwise, any, 7, "arcsine (NaN outside [-1, 1])"));
  t.push_back(
      float_unary(K::Acos, "Acos", F::Elementwise, any, 7, "arccosine (NaN outside [-1, 1])"));
  t.push_back(float_unary(K::Atan, "Atan", F::Elementwise, any, 7, "arctangent"));
  t.push_back(float_unary(K::Sinh, "Sinh", F::Elementwise, any, 9, "hyperbolic sine"));
  t.push_back(float_unary(K::Cosh, "Cosh", F::Elementwise, any, 9, "hyperbolic cosine"));
  t.push_back(float_unary(K::Asinh, "Asinh", F::Elementwise, any, 9, "inverse hyperbolic sine"));
  t.push_back(float_unary(K::Acosh, "Acosh", F::Elementwise, InputDomain::Positive, 9,
                          "inverse hyperbolic cosine (NaN below 1)"));
  t.push_back(float_unary(K::Atanh, "Atanh", F::Elementwise, any, 9,
                          "inverse hyperbolic tangent (NaN outside [-1, 1], +-Inf at +-1)"));

  t.push_back(rounding(K::Floor, "Floor", kFloatTypes, 1, "largest integer <= X"));
  t.push_back(rounding(K::Ceil, "Ceil", kFloatTypes, 1, "smallest integer >= X"));
  t.push_back(rounding(K::Round, "Round", kFloatTypes, 11,
                       "nearest integer, halves to even (numpy.round)"));
  t.push_back(
      rounding(K::Sign, "Sign", kNumericTypes, 9, "-1, 0 or 1 by the sign of X; NaN stays NaN"));

  OpSchema mod = binary(K::Mod, "Mod", kNumericTypes, InputDomain::NonZero,
                        "remainder of A / B: fmod=0 takes the sign of B (Python %), fmod=1 the "
                        "sign of A (C fmod); an integer divisor of 0 is an error",
                        10);
  mod.attrs = {flag("fmod", 0)};
  t.push_back(std::move(mod));

  // Activations. Every one keeps NaN as NaN.
  t.push_back(float_unary(K::Elu, "Elu", F::Activation, any, 1,
                          "X if X >= 0 else alpha * (e^X - 1)", {float_attr("alpha", 1.0)}));
  t.push_back(float_unary(K::Selu, "Selu", F::Activation, any, 1,
                          "gamma * (X if X > 0 else alpha * (e^X - 1))",
                          {float_attr("alpha", 1.67326319217681884765625),
                           float_attr("gamma", 1.05070102214813232421875)}));
  t.push_back(float_unary(K::Celu, "Celu", F::Activation, any, 12,
                          "max(0, X) + min(0, alpha * (e^(X / alpha) - 1))",
                          {float_attr("alpha", 1.0)}));
  t.push_back(float_unary(K::HardSigmoid, "HardSigmoid", F::Activation, any, 1,
                          "max(0, min(1, alpha * X + beta))",
                          {float_attr("alpha", 0.2), float_attr("beta", 0.5)}));
  t.push_back(float_unary(K::HardSwish, "HardSwish", F::Activation, any, 14,
                          "X * max(0, min(1, X / 6 + 0.5)); 0 at -Inf"));
  t.push_back(float_unary(K::Softplus, "Softplus", F::Activation, any, 1,
                          "log(e^X + 1), computed as max(X, 0) + log1p(e^-|X|)"));
  t.push_back(
      float_unary(K::Softsign, "Softsign", F::Activation, any, 1, "X / (1 + |X|); +-1 at +-Inf"));
  OpSchema prelu = binary(K::PRelu, "PRelu", kNumericTypes, any,
                          "X if X >= 0 else slope * X; slope broadcasts to X", 1);
  prelu.family = F::Activation;
  prelu.inputs = {{"X", 'T'}, {"slope", 'T'}};
  prelu.outputs = {{"Y", 'T'}};
  prelu.infer = prelu_shape;
  t.push_back(std::move(prelu));
  t.push_back(float_unary(K::ThresholdedRelu, "ThresholdedRelu", F::Activation, any, 10,
                          "X if X > alpha else 0 (NaN stays NaN)", {float_attr("alpha", 1.0)}));
  t.push_back(float_unary(K::Shrink, "Shrink", F::Activation, any, 9,
                          "X + bias if X < -lambd, X - bias if X > lambd, else 0 (NaN stays NaN)",
                          {float_attr("bias", 0.0), float_attr("lambd", 0.5)}));

  // Classification and logic.
  t.push_back(
      classify(K::IsNaN, "IsNaN", {}, NanMode::Detects, 9,
               "true where X is NaN (NaN is what it detects, not an operand to propagate)"));
  t.push_back(classify(K::IsInf, "IsInf", {flag("detect_positive", 1), flag("detect_negative", 1)},
                       NanMode::ComparesFalse, 10,
                       "true where X is +Inf (detect_positive) or -Inf (detect_negative); NaN "
                       "gives false"));
  t.push_back(logical(K::Xor, "Xor", {{"A", 'B'}, {"B", 'B'}}, kBoolType, NanMode::NotApplicable,
                      "logical exclusive or", 1));
  t.push_back(logical(K::LessOrEqual, "LessOrEqual", {{"A", 'T'}, {"B", 'T'}}, kNumericTypes,
                      NanMode::ComparesFalse, "A <= B", 12));
  t.push_back(logical(K::GreaterOrEqual, "GreaterOrEqual", {{"A", 'T'}, {"B", 'T'}}, kNumericTypes,
                      NanMode::ComparesFalse, "A >= B", 12));
}

}  // namespace volta::op_table
