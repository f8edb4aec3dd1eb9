// The op table's part for family Elementwise: arithmetic, the math functions, rounding, Min and
// Max, Where, Cast and Clip, and the integer bit operations.

#include <string>

#include "op_table_builders.h"

namespace volta::op_table {
namespace {

OpSchema float_unary(OpKind kind, std::string_view name, Differentiability x, InputDomain domain,
                     std::string_view summary) {
  return unary(kind, name, OpFamily::Elementwise, kFloatTypes, x, domain, summary);
}

// Piecewise-constant maps: defined everywhere, zero gradient almost everywhere, so their input
// is not differentiable.
OpSchema rounding(OpKind kind, std::string_view name, DTypeSet types, std::string_view summary) {
  return unary(kind, name, OpFamily::Elementwise, types, D::NotDifferentiable, InputDomain::Any,
               summary);
}

// Cast's and BitCast's `to`: the name of any Volta dtype (dtype_name), required.
AttrSpec target_dtype_attr() {
  AttrSpec to{.name = "to", .type = AttrType::String, .default_value = std::nullopt};
  for (int code = 0; code < kDTypeCount; ++code) {
    to.allowed_strings.push_back(dtype_name(static_cast<DType>(code)));
  }
  return to;
}

// Bit operations: integers only, so NaN does not apply and nothing is differentiable.
OpSchema bitwise(OpSchema s) {
  s.nan_mode = NanMode::NotApplicable;
  return s;
}

}  // namespace

void add_elementwise_schemas(std::vector<OpSchema>& t) {
  using K = OpKind;
  using F = OpFamily;
  const InputDomain any = InputDomain::Any;

  t.push_back(with_traits(binary(K::Add, "Add", kEveryNumericType, D::Differentiable, any, "A + B"),
                          {OpTrait::Commutative}));
  t.push_back(binary(K::Sub, "Sub", kEveryNumericType, D::Differentiable, any, "A - B"));
  t.push_back(with_traits(binary(K::Mul, "Mul", kEveryNumericType, D::Differentiable, any, "A * B"),
                          {OpTrait::Commutative}));
  t.push_back(binary(K::Div, "Div", kEveryNumericType, D::Differentiable, InputDomain::NonZero,
                     "A / B (integers: truncation toward zero; division by zero is an error)"));
  OpSchema pow = binary(K::Pow, "Pow", kFloatTypes, D::Differentiable, any, "A ^ B");
  pow.inputs[0].domain = InputDomain::Positive;
  t.push_back(std::move(pow));
  OpSchema mod = binary(K::Mod, "Mod", kEveryNumericType, D::Differentiable, InputDomain::NonZero,
                        "remainder of A / B: fmod=0 takes the sign of B (Python %), fmod=1 the "
                        "sign of A (C fmod); an integer divisor of 0 is an error");
  mod.attrs = {flag("fmod", 0)};
  mod.inputs[1].differentiability = D::NotDifferentiable;  // as ONNX: the divisor is not
  t.push_back(std::move(mod));
  t.push_back(
      unary(K::Neg, "Neg", F::Elementwise, kSignedNumericTypes, D::Differentiable, any, "-X"));
  t.push_back(
      unary(K::Abs, "Abs", F::Elementwise, kEveryNumericType, D::Differentiable, any, "|X|"));
  // Correctly rounded in f32, so f16 and bf16 (widened, rounded once) are exact too.
  t.push_back(unary(K::Sqrt, "Sqrt", F::Elementwise, kFloatTypes | kHalfTypes, D::Differentiable,
                    InputDomain::Positive, "square root (NaN below zero)"));
  t.push_back(unary(K::Reciprocal, "Reciprocal", F::Elementwise, kFloatTypes | kHalfTypes,
                    D::Differentiable, InputDomain::NonZero, "1 / X"));
  t.push_back(unary(K::Exp, "Exp", F::Elementwise, kFloatTypes, D::Differentiable, any, "e^X"));
  t.push_back(unary(K::Log, "Log", F::Elementwise, kFloatTypes, D::Differentiable,
                    InputDomain::Positive, "natural logarithm"));

  // Trigonometric and hyperbolic functions. Domains keep parity cases finite.
  t.push_back(float_unary(K::Sin, "Sin", D::Differentiable, any, "sine"));
  t.push_back(float_unary(K::Cos, "Cos", D::Differentiable, any, "cosine"));
  t.push_back(float_unary(K::Tan, "Tan", D::Differentiable, any, "tangent"));
  t.push_back(
      float_unary(K::Asin, "Asin", D::Differentiable, any, "arcsine (NaN outside [-1, 1])"));
  t.push_back(
      float_unary(K::Acos, "Acos", D::Differentiable, any, "arccosine (NaN outside [-1, 1])"));
  t.push_back(float_unary(K::Atan, "Atan", D::Differentiable, any, "arctangent"));
  t.push_back(float_unary(K::Sinh, "Sinh", D::Differentiable, any, "hyperbolic sine"));
  t.push_back(float_unary(K::Cosh, "Cosh", D::Differentiable, any, "hyperbolic cosine"));
  t.push_back(float_unary(K::Asinh, "Asinh", D::Differentiable, any, "inverse hyperbolic sine"));
  t.push_back(float_unary(K::Acosh, "Acosh", D::Differentiable, InputDomain::Positive,
                          "inverse hyperbolic cosine (NaN below 1)"));
  t.push_back(float_unary(K::Atanh, "Atanh", D::Differentiable, any,
                          "inverse hyperbolic tangent (NaN outside [-1, 1], +-Inf at +-1)"));

  t.push_back(rounding(K::Floor, "Floor", kFloatTypes, "largest integer <= X"));
  t.push_back(rounding(K::Ceil, "Ceil", kFloatTypes, "smallest integer >= X"));
  t.push_back(
      rounding(K::Round, "Round", kFloatTypes, "nearest integer, halves to even (numpy.round)"));
  t.push_back(rounding(K::Sign, "Sign", kNumericTypes | kNarrowIntegerTypes,
                       "-1, 0 or 1 by the sign of X; NaN stays NaN"));

  t.push_back(extremum(K::Min, "Min", "elementwise minimum of one or more broadcasting inputs"));
  t.push_back(extremum(K::Max, "Max", "elementwise maximum of one or more broadcasting inputs"));
  t.push_back(OpSchema{.kind = K::Where,
                       .name = "Where",
                       .family = F::Elementwise,
                       .inputs = {{"condition", 'B', D::NotDifferentiable},
                                  {"X", 'T', D::Differentiable},
                                  {"Y", 'T', D::Differentiable}},
                       .outputs = {{"output", 'T'}},
                       .type_params = {{'B', kBoolType}, {'T', kAllTypes}},
                       .infer = shape_fn::where,
                       .summary = "condition ? X : Y, broadcasting all three",
                       .nan_mode = NanMode::PassThrough});
  t.push_back(OpSchema{.kind = K::Cast,
                       .name = "Cast",
                       .family = F::Elementwise,
                       .inputs = {{"input", 'T', D::Differentiable}},
                       .outputs = {{"output", 0}},
                       .type_params = {{'T', kAllTypes}},
                       .attrs = {target_dtype_attr()},
                       .infer = shape_fn::cast,
                       .summary = "convert dtype (float to int truncates toward zero; "
                                  "NaN/Inf/out-of-range to int is an error; to f16/bf16 "
                                  "rounds to nearest even, once)",
                       .traits = {OpTrait::UnaryElementwise}});
  t.push_back(unary(
      K::Clip, "Clip", F::Elementwise, kEveryNumericType, D::Differentiable, any,
      "min(max(X, min), max)",
      {{"min", AttrType::Float, AttrValue{-kInf}}, {"max", AttrType::Float, AttrValue{kInf}}}));

  OpSchema shift =
      binary(K::BitShift, "BitShift", kIntegerTypes, D::NotDifferentiable, any,
             "X << Y or X >> Y by direction (signed: arithmetic right shift); a shift by the width "
             "or more, or a negative one, gives 0 (-1 for a right shift of a negative X)");
  shift.attrs = {
      {"direction", AttrType::String, std::nullopt, std::nullopt, std::nullopt, {"left", "right"}}};
  t.push_back(bitwise(std::move(shift)));
  t.push_back(bitwise(with_traits(binary(K::BitwiseAnd, "BitwiseAnd", kIntegerTypes,
                                         D::NotDifferentiable, any, "A & B, bit by bit"),
                                  {OpTrait::Commutative, OpTrait::Idempotent})));
  t.push_back(bitwise(with_traits(binary(K::BitwiseOr, "BitwiseOr", kIntegerTypes,
                                         D::NotDifferentiable, any, "A | B, bit by bit"),
                                  {OpTrait::Commutative, OpTrait::Idempotent})));
  t.push_back(bitwise(with_traits(binary(K::BitwiseXor, "BitwiseXor", kIntegerTypes,
                                         D::NotDifferentiable, any, "A ^ B, bit by bit"),
                                  {OpTrait::Commutative})));
  t.push_back(bitwise(unary(K::BitwiseNot, "BitwiseNot", F::Elementwise, kIntegerTypes,
                            D::NotDifferentiable, any, "~X, every bit flipped")));
  // Bits, not values: nothing to differentiate, and a NaN's bits are copied like any others.
  t.push_back(OpSchema{.kind = K::BitCast,
                       .name = "BitCast",
                       .family = F::Elementwise,
                       .inputs = {{"input", 'T', D::NotDifferentiable}},
                       .outputs = {{"output", 0}},
                       .type_params = {{'T', kAllTypes}},
                       .attrs = {target_dtype_attr()},
                       .infer = shape_fn::bit_cast,
                       .summary = "reinterpret each element's bits (little endian) as dtype `to` "
                                  "of the same width; to bool, a nonzero byte is true",
                       .nan_mode = NanMode::PassThrough,
                       .traits = {OpTrait::UnaryElementwise}});
}

}  // namespace volta::op_table
