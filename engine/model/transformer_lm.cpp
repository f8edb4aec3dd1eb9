// The tiny transformer's graphs and weights (transformer_lm.h), built with ModelBuilder.
#include "volta/model/transformer_lm.h"

#include <string>
#include <utility>

#include "volta/error.h"

namespace volta::model {
namespace {

constexpr double kPositionBound = 0.02 * 1.7320508075688772;  // as the token embedding's

// tokens int64 [batch, seq] -> logits [batch, seq, vocab]. The weights are created in the
// order weight_specs documents.
ValueId logits_of(ModelBuilder& b, const TransformerConfig& c, ValueId tokens, int64_t batch) {
  Graph& g = b.graph();
  const ValueId tok = b.embedding(tokens, "tok_emb", c.vocab, c.d_model);
  const ValueId pos =
      b.weight("pos_emb.weight", Shape{c.seq, c.d_model}, WeightInit::uniform(kPositionBound));
  ValueId h = g.add(OpKind::Add, {tok, pos}, {}, "embed");  // [seq, d] broadcast over the batch
  const AttentionShape shape{.batch = batch, .seq = c.seq, .d_model = c.d_model, .heads = c.heads};
  for (int64_t layer = 0; layer < c.layers; ++layer) {
    h = b.pre_ln_block(h, "block" + std::to_string(layer), shape, c.d_ff);
  }
  h = b.layer_norm(h, "ln_f", c.d_model);
  return b.linear(h, "head", c.d_model, c.vocab, /*bias=*/false);
}

}  // namespace

LanguageModelGraph training_graph(const TransformerConfig& config) {
  config.validate();
  LanguageModelGraph lm;
  Graph& g = lm.graph;
  const Shape rows{config.batch, config.seq};
  const ValueId tokens = g.add_input("tokens", DType::I64, rows);
  const ValueId targets = g.add_input("targets", DType::I64, rows);
  ModelBuilder b(g, DType::F32, WeightStorage::States, config.seed);
  const ValueId logits = logits_of(b, config, tokens, config.batch);
  // SoftmaxCrossEntropyLoss wants scores [N, C]: every position is a row. Reshape is a view,
  // so this costs no copy (a Transpose to [batch, vocab, seq] would).
  const int64_t positions = config.batch * config.seq;
  const ValueId scores =
      g.add(OpKind::Reshape, {logits}, {{"shape", std::vector<int64_t>{positions, config.vocab}}},
            "scores");
  const ValueId labels =
      g.add(OpKind::Reshape, {targets}, {{"shape", std::vector<int64_t>{positions}}}, "labels");
  lm.output = g.add(OpKind::SoftmaxCrossEntropyLoss, {scores, labels},
                    {{"reduction", std::string("mean")}}, "loss");
  g.set_outputs({lm.output});
  return lm;
}

LanguageModelGraph inference_graph(const TransformerConfig& config, int64_t batch) {
  config.validate();
  if (batch <= 0) {
    fail(ErrorCode::InvalidArgument,
         "inference graph: batch is " + std::to_string(batch) + "; it must be positive");
  }
  LanguageModelGraph lm;
  const ValueId tokens = lm.graph.add_input("tokens", DType::I64, Shape{batch, config.seq});
  ModelBuilder b(lm.graph, DType::F32, WeightStorage::States, config.seed);
  lm.output = logits_of(b, config, tokens, batch);
  lm.graph.value(lm.output).name = "logits";
  lm.graph.set_outputs({lm.output});
  return lm;
}

std::vector<WeightSpec> weight_specs(const TransformerConfig& config) {
  config.validate();
  Graph g;
  const ValueId tokens = g.add_input("tokens", DType::I64, Shape{1, config.seq});
  ModelBuilder b(g, DType::F32, WeightStorage::States, config.seed);
  logits_of(b, config, tokens, 1);
  return b.weights();
}

std::map<std::string, Tensor> initial_parameters(const TransformerConfig& config) {
  std::map<std::string, Tensor> parameters;
  for (const WeightSpec& spec : weight_specs(config)) {
    parameters.emplace(spec.name, initial_weight(spec, config.seed));
  }
  return parameters;
}

std::vector<Tensor> bind_parameters(const Graph& graph,
                                    const std::map<std::string, Tensor>& parameters) {
  std::vector<Tensor> bound;
  for (const ValueId id : graph.states()) {
    const Value& state = graph.value(id);
    const auto it = parameters.find(state.name);
    if (it == parameters.end()) {
      fail(ErrorCode::InvalidArgument, "bind parameters: no weight '" + state.name + "' (" +
                                           std::string(dtype_name(state.dtype)) + " " +
                                           state.shape.str() + ") was given");
    }
    const Tensor& t = it->second;
    if (t.dtype() != state.dtype || t.shape() != state.shape) {
      fail(ErrorCode::InvalidArgument,
           "bind parameters: weight '" + state.name + "' is " + std::string(dtype_name(t.dtype())) +
               " " + t.shape().str() + "; the graph needs " + std::string(dtype_name(state.dtype)) +
               " " + state.shape.str());
    }
    bound.push_back(t);
  }
  return bound;
}

}  // namespace volta::model
