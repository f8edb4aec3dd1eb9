// The tiny transformer (transformer_lm.h, language_model.h): its config's JSON, weights that are
// a pure function of (seed, name, element), the graphs' shapes and causality, the loss at
// initialization, evaluation, generation, thread invariance, loading from a checkpoint with its
// refusals, and a TrainingSession compiling the training graph.
#define BOOST_TEST_MODULE transformer_lm_test
#include "volta/model/transformer_lm.h"

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "volta/ir/random.h"
#include "volta/model/language_model.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"
#include "volta/train/training_session.h"

namespace volta::model {
namespace {

const Backend& cpu() {
  static const std::unique_ptr<Backend> backend = make_backend("cpu");
  return *backend;
}

// Small enough for fast tests, with every part of the model present (2 blocks, 4 heads).
constexpr TransformerConfig kSmall{
    .vocab = 256, .d_model = 32, .layers = 2, .heads = 4, .d_ff = 64, .seq = 16, .batch = 4};

// Counter-based random bytes < vocab, [rows, seq].
Tensor random_tokens(const TransformerConfig& c, int64_t rows, uint64_t seed) {
  return random_tensor(DType::I64, Shape{rows, c.seq}, seed, 0, static_cast<double>(c.vocab));
}

// A text the byte model can read, a few windows long.
std::vector<uint8_t> sample_text(size_t bytes) {
  const std::string line = "the quick brown fox jumps over the lazy dog; 0123456789\n";
  std::vector<uint8_t> data;
  while (data.size() < bytes) data.push_back(static_cast<uint8_t>(line[data.size() % line.size()]));
  return data;
}

Tensor run_logits(const TransformerConfig& c, const Tensor& tokens, int threads = 1) {
  LanguageModel lm(TrainedModel{c, initial_parameters(c)}, tokens.shape()[0], threads, cpu());
  return lm.logits(tokens);
}

template <class Body>
std::string error_of(Body body) {
  try {
    body();
  } catch (const VoltaError& e) {
    return e.message();
  }
  return "(no error)";
}

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

BOOST_AUTO_TEST_CASE(config_json_is_canonical_and_round_trips) {
  BOOST_TEST(kTinyTransformer.to_json() ==
             R"({"batch":16,"d_ff":256,"d_model":64,"heads":4,"layers":2,"seed":1,"seq":32,)"
             R"("vocab":256})");
  TransformerConfig c = kSmall;
  c.seed = UINT64_MAX;
  BOOST_TEST(TransformerConfig::from_json(c.to_json()).to_json() == c.to_json());
  BOOST_TEST(TransformerConfig::from_json("{}").to_json() == TransformerConfig{}.to_json());
  const TransformerConfig spaced =
      TransformerConfig::from_json(" {\n  \"layers\" : 3 ,\t\"d_model\":32\n}\n");
  BOOST_TEST(spaced.layers == 3);
  BOOST_TEST(spaced.d_model == 32);
  BOOST_TEST(spaced.heads == 4);  // the default
}

BOOST_AUTO_TEST_CASE(config_refusals_name_the_field) {
  const auto refusal = [](std::string_view json) {
    return error_of([&] { TransformerConfig::from_json(json); });
  };
  BOOST_TEST(refusal(R"({"width":3})") ==
             "model config: unknown key 'width'; the keys are batch, d_ff, d_model, heads, "
             "layers, seed, seq, vocab");
  BOOST_TEST(refusal(R"({"heads":"4"})") == "model config: 'heads' must be an integer");
  BOOST_TEST(refusal(R"({"heads":4.5})") == "model config: 'heads' must be an integer");
  BOOST_TEST(refusal(R"({"heads":true})") == "model config: 'heads' must be an integer");
  BOOST_TEST(refusal(R"({"seq":8,"seq":9})") == "model config: the key 'seq' appears twice");
  BOOST_TEST(refusal(R"({"layers":-1})") == "model config: layers is -1; it must be positive");
  BOOST_TEST(refusal(R"({"seed":-1})") == "model config: 'seed' must be a non-negative integer");
  BOOST_TEST(refusal(R"({"seq":99999999999999999999})") == "model config: 'seq' is out of range");
  BOOST_TEST(refusal(R"({"heads":3})") == "model config: d_model 64 is not a multiple of heads 3");
  BOOST_TEST(refusal(R"({"vocab":300})") ==
             "model config: vocab is 300; byte tokens need a vocab of at most 256");
  BOOST_TEST(refusal(R"({"seq":8} x)") ==
             "model config: not a JSON object of integers at byte 10: text follows the object");
  BOOST_TEST(contains(refusal(R"(["seq"])"), "expected '{'"));
  BOOST_TEST(contains(refusal(R"({"seq" 8})"), "expected ':'"));
}

// FNV-1a 64, written out again: the stream is a function of the name's bytes alone.
uint64_t fnv1a(std::string_view name) {
  uint64_t h = 14695981039346656037ull;
  for (const char c : name) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  return h;
}

BOOST_AUTO_TEST_CASE(weight_streams_are_fnv1a_of_the_name) {
  BOOST_TEST(weight_stream("") == 0xcbf29ce484222325ull);  // the published test vectors
  BOOST_TEST(weight_stream("a") == 0xaf63dc4c8601ec8cull);
  BOOST_TEST(weight_stream("foobar") == 0x85944171f73967e8ull);
  BOOST_TEST(weight_stream("head.weight") == fnv1a("head.weight"));
}

BOOST_AUTO_TEST_CASE(weights_are_a_function_of_seed_name_and_element) {
  const std::map<std::string, Tensor> p = initial_parameters(kSmall);
  // The graphs' states are the weights, in weight_specs' order, whichever graph is built.
  std::vector<std::string> names;
  for (const WeightSpec& s : weight_specs(kSmall)) names.push_back(s.name);
  const auto state_names = [](const Graph& g) {
    std::vector<std::string> out;
    for (const ValueId id : g.states()) out.push_back(g.value(id).name);
    return out;
  };
  BOOST_TEST(state_names(training_graph(kSmall).graph) == names, boost::test_tools::per_element());
  BOOST_TEST(state_names(inference_graph(kSmall, 3).graph) == names,
             boost::test_tools::per_element());
  BOOST_TEST(names.size() == 2 + 16 * 2 + 3u);
  BOOST_TEST(names.front() == "tok_emb.weight");
  BOOST_TEST(names.back() == "head.weight");
  BOOST_TEST(p.size() == names.size());

  // The direct formula: uniform in +-1/sqrt(fan_in) drawn from stream FNV-1a(name).
  const Tensor& up = p.at("block1.mlp.up.weight");
  BOOST_TEST(up.shape().str() == "[32,64]");
  const double bound = 1.0 / std::sqrt(32.0);
  for (const int64_t i : {int64_t{0}, int64_t{1}, int64_t{777}, up.numel() - 1}) {
    const double u =
        counter_uniform(kSmall.seed, fnv1a("block1.mlp.up.weight"), static_cast<uint64_t>(i));
    BOOST_TEST(up.get_double(i) == static_cast<double>(static_cast<float>(-bound + 2 * bound * u)));
  }
  const Tensor& emb = p.at("tok_emb.weight");
  for (int64_t i = 0; i < emb.numel(); ++i) BOOST_TEST_REQUIRE(std::abs(emb.get_double(i)) < 0.035);
  for (const std::string name : {"block0.ln1.scale", "ln_f.scale"}) {
    for (int64_t i = 0; i < p.at(name).numel(); ++i) BOOST_TEST(p.at(name).get_double(i) == 1.0);
  }
  for (const std::string name : {"block0.attn.q.bias", "block1.mlp.down.bias", "ln_f.bias"}) {
    for (int64_t i = 0; i < p.at(name).numel(); ++i) BOOST_TEST(p.at(name).get_double(i) == 0.0);
  }

  // Not construction order: the head is created after every block, yet one layer more or
  // less leaves it (and the first block) as they were. Another seed changes every draw.
  TransformerConfig deeper = kSmall;
  deeper.layers = 3;
  const std::map<std::string, Tensor> q = initial_parameters(deeper);
  BOOST_TEST(q.at("head.weight").bit_equal(p.at("head.weight")));
  BOOST_TEST(q.at("block0.attn.k.weight").bit_equal(p.at("block0.attn.k.weight")));
  TransformerConfig reseeded = kSmall;
  reseeded.seed = 2;
  BOOST_TEST(!initial_parameters(reseeded).at("head.weight").bit_equal(p.at("head.weight")));
}

BOOST_AUTO_TEST_CASE(graphs_have_the_documented_inputs_and_outputs) {
  const LanguageModelGraph train = training_graph(kSmall);
  BOOST_REQUIRE_EQUAL(train.graph.inputs().size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const Value& in = train.graph.value(train.graph.inputs()[i]);
    BOOST_TEST(in.name == (i == 0 ? "tokens" : "targets"));
    BOOST_TEST(dtype_name(in.dtype) == "i64");
    BOOST_TEST(in.shape.str() == "[4,16]");
  }
  BOOST_TEST(dtype_name(train.graph.value(train.output).dtype) == "f32");
  BOOST_TEST(train.graph.value(train.output).shape.numel() == 1);

  const LanguageModelGraph infer = inference_graph(kSmall, 3);
  BOOST_REQUIRE_EQUAL(infer.graph.inputs().size(), 1u);
  BOOST_TEST(infer.graph.value(infer.graph.inputs()[0]).shape.str() == "[3,16]");
  BOOST_TEST(infer.graph.value(infer.output).shape.str() == "[3,16,256]");
  BOOST_TEST(run_logits(kSmall, random_tokens(kSmall, 3, 5)).shape().str() == "[3,16,256]");
  BOOST_TEST(error_of([] { inference_graph(kSmall, 0); }) ==
             "inference graph: batch is 0; it must be positive");
}

BOOST_AUTO_TEST_CASE(a_token_changes_no_logits_before_it) {
  const Tensor tokens = random_tokens(kSmall, 1, 7);
  const Tensor before = run_logits(kSmall, tokens);
  for (const int64_t p : {int64_t{0}, int64_t{5}, kSmall.seq - 1}) {
    Tensor changed = tokens;
    changed.set_int(p, (tokens.get_int(p) + 1) % kSmall.vocab);
    const Tensor after = run_logits(kSmall, changed);
    const int64_t v = kSmall.vocab;
    for (int64_t i = 0; i < after.numel(); ++i) {
      if (i / v < p) BOOST_TEST_REQUIRE(after.get_double(i) == before.get_double(i));
    }
    bool moved = false;
    for (int64_t i = p * v; i < (p + 1) * v; ++i)
      moved |= after.get_double(i) != before.get_double(i);
    BOOST_TEST(moved, "changing token " << p << " left its own logits as they were");
  }
}

// Mean over every position of -log softmax(logits)[target], in double.
double mean_cross_entropy(const Tensor& logits, const Tensor& targets, int64_t vocab) {
  double total = 0;
  for (int64_t r = 0; r < targets.numel(); ++r) {
    double top = -INFINITY;
    for (int64_t j = 0; j < vocab; ++j) top = std::max(top, logits.get_double(r * vocab + j));
    double sum = 0;
    for (int64_t j = 0; j < vocab; ++j) sum += std::exp(logits.get_double(r * vocab + j) - top);
    total += std::log(sum) + top - logits.get_double(r * vocab + targets.get_int(r));
  }
  return total / static_cast<double>(targets.numel());
}

BOOST_AUTO_TEST_CASE(the_loss_at_initialization_is_near_uniform_and_matches_the_logits) {
  const TransformerConfig& c = kTinyTransformer;
  LanguageModelGraph train = training_graph(c);
  std::vector<Tensor> states = bind_parameters(train.graph, initial_parameters(c));
  std::vector<Tensor*> bound(states.size());
  for (size_t i = 0; i < states.size(); ++i) bound[i] = &states[i];
  const ExecutionPlan plan = compile(std::move(train.graph), cpu(), DeterminismMode::Strict);
  const auto ctx = cpu().make_context({.threads = 2});
  const Tensor tokens = random_tokens(c, c.batch, 11);
  const Tensor targets = random_tokens(c, c.batch, 12);
  const double loss =
      execute(plan, cpu(), *ctx, std::vector<Tensor>{tokens, targets}, bound).at(0).get_double(0);
  BOOST_TEST_MESSAGE("tiny transformer, loss at initialization: " << loss << " (ln 256 = "
                                                                  << std::log(256.0) << ")");
  BOOST_TEST(std::abs(loss - std::log(256.0)) < 0.3);
  const Tensor logits = run_logits(c, tokens);
  BOOST_TEST(std::abs(loss - mean_cross_entropy(logits, targets, c.vocab)) < 1e-5);
}

BOOST_AUTO_TEST_CASE(logits_are_the_same_bits_at_one_and_four_threads) {
  const Tensor tokens = random_tokens(kTinyTransformer, 4, 21);
  BOOST_TEST(
      run_logits(kTinyTransformer, tokens, 1).bit_equal(run_logits(kTinyTransformer, tokens, 4)));
}

BOOST_AUTO_TEST_CASE(generation_is_reproducible) {
  LanguageModel lm(TrainedModel{kSmall, initial_parameters(kSmall)}, 1, 1, cpu());
  const std::string greedy = generate(lm, "hello", {.tokens = 20});
  BOOST_TEST(greedy.size() == 25u);
  BOOST_TEST(greedy.starts_with("hello"));
  BOOST_TEST(generate(lm, "hello", {.tokens = 20}) == greedy);
  // Greedy: every byte is the argmax (lowest index on ties) of the logits at its context.
  {
    const std::string prefix = greedy.substr(0, 10);
    Tensor tokens(DType::I64, Shape{1, kSmall.seq});
    for (size_t i = 0; i < prefix.size(); ++i) {
      tokens.set_int(static_cast<int64_t>(i), static_cast<unsigned char>(prefix[i]));
    }
    const Tensor logits = lm.logits(tokens);
    int64_t best = 0;
    for (int64_t j = 1; j < kSmall.vocab; ++j) {
      if (logits.get_double(9 * kSmall.vocab + j) > logits.get_double(9 * kSmall.vocab + best)) {
        best = j;
      }
    }
    BOOST_TEST(static_cast<unsigned char>(greedy[10]) == best);
  }
  const GenerateOptions sampled{.tokens = 40, .temperature = 1.0, .seed = 3};
  const std::string a = generate(lm, "hello", sampled);
  BOOST_TEST(generate(lm, "hello", sampled) == a);
  BOOST_TEST(generate(lm, "hello", {.tokens = 40, .temperature = 1.0, .seed = 4}) != a);
  // Draws are keyed by position: continuing a text equals generating it at once, also once
  // the context is longer than seq.
  const std::string first = generate(lm, "hello", {.tokens = 15, .temperature = 1.0, .seed = 3});
  BOOST_TEST(generate(lm, first, {.tokens = 25, .temperature = 1.0, .seed = 3}) == a);
  BOOST_TEST(generate(lm, "hello", {.tokens = 0}) == "hello");

  BOOST_TEST(error_of([&] { generate(lm, "", {}); }) == "generate: the prompt is empty");
  BOOST_TEST(error_of([&] { generate(lm, "x", {.tokens = -1}); }) ==
             "generate: tokens is -1; it must be 0 or more");
  BOOST_TEST(contains(error_of([&] { generate(lm, "x", {.temperature = -1}); }),
                      "it must be 0 (greedy) or a positive finite number"));
  TransformerConfig ascii = kSmall;
  ascii.vocab = 128;
  LanguageModel small_vocab(TrainedModel{ascii, initial_parameters(ascii)}, 1, 1, cpu());
  BOOST_TEST(error_of([&] { generate(small_vocab, "ab\xc3", {}); }) ==
             "generate: the prompt: token 195 at offset 2 is outside the model's vocab of 128");
}

BOOST_AUTO_TEST_CASE(evaluation_reads_consecutive_windows) {
  const TrainedModel model{kSmall, initial_parameters(kSmall)};
  const std::vector<uint8_t> data = sample_text(17 * 6 + 5);  // 6 windows of 17 and a rest
  const Evaluation e = evaluate(model, data, 2, cpu());
  BOOST_TEST(e.windows == 6);
  BOOST_TEST(e.tokens == 6 * 16);
  BOOST_TEST(std::isfinite(e.mean_loss));
  BOOST_TEST(std::abs(e.mean_loss - std::log(256.0)) < 0.5);
  BOOST_TEST(e.perplexity == std::exp(e.mean_loss));
  BOOST_TEST(evaluate(model, data, 1, cpu()).mean_loss == e.mean_loss);  // the same bits

  // The same windows by hand: window 5 (the second batch, one row of four) included.
  LanguageModel lm(model, 1, 1, cpu());
  double total = 0;
  for (int64_t w = 0; w < 6; ++w) {
    Tensor tokens(DType::I64, Shape{1, 16});
    Tensor targets(DType::I64, Shape{16});
    for (int64_t t = 0; t < 16; ++t) {
      tokens.set_int(t, data[static_cast<size_t>(w * 17 + t)]);
      targets.set_int(t, data[static_cast<size_t>(w * 17 + t + 1)]);
    }
    total += mean_cross_entropy(lm.logits(tokens), targets, 256);
  }
  BOOST_TEST(std::abs(e.mean_loss - total / 6) < 1e-9);

  BOOST_TEST(error_of([&] { evaluate(model, sample_text(16), 1, cpu()); }) ==
             "evaluate: the data holds 16 bytes; one window of the model's sequence 16 needs 17");
  TransformerConfig ascii = kSmall;
  ascii.vocab = 128;
  std::vector<uint8_t> high = sample_text(40);
  high[20] = 200;
  BOOST_TEST(error_of([&] {
               evaluate(TrainedModel{ascii, initial_parameters(ascii)}, high, 1, cpu());
             }) == "evaluate: token 200 at offset 20 is outside the model's vocab of 128");
}

Checkpoint checkpoint_of(const TransformerConfig& c, const std::map<std::string, Tensor>& p) {
  Checkpoint ck;
  ck.metadata["config"] = c.to_json();
  for (const auto& [name, tensor] : p) ck.tensors.push_back(checkpoint_tensor(name, tensor));
  return ck;
}

std::string load_refusal(const Checkpoint& ck) {
  try {
    trained_model(parse_checkpoint(serialize_checkpoint(ck)));
  } catch (const CheckpointError& e) {
    return e.message();
  }
  return "(no error)";
}

BOOST_AUTO_TEST_CASE(a_trained_model_round_trips_through_a_checkpoint) {
  const std::map<std::string, Tensor> p = initial_parameters(kSmall);
  Checkpoint ck = checkpoint_of(kSmall, p);
  // Optimizer moments are ignored.
  ck.tensors.push_back(checkpoint_tensor("optimizer/adam_m/head.weight", p.at("head.weight")));
  const TrainedModel loaded = trained_model(parse_checkpoint(serialize_checkpoint(ck)));
  BOOST_TEST(loaded.config.to_json() == kSmall.to_json());
  BOOST_REQUIRE_EQUAL(loaded.parameters.size(), p.size());
  for (const auto& [name, tensor] : p) BOOST_TEST(loaded.parameters.at(name).bit_equal(tensor));
  const Tensor tokens = random_tokens(kSmall, 2, 31);
  LanguageModel lm(loaded, 2, 1, cpu());
  BOOST_TEST(lm.logits(tokens).bit_equal(run_logits(kSmall, tokens)));
}

BOOST_AUTO_TEST_CASE(a_checkpoint_that_does_not_fit_its_config_is_refused) {
  const std::map<std::string, Tensor> p = initial_parameters(kSmall);
  Checkpoint missing = checkpoint_of(kSmall, p);
  std::erase_if(missing.tensors, [](const CheckpointTensor& t) { return t.name == "ln_f.bias"; });
  BOOST_TEST(load_refusal(missing) ==
             "CK-SHAPE-MISMATCH: the checkpoint has no weight 'ln_f.bias' (f32 [32]) that its "
             "config needs");

  std::map<std::string, Tensor> misshaped = p;
  misshaped["head.weight"] = Tensor(DType::F32, Shape{256, 32});
  BOOST_TEST(load_refusal(checkpoint_of(kSmall, misshaped)) ==
             "CK-SHAPE-MISMATCH: weight 'head.weight' is f32 [256,32]; its config needs f32 "
             "[32,256]");
  std::map<std::string, Tensor> wrong_dtype = p;
  wrong_dtype["ln_f.scale"] = Tensor(DType::F64, Shape{32});
  BOOST_TEST(load_refusal(checkpoint_of(kSmall, wrong_dtype)) ==
             "CK-SHAPE-MISMATCH: weight 'ln_f.scale' is f64 [32]; its config needs f32 [32]");

  TransformerConfig shallower = kSmall;
  shallower.layers = 1;  // block1's weights are left over
  BOOST_TEST(contains(load_refusal(checkpoint_of(shallower, p)),
                      "CK-SHAPE-MISMATCH: the checkpoint holds a tensor 'block1."));

  Checkpoint no_config = checkpoint_of(kSmall, p);
  no_config.metadata.clear();
  BOOST_TEST(load_refusal(no_config) ==
             "CK-BAD-METADATA: the checkpoint has no 'config' metadata, so no model to read");
  Checkpoint bad_config = checkpoint_of(kSmall, p);
  bad_config.metadata["config"] = R"({"heads":0})";
  BOOST_TEST(load_refusal(bad_config) ==
             "CK-BAD-METADATA: the 'config' metadata is not a model config: model config: heads "
             "is 0; it must be positive");
}

BOOST_AUTO_TEST_CASE(binding_names_a_missing_or_misshaped_weight) {
  const Graph g = inference_graph(kSmall, 1).graph;
  std::map<std::string, Tensor> p = initial_parameters(kSmall);
  BOOST_TEST(bind_parameters(g, p).size() == g.states().size());
  p["pos_emb.weight"] = Tensor(DType::F32, Shape{8, 32});
  BOOST_TEST(error_of([&] { bind_parameters(g, p); }) ==
             "bind parameters: weight 'pos_emb.weight' is f32 [8,32]; the graph needs f32 "
             "[16,32]");
  p.erase("pos_emb.weight");
  BOOST_TEST(error_of([&] { bind_parameters(g, p); }) ==
             "bind parameters: no weight 'pos_emb.weight' (f32 [16,32]) was given");
  BOOST_TEST(contains(error_of([&] {
                        LanguageModel(TrainedModel{kSmall, p}, 1, 1, cpu());
                      }),
                      "no weight 'pos_emb.weight'"));
}

BOOST_AUTO_TEST_CASE(a_training_session_compiles_the_training_graph_and_the_loss_falls) {
  const LanguageModelGraph lm = training_graph(kSmall);
  const train::TrainingOptions options{
      .optimizer = {.kind = train::OptimizerConfig::Kind::Sgd, .schedule = {.base_lr = 0.5}}};
  train::TrainingSession session(lm.graph, lm.output,
                                 bind_parameters(lm.graph, initial_parameters(kSmall)), options,
                                 cpu(), DeterminismMode::Strict);
  const std::vector<uint8_t> text = sample_text(kSmall.batch * (kSmall.seq + 1));
  Tensor tokens(DType::I64, Shape{kSmall.batch, kSmall.seq});
  Tensor targets(DType::I64, Shape{kSmall.batch, kSmall.seq});
  for (int64_t r = 0; r < kSmall.batch; ++r) {
    for (int64_t t = 0; t < kSmall.seq; ++t) {
      tokens.set_int(r * kSmall.seq + t, text[static_cast<size_t>(r * (kSmall.seq + 1) + t)]);
      targets.set_int(r * kSmall.seq + t, text[static_cast<size_t>(r * (kSmall.seq + 1) + t + 1)]);
    }
  }
  std::vector<double> losses(3);
  for (double& loss : losses) loss = session.step(std::vector<Tensor>{tokens, targets});
  BOOST_TEST_MESSAGE("SGD 0.5 on one batch: loss " << losses[0] << " -> " << losses[1] << " -> "
                                                   << losses[2]);
  BOOST_TEST(losses[1] < losses[0]);
  BOOST_TEST(losses[2] < losses[1]);
  BOOST_TEST(session.parameter_names().size() == weight_specs(kSmall).size());
}

}  // namespace
}  // namespace volta::model
