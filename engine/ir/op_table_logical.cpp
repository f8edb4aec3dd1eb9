// The op table's part for family Logical: comparisons, boolean logic and the NaN/Inf
// classifiers, whose outputs are bool.

#include <string>

#include "op_table_builders.h"

namespace volta::op_table {
namespace {

// IsNaN, IsInf: a bool per element.
std::vector<TypeInfo> bool_like_input0(const InferContext& ctx) {
  return {{DType::Bool, ctx.input(0).shape}};
}

OpSchema classify(OpKind kind, std::string_view name, std::vector<AttrSpec> attrs, NanMode nan_mode,
                  std::string_view summary) {
  return OpSchema{.kind = kind,
                  .name = name,
                  .family = OpFamily::Logical,
                  .inputs = {{"X", 'T', D::NotDifferentiable}},  // the output is bool
                  .outputs = {{"Y", 'B'}},
                  .type_params = {{'T', kFloatTypes | kHalfTypes}, {'B', kBoolType}},
                  .attrs = std::move(attrs),
                  .infer = bool_like_input0,
                  .summary = summary,
                  .nan_mode = nan_mode,
                  .traits = {OpTrait::UnaryElementwise}};
}

}  // namespace

void add_logical_schemas(std::vector<OpSchema>& t) {
  using K = OpKind;

  const OpTrait commutative = OpTrait::Commutative;
  const OpTrait idempotent = OpTrait::Idempotent;
  t.push_back(
      with_traits(logical(K::Equal, "Equal",
                          {{"A", 'T', D::NotDifferentiable}, {"B", 'T', D::NotDifferentiable}},
                          kAllTypes, NanMode::ComparesFalse, "A == B"),
                  {commutative}));
  t.push_back(logical(K::Less, "Less",
                      {{"A", 'T', D::NotDifferentiable}, {"B", 'T', D::NotDifferentiable}},
                      kEveryNumericType, NanMode::ComparesFalse, "A < B"));
  t.push_back(logical(K::Greater, "Greater",
                      {{"A", 'T', D::NotDifferentiable}, {"B", 'T', D::NotDifferentiable}},
                      kEveryNumericType, NanMode::ComparesFalse, "A > B"));
  t.push_back(logical(K::LessOrEqual, "LessOrEqual",
                      {{"A", 'T', D::NotDifferentiable}, {"B", 'T', D::NotDifferentiable}},
                      kEveryNumericType, NanMode::ComparesFalse, "A <= B"));
  t.push_back(logical(K::GreaterOrEqual, "GreaterOrEqual",
                      {{"A", 'T', D::NotDifferentiable}, {"B", 'T', D::NotDifferentiable}},
                      kEveryNumericType, NanMode::ComparesFalse, "A >= B"));
  OpSchema not_op = logical(K::Not, "Not", {{"X", 'B', D::NotDifferentiable}}, kBoolType,
                            NanMode::NotApplicable, "logical not");
  not_op.infer = shape_fn::same_as_input0;
  not_op.aliasing = Aliasing::InPlaceInput0;
  not_op.traits = {OpTrait::UnaryElementwise};
  t.push_back(std::move(not_op));
  t.push_back(with_traits(
      logical(K::And, "And", {{"A", 'B', D::NotDifferentiable}, {"B", 'B', D::NotDifferentiable}},
              kBoolType, NanMode::NotApplicable, "logical and"),
      {commutative, idempotent}));
  t.push_back(with_traits(
      logical(K::Or, "Or", {{"A", 'B', D::NotDifferentiable}, {"B", 'B', D::NotDifferentiable}},
              kBoolType, NanMode::NotApplicable, "logical or"),
      {commutative, idempotent}));
  t.push_back(with_traits(
      logical(K::Xor, "Xor", {{"A", 'B', D::NotDifferentiable}, {"B", 'B', D::NotDifferentiable}},
              kBoolType, NanMode::NotApplicable, "logical exclusive or"),
      {commutative}));
  t.push_back(
      classify(K::IsNaN, "IsNaN", {}, NanMode::Detects,
               "true where X is NaN (NaN is what it detects, not an operand to propagate)"));
  t.push_back(classify(K::IsInf, "IsInf", {flag("detect_positive", 1), flag("detect_negative", 1)},
                       NanMode::ComparesFalse,
                       "true where X is +Inf (detect_positive) or -Inf (detect_negative); NaN "
                       "gives false"));
}

}  // namespace volta::op_table
