#pragma once
// Fine-tuning an imported ONNX causal language model on byte data (`volta train model.onnx`).
// The model's float initializers are the trainable state (ImportOptions::trainable): every one
// the loss reads, the constants an exporter wrote as initializers included (an attention mask,
// Gelu's 0.5), except those the importer freezes as shape arguments; the loss,
// mean SoftmaxCrossEntropyLoss of the logits against the next byte, is appended to the imported
// forward; and the run is LanguageModelTrainer's in every other way: the same batch order
// (make_batch at the model's batch, seq and vocab), optimizers, step records and checkpoint
// format, whose metadata names the model ("model", "model_sha256") where the built-in model's
// holds its "config".

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "volta/model/checkpoint.h"
#include "volta/onnx/model.h"
#include "volta/runtime/backend.h"
#include "volta/train/language_model_training.h"

namespace volta::onnx {

// A fine-tune checkpoint's metadata: the model's file name (provenance) and the SHA-256 of its
// bytes (what a resume and an export check the model given against).
inline constexpr std::string_view kFineTuneModelKey = "model";
inline constexpr std::string_view kFineTuneModelSha256Key = "model_sha256";

// The model a run fine-tunes, as read from its file.
struct FineTuneModel {
  std::string name;    // the file's name, without its directory
  std::string sha256;  // of the file's bytes, lower-case hex
  std::string bytes;   // the serialized ModelProto
  Model model;
  // Model::parse's errors (I-INVALID-MODEL); VoltaError(InvalidArgument) when unreadable.
  static FineTuneModel load(const std::filesystem::path& file);
};

// A causal LM's interface: one int64 input of tokens [batch, seq], static, and one float output
// of logits [batch, seq, vocab].
struct CausalLmShape {
  std::string tokens;  // the input's name
  std::string logits;  // the output's name
  int64_t batch = 0;
  int64_t seq = 0;
  int64_t vocab = 0;
};

// The interface as the model declares it: the tokens' and logits' names, batch and seq (vocab
// 0: the import reads it from the logits). Throws VoltaError(InvalidArgument) for a model that
// does not declare one int64 input of static shape [batch, seq] and one output, naming what it
// declares and what a causal LM takes.
CausalLmShape declared_causal_lm(const Model& model);

struct FineTuneRun {
  train::OptimizerConfig optimizer = {};
  train::BatchOrder order = {};
};
// default_run(steps)'s optimizer, and sequential windows one sequence (`seq`) apart.
FineTuneRun default_fine_tune_run(int64_t steps, int64_t seq);

class FineTuner {
 public:
  // Imports `model` with trainable initializers for tokens [batch, seq] and builds its training
  // step. Throws VoltaError(InvalidArgument) for a model that is not a causal LM, naming what
  // it has and what one takes (e.g. "model input 'x' is FLOAT [3,4,5]; a causal LM takes one
  // input, int64 tokens [batch, seq] of static sizes"); tokens that feed a shape argument; an
  // initializer named with kOptimizerTensorPrefix; check_token_data's errors for data shorter
  // than a window or holding a byte >= the model's vocab; and the importer's and
  // TrainingSession's refusals.
  FineTuner(const FineTuneModel& model, const FineTuneRun& run, std::vector<uint8_t> data,
            int threads, const Backend& backend);
  // Resumes a checkpoint written by checkpoint() for this model: its optimizer, order and step,
  // its parameters and moments. Throws CheckpointError: CK-MODEL-MISMATCH (a checkpoint of
  // another model, naming both files and sha256s, or of no ONNX model), read_resume_point's
  // and restore_training_tensors' codes.
  static FineTuner resume(const FineTuneModel& model, const LoadedCheckpoint& checkpoint,
                          std::vector<uint8_t> data, int threads, const Backend& backend);
  ~FineTuner();
  FineTuner(FineTuner&&) noexcept;
  FineTuner& operator=(FineTuner&&) noexcept;

  train::StepRecord step();
  int64_t steps_taken() const;
  const FineTuneRun& run() const { return run_; }
  const CausalLmShape& shape() const { return shape_; }
  const std::string& model_name() const { return model_name_; }
  const std::string& model_sha256() const { return model_sha256_; }
  const std::string& data_sha256() const { return data_sha256_; }
  int64_t data_bytes() const { return static_cast<int64_t>(data_.size()); }
  const ExecutionPlan& plan() const;
  // What a run record calls the config: the model's sha256 and its interface, canonical JSON.
  std::string config_json() const;

  // The trainable initializers by name, every optimizer moment as kOptimizerTensorPrefix + its
  // name, and metadata model, model_sha256, seed (the batch order's) and training_metadata's.
  Checkpoint checkpoint(std::string_view engine_commit) const;
  std::map<std::string, Tensor> parameters() const;  // the trainable initializers by name

 private:
  FineTuneRun run_;
  CausalLmShape shape_;
  std::string model_name_;
  std::string model_sha256_;
  std::vector<uint8_t> data_;
  std::string data_sha256_;
  std::unique_ptr<train::TrainingSession> session_;
};

// Checks that `checkpoint` fine-tunes `model`. Throws CheckpointError CK-MODEL-MISMATCH naming
// the checkpoint's model and the one given (by name and sha256), or, for a checkpoint without
// "model_sha256", saying it fine-tunes no ONNX model.
void check_fine_tune_model(const FineTuneModel& model, const LoadedCheckpoint& checkpoint);

// `model`'s ModelProto with each initializer the checkpoint trained replaced by its tensor (as
// raw_data): the fine-tuned model, serialized, for any ONNX runtime. Throws CheckpointError:
// check_fine_tune_model's, and CK-SHAPE-MISMATCH for a tensor outside kOptimizerTensorPrefix
// that names no initializer of its dtype and shape.
std::string fine_tuned_onnx(const FineTuneModel& model, const LoadedCheckpoint& checkpoint);

}  // namespace volta::onnx
