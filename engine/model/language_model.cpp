// Using a trained tiny transformer: load it, evaluate it, generate from it (language_model.h).
#include "volta/model/language_model.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <utility>

#include "volta/error.h"
#include "volta/ir/random.h"
#include "volta/runtime/runtime.h"

namespace volta::model {
namespace {

constexpr std::string_view kConfigKey = "config";

std::string describe(DType dtype, const Shape& shape) {
  return std::string(dtype_name(dtype)) + " " + shape.str();
}

// -log softmax(row)[target], in double.
double cross_entropy(std::span<const float> row, int64_t target) {
  const double top = *std::ranges::max_element(row);
  double total = 0;
  for (const float x : row) total += std::exp(static_cast<double>(x) - top);
  return std::log(total) + top - static_cast<double>(row[static_cast<size_t>(target)]);
}

int64_t argmax(std::span<const float> row) {
  return std::ranges::max_element(row) - row.begin();  // the first of equal maxima
}

// The first index whose cumulative weight exceeds u * total, weights exp(x / T - max).
int64_t sample(std::span<const float> row, double temperature, double u) {
  std::vector<double> weights(row.size());
  double top = -INFINITY;
  for (const float x : row) top = std::max(top, static_cast<double>(x) / temperature);
  double total = 0;
  for (size_t i = 0; i < row.size(); ++i) {
    weights[i] = std::exp(static_cast<double>(row[i]) / temperature - top);
    total += weights[i];
  }
  const double threshold = u * total;
  double cumulative = 0;
  int64_t last_possible = 0;
  for (size_t i = 0; i < row.size(); ++i) {
    if (weights[i] == 0) continue;
    cumulative += weights[i];
    last_possible = static_cast<int64_t>(i);
    if (cumulative > threshold) return last_possible;
  }
  return last_possible;  // rounding left the threshold at the total
}

void check_token(int64_t token, int64_t offset, int64_t vocab, std::string_view where) {
  if (token < 0 || token >= vocab) {
    fail(ErrorCode::InvalidArgument,
         std::string(where) + ": token " + std::to_string(token) + " at offset " +
             std::to_string(offset) + " is outside the model's vocab of " + std::to_string(vocab));
  }
}

}  // namespace

TrainedModel trained_model(const LoadedCheckpoint& loaded) {
  const Checkpoint& checkpoint = loaded.checkpoint;
  const auto config = checkpoint.metadata.find(std::string(kConfigKey));
  if (config == checkpoint.metadata.end()) {
    throw CheckpointError("CK-BAD-METADATA",
                          "the checkpoint has no 'config' metadata, so no model to read");
  }
  TrainedModel model;
  try {
    model.config = TransformerConfig::from_json(config->second);
  } catch (const VoltaError& e) {
    throw CheckpointError("CK-BAD-METADATA",
                          "the 'config' metadata is not a model config: " + e.message());
  }
  std::map<std::string, const CheckpointTensor*, std::less<>> weights;
  for (const CheckpointTensor& t : checkpoint.tensors) {
    if (!t.name.starts_with(kOptimizerTensorPrefix)) weights.emplace(t.name, &t);
  }
  for (const WeightSpec& spec : weight_specs(model.config)) {
    const auto it = weights.find(spec.name);
    if (it == weights.end()) {
      throw CheckpointError("CK-SHAPE-MISMATCH", "the checkpoint has no weight '" + spec.name +
                                                     "' (" + describe(spec.dtype, spec.shape) +
                                                     ") that its config needs");
    }
    const CheckpointTensor& t = *it->second;
    if (t.dtype != spec.dtype || Shape(t.shape) != spec.shape) {
      throw CheckpointError("CK-SHAPE-MISMATCH",
                            "weight '" + spec.name + "' is " + describe(t.dtype, Shape(t.shape)) +
                                "; its config needs " + describe(spec.dtype, spec.shape));
    }
    model.parameters.emplace(spec.name, tensor_of(t));
    weights.erase(it);
  }
  if (!weights.empty()) {
    throw CheckpointError("CK-SHAPE-MISMATCH", "the checkpoint holds a tensor '" +
                                                   weights.begin()->first +
                                                   "' that its config gives no weight for");
  }
  return model;
}

LanguageModel::LanguageModel(const TrainedModel& model, int64_t batch, int threads,
                             const Backend& backend)
    : config_(model.config), batch_(batch), backend_(backend) {
  LanguageModelGraph lm = inference_graph(config_, batch);
  std::vector<Tensor> weights = bind_parameters(lm.graph, model.parameters);
  // Frozen, the weights are constants of the plan: nothing to bind per call.
  const std::vector<ValueId> states(lm.graph.states().begin(), lm.graph.states().end());
  for (size_t i = 0; i < states.size(); ++i)
    lm.graph.freeze_state(states[i], std::move(weights[i]));
  plan_ = compile(std::move(lm.graph), backend_, DeterminismMode::Strict);
  ctx_ = backend_.make_context({.threads = threads});
}

LanguageModel::~LanguageModel() = default;

Tensor LanguageModel::logits(const Tensor& tokens) {
  check_graph_inputs(plan_.graph, std::span<const Tensor>(&tokens, 1));
  const auto* ids = tokens.data_as<int64_t>();
  for (int64_t i = 0; i < tokens.numel(); ++i) check_token(ids[i], i, config_.vocab, "logits");
  std::vector<Tensor> outputs =
      execute(plan_, backend_, *ctx_, std::span<const Tensor>(&tokens, 1));
  return std::move(outputs.at(0));
}

Evaluation evaluate(const TrainedModel& model, const std::vector<uint8_t>& data, int threads,
                    const Backend& backend) {
  const TransformerConfig& c = model.config;
  const int64_t window = c.seq + 1;
  Evaluation e;
  e.windows = static_cast<int64_t>(data.size()) / window;
  if (e.windows == 0) {
    fail(ErrorCode::InvalidArgument, "evaluate: the data holds " + std::to_string(data.size()) +
                                         " bytes; one window of the model's sequence " +
                                         std::to_string(c.seq) + " needs " +
                                         std::to_string(window));
  }
  for (int64_t i = 0; i < e.windows * window; ++i) {
    check_token(data[static_cast<size_t>(i)], i, c.vocab, "evaluate");
  }
  const int64_t rows = std::min(c.batch, e.windows);
  LanguageModel lm(model, rows, threads, backend);
  double total = 0;
  for (int64_t first = 0; first < e.windows; first += rows) {
    const int64_t used = std::min(rows, e.windows - first);
    Tensor tokens(DType::I64, Shape{rows, c.seq});  // rows past `used`: token 0, not counted
    auto* ids = tokens.data_as<int64_t>();
    for (int64_t r = 0; r < used; ++r) {
      for (int64_t t = 0; t < c.seq; ++t) ids[r * c.seq + t] = data[(first + r) * window + t];
    }
    const Tensor logits = lm.logits(tokens);
    const auto* x = logits.data_as<float>();
    for (int64_t r = 0; r < used; ++r) {
      for (int64_t t = 0; t < c.seq; ++t) {
        const std::span<const float> row(x + (r * c.seq + t) * c.vocab, c.vocab);
        total += cross_entropy(row, data[(first + r) * window + t + 1]);
      }
    }
  }
  e.tokens = e.windows * c.seq;
  e.mean_loss = total / static_cast<double>(e.tokens);
  e.perplexity = std::exp(e.mean_loss);
  return e;
}

std::string generate(LanguageModel& model, std::string_view prompt,
                     const GenerateOptions& options) {
  const TransformerConfig& c = model.config();
  if (prompt.empty()) fail(ErrorCode::InvalidArgument, "generate: the prompt is empty");
  if (options.tokens < 0) {
    fail(ErrorCode::InvalidArgument,
         "generate: tokens is " + std::to_string(options.tokens) + "; it must be 0 or more");
  }
  if (!(options.temperature >= 0) || !std::isfinite(options.temperature)) {
    fail(ErrorCode::InvalidArgument, "generate: temperature is " +
                                         std::to_string(options.temperature) +
                                         "; it must be 0 (greedy) or a positive finite number");
  }
  for (size_t i = 0; i < prompt.size(); ++i) {
    check_token(static_cast<unsigned char>(prompt[i]), static_cast<int64_t>(i), c.vocab,
                "generate: the prompt");
  }
  std::string text(prompt);
  Tensor tokens(DType::I64, Shape{model.batch(), c.seq});  // row 0 is read; the rest stay 0
  auto* ids = tokens.data_as<int64_t>();
  for (int64_t n = 0; n < options.tokens; ++n) {
    const int64_t length = std::min<int64_t>(c.seq, static_cast<int64_t>(text.size()));
    const size_t start = text.size() - static_cast<size_t>(length);
    for (int64_t t = 0; t < length; ++t) {
      ids[t] = static_cast<unsigned char>(text[start + static_cast<size_t>(t)]);
    }
    const Tensor logits = model.logits(tokens);
    const std::span<const float> row(logits.data_as<float>() + (length - 1) * c.vocab,
                                     static_cast<size_t>(c.vocab));
    const auto position = static_cast<uint64_t>(text.size());
    const int64_t next =
        options.temperature == 0
            ? argmax(row)
            : sample(row, options.temperature, counter_uniform(options.seed, 0, position));
    text.push_back(static_cast<char>(static_cast<unsigned char>(next)));
  }
  return text;
}

}  // namespace volta::model
