// The op table's part for family Normalization: Softmax, LogSoftmax and Hardmax along an axis,
// LayerNormalization, and the per-channel BatchNormalization, InstanceNormalization,
// MeanVarianceNormalization and LRN.

#include <algorithm>
#include <string>

#include "op_table_builders.h"
#include "volta/ir/graph.h"

namespace volta::op_table {
namespace {

[[noreturn]] void shape_fail(const std::string& message) { throw ShapeError(message); }

int checked_axis(int64_t axis, int rank) {
  const std::optional<int> a = normalize_axis(axis, rank);
  if (!a) {
    shape_fail("axis " + std::to_string(axis) + " is out of range for rank " +
               std::to_string(rank) + " (valid: [" + std::to_string(-rank) + ", " +
               std::to_string(rank - 1) + "])");
  }
  return *a;
}

std::vector<TypeInfo> per_channel_normalization(const InferContext& ctx) {
  shape_fn::require_rank_at_least(ctx.input(0).shape, 2, "[N, C, D1, ...]");
  shape_fn::require_per_channel(ctx, 1, static_cast<int>(ctx.inputs.size()) - 1);
  return {ctx.input(0)};
}

std::vector<TypeInfo> mean_variance_normalization(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  std::vector<int> axes;
  for (int64_t a : ctx.attrs.get_ints("axes")) axes.push_back(checked_axis(a, x.rank()));
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) {
    shape_fail("axes " + Shape(ctx.attrs.get_ints("axes")).str() + " name an axis twice");
  }
  return {ctx.input(0)};
}

std::vector<TypeInfo> lrn(const InferContext& ctx) {
  shape_fn::require_rank_at_least(ctx.input(0).shape, 2, "[N, C, D1, ...]");
  return {ctx.input(0)};
}

std::vector<TypeInfo> hardmax(const InferContext& ctx) {
  checked_axis(ctx.attrs.get_int("axis"), ctx.input(0).shape.rank());
  return {ctx.input(0)};
}

}  // namespace

void add_normalization_schemas(std::vector<OpSchema>& t) {
  using K = OpKind;
  using F = OpFamily;
  const AttrSpec epsilon = {"epsilon", AttrType::Float, AttrValue{1e-5}, 0.0, kInf};

  t.push_back(
      softmax_like(K::Softmax, "Softmax", D::Differentiable, "exp(x - max) / sum along axis"));
  t.push_back(softmax_like(K::LogSoftmax, "LogSoftmax", D::Differentiable,
                           "x - max - log(sum exp(x - max))"));
  t.push_back(
      OpSchema{.kind = K::LayerNormalization,
               .name = "LayerNormalization",
               .family = F::Normalization,
               .inputs = {{"X", 'T', D::Differentiable},
                          {"Scale", 'T', D::Differentiable},
                          {"B", 'T', D::Differentiable, true}},
               .outputs = {{"Y", 'T'}, {"Mean", 'T', true}, {"InvStdDev", 'T', true}},
               .type_params = {{'T', kFloatTypes}},
               .attrs = {axis_attr(-1), {"epsilon", AttrType::Float, AttrValue{1e-5}, 0.0, kInf}},
               .infer = shape_fn::layer_normalization,
               .summary = "normalize over axes [axis, rank), then * Scale + B",
               .accumulator = Accumulator::InputType});
  t.push_back(OpSchema{
      .kind = K::BatchNormalization,
      .name = "BatchNormalization",
      .family = F::Normalization,
      .inputs = {{"X", 'T', D::Differentiable},
                 {"scale", 'T', D::Differentiable},
                 {"B", 'T', D::Differentiable},
                 {"input_mean", 'T', D::Differentiable},
                 {"input_var", 'T', D::Differentiable, false, false, InputDomain::Positive}},
      .outputs = {{"Y", 'T'}},
      .type_params = {{'T', kFloatTypes}},
      .attrs = {epsilon},
      .infer = per_channel_normalization,
      .summary = "inference: (X - input_mean) / sqrt(input_var + epsilon) * scale + B, per "
                 "channel of axis 1"});
  t.push_back(OpSchema{.kind = K::InstanceNormalization,
                       .name = "InstanceNormalization",
                       .family = F::Normalization,
                       .inputs = {{"input", 'T', D::Differentiable},
                                  {"scale", 'T', D::Differentiable},
                                  {"B", 'T', D::Differentiable}},
                       .outputs = {{"output", 'T'}},
                       .type_params = {{'T', kFloatTypes}},
                       .attrs = {epsilon},
                       .infer = per_channel_normalization,
                       .summary = "normalize each [n, c] plane over axes 2.. by its mean and "
                                  "biased variance (+ epsilon), then * scale[c] + B[c]",
                       .accumulator = Accumulator::InputType});
  t.push_back(OpSchema{
      .kind = K::MeanVarianceNormalization,
      .name = "MeanVarianceNormalization",
      .family = F::Normalization,
      .inputs = {{"X", 'T', D::Differentiable}},
      .outputs = {{"Y", 'T'}},
      .type_params = {{'T', kFloatTypes}},
      .attrs = {{"axes", AttrType::Ints, AttrValue{std::vector<int64_t>{0, 2, 3}}},
                {"epsilon", AttrType::Float, AttrValue{1e-9}, 0.0, kInf}},
      .infer = mean_variance_normalization,
      .summary = "(X - mean) / (sqrt(biased variance) + epsilon) over axes (ONNX adds 1e-9, the "
                 "default)",
      .accumulator = Accumulator::Wide});
  t.push_back(OpSchema{.kind = K::LRN,
                       .name = "LRN",
                       .family = F::Normalization,
                       .inputs = {{"X", 'T', D::Differentiable}},
                       .outputs = {{"Y", 'T'}},
                       .type_params = {{'T', kFloatTypes}},
                       .attrs = {{"alpha", AttrType::Float, AttrValue{1e-4}},
                                 {"beta", AttrType::Float, AttrValue{0.75}},
                                 {"bias", AttrType::Float, AttrValue{1.0}},
                                 {"size", AttrType::Int, std::nullopt, 1.0, std::nullopt}},
                       .infer = lrn,
                       .summary = "X / (bias + alpha / size * sum of X^2 over channels "
                                  "[c - floor((size-1)/2), c + ceil((size-1)/2)])^beta",
                       .accumulator = Accumulator::InputType});
  t.push_back(OpSchema{.kind = K::Hardmax,
                       .name = "Hardmax",
                       .family = F::Normalization,
                       .inputs = {{"input", 'T', D::NotDifferentiable}},
                       .outputs = {{"output", 'T'}},
                       .type_params = {{'T', kFloatTypes}},
                       .attrs = {axis_attr(-1)},
                       .infer = hardmax,
                       .summary = "1 at the first maximum along axis (a NaN counts as the "
                                  "maximum), 0 elsewhere",
                       .nan_mode = NanMode::FirstNanWins,
                       .tie_break = TieBreak::FirstIndex,
                       .traits = {OpTrait::AxisAttribute}});
}

}  // namespace volta::op_table
