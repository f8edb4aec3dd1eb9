// ONNX lowerings of SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss onto the internal ops
// of the same names.

#include <string>

#include "lowering.h"

namespace volta::onnx {
namespace {

// SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss: inputs, reduction and ignore_index
// (absent: no label is ignored) carry over; SoftmaxCrossEntropyLoss may declare log_prob.
template <OpKind Op>
void lower_loss(LoweringContext& ctx) {
  std::vector<ValueId> inputs = {ctx.input(0), ctx.input(1)};
  if (ctx.has_input(2)) inputs.push_back(ctx.input(2));
  Attributes attrs = {{"reduction", ctx.attr_string("reduction", std::string("mean"))}};
  attrs["ignore_index"] =
      ctx.has_attr("ignore_index") ? Ints{ctx.attr_int("ignore_index", {})} : Ints{};
  const std::vector<ValueId> outs =
      ctx.add_node(Op, inputs, std::move(attrs), ctx.declared_outputs());
  for (size_t i = 0; i < outs.size(); ++i) ctx.set_output(static_cast<int>(i), outs[i]);
}

}  // namespace

void register_loss_lowerings(LoweringTable& table) {
  table.add("SoftmaxCrossEntropyLoss", OpKind::SoftmaxCrossEntropyLoss, 12,
            &lower_loss<OpKind::SoftmaxCrossEntropyLoss>);
  table.add("NegativeLogLikelihoodLoss", OpKind::NegativeLogLikelihoodLoss, 12,
            &lower_loss<OpKind::NegativeLogLikelihoodLoss>);
}

}  // namespace volta::onnx
