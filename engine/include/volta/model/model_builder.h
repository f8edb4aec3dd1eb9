#pragma once
// ModelBuilder: the layers of a decoder-only transformer as graph-IR pieces (Linear, Embedding,
// LayerNorm, causal multi-head self-attention, exact-GELU MLP, the pre-LN block). The tiny
// transformer language model (transformer_lm.h) and the built-in transformer block
// (builtin_models.h) are both built with it, so there is one copy of the block.
//
// Every weight is named hierarchically ("block0.attn.q.weight") and created either as a graph
// state (trainable, bound per run) or as a parameter holding its initial value (a fixed
// model's constant). Its initial value is counter-based (volta/ir/random.h): element i of
// weight `name` under seed k is a function of (k, weight_stream(name), i) only, so it does not
// depend on the order weights are created in, on the graph they are part of or on threads.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "volta/ir/graph.h"

namespace volta::model {

// How a weight's initial value is drawn.
struct WeightInit {
  enum class Kind : uint8_t {
    Uniform,   // uniform in [-value, value): counter_uniform(seed, weight_stream(name), i)
    Constant,  // every element `value` (LayerNorm scales 1, biases 0)
  };
  Kind kind = Kind::Constant;
  double value = 0;

  static WeightInit uniform(double bound) { return {Kind::Uniform, bound}; }
  static WeightInit constant(double value) { return {Kind::Constant, value}; }
};

struct WeightSpec {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  WeightInit init;
};

// The random stream of the weight named `name`: FNV-1a 64 of its bytes, a stable function of
// the name alone.
uint64_t weight_stream(std::string_view name);
// The weight's initial value under `seed`: element i of a Uniform weight with bound b is
// -b + 2b * counter_uniform(seed, weight_stream(name), i), rounded to the dtype.
Tensor initial_weight(const WeightSpec& spec, uint64_t seed);

// The additive causal mask's value at a masked position. Finite on purpose: a masked score
// becomes about -1e9, whose exp underflows to exactly 0 in f32 and f64 (the softmax is exactly
// that of -inf), while every score, gradient and exported value stays finite; -inf would give
// NaN from -inf - -inf in a row with nothing visible and is refused by finite-value checks.
inline constexpr double kMaskedScore = -1e9;

enum class WeightStorage : uint8_t {
  States,      // graph states (Graph::add_state): what training updates and inference binds
  Parameters,  // parameters holding initial_weight: the weights of a fixed model
};

struct AttentionShape {
  int64_t batch = 0;
  int64_t seq = 0;
  int64_t d_model = 0;
  int64_t heads = 0;
};

// Builds into `graph`; the builder must not outlive it. Names are joined with '.': a layer
// named "attn" under prefix "block0" makes nodes "block0.attn.q", weights
// "block0.attn.q.weight"; an empty prefix leaves names unprefixed.
class ModelBuilder {
 public:
  ModelBuilder(Graph& graph, DType dtype, WeightStorage storage, uint64_t seed);

  Graph& graph() { return graph_; }
  DType dtype() const { return dtype_; }
  // Every weight created so far, in creation order (the order of the graph's states).
  const std::vector<WeightSpec>& weights() const { return weights_; }

  // A weight named `name` (recorded in weights()); stored as the builder's storage says.
  ValueId weight(const std::string& name, const Shape& shape, WeightInit init);
  // A constant (the attention scale, the mask): always a parameter, never a weight.
  ValueId constant(const std::string& name, Tensor data);

  // x [..., in] @ weight [in, out] (+ bias [out]). The weight is stored [in, out], the
  // transpose of PyTorch's nn.Linear.weight; uniform in +-1/sqrt(in) (nn.Linear's bound),
  // the bias 0. Nodes "<name>.matmul" and "<name>" (the Add), or "<name>" without a bias.
  ValueId linear(ValueId x, const std::string& name, int64_t in, int64_t out, bool bias = true);
  // Rows of the table "<name>.weight" [rows, dim] gathered at int64 `ids` [...]: [..., dim].
  // The table is uniform in +-0.02*sqrt(3) (standard deviation 0.02, GPT-2's).
  ValueId embedding(ValueId ids, const std::string& name, int64_t rows, int64_t dim);
  // LayerNormalization over the last axis (eps 1e-5), "<name>.scale" 1 and "<name>.bias" 0.
  ValueId layer_norm(ValueId x, const std::string& name, int64_t dim);
  // x [batch, seq, d_model] -> the same: Q, K and V linears, heads split, softmax of
  // Q K^T / sqrt(head_dim) + mask (the mask [seq, seq] holds 0 where key <= query and
  // kMaskedScore elsewhere), the context merged and projected by "<name>.out".
  ValueId causal_self_attention(ValueId x, const std::string& name, const AttentionShape& shape);
  // "<name>.up" (d_model -> d_ff), exact (erf) GELU, "<name>.down" (d_ff -> d_model).
  ValueId gelu_mlp(ValueId x, const std::string& name, int64_t d_model, int64_t d_ff);
  // h = x + attn(ln1(x)); h + mlp(ln2(h)), with layers "<name>.ln1", "<name>.attn",
  // "<name>.ln2", "<name>.mlp" and residual Adds "<name>.residual1" / "<name>.residual2".
  ValueId pre_ln_block(ValueId x, const std::string& name, const AttentionShape& shape,
                       int64_t d_ff);

 private:
  Tensor scalar(double value) const;

  Graph& graph_;
  DType dtype_;
  WeightStorage storage_;
  uint64_t seed_;
  std::vector<WeightSpec> weights_;
};

// "a" + "b" -> "a.b"; an empty prefix gives "b".
std::string join_name(std::string_view prefix, std::string_view leaf);

}  // namespace volta::model
