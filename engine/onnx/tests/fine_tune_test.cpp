// FineTuner (volta/onnx/fine_tune.h) on the tiny transformer exported as ONNX: the loss is the
// built-in model's at the same weights and falls; the run is the same bits at 1 and 3 threads;
// a resumed run gives the uninterrupted run's checkpoint bytes; the fine-tuned initializers
// write back into the model; and a model that is no causal LM, data outside its vocab and a
// checkpoint of another model are refused, naming what is wrong.
#define BOOST_TEST_MODULE fine_tune_test
#include "volta/onnx/fine_tune.h"

#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "lm_training_testing.h"
#include "volta/model/transformer_lm.h"
#include "volta/onnx/export.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta::onnx {
namespace {

namespace fs = std::filesystem;
using testing::checkpoint_file_after;
using testing::training_text;

const Backend& cpu() {
  static const std::unique_ptr<Backend> backend = make_backend("cpu");
  return *backend;
}

struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() /
           ("volta-fine-tune-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

constexpr int64_t kBatch = 4;

model::TransformerConfig small_config(uint64_t seed = 1, int64_t vocab = 256) {
  return {.vocab = vocab,
          .d_model = 32,
          .layers = 1,
          .heads = 2,
          .d_ff = 64,
          .seq = 16,
          .batch = kBatch,
          .seed = seed};
}

// The tiny transformer's inference graph at its initial weights, as an ONNX causal LM.
fs::path export_lm(const fs::path& dir, const model::TransformerConfig& config,
                   const std::string& name = "lm.onnx") {
  const model::LanguageModelGraph lm = model::inference_graph(config, kBatch);
  fs::path file = dir / name;
  export_onnx_file(lm.graph, file,
                   model::bind_parameters(lm.graph, model::initial_parameters(config)));
  return file;
}

FineTuneRun small_run(int64_t steps) {
  FineTuneRun run = default_fine_tune_run(steps, 16);
  run.optimizer.schedule.base_lr = 1e-2;
  run.optimizer.schedule.min_lr = 1e-3;
  run.order = {.kind = train::BatchOrder::Kind::Shuffled, .seed = 5};
  return run;
}

template <typename Body>
std::string refusal_of(Body body) {
  try {
    body();
  } catch (const VoltaError& e) {
    return e.message();
  }
  return "accepted";
}

BOOST_AUTO_TEST_CASE(the_loss_is_the_built_in_models_at_the_same_weights_and_falls) {
  TempDir dir;
  const FineTuneModel model = FineTuneModel::load(export_lm(dir.path, small_config()));
  BOOST_TEST(model.name == "lm.onnx");
  FineTuner tuner(model, small_run(20), training_text(), 1, cpu());
  BOOST_TEST(tuner.shape().tokens == "tokens");
  BOOST_TEST(tuner.shape().logits == "logits");
  BOOST_TEST(tuner.shape().batch == kBatch);
  BOOST_TEST(tuner.shape().seq == 16);
  BOOST_TEST(tuner.shape().vocab == 256);
  // Every weight of the model is trained, and so is every other float initializer the loss
  // reads: the export writes the attention scale and mask and Gelu's constants as initializers.
  const std::map<std::string, Tensor> trained = tuner.parameters();
  for (const auto& [name, weight] : model::initial_parameters(small_config())) {
    BOOST_TEST(trained.contains(name), name);
  }
  BOOST_TEST(trained.contains("block0.attn.mask"));

  // The built-in trainer at the same weights, optimizer and batches: the same first loss (the
  // export decomposes Gelu, so later steps may differ in the last bits).
  train::LanguageModelRun built_in{
      .model = small_config(), .optimizer = small_run(20).optimizer, .order = small_run(20).order};
  train::LanguageModelTrainer reference(built_in, training_text(), 1, cpu());
  std::vector<train::StepRecord> steps;
  steps.reserve(20);
  for (int i = 0; i < 20; ++i) steps.push_back(tuner.step());
  const double reference_loss = reference.step().loss;
  BOOST_TEST(std::abs(steps.front().loss - reference_loss) < 1e-5 * reference_loss,
             "fine-tune loss " << steps.front().loss << ", built-in " << reference_loss);
  BOOST_TEST_MESSAGE("fine-tune loss " << steps.front().loss << " -> " << steps.back().loss);
  BOOST_TEST(steps.front().loss > 5.0);  // about ln 256 at the start
  BOOST_TEST(steps.back().loss < 0.8 * steps.front().loss);
  for (size_t i = 0; i < steps.size(); ++i) {
    BOOST_TEST(steps[i].step == static_cast<int64_t>(i + 1));
    BOOST_TEST(steps[i].gradient_norm > 0);
  }
  const Checkpoint c = tuner.checkpoint("test");
  BOOST_TEST(c.metadata.at("model") == "lm.onnx");
  BOOST_TEST(c.metadata.at("model_sha256") == model.sha256);
  BOOST_TEST(c.metadata.at("step") == "20");
  BOOST_TEST(!c.metadata.contains("config"));
}

BOOST_AUTO_TEST_CASE(losses_and_checkpoint_bytes_are_the_same_at_1_and_3_threads) {
  TempDir dir;
  const FineTuneModel model = FineTuneModel::load(export_lm(dir.path, small_config()));
  FineTuner one(model, small_run(8), training_text(), 1, cpu());
  FineTuner three(model, small_run(8), training_text(), 3, cpu());
  for (int i = 0; i < 8; ++i) {
    const double a = one.step().loss;
    const double b = three.step().loss;
    BOOST_TEST(a == b, "step " << i + 1);
  }
  BOOST_TEST(
      (serialize_checkpoint(one.checkpoint("t")) == serialize_checkpoint(three.checkpoint("t"))));
}

BOOST_AUTO_TEST_CASE(a_resumed_fine_tune_gives_the_uninterrupted_runs_bytes) {
  TempDir dir;
  const FineTuneModel model = FineTuneModel::load(export_lm(dir.path, small_config()));
  FineTuner whole(model, small_run(12), training_text(), 1, cpu());
  const std::string uninterrupted = checkpoint_file_after(whole, 12);

  FineTuner first(model, small_run(12), training_text(), 2, cpu());
  const std::string at_five = checkpoint_file_after(first, 5);
  FineTuner resumed =
      FineTuner::resume(model, parse_checkpoint(at_five), training_text(), 3, cpu());
  BOOST_TEST(resumed.steps_taken() == 5);
  BOOST_TEST((checkpoint_file_after(resumed, 12) == uninterrupted),
             "resumed at 5 differs from 12 uninterrupted steps");
}

BOOST_AUTO_TEST_CASE(the_fine_tuned_initializers_are_written_into_the_model) {
  TempDir dir;
  const FineTuneModel model = FineTuneModel::load(export_lm(dir.path, small_config()));
  FineTuner tuner(model, small_run(3), training_text(), 1, cpu());
  const LoadedCheckpoint checkpoint = parse_checkpoint(checkpoint_file_after(tuner, 3));
  const Model tuned = Model::parse(fine_tuned_onnx(model, checkpoint), "tuned.onnx");
  ImportOptions options;
  options.evaluator = make_backend_evaluator(cpu(), DeterminismMode::Strict);
  options.trainable = true;
  const Tensor tokens(DType::I64, Shape{kBatch, 16});
  const ImportedGraph imported = tuned.import_for(std::span(&tokens, 1), options);
  const std::map<std::string, Tensor> trained = tuner.parameters();
  BOOST_TEST(imported.graph.states().size() == trained.size());
  for (size_t i = 0; i < imported.graph.states().size(); ++i) {
    const std::string& name = imported.graph.value(imported.graph.states()[i]).name;
    BOOST_TEST(imported.initial_states[i].bit_equal(trained.at(name)), name);
  }
  // A checkpoint of another model is not written into this one.
  const FineTuneModel other =
      FineTuneModel::load(export_lm(dir.path, small_config(2), "other.onnx"));
  BOOST_CHECK_THROW(fine_tuned_onnx(other, checkpoint), CheckpointError);
}

BOOST_AUTO_TEST_CASE(a_model_that_is_no_causal_lm_is_refused_naming_its_interface) {
  TempDir dir;
  Graph image;
  const ValueId x = image.add_input("x", DType::F32, Shape{1, 3, 8, 8});
  image.set_outputs({image.add(OpKind::Relu, {x}, {}, "y")});
  export_onnx_file(image, dir.path / "image.onnx", {});
  const FineTuneModel image_model = FineTuneModel::load(dir.path / "image.onnx");
  BOOST_TEST(refusal_of([&] { FineTuner(image_model, small_run(2), training_text(), 1, cpu()); }) ==
             "model input 'x' is FLOAT [1,3,8,8]; a causal LM takes one input, int64 tokens "
             "[batch, seq] of static sizes");

  Graph scores;  // int64 tokens, but one float per token: no vocab axis
  const ValueId tokens = scores.add_input("ids", DType::I64, Shape{kBatch, 16});
  scores.set_outputs({scores.add(OpKind::Cast, {tokens}, {{"to", std::string("f32")}}, "y")});
  export_onnx_file(scores, dir.path / "scores.onnx", {});
  const FineTuneModel scores_model = FineTuneModel::load(dir.path / "scores.onnx");
  BOOST_TEST(
      refusal_of([&] { FineTuner(scores_model, small_run(2), training_text(), 1, cpu()); }) ==
      "model output 'y' is f32 [4,16] for tokens [4,16]; a causal LM gives float logits "
      "[batch, seq, vocab] = [4,16,vocab]");
}

BOOST_AUTO_TEST_CASE(data_outside_the_models_vocab_is_refused) {
  TempDir dir;
  const FineTuneModel model = FineTuneModel::load(export_lm(dir.path, small_config(1, 64)));
  BOOST_TEST(refusal_of([&] { FineTuner(model, small_run(2), training_text(), 1, cpu()); }) ==
             "the training data has byte 73 at offset 0; the model's vocab is 64, so every byte "
             "must be < 64");
}

BOOST_AUTO_TEST_CASE(a_checkpoint_of_another_model_is_refused_and_left_as_it_was) {
  TempDir dir;
  const FineTuneModel model = FineTuneModel::load(export_lm(dir.path, small_config(1)));
  const FineTuneModel other =
      FineTuneModel::load(export_lm(dir.path, small_config(2), "other.onnx"));
  FineTuner tuner(model, small_run(4), training_text(), 1, cpu());
  tuner.step();
  const fs::path file = dir.path / "ft.ckpt";
  save_checkpoint(tuner.checkpoint("t"), file);
  const std::string before = serialize_checkpoint(load_checkpoint(file).checkpoint);
  try {
    FineTuner::resume(other, load_checkpoint(file), training_text(), 1, cpu());
    BOOST_FAIL("expected CK-MODEL-MISMATCH");
  } catch (const CheckpointError& e) {
    BOOST_TEST(e.diagnostic() == "CK-MODEL-MISMATCH");
    BOOST_TEST(e.message().find("the checkpoint fine-tunes 'lm.onnx' (sha256 " + model.sha256 +
                                "); the model given is 'other.onnx' (sha256 " + other.sha256 +
                                ")") != std::string::npos,
               e.message());
  }
  BOOST_TEST((serialize_checkpoint(load_checkpoint(file).checkpoint) == before));

  // A checkpoint of the built-in model names no ONNX model.
  train::LanguageModelTrainer built_in(
      {.model = small_config(), .optimizer = small_run(4).optimizer, .order = small_run(4).order},
      training_text(), 1, cpu());
  const LoadedCheckpoint tiny = parse_checkpoint(serialize_checkpoint(built_in.checkpoint("t")));
  try {
    FineTuner::resume(model, tiny, training_text(), 1, cpu());
    BOOST_FAIL("expected CK-MODEL-MISMATCH");
  } catch (const CheckpointError& e) {
    BOOST_TEST(e.diagnostic() == "CK-MODEL-MISMATCH");
  }

  // Other data: the data cursor's check, as for the built-in model.
  std::vector<uint8_t> edited = training_text();
  edited[3] = 'x';
  try {
    FineTuner::resume(model, load_checkpoint(file), edited, 1, cpu());
    BOOST_FAIL("expected CK-DATA-MISMATCH");
  } catch (const CheckpointError& e) {
    BOOST_TEST(e.diagnostic() == "CK-DATA-MISMATCH");
  }
}

}  // namespace
}  // namespace volta::onnx
