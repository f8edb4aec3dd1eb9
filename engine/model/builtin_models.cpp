#include "volta/model/builtin_models.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "volta/ir/random.h"
#include "volta/model/model_builder.h"

namespace volta {
namespace {

// Weights are counter-based random values, so every process builds the same bits.
ValueId weight(Graph& g, const std::string& name, const Shape& shape, uint64_t stream) {
  const double fan_in =
      static_cast<double>(shape.numel()) / static_cast<double>(std::max<int64_t>(1, shape[0]));
  const double scale = 1.0 / std::sqrt(std::max(1.0, fan_in));
  return g.add_parameter(name, random_tensor(DType::F32, shape, 7, -scale, scale, stream));
}

}  // namespace

Graph mlp_graph(int64_t batch) {
  Graph g;
  ValueId h = g.add_input("x", DType::F32, Shape{batch, 64});
  const std::vector<int64_t> widths = {64, 128, 128, 10};
  for (size_t layer = 0; layer + 1 < widths.size(); ++layer) {
    const std::string name = "fc" + std::to_string(layer + 1);
    h = g.add(OpKind::MatMul,
              {h, weight(g, name + ".weight", Shape{widths[layer], widths[layer + 1]}, 2 * layer)},
              {}, name + ".matmul");
    h = g.add(OpKind::Add, {h, weight(g, name + ".bias", Shape{widths[layer + 1]}, 2 * layer + 1)},
              {}, name);
    if (layer == 0) h = g.add(OpKind::Relu, {h}, {}, "fc1.relu");
    if (layer == 1) h = g.add(OpKind::Tanh, {h}, {}, "fc2.tanh");
  }
  g.set_outputs({g.add(OpKind::Softmax, {h}, {{"axis", int64_t{-1}}}, "probs")});
  return g;
}

Graph cnn_graph(int64_t batch, int64_t size) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{batch, 3, size, size});
  const std::vector<int64_t> pads = {1, 1, 1, 1};
  auto conv = [&](ValueId in, const std::string& layer, int64_t out_ch, int64_t in_ch,
                  int64_t group, uint64_t stream) {
    const ValueId w = weight(g, layer + ".weight", Shape{out_ch, in_ch / group, 3, 3}, stream);
    const ValueId b = weight(g, layer + ".bias", Shape{out_ch}, stream + 100);
    return g.add(OpKind::Conv, {in, w, b}, {{"pads", pads}, {"group", group}}, layer);
  };
  ValueId h = g.add(OpKind::Relu, {conv(x, "conv1", 16, 3, 1, 1)}, {}, "conv1.relu");
  h = g.add(OpKind::MaxPool, {h},
            {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}},
            "pool1");
  h = g.add(OpKind::Relu, {conv(h, "conv2", 32, 16, 1, 2)}, {}, "conv2.relu");
  h = conv(h, "conv3.depthwise", 32, 32, 32, 3);
  h = g.add(OpKind::GlobalAveragePool, {h}, {}, "gap");
  h = g.add(OpKind::Reshape, {h}, {{"shape", std::vector<int64_t>{batch, 32}}}, "flatten");
  h = g.add(OpKind::MatMul, {h, weight(g, "fc.weight", Shape{32, 10}, 4)}, {}, "fc.matmul");
  g.set_outputs({g.add(OpKind::Add, {h, weight(g, "fc.bias", Shape{10}, 5)}, {}, "logits")});
  return g;
}

namespace {

struct BlockGraph {
  Graph graph;
  std::vector<model::WeightSpec> weights;  // in the order of creation
};

// One model::ModelBuilder pre-LN block (the tiny transformer's), with unprefixed names.
BlockGraph block_graph(const TransformerBlockConfig& c, model::WeightStorage storage) {
  BlockGraph out;
  model::ModelBuilder b(out.graph, c.dtype, storage, c.seed);
  const ValueId x = out.graph.add_input("x", c.dtype, Shape{c.batch, c.seq, c.d_model});
  const model::AttentionShape shape{
      .batch = c.batch, .seq = c.seq, .d_model = c.d_model, .heads = c.heads};
  out.graph.set_outputs({b.pre_ln_block(x, "", shape, c.d_ff)});
  out.weights = b.weights();
  return out;
}

}  // namespace

Graph transformer_block_graph(const TransformerBlockConfig& config) {
  return block_graph(config, model::WeightStorage::Parameters).graph;
}

TrainingProblem transformer_block_regression(const TransformerBlockConfig& config) {
  TrainingProblem p;
  BlockGraph block = block_graph(config, model::WeightStorage::States);
  for (const model::WeightSpec& w : block.weights) {
    p.initial_states.push_back(model::initial_weight(w, config.seed));
  }
  p.forward = std::move(block.graph);
  const Value y = p.forward.value(p.forward.outputs()[0]);  // a copy: add_input grows values
  const ValueId target = p.forward.add_input("target", y.dtype, y.shape);
  const ValueId error =
      p.forward.add(OpKind::Sub, {p.forward.outputs()[0], target}, {}, "loss.error");
  const ValueId squared = p.forward.add(OpKind::Mul, {error, error}, {}, "loss.squared");
  p.loss = p.forward.add(OpKind::ReduceMean, {squared}, {{"keepdims", int64_t{0}}}, "loss");
  p.forward.set_outputs({p.loss});
  const Shape x_shape = p.forward.value(p.forward.inputs()[0]).shape;
  p.batch.push_back(random_tensor(config.dtype, x_shape, config.seed + 100, -1.0, 1.0));
  p.batch.push_back(random_tensor(config.dtype, y.shape, config.seed + 101, -1.0, 1.0));
  return p;
}

TrainingProblem gradient_fed_problem(DType dtype, std::span<const Shape> shapes, uint64_t seed) {
  TrainingProblem p;
  ValueId total = kNoValue;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const std::string n = std::to_string(i);
    const ValueId param = p.forward.add_state("p" + n, dtype, shapes[i]);
    const ValueId grad = p.forward.add_input("g" + n, dtype, shapes[i]);
    const ValueId dot = p.forward.add(
        OpKind::ReduceSum, {p.forward.add(OpKind::Mul, {param, grad})}, {{"keepdims", int64_t{0}}});
    total = total.valid() ? p.forward.add(OpKind::Add, {total, dot}) : dot;
    p.initial_states.push_back(random_tensor(dtype, shapes[i], seed, -1.0, 1.0, i));
  }
  p.loss = total;
  p.forward.set_outputs({p.loss});
  return p;
}

namespace {

Graph transformer_block_at(const TransformerBlockConfig& config, int64_t batch) {
  TransformerBlockConfig c = config;
  c.batch = batch;
  return transformer_block_graph(c);
}

// Sorted by name; the batch each is a replay, thread and plan subject at, and its input seed.
constexpr BuiltInModel kBuiltInModels[] = {
    {"cnn", 2, 12, false, [](int64_t batch) { return cnn_graph(batch, 32); },
     [] {
       return Shape{3, 32, 32};
     }},
    {"cnn-large", 8, 12, true, [](int64_t batch) { return cnn_graph(batch, 96); },
     [] {
       return Shape{3, 96, 96};
     }},
    {"mlp", 32, 11, false, mlp_graph, [] { return Shape{64}; }},
    {"transformer-block", 2, 13, false,
     [](int64_t batch) { return transformer_block_at(kTransformerBlock, batch); },
     [] {
       return Shape{kTransformerBlock.seq, kTransformerBlock.d_model};
     }},
    {"transformer-block-large", 4, 13, true,
     [](int64_t batch) { return transformer_block_at(kTransformerBlockLarge, batch); },
     [] {
       return Shape{kTransformerBlockLarge.seq, kTransformerBlockLarge.d_model};
     }},
};

Shape with_batch(int64_t batch, const Shape& sample) {
  std::vector<int64_t> dims = {batch};
  dims.insert(dims.end(), sample.dims().begin(), sample.dims().end());
  return Shape(dims);
}

}  // namespace

Tensor BuiltInModel::input(int64_t batch) const {
  return random_tensor(DType::F32, with_batch(batch, sample_shape()), input_seed, -1, 1);
}

Tensor BuiltInModel::batch_input(int64_t batch) const {
  const Shape sample = sample_shape();
  const size_t sample_bytes = static_cast<size_t>(sample.numel()) * dtype_size(DType::F32);
  Tensor input(DType::F32, with_batch(batch, sample));
  for (int64_t i = 0; i < batch; ++i) {
    // Stream i: sample i holds the same values in every batch it is part of.
    const Tensor values =
        random_tensor(DType::F32, sample, input_seed, -1, 1, static_cast<uint64_t>(i));
    std::memcpy(static_cast<std::byte*>(input.data()) + static_cast<size_t>(i) * sample_bytes,
                values.data(), sample_bytes);
  }
  return input;
}

std::span<const BuiltInModel> built_in_models() { return kBuiltInModels; }

const BuiltInModel* find_built_in_model(std::string_view name) {
  const auto* it = std::ranges::find(kBuiltInModels, name, &BuiltInModel::name);
  return it == std::end(kBuiltInModels) ? nullptr : it;
}

}  // namespace volta
