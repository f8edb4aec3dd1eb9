#pragma once
// The tiny decoder-only transformer language model (issue #17): byte tokens in, next-byte
// logits out. Built with ModelBuilder (model_builder.h) over the graph IR: a token embedding
// plus a learned position embedding, `layers` pre-LayerNorm blocks (causal multi-head
// self-attention with an additive mask, an exact-GELU MLP), a final LayerNorm and an LM head.
// The head is its own weight [d_model, vocab] without a bias (embeddings are not tied).
// Every trainable weight is a graph state named like "block0.attn.q.weight"; its initial value
// is a pure function of (seed, name, element) (initial_parameters), so it does not depend on
// construction order, thread count or which graph is built.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "volta/ir/graph.h"
#include "volta/model/model_builder.h"

namespace volta::model {

struct TransformerConfig {
  int64_t vocab = 256;  // bytes
  int64_t d_model = 64;
  int64_t layers = 2;
  int64_t heads = 4;
  int64_t d_ff = 256;
  int64_t seq = 32;    // the context: tokens per row
  int64_t batch = 16;  // rows per training step
  uint64_t seed = 1;   // initial_parameters' seed

  // Throws VoltaError(InvalidArgument) naming the field and what it must be (positive sizes,
  // d_model a multiple of heads, vocab <= 256 for byte data).
  void validate() const;
  // Canonical JSON (keys sorted, no whitespace): what a checkpoint's "config" metadata holds
  // and `volta train --config FILE` reads.
  std::string to_json() const;
  // Reads to_json's form (whitespace between tokens allowed); a missing key keeps the default, an
  // unknown key or a value of the wrong type is VoltaError(InvalidArgument) naming it. Validates.
  static TransformerConfig from_json(std::string_view json);
  friend bool operator==(const TransformerConfig&, const TransformerConfig&) = default;
};

// The reference config of the issue: vocab 256, d_model 64, 2 layers, 4 heads, FFN 256,
// sequence 32, batch 16.
inline constexpr TransformerConfig kTinyTransformer{};

// A graph of the model. Its states are the trainable weights, in a fixed order, named as
// initial_parameters names them.
struct LanguageModelGraph {
  Graph graph;
  ValueId output;  // the loss (training) or the logits (inference)
};

// Inputs "tokens" and "targets", int64 [batch, seq]; output the mean over every position of
// SoftmaxCrossEntropyLoss(logits, targets), one f32 element.
LanguageModelGraph training_graph(const TransformerConfig& config);
// Input "tokens", int64 [batch, seq] (`batch` given, e.g. 1 to generate); output the logits,
// f32 [batch, seq, vocab]. The causal mask makes position p depend on tokens 0..p only.
LanguageModelGraph inference_graph(const TransformerConfig& config, int64_t batch);

// Every trainable weight, in the graphs' state order: "tok_emb.weight" [vocab, d_model],
// "pos_emb.weight" [seq, d_model], per block i "block<i>.ln1.{scale,bias}",
// "block<i>.attn.{q,k,v,out}.{weight,bias}", "block<i>.ln2.{scale,bias}",
// "block<i>.mlp.{up,down}.{weight,bias}", then "ln_f.{scale,bias}" and "head.weight"
// [d_model, vocab]. Linear weights are [in, out] (model_builder.h). Validates the config.
std::vector<WeightSpec> weight_specs(const TransformerConfig& config);

// Every trainable weight's initial value by name (the graphs' state names): counter-based
// random values keyed by (config.seed, name, element) at the scale its kind needs (LayerNorm
// scales 1, biases 0).
std::map<std::string, Tensor> initial_parameters(const TransformerConfig& config);

// `graph`'s states in order, each taken from `parameters` by name. Throws VoltaError
// (InvalidArgument) naming a missing weight or one whose dtype or shape differs from the graph.
std::vector<Tensor> bind_parameters(const Graph& graph,
                                    const std::map<std::string, Tensor>& parameters);

}  // namespace volta::model
