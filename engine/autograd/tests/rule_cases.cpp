// The single-op cases of autograd_test (rule_cases.h), one function per op family group.

#include "rule_cases.h"

#include <cmath>

#include "volta/ir/random.h"

namespace volta::autograd_cases {

Tensor operand_value(const Operand& o, DType float_type, uint64_t seed) {
  if (o.dtype == DType::Bool) {
    Tensor t(DType::Bool, o.shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.set_int(i, (seed + i * 7) % 3 != 0);
    return t;
  }
  if (o.dtype == DType::I64) {
    Tensor t(DType::I64, o.shape);
    const auto n = static_cast<uint64_t>(o.index_range);
    const bool labels = o.domain == Domain::NonNegative;
    for (int64_t i = 0; i < t.numel(); ++i) {
      const auto k =
          static_cast<int64_t>((seed + static_cast<uint64_t>(i) * 5) % (labels ? n : 2 * n));
      t.set_int(i, labels ? k : k - o.index_range);
    }
    return t;
  }
  Tensor t = random_tensor(float_type, o.shape, seed, -1.0, 1.0);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = t.get_double(i);
    if (o.domain == Domain::Positive) t.set_double(i, 0.5 + std::abs(v) * 1.5);
    if (o.domain == Domain::AwayFromZero)
      t.set_double(i, (v < 0 ? -1 : 1) * (0.2 + std::abs(v) * 0.8));
    if (o.domain == Domain::Inside) t.set_double(i, v * 0.8);
    if (o.domain == Domain::AboveOne) t.set_double(i, 1.2 + std::abs(v));
    if (o.domain == Domain::SomeZeros && i % 3 == 0) t.set_double(i, 0.0);
  }
  return t;
}

namespace {

// Conv and ConvTranspose over 1-3 spatial dims: groups, strides, dilations, asymmetric pads,
// windows that leave the input's tail unread, output_padding, with and without bias; and
// ConvGradFilter, their filter gradient, itself differentiated.
void append_convolution_cases(std::vector<Case>& cases) {
  const auto any = [](Shape s) { return Operand{std::move(s)}; };
  using K = OpKind;
  const std::vector<Case> more = {
      {"Conv 1-D", K::Conv, {any(Shape{2, 2, 5}), any(Shape{3, 2, 3}), any(Shape{3})}},
      {"Conv 2-D strided padded",
       K::Conv,
       {any(Shape{1, 2, 5, 4}), any(Shape{2, 2, 2, 3}), any(Shape{2})},
       {{"strides", Ints{2, 1}}, {"pads", Ints{1, 0, 0, 2}}}},
      {"Conv 2-D grouped dilated",
       K::Conv,
       {any(Shape{2, 4, 5, 5}), any(Shape{6, 2, 2, 2})},
       {{"group", int64_t{2}}, {"dilations", Ints{2, 1}}, {"pads", Ints{0, 1, 1, 0}}}},
      {"Conv 2-D unread tail",
       K::Conv,
       {any(Shape{1, 1, 6, 7}), any(Shape{2, 1, 2, 2}), any(Shape{2})},
       {{"strides", Ints{3, 2}}, {"dilations", Ints{1, 2}}}},
      {"Conv depthwise",
       K::Conv,
       {any(Shape{2, 3, 4, 4}), any(Shape{3, 1, 3, 3}), any(Shape{3})},
       {{"group", int64_t{3}}, {"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}}},
      {"Conv depthwise one image",
       K::Conv,
       {any(Shape{1, 2, 5}), any(Shape{4, 1, 2})},
       {{"group", int64_t{2}}, {"strides", Ints{2}}, {"pads", Ints{0, 1}}}},
      {"Conv 3-D",
       K::Conv,
       {any(Shape{1, 2, 3, 4, 3}), any(Shape{2, 1, 2, 2, 2}), any(Shape{2})},
       {{"group", int64_t{2}}, {"strides", Ints{1, 2, 1}}, {"pads", Ints{0, 1, 1, 1, 0, 0}}}},
      {"Conv reading only padding",
       K::Conv,
       {any(Shape{1, 1, 1}), any(Shape{2, 1, 1}), any(Shape{2})},
       {{"strides", Ints{5}}, {"pads", Ints{3, 0}}}},
      {"ConvTranspose 1-D",
       K::ConvTranspose,
       {any(Shape{2, 2, 4}), any(Shape{2, 3, 3}), any(Shape{3})}},
      {"ConvTranspose output_padding past the stride",
       K::ConvTranspose,
       {any(Shape{1, 2, 3}), any(Shape{2, 1, 2})},
       {{"strides", Ints{2}}, {"output_padding", Ints{3}}, {"pads", Ints{1, 0}}}},
      {"ConvTranspose 2-D strided padded output_padding",
       K::ConvTranspose,
       {any(Shape{1, 2, 3, 3}), any(Shape{2, 2, 3, 2}), any(Shape{2})},
       {{"strides", Ints{2, 3}}, {"pads", Ints{1, 0, 0, 1}}, {"output_padding", Ints{1, 2}}}},
      {"ConvTranspose 2-D grouped dilated",
       K::ConvTranspose,
       {any(Shape{2, 4, 3, 2}), any(Shape{4, 1, 2, 2})},
       {{"group", int64_t{2}}, {"dilations", Ints{2, 1}}, {"pads", Ints{1, 0, 0, 1}}}},
      {"ConvTranspose 3-D",
       K::ConvTranspose,
       {any(Shape{1, 2, 2, 3, 2}), any(Shape{2, 1, 2, 1, 2}), any(Shape{2})},
       {{"group", int64_t{2}}, {"strides", Ints{2, 1, 1}}, {"pads", Ints{0, 0, 1, 1, 0, 0}}}},
      {"ConvGradFilter 2-D grouped strided padded",
       K::ConvGradFilter,
       {any(Shape{2, 4, 5, 4}), any(Shape{2, 2, 3, 3})},
       {{"kernel_shape", Ints{2, 3}},
        {"group", int64_t{2}},
        {"strides", Ints{2, 1}},
        {"pads", Ints{1, 0, 0, 1}}}},
      {"ConvGradFilter depthwise",
       K::ConvGradFilter,
       {any(Shape{1, 2, 5}), any(Shape{1, 2, 3})},
       {{"kernel_shape", Ints{2}},
        {"group", int64_t{2}},
        {"strides", Ints{2}},
        {"pads", Ints{0, 1}}}},
      {"ConvGradFilter fewer positions than fit",
       K::ConvGradFilter,
       {any(Shape{1, 2, 9}), any(Shape{1, 3, 2})},
       {{"kernel_shape", Ints{3}}, {"strides", Ints{2}}}},
  };
  cases.insert(cases.end(), more.begin(), more.end());
}

// Windowed pools over 1-3 spatial dims (overlapping windows, strides, dilations, asymmetric
// pads, ceil_mode, count_include_pad both ways, p = 1, 2, 3) and the global pools. MaxPool with
// its Indices output uses them (row-major) or recomputes them (storage_order 1).
void append_pooling_cases(std::vector<Case>& cases) {
  const auto any = [](Shape s) { return Operand{std::move(s)}; };
  const auto away = [](Shape s) { return Operand{std::move(s), Domain::AwayFromZero}; };
  using K = OpKind;
  const std::vector<Case> more = {
      {"MaxPool 2-D overlapping padded",
       K::MaxPool,
       {any(Shape{2, 2, 4, 5})},
       {{"kernel_shape", Ints{2, 3}}, {"pads", Ints{1, 0, 0, 1}}}},
      {"MaxPool 1-D strided dilated ceil",
       K::MaxPool,
       {any(Shape{1, 3, 8})},
       {{"kernel_shape", Ints{2}},
        {"strides", Ints{3}},
        {"dilations", Ints{2}},
        {"ceil_mode", int64_t{1}}}},
      {"MaxPool with Indices",
       K::MaxPool,
       {any(Shape{1, 2, 5, 4})},
       {{"kernel_shape", Ints{3, 2}}},
       2},
      {"MaxPool 3-D Indices column-major",
       K::MaxPool,
       {any(Shape{1, 1, 3, 4, 3})},
       {{"kernel_shape", Ints{2, 2, 2}}, {"strides", Ints{1, 2, 1}}, {"storage_order", int64_t{1}}},
       2},
      {"AveragePool 2-D padded excluded",
       K::AveragePool,
       {any(Shape{2, 2, 4, 5})},
       {{"kernel_shape", Ints{3, 2}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 0, 1, 1}}}},
      {"AveragePool 2-D padded included ceil",
       K::AveragePool,
       {any(Shape{1, 2, 5, 5})},
       {{"kernel_shape", Ints{2, 3}},
        {"strides", Ints{2, 2}},
        {"pads", Ints{0, 1, 1, 0}},
        {"ceil_mode", int64_t{1}},
        {"count_include_pad", int64_t{1}}}},
      {"AveragePool 1-D dilated ceil",
       K::AveragePool,
       {any(Shape{2, 1, 7})},
       {{"kernel_shape", Ints{3}},
        {"strides", Ints{2}},
        {"dilations", Ints{2}},
        {"ceil_mode", int64_t{1}}}},
      {"AveragePool 3-D",
       K::AveragePool,
       {any(Shape{1, 2, 3, 3, 4})},
       {{"kernel_shape", Ints{2, 2, 2}},
        {"pads", Ints{1, 0, 0, 0, 1, 1}},
        {"count_include_pad", int64_t{1}}}},
      {"LpPool p=1",
       K::LpPool,
       {away(Shape{1, 2, 4, 4})},
       {{"kernel_shape", Ints{2, 2}}, {"p", int64_t{1}}}},
      {"LpPool p=2 strided padded",
       K::LpPool,
       {away(Shape{2, 1, 5, 4})},
       {{"kernel_shape", Ints{3, 2}}, {"strides", Ints{2, 1}}, {"pads", Ints{1, 0, 0, 1}}}},
      {"LpPool p=3 1-D ceil",
       K::LpPool,
       {away(Shape{1, 2, 6})},
       {{"kernel_shape", Ints{2}},
        {"strides", Ints{2}},
        {"p", int64_t{3}},
        {"ceil_mode", int64_t{1}},
        {"pads", Ints{0, 1}}}},
      {"GlobalAveragePool", K::GlobalAveragePool, {any(Shape{2, 3, 2, 3})}},
      {"GlobalMaxPool", K::GlobalMaxPool, {any(Shape{2, 3, 4})}},
      {"GlobalMaxPool 3-D", K::GlobalMaxPool, {any(Shape{1, 2, 2, 2, 3})}},
      {"GlobalLpPool p=2", K::GlobalLpPool, {away(Shape{2, 2, 2, 3})}},
      {"GlobalLpPool p=3", K::GlobalLpPool, {away(Shape{1, 3, 5})}, {{"p", int64_t{3}}}},
  };
  cases.insert(cases.end(), more.begin(), more.end());
}

// Inference BatchNormalization (every input, statistics included), InstanceNormalization,
// MeanVarianceNormalization and LRN (odd, even and unit window sizes) over several ranks.
void append_normalization_cases(std::vector<Case>& cases) {
  const auto any = [](Shape s) { return Operand{std::move(s)}; };
  const auto pos = [](Shape s) { return Operand{std::move(s), Domain::Positive}; };
  using K = OpKind;
  const Shape c3{3};
  const std::vector<Case> more = {
      {"BatchNormalization",
       K::BatchNormalization,
       {any(Shape{2, 3, 4}), any(c3), any(c3), any(c3), pos(c3)},
       {{"epsilon", 1e-3}}},
      {"BatchNormalization 2-D",
       K::BatchNormalization,
       {any(Shape{4, 3}), any(c3), any(c3), any(c3), pos(c3)}},
      {"BatchNormalization 4-D",
       K::BatchNormalization,
       {any(Shape{2, 3, 2, 2}), any(c3), any(c3), any(c3), pos(c3)}},
      {"InstanceNormalization", K::InstanceNormalization, {any(Shape{2, 3, 4}), any(c3), any(c3)}},
      {"InstanceNormalization 4-D",
       K::InstanceNormalization,
       {any(Shape{1, 3, 2, 3}), any(c3), any(c3)},
       {{"epsilon", 1e-2}}},
      {"InstanceNormalization one element planes",
       K::InstanceNormalization,
       {any(Shape{2, 3}), any(c3), any(c3)}},
      {"MeanVarianceNormalization", K::MeanVarianceNormalization, {any(Shape{2, 3, 2, 2})}},
      {"MeanVarianceNormalization axis 1",
       K::MeanVarianceNormalization,
       {any(Shape{2, 3, 4})},
       {{"axes", Ints{1}}, {"epsilon", 1e-3}}},
      {"LRN size 3",
       K::LRN,
       {any(Shape{2, 5, 2, 2})},
       {{"size", int64_t{3}}, {"alpha", 0.5}, {"beta", 0.75}}},
      {"LRN size 2",
       K::LRN,
       {any(Shape{1, 4, 3})},
       {{"size", int64_t{2}}, {"alpha", 0.8}, {"beta", 1.5}, {"bias", 2.0}}},
      {"LRN size 1", K::LRN, {any(Shape{2, 3})}, {{"size", int64_t{1}}, {"alpha", 0.3}}},
      {"LRN size 4", K::LRN, {any(Shape{1, 6, 2})}, {{"size", int64_t{4}}, {"alpha", 0.6}}},
  };
  cases.insert(cases.end(), more.begin(), more.end());
}

// The losses (every reduction, weights, ignore_index inside and outside the classes, the log_prob
// output of SoftmaxCrossEntropyLoss) and the gathers, scatters (repeated indices, negative
// indices, batch_dims), TopK and Trilu.
void append_loss_and_indexing_cases(std::vector<Case>& cases) {
  const auto any = [](Shape s) { return Operand{std::move(s)}; };
  const auto labels = [](Shape s, int64_t range) {
    return Operand{std::move(s), Domain::NonNegative, false, DType::I64, range};
  };
  const auto indices = [](Shape s, int64_t range) {
    return Operand{std::move(s), Domain::Any, false, DType::I64, range};
  };
  const auto weights = [](Shape s) { return Operand{std::move(s), Domain::Positive, false}; };
  const auto zeros = [](Shape s) { return Operand{std::move(s), Domain::SomeZeros}; };
  const auto reduction = [](const char* r) { return std::string(r); };
  using K = OpKind;
  const std::vector<Case> more = {
      {"NegativeLogLikelihoodLoss mean",
       K::NegativeLogLikelihoodLoss,
       {any(Shape{3, 4}), labels(Shape{3}, 4)}},
      {"NegativeLogLikelihoodLoss mean weighted ignore",
       K::NegativeLogLikelihoodLoss,
       {any(Shape{2, 3, 2}), labels(Shape{2, 2}, 4), weights(Shape{3})},
       {{"ignore_index", Ints{3}}}},
      {"NegativeLogLikelihoodLoss sum",
       K::NegativeLogLikelihoodLoss,
       {any(Shape{2, 4, 3}), labels(Shape{2, 3}, 4)},
       {{"reduction", reduction("sum")}}},
      {"NegativeLogLikelihoodLoss none weighted ignore",
       K::NegativeLogLikelihoodLoss,
       {any(Shape{4, 3}), labels(Shape{4}, 3), weights(Shape{3})},
       {{"reduction", reduction("none")}, {"ignore_index", Ints{0}}}},
      {"SoftmaxCrossEntropyLoss mean",
       K::SoftmaxCrossEntropyLoss,
       {any(Shape{3, 4}), labels(Shape{3}, 4)}},
      {"SoftmaxCrossEntropyLoss sum weighted ignore",
       K::SoftmaxCrossEntropyLoss,
       {any(Shape{2, 3, 3}), labels(Shape{2, 3}, 4), weights(Shape{3})},
       {{"reduction", reduction("sum")}, {"ignore_index", Ints{3}}}},
      {"SoftmaxCrossEntropyLoss mean weighted",
       K::SoftmaxCrossEntropyLoss,
       {any(Shape{4, 3}), labels(Shape{4}, 3), weights(Shape{3})}},
      {"SoftmaxCrossEntropyLoss none",
       K::SoftmaxCrossEntropyLoss,
       {any(Shape{2, 4, 2}), labels(Shape{2, 2}, 4)},
       {{"reduction", reduction("none")}}},
      {"SoftmaxCrossEntropyLoss log_prob",
       K::SoftmaxCrossEntropyLoss,
       {any(Shape{3, 4}), labels(Shape{3}, 4)},
       {},
       2},
      {"SoftmaxCrossEntropyLoss both outputs weighted",
       K::SoftmaxCrossEntropyLoss,
       {any(Shape{2, 3, 2}), labels(Shape{2, 2}, 3), weights(Shape{3})},
       {},
       2,
       true},
      {"GatherElements repeated", K::GatherElements, {any(Shape{3, 4}), indices(Shape{5, 3}, 3)}},
      {"GatherElements last axis",
       K::GatherElements,
       {any(Shape{2, 3, 4}), indices(Shape{2, 2, 6}, 4)},
       {{"axis", int64_t{-1}}}},
      {"GatherND rows repeated", K::GatherND, {any(Shape{3, 4}), indices(Shape{5, 1}, 3)}},
      {"GatherND elements", K::GatherND, {any(Shape{2, 3, 4}), indices(Shape{4, 2}, 2)}},
      {"GatherND batch_dims",
       K::GatherND,
       {any(Shape{2, 3, 4}), indices(Shape{2, 5, 1}, 3)},
       {{"batch_dims", int64_t{1}}}},
      {"GatherND batch_dims 2",
       K::GatherND,
       {any(Shape{2, 2, 3}), indices(Shape{2, 2, 3, 1}, 3)},
       {{"batch_dims", int64_t{2}}}},
      {"ScatterElements overwriting",
       K::ScatterElements,
       {any(Shape{3, 4}), indices(Shape{3, 4}, 1), any(Shape{3, 4})}},
      {"ScatterElements add",
       K::ScatterElements,
       {any(Shape{2, 5}), indices(Shape{2, 6}, 2), any(Shape{2, 6})},
       {{"axis", int64_t{1}}, {"reduction", reduction("add")}}},
      {"ScatterElements overwriting 3-D",
       K::ScatterElements,
       {any(Shape{2, 3, 2}), indices(Shape{2, 4, 1}, 2), any(Shape{2, 4, 1})},
       {{"axis", int64_t{1}}}},
      {"ScatterElements mul with zeros",
       K::ScatterElements,
       {any(Shape{3, 4}), indices(Shape{3, 4}, 1), zeros(Shape{3, 4})},
       {{"reduction", reduction("mul")}}},
      {"ScatterElements mul",
       K::ScatterElements,
       {any(Shape{2, 4}), indices(Shape{2, 5}, 2), any(Shape{2, 5})},
       {{"axis", int64_t{1}}, {"reduction", reduction("mul")}}},
      {"ScatterND mul with zeros",
       K::ScatterND,
       {any(Shape{3, 2}), indices(Shape{5, 1}, 1), zeros(Shape{5, 2})},
       {{"reduction", reduction("mul")}}},
      {"ScatterND overwriting rows",
       K::ScatterND,
       {any(Shape{4, 3}), indices(Shape{5, 1}, 2), any(Shape{5, 3})}},
      {"ScatterND add",
       K::ScatterND,
       {any(Shape{3, 2, 2}), indices(Shape{4, 2}, 1), any(Shape{4, 2})},
       {{"reduction", reduction("add")}}},
      {"ScatterND overwriting elements",
       K::ScatterND,
       {any(Shape{2, 3}), indices(Shape{3, 2, 2}, 1), any(Shape{3, 2})}},
      {"TopK", K::TopK, {any(Shape{3, 5})}, {{"k", int64_t{3}}}, 2},
      {"TopK smallest axis 0",
       K::TopK,
       {any(Shape{4, 2, 3})},
       {{"k", int64_t{2}}, {"axis", int64_t{0}}, {"largest", int64_t{0}}},
       2},
      {"Trilu upper", K::Trilu, {any(Shape{3, 4})}, {{"k", int64_t{1}}}},
      {"Trilu lower", K::Trilu, {any(Shape{2, 3, 3})}, {{"upper", int64_t{0}}, {"k", int64_t{-1}}}},
  };
  cases.insert(cases.end(), more.begin(), more.end());
}

// Mod, CumSum, ReduceProd (zeros included), the block and sequence rearrangements, and the
// copies Slice (strided, reversed) and Pad (reflect, edge, cropping) route.
void append_rearranging_cases(std::vector<Case>& cases) {
  const auto any = [](Shape s) { return Operand{std::move(s)}; };
  const auto divisor = [](Shape s) { return Operand{std::move(s), Domain::AwayFromZero, false}; };
  const auto zeros = [](Shape s) { return Operand{std::move(s), Domain::SomeZeros}; };
  using K = OpKind;
  const std::vector<Case> more = {
      {"Mod", K::Mod, {any(Shape{2, 3}), divisor(Shape{3})}},
      {"Mod fmod broadcast A",
       K::Mod,
       {any(Shape{3}), divisor(Shape{2, 3})},
       {{"fmod", int64_t{1}}}},
      {"CumSum", K::CumSum, {any(Shape{2, 4})}, {{"axis", int64_t{1}}}},
      {"CumSum exclusive",
       K::CumSum,
       {any(Shape{5})},
       {{"axis", int64_t{0}}, {"exclusive", int64_t{1}}}},
      {"CumSum reverse",
       K::CumSum,
       {any(Shape{3, 2})},
       {{"axis", int64_t{0}}, {"reverse", int64_t{1}}}},
      {"CumSum exclusive reverse",
       K::CumSum,
       {any(Shape{2, 3, 2})},
       {{"axis", int64_t{-2}}, {"exclusive", int64_t{1}}, {"reverse", int64_t{1}}}},
      {"ReduceProd axis", K::ReduceProd, {any(Shape{2, 3, 2})}, {{"axes", Ints{1}}}},
      {"ReduceProd zeros",
       K::ReduceProd,
       {zeros(Shape{3, 4})},
       {{"axes", Ints{1}}, {"keepdims", int64_t{0}}}},
      {"ReduceProd all with zeros",
       K::ReduceProd,
       {zeros(Shape{2, 2})},
       {{"keepdims", int64_t{0}}}},
      {"ReduceProd two axes", K::ReduceProd, {any(Shape{2, 3, 2})}, {{"axes", Ints{0, 2}}}},
      {"DepthToSpace DCR", K::DepthToSpace, {any(Shape{1, 8, 2, 3})}, {{"blocksize", int64_t{2}}}},
      {"DepthToSpace CRD",
       K::DepthToSpace,
       {any(Shape{2, 4, 2, 2})},
       {{"blocksize", int64_t{2}}, {"mode", std::string("CRD")}}},
      {"SpaceToDepth", K::SpaceToDepth, {any(Shape{1, 2, 4, 6})}, {{"blocksize", int64_t{2}}}},
      {"ReverseSequence",
       K::ReverseSequence,
       {any(Shape{4, 3, 2}), Operand{Shape{3}, Domain::NonNegative, false, DType::I64, 4}}},
      {"ReverseSequence batch first",
       K::ReverseSequence,
       {any(Shape{2, 3}), Operand{Shape{2}, Domain::NonNegative, false, DType::I64, 4}},
       {{"batch_axis", int64_t{0}}, {"time_axis", int64_t{1}}}},
      {"Slice strided",
       K::Slice,
       {any(Shape{5, 6})},
       {{"starts", Ints{1, 0}}, {"ends", Ints{4, 6}}, {"steps", Ints{1, 2}}}},
      {"Slice reversed",
       K::Slice,
       {any(Shape{3, 4, 5})},
       {{"starts", Ints{0, 3}},
        {"ends", Ints{-1, 0}},
        {"axes", Ints{2, 1}},
        {"steps", Ints{2, -1}}}},
      {"Pad reflect",
       K::Pad,
       {any(Shape{3, 4})},
       {{"pads", Ints{2, 1, 1, 3}}, {"mode", std::string("reflect")}}},
      {"Pad edge",
       K::Pad,
       {any(Shape{2, 3})},
       {{"pads", Ints{1, 4, 2, 0}}, {"mode", std::string("edge")}}},
      {"Pad cropping", K::Pad, {any(Shape{3, 4})}, {{"pads", Ints{-1, 1, 0, -2}}}},
  };
  cases.insert(cases.end(), more.begin(), more.end());
}

// FusedMatMul with each epilogue activation, PermutedMatMul (attention's head split and merge, a
// broadcast batch, identity perms), Einsum (products, sums, outer products, ellipsis
// broadcasting, implicit output, three operands, diagonals), Det (batched, 1 x 1, singular: a zero
// column).
void append_linalg_cases(std::vector<Case>& cases) {
  const auto any = [](Shape s) { return Operand{std::move(s)}; };
  const auto eq = [](const char* e) { return Attributes{{"equation", std::string(e)}}; };
  const auto act = [](const char* a) { return Attributes{{"activation", std::string(a)}}; };
  const auto perms = [](Ints a, Ints b, Ints y) {
    return Attributes{{"perm_a", std::move(a)}, {"perm_b", std::move(b)}, {"perm_y", std::move(y)}};
  };
  using K = OpKind;
  const std::vector<Case> more = {
      {"FusedMatMul", K::FusedMatMul, {any(Shape{2, 3}), any(Shape{3, 4}), any(Shape{4})}},
      {"FusedMatMul relu batched",
       K::FusedMatMul,
       {any(Shape{2, 2, 3}), any(Shape{3, 4}), any(Shape{4})},
       act("relu")},
      {"FusedMatMul gelu bias_first",
       K::FusedMatMul,
       {any(Shape{3, 2}), any(Shape{2, 3}), any(Shape{3})},
       {{"activation", std::string("gelu")}, {"bias_first", int64_t{1}}}},
      {"FusedMatMul gelu_tanh 1-D A",
       K::FusedMatMul,
       {any(Shape{3}), any(Shape{3, 2}), any(Shape{2})},
       act("gelu_tanh")},
      {"PermutedMatMul attention scores",
       K::PermutedMatMul,
       {any(Shape{2, 3, 2, 2}), any(Shape{2, 3, 2, 2})},
       perms({0, 2, 1, 3}, {0, 2, 3, 1}, {0, 1, 2, 3})},
      {"PermutedMatMul heads merged",
       K::PermutedMatMul,
       {any(Shape{2, 2, 3, 3}), any(Shape{2, 3, 2, 2})},
       perms({0, 1, 2, 3}, {0, 2, 1, 3}, {0, 2, 1, 3})},
      {"PermutedMatMul broadcast batch",
       K::PermutedMatMul,
       {any(Shape{3, 2, 2}), any(Shape{3, 2})},
       perms({2, 0, 1}, {1, 0}, {1, 0, 2})},
      {"Einsum matmul", K::Einsum, {any(Shape{2, 3}), any(Shape{3, 4})}, eq("ij,jk->ik")},
      {"Einsum batched", K::Einsum, {any(Shape{2, 2, 3}), any(Shape{2, 3, 2})}, eq("bij,bjk->bik")},
      {"Einsum dot", K::Einsum, {any(Shape{4}), any(Shape{4})}, eq("i,i->")},
      {"Einsum sum all", K::Einsum, {any(Shape{2, 3})}, eq("ij->")},
      {"Einsum transpose", K::Einsum, {any(Shape{2, 3, 4})}, eq("ijk->kij")},
      {"Einsum outer", K::Einsum, {any(Shape{2, 3}), any(Shape{2})}, eq("ij,k->ijk")},
      {"Einsum label of one operand", K::Einsum, {any(Shape{2, 3}), any(Shape{3})}, eq("ij,j->j")},
      {"Einsum implicit", K::Einsum, {any(Shape{2, 3}), any(Shape{3, 2})}, eq("ij,jk")},
      {"Einsum ellipsis broadcast",
       K::Einsum,
       {any(Shape{2, 1, 2, 3}), any(Shape{3, 3, 2})},
       eq("...ij,...jk->...ik")},
      {"Einsum three operands",
       K::Einsum,
       {any(Shape{2, 3}), any(Shape{3, 2}), any(Shape{2, 4})},
       eq("ij,jk,kl->il")},
      {"Einsum diagonal", K::Einsum, {any(Shape{3, 3})}, eq("ii->i")},
      {"Einsum trace", K::Einsum, {any(Shape{3, 3})}, eq("ii")},
      {"Einsum diagonal product",
       K::Einsum,
       {any(Shape{2, 2, 3}), any(Shape{3, 2})},
       eq("iij,jk->ik")},
      {"Einsum batched diagonals",
       K::Einsum,
       {any(Shape{2, 3, 3}), any(Shape{2, 3, 4})},
       eq("bii,bij->bj")},
      {"Det", K::Det, {any(Shape{3, 3})}},
      {"Det batched", K::Det, {any(Shape{2, 2, 4, 4})}},
      {"Det 2x2", K::Det, {any(Shape{3, 2, 2})}},
      {"Det 1x1", K::Det, {any(Shape{2, 1, 1})}},
      {"Det singular", K::Det, {Operand{Shape{3, 3}, Domain::SomeZeros}}},  // column 0 is 0
  };
  cases.insert(cases.end(), more.begin(), more.end());
}

// Resize in each mode and coordinate transform (up and down, an output axis of 1, exclude_outside,
// explicit scales, roi with extrapolated outputs, antialias) and GridSample in each mode and
// padding mode, with grid points inside and beyond [-1, 1], on planes and volumes.
void append_resampling_cases(std::vector<Case>& cases) {
  const auto any = [](Shape s) { return Operand{std::move(s)}; };
  const auto grid = [](Shape s, Domain d) { return Operand{std::move(s), d, false}; };
  const auto resize = [](Ints sizes, const char* mode, const char* transform) {
    return Attributes{{"sizes", std::move(sizes)},
                      {"mode", std::string(mode)},
                      {"coordinate_transformation_mode", std::string(transform)}};
  };
  const auto with = [](Attributes a, const std::string& name, AttrValue v) {
    a[name] = std::move(v);
    return a;
  };
  const auto sample = [](const char* mode, const char* padding, int64_t align_corners) {
    return Attributes{{"mode", std::string(mode)},
                      {"padding_mode", std::string(padding)},
                      {"align_corners", align_corners}};
  };
  using K = OpKind;
  const Shape points{1, 2, 3, 2};
  const std::vector<Case> more = {
      {"Resize nearest up",
       K::Resize,
       {any(Shape{1, 1, 2, 3})},
       resize({1, 1, 4, 5}, "nearest", "half_pixel")},
      {"Resize nearest down floor asymmetric",
       K::Resize,
       {any(Shape{1, 2, 4, 4})},
       with(resize({1, 2, 2, 3}, "nearest", "asymmetric"), "nearest_mode", std::string("floor"))},
      {"Resize nearest tf_half_pixel ceil",
       K::Resize,
       {any(Shape{2, 5})},
       with(resize({2, 3}, "nearest", "tf_half_pixel_for_nearest"), "nearest_mode",
            std::string("round_prefer_ceil"))},
      {"Resize linear",
       K::Resize,
       {any(Shape{1, 1, 3, 4})},
       resize({1, 1, 5, 3}, "linear", "half_pixel")},
      {"Resize linear align_corners",
       K::Resize,
       {any(Shape{2, 3})},
       resize({4, 5}, "linear", "align_corners")},
      {"Resize linear pytorch_half_pixel to 1",
       K::Resize,
       {any(Shape{1, 2, 3, 3})},
       resize({1, 2, 1, 5}, "linear", "pytorch_half_pixel")},
      {"Resize linear scales",
       K::Resize,
       {any(Shape{3, 2})},
       with(resize({7, 2}, "linear", "asymmetric"), "scales", std::vector<double>{2.4, 1.0})},
      {"Resize cubic exclude_outside",
       K::Resize,
       {any(Shape{1, 1, 4, 4})},
       with(resize({1, 1, 6, 3}, "cubic", "half_pixel"), "exclude_outside", int64_t{1})},
      {"Resize cubic a",
       K::Resize,
       {any(Shape{5, 3})},
       with(resize({3, 7}, "cubic", "asymmetric"), "cubic_coeff_a", -0.5)},
      {"Resize linear antialias",
       K::Resize,
       {any(Shape{1, 7, 5})},
       with(resize({1, 3, 9}, "linear", "half_pixel"), "antialias", int64_t{1})},
      {"Resize cubic antialias exclude_outside",
       K::Resize,
       {any(Shape{2, 9})},
       with(with(resize({2, 4}, "cubic", "asymmetric"), "antialias", int64_t{1}), "exclude_outside",
            int64_t{1})},
      {"Resize tf_crop_and_resize extrapolated",
       K::Resize,
       {any(Shape{1, 4, 4})},
       with(resize({1, 3, 4}, "linear", "tf_crop_and_resize"), "roi",
            std::vector<double>{0, 0.2, -0.3, 1, 0.7, 1.2})},
      {"GridSample bilinear zeros",
       K::GridSample,
       {any(Shape{1, 2, 3, 4}), grid(points, Domain::Any)},
       sample("bilinear", "zeros", 0)},
      {"GridSample bilinear border corners",
       K::GridSample,
       {any(Shape{2, 1, 3, 3}), grid(Shape{2, 2, 2, 2}, Domain::Positive)},
       sample("bilinear", "border", 1)},
      {"GridSample nearest reflection",
       K::GridSample,
       {any(Shape{1, 2, 3, 4}), grid(points, Domain::Positive)},
       sample("nearest", "reflection", 0)},
      {"GridSample bicubic zeros",
       K::GridSample,
       {any(Shape{1, 1, 4, 3}), grid(points, Domain::Any)},
       sample("bicubic", "zeros", 0)},
      {"GridSample nearest border far outside",
       K::GridSample,
       {any(Shape{1, 1, 3, 3}), grid(points, Domain::AboveOne)},
       sample("nearest", "border", 0)},
      {"GridSample bilinear reflection corners far outside",
       K::GridSample,
       {any(Shape{1, 1, 3, 4}), grid(points, Domain::AboveOne)},
       sample("bilinear", "reflection", 1)},
      {"GridSample bicubic zeros far outside",
       K::GridSample,
       {any(Shape{1, 1, 3, 3}), grid(points, Domain::AboveOne)},
       sample("bicubic", "zeros", 1)},
      {"GridSample bicubic border",
       K::GridSample,
       {any(Shape{1, 1, 3, 4}), grid(points, Domain::Any)},
       sample("bicubic", "border", 0)},
      {"GridSample one column reflection corners",
       K::GridSample,
       {any(Shape{1, 2, 3, 1}), grid(points, Domain::Any)},
       sample("bilinear", "reflection", 1)},
      {"GridSample bicubic reflection corners",
       K::GridSample,
       {any(Shape{1, 2, 3, 3}), grid(points, Domain::Positive)},
       sample("bicubic", "reflection", 1)},
      {"GridSample trilinear zeros",
       K::GridSample,
       {any(Shape{1, 2, 3, 4, 3}), grid(Shape{1, 2, 2, 2, 3}, Domain::Any)},
       sample("bilinear", "zeros", 0)},
      {"GridSample trilinear reflection corners far outside",
       K::GridSample,
       {any(Shape{2, 1, 2, 3, 3}), grid(Shape{2, 1, 3, 2, 3}, Domain::AboveOne)},
       sample("bilinear", "reflection", 1)},
      {"GridSample nearest volume border",
       K::GridSample,
       {any(Shape{1, 2, 3, 2, 4}), grid(Shape{1, 2, 2, 2, 3}, Domain::Any)},
       sample("nearest", "border", 0)},
  };
  cases.insert(cases.end(), more.begin(), more.end());
}

}  // namespace

std::vector<Case> rule_cases() {
  const Shape m23{2, 3};
  const auto any = [](Shape s) { return Operand{std::move(s)}; };
  const auto pos = [](Shape s) { return Operand{std::move(s), Domain::Positive}; };
  const auto away = [](Shape s) { return Operand{std::move(s), Domain::AwayFromZero}; };
  const auto inside = [](Shape s) { return Operand{std::move(s), Domain::Inside}; };
  const auto above_one = [](Shape s) { return Operand{std::move(s), Domain::AboveOne}; };
  using K = OpKind;
  std::vector<Case> cases = {
      {"Add broadcast", K::Add, {any(m23), any(Shape{3})}},
      {"Sub broadcast", K::Sub, {any(Shape{2, 1}), any(m23)}},
      {"Mul broadcast", K::Mul, {any(m23), any(Shape{1, 3})}},
      {"Div", K::Div, {any(m23), away(Shape{3})}},
      {"Pow", K::Pow, {pos(m23), any(m23)}},
      {"Neg", K::Neg, {any(m23)}},
      {"Abs", K::Abs, {away(m23)}},
      {"Sqrt", K::Sqrt, {pos(m23)}},
      {"Reciprocal", K::Reciprocal, {away(m23)}},
      {"Exp", K::Exp, {any(m23)}},
      {"Log", K::Log, {pos(m23)}},
      {"Sin", K::Sin, {any(m23)}},
      {"Cos", K::Cos, {any(m23)}},
      {"Where", K::Where, {Operand{m23, Domain::Any, false, DType::Bool}, any(m23), any(Shape{3})}},
      {"Clip", K::Clip, {away(m23)}, {{"min", -0.5}, {"max", 0.6}}},
      {"Tanh", K::Tanh, {any(m23)}},
      {"Sigmoid", K::Sigmoid, {any(m23)}},
      {"Relu", K::Relu, {away(m23)}},
      {"LeakyRelu", K::LeakyRelu, {away(m23)}, {{"alpha", 0.2}}},
      {"Erf", K::Erf, {any(m23)}},
      {"Gelu", K::Gelu, {any(m23)}},
      {"Gelu tanh", K::Gelu, {any(m23)}, {{"approximate", std::string("tanh")}}},
      {"Softplus", K::Softplus, {any(m23)}},
      {"MatMul", K::MatMul, {any(Shape{2, 3}), any(Shape{3, 4})}},
      {"MatMul batched broadcast", K::MatMul, {any(Shape{2, 2, 3}), any(Shape{3, 2})}},
      {"MatMul batch both", K::MatMul, {any(Shape{2, 1, 2, 3}), any(Shape{3, 3, 2})}},
      {"MatMul 1-D A", K::MatMul, {any(Shape{3}), any(Shape{2, 3, 4})}},
      {"MatMul 1-D B", K::MatMul, {any(Shape{2, 3}), any(Shape{3})}},
      {"MatMul 1-D both", K::MatMul, {any(Shape{3}), any(Shape{3})}},
      {"Gemm",
       K::Gemm,
       {any(Shape{2, 3}), any(Shape{3, 4}), any(Shape{4})},
       {{"alpha", 0.5}, {"beta", 2.0}}},
      {"Gemm transA",
       K::Gemm,
       {any(Shape{3, 2}), any(Shape{3, 4}), any(Shape{2, 1})},
       {{"transA", int64_t{1}}}},
      {"Gemm transB", K::Gemm, {any(Shape{2, 3}), any(Shape{4, 3})}, {{"transB", int64_t{1}}}},
      {"Gemm both",
       K::Gemm,
       {any(Shape{3, 2}), any(Shape{4, 3}), any(Shape{2, 4})},
       {{"transA", int64_t{1}}, {"transB", int64_t{1}}, {"alpha", -1.5}}},
      {"ReduceSum axis",
       K::ReduceSum,
       {any(Shape{2, 3, 2})},
       {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}}},
      {"ReduceSum all", K::ReduceSum, {any(m23)}},
      {"ReduceMean",
       K::ReduceMean,
       {any(Shape{2, 3, 2})},
       {{"axes", std::vector<int64_t>{0, -1}}, {"keepdims", int64_t{1}}}},
      {"ReduceSumSquare", K::ReduceSumSquare, {any(m23)}, {{"axes", std::vector<int64_t>{1}}}},
      {"Softmax", K::Softmax, {any(m23)}, {{"axis", int64_t{-1}}}},
      {"LogSoftmax", K::LogSoftmax, {any(m23)}, {{"axis", int64_t{0}}}},
      {"LayerNormalization",
       K::LayerNormalization,
       {any(Shape{2, 4}), any(Shape{4}), any(Shape{4})},
       {{"axis", int64_t{-1}}}},
      {"LayerNormalization 2 axes",
       K::LayerNormalization,
       {any(Shape{2, 2, 3}), any(Shape{2, 3})},
       {{"axis", int64_t{1}}}},
      {"LayerNormalization Mean and InvStdDev read",
       K::LayerNormalization,
       {any(Shape{3, 2, 4}), any(Shape{4}), any(Shape{4})},
       {{"axis", int64_t{-1}}, {"epsilon", 1e-3}},
       3,
       true},
      {"LayerNormalization InvStdDev alone",
       K::LayerNormalization,
       {any(Shape{2, 5}), any(Shape{5})},
       {{"axis", int64_t{1}}},
       3},
      {"Reshape", K::Reshape, {any(m23)}, {{"shape", std::vector<int64_t>{3, 2}}}},
      {"Flatten", K::Flatten, {any(Shape{2, 3, 2})}, {{"axis", int64_t{2}}}},
      {"Squeeze", K::Squeeze, {any(Shape{2, 1, 3})}, {{"axes", std::vector<int64_t>{1}}}},
      {"Unsqueeze", K::Unsqueeze, {any(m23)}, {{"axes", std::vector<int64_t>{0}}}},
      {"Identity", K::Identity, {any(m23)}},
      {"Transpose", K::Transpose, {any(Shape{2, 3, 4})}, {{"perm", std::vector<int64_t>{2, 0, 1}}}},
      {"Transpose default", K::Transpose, {any(m23)}},
      {"Expand", K::Expand, {any(Shape{3, 1})}, {{"shape", std::vector<int64_t>{2, 3, 4}}}},
      {"Tan", K::Tan, {inside(m23)}},
      {"Asin", K::Asin, {inside(m23)}},
      {"Acos", K::Acos, {inside(m23)}},
      {"Atan", K::Atan, {any(m23)}},
      {"Sinh", K::Sinh, {any(m23)}},
      {"Cosh", K::Cosh, {any(m23)}},
      {"Asinh", K::Asinh, {any(m23)}},
      {"Acosh", K::Acosh, {above_one(m23)}},
      {"Atanh", K::Atanh, {inside(m23)}},
      {"Max", K::Max, {any(m23), any(Shape{3}), any(Shape{2, 1})}},
      {"Min", K::Min, {any(m23), any(Shape{3})}},
      {"Cast to f64", K::Cast, {any(m23)}, {{"to", std::string("f64")}}},
      {"Softsign", K::Softsign, {any(m23)}},
      {"Elu", K::Elu, {away(m23)}, {{"alpha", 0.7}}},
      {"Selu", K::Selu, {away(m23)}},
      {"Celu", K::Celu, {away(m23)}, {{"alpha", 1.5}}},
      {"HardSigmoid", K::HardSigmoid, {Operand{Shape{2, 4}, Domain::Any}}, {{"alpha", 2.0}}},
      {"HardSwish", K::HardSwish, {any(Shape{2, 4})}},
      {"ThresholdedRelu", K::ThresholdedRelu, {away(m23)}, {{"alpha", 0.1}}},
      {"Shrink", K::Shrink, {away(m23)}, {{"lambd", 0.1}, {"bias", 0.3}}},
      {"PRelu", K::PRelu, {away(Shape{2, 3}), any(Shape{3})}},
      {"ReduceL1", K::ReduceL1, {away(m23)}, {{"axes", std::vector<int64_t>{0}}}},
      {"ReduceL2", K::ReduceL2, {any(m23)}, {{"axes", std::vector<int64_t>{1}}}},
      {"ReduceLogSumExp", K::ReduceLogSumExp, {any(m23)}, {{"axes", std::vector<int64_t>{1}}}},
      {"ReduceMax", K::ReduceMax, {any(Shape{2, 3, 2})}, {{"axes", std::vector<int64_t>{1}}}},
      {"ReduceMin", K::ReduceMin, {any(m23)}, {{"keepdims", int64_t{0}}}},
      {"Split",
       K::Split,
       {any(Shape{2, 5})},
       {{"axis", int64_t{1}}, {"split", std::vector<int64_t>{2, 3}}},
       2},
      {"Concat",
       K::Concat,
       {any(Shape{2, 1}), any(Shape{2, 3}), any(Shape{2, 2})},
       {{"axis", int64_t{1}}}},
  };
  append_convolution_cases(cases);
  append_pooling_cases(cases);
  append_normalization_cases(cases);
  append_loss_and_indexing_cases(cases);
  append_rearranging_cases(cases);
  append_linalg_cases(cases);
  append_resampling_cases(cases);
  return cases;
}

}  // namespace volta::autograd_cases
