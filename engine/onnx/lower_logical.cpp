// ONNX lowerings of the comparisons, the boolean logic ops, IsNaN and IsInf onto the internal ops
// of the same names (shared helpers: lower_elementwise.h).

#include <string>

#include "lower_elementwise.h"

namespace volta::onnx {
namespace {

using K = OpKind;

void lower_is_inf(LoweringContext& ctx) {
  const int64_t positive = ctx.attr_int("detect_positive", 1);
  const int64_t negative = ctx.attr_int("detect_negative", 1);
  for (int64_t flag : {positive, negative}) {
    if (flag != 0 && flag != 1) ctx.invalid("detect_positive and detect_negative must be 0 or 1");
  }
  ctx.set_output(0, add_op(ctx, K::IsInf, {ctx.input(0)},
                           {{"detect_positive", positive}, {"detect_negative", negative}}));
}

}  // namespace

void register_logical_lowerings(LoweringTable& table) {
  const auto add = [&table](std::string_view onnx_op, OpKind family_of, int min_version,
                            LowerFn fn) {
    table.add({onnx_op, op_schema(family_of).family, min_version, fn});
  };
  add("Equal", K::Equal, 1, &lower_binary<K::Equal>);
  add("Less", K::Less, 1, &lower_binary<K::Less>);
  add("Greater", K::Greater, 1, &lower_binary<K::Greater>);
  add("LessOrEqual", K::LessOrEqual, 12, &lower_binary<K::LessOrEqual>);
  add("GreaterOrEqual", K::GreaterOrEqual, 12, &lower_binary<K::GreaterOrEqual>);
  add("And", K::And, 1, &lower_binary<K::And>);
  add("Or", K::Or, 1, &lower_binary<K::Or>);
  add("Xor", K::Xor, 1, &lower_binary<K::Xor>);
  add("Not", K::Not, 1, &lower_unary<K::Not>);
  add("IsNaN", K::IsNaN, 9, &lower_unary<K::IsNaN>);
  add("IsInf", K::IsInf, 10, &lower_is_inf);
}

}  // namespace volta::onnx
