#pragma once
// Built-in example graphs: used by `volta info`, the thread-invariance tests and benchmarks.

#include <cstdint>

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
// input "x" [batch, seq, d_model], output of the same shape.
Graph transformer_block_graph(const TransformerBlockConfig& config);

}  // namespace volta
