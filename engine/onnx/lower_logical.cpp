// ONNX lowerings of the comparisons, the boolean logic ops, IsNaN and IsInf onto the internal ops
// of the same names (shared helpers: lower_elementwise.h), and of If whose condition is known at
// import time.

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

// If: plans are static, so the condition must be known at import time (a constant, or a graph
// input the plan is then specialized on, as Reshape's shape is). The branch it picks is lowered
// inline and its outputs are the node's; the other is never lowered.
void lower_if(LoweringContext& ctx) {
  const Tensor& cond = ctx.constant_input(0, "cond");
  if (cond.numel() != 1) {
    ctx.invalid("cond must hold one value; got " + std::to_string(cond.numel()));
  }
  const bool then = cond.get_double(0) != 0.0;
  ctx.consume_attr(then ? "else_branch" : "then_branch");
  const std::vector<ValueId> outs = ctx.lower_graph_attr(then ? "then_branch" : "else_branch");
  if (static_cast<int>(outs.size()) != ctx.num_outputs()) {
    ctx.invalid("the branch has " + std::to_string(outs.size()) + " outputs; the node has " +
                std::to_string(ctx.num_outputs()));
  }
  for (int i = 0; i < ctx.num_outputs(); ++i) ctx.set_output(i, outs[static_cast<size_t>(i)]);
}

}  // namespace

void register_logical_lowerings(LoweringTable& table) {
  table.add("Equal", K::Equal, 1, &lower_binary<K::Equal>);
  table.add("Less", K::Less, 1, &lower_binary<K::Less>);
  table.add("Greater", K::Greater, 1, &lower_binary<K::Greater>);
  table.add("LessOrEqual", K::LessOrEqual, 12, &lower_binary<K::LessOrEqual>);
  table.add("GreaterOrEqual", K::GreaterOrEqual, 12, &lower_binary<K::GreaterOrEqual>);
  table.add("And", K::And, 1, &lower_binary<K::And>);
  table.add("Or", K::Or, 1, &lower_binary<K::Or>);
  table.add("Xor", K::Xor, 1, &lower_binary<K::Xor>);
  table.add("Not", K::Not, 1, &lower_unary<K::Not>);
  table.add("IsNaN", K::IsNaN, 9, &lower_unary<K::IsNaN>);
  table.add("IsInf", K::IsInf, 10, &lower_is_inf);
  table.add_composite("If", OpFamily::Logical, 1, &lower_if);
}

}  // namespace volta::onnx
