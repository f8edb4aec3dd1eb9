#pragma once
// The built-in models: a pre-LayerNorm transformer block, an MLP and a CNN, built with the graph
// builder. Their weights and inputs are counter-based random values (volta/ir/random.h), so
// every process on every machine builds the same bits at every batch size. The determinism
// suite runs them (conformance/determinism/subjects.cpp), perf times them
// (perf/plan_benchmark.cpp), and `volta info` / `volta doctor` show the transformer block.

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "volta/ir/graph.h"

namespace volta {

struct TransformerBlockConfig {
  int64_t batch = 2;
  int64_t seq = 8;
  int64_t d_model = 32;
  int64_t heads = 4;
  int64_t d_ff = 64;
  DType dtype = DType::F32;
  uint64_t seed = 1;  // parameters are counter-based random values under this seed
};

// A pre-LayerNorm transformer block with causal multi-head self-attention and a Gelu MLP:
// input "x" [batch, seq, d_model], output of the same shape. It is the tiny transformer's block
// (model::ModelBuilder::pre_ln_block, unprefixed names: "ln1", "attn.q", "attn.probs", "mlp.up",
// ...) with its weights as parameters holding model::initial_weight under `seed`.
Graph transformer_block_graph(const TransformerBlockConfig& config);

// The transformer block as a regression to train (the training session's tests and benchmark):
// its weights, biases and LayerNorm scales are states (the attention scale and mask stay
// parameters), initially what transformer_block_graph holds,
// loss = mean((y - target)^2) with "target" a second input of counter-based random values.
struct TrainingProblem {
  Graph forward;  // inputs "x", "target"; output the loss
  ValueId loss;
  std::vector<Tensor> initial_states;  // indexed like forward.states()
  std::vector<Tensor> batch;           // x and target
};
TrainingProblem transformer_block_regression(const TransformerBlockConfig& config);

// loss = sum_i sum(p_i * g_i): states "p<i>" of `shapes` (counter-based random in [-1, 1) under
// `seed`) and inputs "g<i>" of the same shapes, so d loss / d p_i is exactly g_i and the caller
// chooses each step's gradients (the optimizer tests, the gradients suite). `batch` is empty.
TrainingProblem gradient_fed_problem(DType dtype, std::span<const Shape> shapes, uint64_t seed);

// x [batch, 64] -> 128 -> Relu -> 128 -> Tanh -> 10 -> Softmax.
Graph mlp_graph(int64_t batch);

// x [batch, 3, size, size] -> Conv 3x3 (16) -> Relu -> MaxPool 2 -> Conv 3x3 (32) -> Relu ->
// depthwise Conv 3x3 -> GlobalAveragePool -> Flatten -> MatMul + Add (10).
Graph cnn_graph(int64_t batch, int64_t size);

// A named built-in model at a fixed size, built at any batch: the same weights at every batch
// size, one f32 input "x" whose axis 0 is the batch, as is axis 0 of every output.
struct BuiltInModel {
  std::string_view name;      // "mlp", "cnn", "transformer-block"; "-large": the soak sizes
  int64_t default_batch = 0;  // the batch it runs at unless told otherwise
  uint64_t input_seed = 0;
  bool large = false;  // a soak-size model (cnn-large, transformer-block-large)
  Graph (*build)(int64_t batch) = nullptr;
  Shape (*sample_shape)() = nullptr;  // the input's shape without the batch axis

  Graph graph(int64_t batch) const { return build(batch); }
  // The input at `batch` samples: uniform values in [-1, 1), one stream of input_seed over the
  // whole tensor.
  Tensor input(int64_t batch) const;
  // The input at `batch` samples where sample i is stream i of input_seed: a sample holds the
  // same values in every batch it is part of (what batch invariance compares).
  Tensor batch_input(int64_t batch) const;
};

// Every built-in model, sorted by name.
std::span<const BuiltInModel> built_in_models();
// The model named `name`, or nullptr.
const BuiltInModel* find_built_in_model(std::string_view name);

// The transformer blocks the determinism suite and perf run (batch: set per use).
inline constexpr TransformerBlockConfig kTransformerBlock{
    .seq = 16, .d_model = 64, .heads = 4, .d_ff = 256};
// The soak's block: GEMMs span several cache blocks, rows several reduction leaves.
inline constexpr TransformerBlockConfig kTransformerBlockLarge{
    .seq = 128, .d_model = 256, .heads = 8, .d_ff = 1024};

}  // namespace volta
