// The op table's part for family Loss: SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss.

#include <string>

#include "op_table_builders.h"

namespace volta::op_table {
namespace {

[[noreturn]] void shape_fail(const std::string& message) { throw ShapeError(message); }

// Scores or log-probabilities [N, C, d1, ...], labels [N, d1, ...], weights [C].
std::vector<TypeInfo> loss(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  const Shape& labels = ctx.input(1).shape;
  shape_fn::require_rank_at_least(x, 2, "[N, C, d1, ...]");
  std::vector<int64_t> sample_dims = x.dims();
  sample_dims.erase(sample_dims.begin() + 1);
  if (labels != Shape(sample_dims)) {
    shape_fail("labels of shape " + labels.str() + " do not match the input of shape " + x.str() +
               " (expected " + Shape(sample_dims).str() + ", the input without axis 1)");
  }
  if (ctx.has_input(2)) shape_fn::require_per_channel(ctx, 2, 2);
  if (ctx.attrs.get_ints("ignore_index").size() > 1) {
    shape_fail("ignore_index holds " + std::to_string(ctx.attrs.get_ints("ignore_index").size()) +
               " labels; it is empty (no label ignored) or holds one label");
  }
  const bool reduced = ctx.attrs.get_string("reduction") != "none";
  std::vector<TypeInfo> out = {{ctx.input(0).dtype, reduced ? Shape{} : labels}};
  if (ctx.num_outputs > 1) out.push_back(ctx.input(0));  // log_prob
  return out;
}

}  // namespace

void add_loss_schemas(std::vector<OpSchema>& t) {
  using K = OpKind;
  using F = OpFamily;
  const AttrSpec reduction = {"reduction",  AttrType::String, AttrValue{std::string("mean")},
                              std::nullopt, std::nullopt,     {"none", "sum", "mean"}};

  const std::vector<AttrSpec> loss_attrs = {
      reduction, {"ignore_index", AttrType::Ints, AttrValue{std::vector<int64_t>{}}}};
  t.push_back(OpSchema{
      .kind = K::SoftmaxCrossEntropyLoss,
      .name = "SoftmaxCrossEntropyLoss",
      .family = F::Loss,
      .inputs = {{"scores", 'T', D::Differentiable},
                 {"labels", 'I', D::IntegerIndex, false, false, InputDomain::Index},
                 {"weights", 'T', D::NotDifferentiable, true, false, InputDomain::Positive}},
      .outputs = {{"output", 'T'}, {"log_prob", 'T', true}},
      .type_params = {{'T', kFloatTypes}, {'I', kIndexTypes}},
      .attrs = loss_attrs,
      .infer = loss,
      .summary = "NegativeLogLikelihoodLoss of LogSoftmax(scores) along axis 1; log_prob is that "
                 "LogSoftmax",
      .accumulator = Accumulator::Wide});
  t.push_back(OpSchema{
      .kind = K::NegativeLogLikelihoodLoss,
      .name = "NegativeLogLikelihoodLoss",
      .family = F::Loss,
      .inputs = {{"input", 'T', D::Differentiable},
                 {"target", 'I', D::IntegerIndex, false, false, InputDomain::Index},
                 {"weight", 'T', D::NotDifferentiable, true, false, InputDomain::Positive}},
      .outputs = {{"loss", 'T'}},
      .type_params = {{'T', kFloatTypes}, {'I', kIndexTypes}},
      .attrs = loss_attrs,
      .infer = loss,
      .summary = "-input[n, target, d...] * weight[target]; 0 where target is ignore_index (an "
                 "empty or one-label list); reduction none, sum, or mean = sum / sum of weights",
      .accumulator = Accumulator::Wide});
}

}  // namespace volta::op_table
