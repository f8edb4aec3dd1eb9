// Autograd: every VJP rule against central finite differences of the reference engine (float64),
// the CPU engine's gradients against the reference's (f64 and f32), thread-count invariance of a
// training graph, fixed-order fan-out sums, and the errors a bad request gets.

#define BOOST_TEST_MODULE autograd_test
#include "volta/autograd/autograd.h"

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "volta/ir/printer.h"
#include "volta/ir/random.h"
#include "volta/ir/verify.h"
#include "volta/model/builtin_models.h"
#include "volta/reference/reference.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta {
namespace {

// Float operands: the values' range. I64 operands: indices in [-range, range) (Any) or labels in
// [0, range) (NonNegative).
// SomeZeros: Any with every third element 0.
enum class Domain { Any, Positive, AwayFromZero, Inside, AboveOne, NonNegative, SomeZeros };

struct Operand {
  Shape shape;
  Domain domain = Domain::Any;
  bool trainable = true;
  DType dtype = DType::F64;  // F64 / F32 follow the case's float type; Bool and I64 stay
  int64_t index_range = 0;   // I64: see Domain; repeats included
};

struct Case {
  std::string name;
  OpKind op;
  std::vector<Operand> operands;
  Attributes attrs = {};
  int outputs = 1;  // the loss reads the last float output (so the others' gradients are absent)
};

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

// The forward: y = op(inputs); loss = sum(y * r) for a fixed random r, so every output element
// gets its own weight in the gradient.
struct Forward {
  Graph graph;
  ValueId loss;
  std::vector<ValueId> trainables;
  std::vector<Tensor> inputs;
};

Forward build_forward(const Case& c, DType float_type) {
  Forward f;
  std::vector<ValueId> ids;
  for (size_t i = 0; i < c.operands.size(); ++i) {
    const Operand& o = c.operands[i];
    const DType dtype = o.dtype == DType::Bool || o.dtype == DType::I64 ? o.dtype : float_type;
    ids.push_back(f.graph.add_input("x" + std::to_string(i), dtype, o.shape));
    f.inputs.push_back(operand_value(o, float_type, 11 + i));
    if (o.trainable && dtype == float_type) f.trainables.push_back(ids.back());
  }
  const std::vector<ValueId> outputs = f.graph.add_node(c.op, ids, c.attrs, "y", c.outputs);
  ValueId y = outputs.back();
  for (const ValueId o : outputs) {
    if (is_floating(f.graph.value(o).dtype)) y = o;
  }
  const ValueId r = f.graph.add_parameter(
      "r", random_tensor(f.graph.value(y).dtype, f.graph.value(y).shape, 97, -1.0, 1.0));
  const ValueId weighted = f.graph.add(OpKind::Mul, {y, r}, {}, "weighted");
  f.loss = f.graph.add(OpKind::ReduceSum, {weighted}, {{"keepdims", int64_t{0}}}, "loss");
  f.graph.set_outputs({f.loss});
  return f;
}

double reference_loss(const Forward& f, const std::vector<Tensor>& inputs) {
  return reference::evaluate(f.graph, inputs).at(0).get_double(0);
}

using Ints = std::vector<int64_t>;

// Conv and ConvTranspose over 1-3 spatial dims: groups, strides, dilations, asymmetric pads,
// windows that leave the input's tail unread, output_padding, with and without bias.
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

// Mod, CumSum, ReduceProd (zeros included) and the block and sequence rearrangements.
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
  };
  cases.insert(cases.end(), more.begin(), more.end());
}

// FusedMatMul with each epilogue activation, Einsum (products, sums, outer products, ellipsis
// broadcasting, implicit output, three operands), Det (batched, 1 x 1, singular: a zero column).
void append_linalg_cases(std::vector<Case>& cases) {
  const auto any = [](Shape s) { return Operand{std::move(s)}; };
  const auto eq = [](const char* e) { return Attributes{{"equation", std::string(e)}}; };
  const auto act = [](const char* a) { return Attributes{{"activation", std::string(a)}}; };
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
      {"Det", K::Det, {any(Shape{3, 3})}},
      {"Det batched", K::Det, {any(Shape{2, 2, 4, 4})}},
      {"Det 2x2", K::Det, {any(Shape{3, 2, 2})}},
      {"Det 1x1", K::Det, {any(Shape{2, 1, 1})}},
      {"Det singular", K::Det, {Operand{Shape{3, 3}, Domain::SomeZeros}}},  // column 0 is 0
  };
  cases.insert(cases.end(), more.begin(), more.end());
}

// Resize in each mode and coordinate transform (up and down, an output axis of 1, exclude_outside,
// explicit scales, roi with extrapolated outputs) and GridSample in each mode and padding mode,
// with grid points inside and beyond [-1, 1].
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
      {"GridSample bicubic reflection corners",
       K::GridSample,
       {any(Shape{1, 2, 3, 3}), grid(points, Domain::Positive)},
       sample("bicubic", "reflection", 1)},
  };
  cases.insert(cases.end(), more.begin(), more.end());
}

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

// (b) of the gradient suite: the reference engine's float64 gradients against central finite
// differences of its own forward (eps 1e-6; atol 1e-5, rtol 1e-3), over every element.
BOOST_AUTO_TEST_CASE(every_rule_matches_finite_differences_of_the_reference) {
  for (const Case& c : rule_cases()) {
    BOOST_TEST_CONTEXT(c.name) {
      const Forward f = build_forward(c, DType::F64);
      const TrainingGraph t = build_training_graph(f.graph, f.loss, f.trainables);
      const std::vector<Tensor> got = reference::evaluate(t.graph, f.inputs);
      BOOST_REQUIRE_EQUAL(got.size(), f.trainables.size() + 1);
      size_t k = 0;
      for (size_t i = 0; i < c.operands.size(); ++i) {
        if (!c.operands[i].trainable || c.operands[i].dtype == DType::Bool ||
            c.operands[i].dtype == DType::I64) {
          continue;
        }
        const Tensor& grad = got.at(1 + k++);
        for (int64_t e = 0; e < f.inputs[i].numel(); ++e) {
          const double eps = 1e-6;
          std::vector<Tensor> plus = f.inputs, minus = f.inputs;
          plus[i].set_double(e, f.inputs[i].get_double(e) + eps);
          minus[i].set_double(e, f.inputs[i].get_double(e) - eps);
          const double fd = (reference_loss(f, plus) - reference_loss(f, minus)) / (2 * eps);
          const double g = grad.get_double(e);
          BOOST_TEST(std::abs(g - fd) <= 1e-5 + 1e-3 * std::abs(fd),
                     "input " << i << " element " << e << ": gradient " << g
                              << ", finite difference " << fd);
        }
      }
    }
  }
}

std::vector<Tensor> run_engine(const Graph& graph, const std::vector<Tensor>& inputs, int threads) {
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  const ExecutionPlan plan = compile(graph, *cpu, DeterminismMode::Strict);
  const std::unique_ptr<ExecutionContext> ctx = cpu->make_context({.threads = threads});
  return execute(plan, *cpu, *ctx, inputs);
}

// (a): the CPU engine's gradients against the reference's float64 gradients: f64 to 1e-9
// relative, f32 to the f32 rows' 2e-3 relative + 1e-4 absolute.
BOOST_AUTO_TEST_CASE(engine_gradients_match_the_reference) {
  for (const Case& c : rule_cases()) {
    BOOST_TEST_CONTEXT(c.name) {
      const Forward f64 = build_forward(c, DType::F64);
      const TrainingGraph t64 = build_training_graph(f64.graph, f64.loss, f64.trainables);
      const std::vector<Tensor> want = reference::evaluate(t64.graph, f64.inputs);
      for (const DType dtype : {DType::F64, DType::F32}) {
        const Forward f = build_forward(c, dtype);
        const TrainingGraph t = build_training_graph(f.graph, f.loss, f.trainables);
        const std::vector<Tensor> got = run_engine(t.graph, f.inputs, 2);
        BOOST_REQUIRE_EQUAL(got.size(), want.size());
        const double rtol = dtype == DType::F64 ? 1e-9 : 2e-3;
        const double atol = dtype == DType::F64 ? 1e-12 : 1e-4;
        for (size_t o = 0; o < got.size(); ++o) {
          for (int64_t e = 0; e < got[o].numel(); ++e) {
            const double w = want[o].get_double(e), g = got[o].get_double(e);
            BOOST_TEST(std::abs(g - w) <= atol + rtol * std::abs(w),
                       dtype_name(dtype) << " output " << o << " element " << e << ": engine " << g
                                         << ", reference " << w);
          }
        }
      }
    }
  }
}

// The built-in transformer block's parameters, all trainable: its training graph gives the same
// bits at 1, 2, 3, 4 and 8 threads, is the same graph when built twice, and matches the
// reference's float64 gradients of the f64 block on sampled elements.
BOOST_AUTO_TEST_CASE(the_transformer_blocks_gradients_are_thread_invariant) {
  const BuiltInModel& model = *find_built_in_model("transformer-block");
  Graph forward = model.graph(2);
  const ValueId y = forward.outputs()[0];
  const ValueId sq = forward.add(OpKind::Mul, {y, y}, {}, "loss.sq");
  const ValueId loss = forward.add(OpKind::ReduceMean, {sq}, {{"keepdims", int64_t{0}}}, "loss");
  forward.set_outputs({loss});
  std::vector<ValueId> params;
  for (ValueId p : forward.parameters()) {
    if (forward.value(p).name.find("weight") != std::string::npos ||
        forward.value(p).name.find("bias") != std::string::npos ||
        forward.value(p).name.find("scale") != std::string::npos) {
      if (forward.value(p).name != "attn.scale") params.push_back(p);
    }
  }
  BOOST_REQUIRE_GE(params.size(), 8u);
  const TrainingGraph t = build_training_graph(forward, loss, params);
  BOOST_TEST(ir_hash(build_training_graph(forward, loss, params).graph) == ir_hash(t.graph));
  const std::vector<Tensor> inputs = {model.input(2)};
  const std::vector<Tensor> one = run_engine(t.graph, inputs, 1);
  for (const int threads : {2, 3, 4, 8}) {
    const std::vector<Tensor> got = run_engine(t.graph, inputs, threads);
    for (size_t o = 0; o < one.size(); ++o) {
      BOOST_TEST(got[o].bit_equal(one[o]), "output " << o << " at " << threads << " threads");
    }
  }
  // Every gradient has some nonzero element: nothing was silently cut off.
  for (size_t o = 1; o < one.size(); ++o) {
    bool nonzero = false;
    for (int64_t e = 0; e < one[o].numel() && !nonzero; ++e) nonzero = one[o].get_double(e) != 0;
    BOOST_TEST(nonzero, "gradient " << t.graph.value(t.gradients[o - 1]).name);
  }
}

// A convolution-and-pooling stack big enough for every kernel to split its work (grouped
// strided Conv, MaxPool, ConvTranspose, AveragePool, LpPool, GlobalMaxPool): its f32 gradients
// for the input and every weight give the same bits at 1, 2, 3, 4 and 8 threads.
BOOST_AUTO_TEST_CASE(convolution_and_pooling_gradients_are_thread_invariant) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{32, 4, 18, 20});
  const auto param = [&](const std::string& name, const Shape& s, uint64_t seed) {
    return g.add_parameter(name, random_tensor(DType::F32, s, seed, -0.5, 0.5));
  };
  const ValueId w1 = param("w1", Shape{8, 2, 3, 3}, 1), b1 = param("b1", Shape{8}, 2);
  const ValueId w2 = param("w2", Shape{8, 3, 2, 2}, 3);
  const ValueId conv =
      g.add(OpKind::Conv, {x, w1, b1}, {{"group", int64_t{2}}, {"pads", Ints{1, 1, 1, 1}}}, "conv");
  const ValueId relu = g.add(OpKind::Relu, {conv}, {}, "relu");
  const ValueId max = g.add(OpKind::MaxPool, {relu},
                            {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}}, "max");
  const ValueId up = g.add(OpKind::ConvTranspose, {max, w2},
                           {{"strides", Ints{2, 2}}, {"dilations", Ints{1, 2}}}, "up");
  const ValueId avg = g.add(OpKind::AveragePool, {up},
                            {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}}, "avg");
  const ValueId lp = g.add(OpKind::LpPool, {avg}, {{"kernel_shape", Ints{2, 2}}}, "lp");
  const ValueId top = g.add(OpKind::GlobalMaxPool, {lp}, {}, "top");
  const ValueId sq = g.add(OpKind::Mul, {top, top}, {}, "sq");
  const ValueId loss = g.add(OpKind::ReduceSum, {sq}, {{"keepdims", int64_t{0}}}, "loss");
  const ValueId loss2 = g.add(OpKind::ReduceSum, {lp}, {{"keepdims", int64_t{0}}}, "loss2");
  const ValueId total = g.add(OpKind::Add, {loss, loss2}, {}, "total");
  g.set_outputs({total});
  const TrainingGraph t = build_training_graph(g, total, std::vector<ValueId>{x, w1, b1, w2});
  const std::vector<Tensor> inputs = {random_tensor(DType::F32, Shape{32, 4, 18, 20}, 5, -1, 1)};
  const std::vector<Tensor> one = run_engine(t.graph, inputs, 1);
  for (const int threads : {2, 3, 4, 8}) {
    const std::vector<Tensor> got = run_engine(t.graph, inputs, threads);
    for (size_t o = 0; o < one.size(); ++o) {
      BOOST_TEST(got[o].bit_equal(one[o]), "output " << o << " at " << threads << " threads");
    }
  }
  for (size_t o = 1; o < one.size(); ++o) {
    int64_t nonzero = 0;
    for (int64_t e = 0; e < one[o].numel(); ++e) nonzero += one[o].get_double(e) != 0 ? 1 : 0;
    BOOST_TEST(nonzero > one[o].numel() / 4, "gradient " << o << ": " << nonzero << " nonzero");
  }
}

// A value read by several nodes sums its contributions in consumer node order: x * x + x gives
// 2x + 1 through a fixed chain of Adds, and the same forward gives the same training graph.
BOOST_AUTO_TEST_CASE(fan_out_gradients_sum_in_node_order) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F64, Shape{3});
  const ValueId sq = g.add(OpKind::Mul, {x, x}, {}, "sq");
  const ValueId y = g.add(OpKind::Add, {sq, x}, {}, "y");
  const ValueId loss = g.add(OpKind::ReduceSum, {y}, {{"keepdims", int64_t{0}}}, "loss");
  g.set_outputs({loss});
  const TrainingGraph t = build_training_graph(g, loss, std::vector<ValueId>{x});
  const Tensor in = Tensor::from<double>(Shape{3}, {1.0, -2.0, 0.5});
  const std::vector<Tensor> got = reference::evaluate(t.graph, std::vector<Tensor>{in});
  BOOST_TEST(got[1].get_double(0) == 3.0);
  BOOST_TEST(got[1].get_double(1) == -3.0);
  BOOST_TEST(got[1].get_double(2) == 2.0);
  BOOST_TEST(t.graph.value(t.gradients[0]).name == "grad/x");
  BOOST_TEST(ir_hash(t.graph) ==
             ir_hash(build_training_graph(g, loss, std::vector<ValueId>{x}).graph));
}

void expect_invalid(const std::function<void()>& body, const std::string& message) {
  try {
    body();
    BOOST_ERROR("expected InvalidArgument: " << message);
  } catch (const VoltaError& e) {
    BOOST_TEST((e.code() == ErrorCode::InvalidArgument), error_code_name(e.code()));
    BOOST_TEST(e.message() == message);
  }
}

BOOST_AUTO_TEST_CASE(a_bad_request_names_what_blocks_the_gradient) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{4});
  const ValueId w = g.add_parameter("w", Tensor(DType::F32, Shape{4}));
  const ValueId unused = g.add_parameter("unused", Tensor(DType::F32, Shape{4}));
  const ValueId n = g.add_input("n", DType::I64, Shape{4});
  const ValueId mask = g.add(OpKind::Greater, {w, x}, {}, "mask");
  const ValueId picked = g.add(OpKind::Where, {mask, x, x}, {}, "picked");
  const ValueId total = g.add(OpKind::Add, {picked, x}, {}, "total");
  const ValueId loss = g.add(OpKind::ReduceSum, {total}, {{"keepdims", int64_t{0}}}, "loss");
  g.set_outputs({loss});
  expect_invalid([&] { build_training_graph(g, loss, std::vector<ValueId>{unused}); },
                 "the loss value %" + std::to_string(loss.index) +
                     " 'loss' does not depend on trainable value %" + std::to_string(unused.index) +
                     " 'unused'");
  expect_invalid([&] { build_training_graph(g, loss, std::vector<ValueId>{w}); },
                 "no gradient reaches trainable value %" + std::to_string(w.index) +
                     " 'w': every path to the loss crosses input 0 (A) of node 'mask' (Greater), "
                     "which the op table marks not differentiable");
  expect_invalid([&] { build_training_graph(g, loss, std::vector<ValueId>{n}); },
                 "trainable value %" + std::to_string(n.index) +
                     " 'n' must be a float graph input, parameter or state (supported: f32, f64)");
  expect_invalid([&] { build_training_graph(g, mask, std::vector<ValueId>{x}); },
                 "the loss must be a float value of the forward graph, got value %" +
                     std::to_string(mask.index) + " 'mask' of bool");
  expect_invalid(
      [&] {
        build_training_graph(g, loss, std::vector<ValueId>{x, x});
      },
      "trainable value %" + std::to_string(x.index) + " 'x' is given twice");
}

// Attribute combinations a rule cannot handle yet are refused by name.
BOOST_AUTO_TEST_CASE(unsupported_attributes_are_refused_by_name) {
  Graph g;
  const ValueId data = g.add_input("data", DType::F32, Shape{3});
  const ValueId indices = g.add_parameter("indices", Tensor::from<int64_t>(Shape{2}, {0, 0}));
  const ValueId updates = g.add_input("updates", DType::F32, Shape{2});
  const ValueId y = g.add(OpKind::ScatterElements, {data, indices, updates},
                          {{"reduction", std::string("mul")}}, "scatter");
  const ValueId loss = g.add(OpKind::ReduceSum, {y}, {{"keepdims", int64_t{0}}}, "loss");
  g.set_outputs({loss});
  expect_invalid([&] { build_training_graph(g, loss, std::vector<ValueId>{updates}); },
                 "no VJP rule yet for ScatterElements node 'scatter' with reduction \"mul\" "
                 "(supported: none, add)");
  Graph h;
  const ValueId m = h.add_input("m", DType::F64, Shape{3, 3});
  const ValueId diagonal = h.add(OpKind::Einsum, {m}, {{"equation", std::string("ii->i")}}, "diag");
  const ValueId total = h.add(OpKind::ReduceSum, {diagonal}, {{"keepdims", int64_t{0}}}, "total");
  h.set_outputs({total});
  expect_invalid(
      [&] { build_training_graph(h, total, std::vector<ValueId>{m}); },
      "no VJP rule yet for input 0 of Einsum node 'diag' (\"ii->i\"), whose term repeats "
      "an index (a diagonal; supported: distinct indices within the operand)");
  Graph big;
  const ValueId image = big.add_input("image", DType::F32, Shape{1, 1, 64, 64});
  const ValueId points = big.add_parameter("points", Tensor(DType::F32, Shape{1, 64, 65, 2}));
  const ValueId sampled = big.add(OpKind::GridSample, {image, points}, {}, "sample");
  const ValueId sum = big.add(OpKind::ReduceSum, {sampled}, {{"keepdims", int64_t{0}}}, "sum");
  big.set_outputs({sum});
  expect_invalid([&] { build_training_graph(big, sum, std::vector<ValueId>{image}); },
                 "no VJP rule yet for GridSample node 'sample' sampling 4160 points from 4096 "
                 "pixels (supported: pixels * points up to 16777216, the dense weights the rule "
                 "forms)");
}

// The differentiable (op, input) pairs still without a rule: #16's remaining work, kept here so
// that a rule that lands, or an op added without one, fails this test until the list says so.
const std::vector<std::string> kPendingRules = {};

BOOST_AUTO_TEST_CASE(every_differentiable_input_has_a_rule_or_is_pending) {
  std::vector<std::string> missing;
  int differentiable = 0, with_rule = 0;
  for (int op = 0; op < kOpCount; ++op) {
    const OpSchema& s = op_schema(static_cast<OpKind>(op));
    for (size_t i = 0; i < s.inputs.size(); ++i) {
      if (s.inputs[i].differentiability != Differentiability::Differentiable) continue;
      ++differentiable;
      if (has_vjp_rule(s.kind, static_cast<int>(i))) {
        ++with_rule;
      } else {
        missing.push_back(std::string(s.name) + ":" + std::string(s.inputs[i].name));
      }
    }
  }
  BOOST_TEST_MESSAGE("VJP rules: " << with_rule << " of " << differentiable
                                   << " differentiable op inputs");
  std::string listed;
  for (const std::string& m : missing) listed += "\n  \"" + m + "\",";
  BOOST_TEST(missing == kPendingRules, "differentiable inputs without a rule:" << listed);
}

}  // namespace
}  // namespace volta
