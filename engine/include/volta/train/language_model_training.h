#pragma once
// Training the tiny transformer (model/transformer_lm.h) on byte data, with checkpoints that
// resume exactly: what `volta train` and the training suite run. One TrainingSession compiles
// the forward, backward and optimizer once; step s reads make_batch(data, order, .., s), so the
// whole run is a pure function of (config, optimizer, order, data, steps) at any thread count.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "volta/model/checkpoint.h"
#include "volta/model/transformer_lm.h"
#include "volta/train/optimizer.h"
#include "volta/train/token_data.h"
#include "volta/train/training_session.h"

namespace volta::train {

struct LanguageModelRun {
  model::TransformerConfig model = model::kTinyTransformer;
  OptimizerConfig optimizer = {};
  BatchOrder order = {};
};

// `volta train`'s defaults for a run of `steps` steps: the reference config; AdamW at 3e-3, a
// tenth of the run warming up, then cosine to a tenth of the rate; weight decay 0.01; gradients
// clipped at norm 1; sequential windows, one sequence length apart (and, for a step schedule,
// a decay every third of the run). A one-step run keeps the rate constant.
LanguageModelRun default_run(int64_t steps);

// Canonical JSON (keys sorted, no whitespace) of an optimizer with its schedule, and back;
// from_json refuses unknown keys and wrong types naming them. What a checkpoint's
// "optimizer_hyperparameters" metadata holds.
std::string optimizer_to_json(const OptimizerConfig& optimizer);
OptimizerConfig optimizer_from_json(std::string_view json);

// What every training checkpoint holds whatever its model: the tiny transformer's
// (LanguageModelTrainer) and a fine-tuned ONNX model's (volta/onnx/fine_tune.h) alike.

// Where a run stands in its data: a checkpoint's "data_cursor" metadata.
struct DataCursor {
  BatchOrder order;
  int64_t next_step = 0;  // the steps taken: the next batch is make_batch(.., next_step)
  int64_t data_bytes = 0;
  std::string data_sha256;
};
// Canonical JSON (keys sorted, no whitespace), and back; from_json refuses unknown keys and
// values of the wrong type with VoltaError(InvalidArgument) naming them.
std::string data_cursor_to_json(const DataCursor& cursor);
DataCursor data_cursor_from_json(std::string_view json);
std::string data_sha256(const std::vector<uint8_t>& data);  // lower-case hex

// The checkpoint's metadata `key`; CheckpointError CK-BAD-METADATA naming it when missing.
const std::string& required_metadata(const LoadedCheckpoint& checkpoint, const std::string& key);

// Where a checkpointed run goes on: its optimizer with the schedule, its batch order and the
// steps it has taken.
struct ResumePoint {
  OptimizerConfig optimizer;
  BatchOrder order;
  int64_t steps = 0;
};
// Reads "optimizer_hyperparameters", "data_cursor" and "step", and checks that `data` is what
// the run trained on. Throws CheckpointError: CK-BAD-METADATA (an entry missing or unreadable, a
// step other than the cursor's), CK-DATA-MISMATCH (other data, naming both sha256s).
ResumePoint read_resume_point(const LoadedCheckpoint& checkpoint, const std::vector<uint8_t>& data);

// The metadata a run writes whatever its model: step, optimizer, optimizer_hyperparameters,
// data_cursor (at the session's steps), graph_hash (the step plan's IR hash; provenance, not
// checked on resume), engine_commit and engine_version (volta::kVersion; neither checked on
// resume). The model's own entries are the caller's.
std::map<std::string, std::string> training_metadata(const TrainingSession& session,
                                                     const OptimizerConfig& optimizer,
                                                     const BatchOrder& order,
                                                     const std::vector<uint8_t>& data,
                                                     std::string_view engine_commit);
// The session's trainable parameters by name and its optimizer moments as
// kOptimizerTensorPrefix + name. A forward state that is neither is the model's, not the run's.
std::vector<CheckpointTensor> training_tensors(const TrainingSession& session);
// Puts training_tensors' form back into a session built for the same model and optimizer
// (`optimizer_name` for messages). Throws CheckpointError CK-SHAPE-MISMATCH naming a parameter or
// moment missing or of another dtype or shape, or a tensor the session has no state for.
void restore_training_tensors(TrainingSession& session, const Checkpoint& checkpoint,
                              std::string_view optimizer_name);

struct StepRecord {
  int64_t step = 0;          // 1 for the first step of the run (not of this process)
  double loss = 0;           // at the parameters before the step
  double gradient_norm = 0;  // global L2 norm of the gradients, before any clipping
  double learning_rate = 0;  // the schedule's at this step
};

// One step of a byte-level causal LM's `session` (inputs: tokens, then targets) on
// make_batch(data, order, batch, seq, vocab, s) after its s steps, recorded with `schedule`'s
// rate: the step of LanguageModelTrainer and of onnx::FineTuner.
StepRecord step_on_next_batch(TrainingSession& session, const std::vector<uint8_t>& data,
                              const BatchOrder& order, const Schedule& schedule, int64_t batch,
                              int64_t seq, int64_t vocab);

class LanguageModelTrainer {
 public:
  // A fresh run from initial_parameters(run.model). `data` must hold at least seq + 1 bytes,
  // all < vocab (make_batch's errors otherwise, at construction).
  LanguageModelTrainer(const LanguageModelRun& run, std::vector<uint8_t> data, int threads,
                       const Backend& backend);
  // Resumes a checkpoint written by checkpoint(): its config, optimizer, order and step, its
  // weights and moments. Throws CheckpointError naming what does not fit: a tensor missing,
  // extra, or of another dtype or shape than the config gives (CK-SHAPE-MISMATCH), metadata
  // missing or unreadable (CK-BAD-METADATA), data other than the run's (CK-DATA-MISMATCH,
  // naming both sha256s).
  static LanguageModelTrainer resume(const LoadedCheckpoint& checkpoint, std::vector<uint8_t> data,
                                     int threads, const Backend& backend);

  StepRecord step();
  int64_t steps_taken() const;
  const LanguageModelRun& run() const { return run_; }
  const std::string& data_sha256() const { return data_sha256_; }
  int64_t data_bytes() const { return static_cast<int64_t>(data_.size()); }
  const ExecutionPlan& plan() const { return session_->plan(); }

  // The whole state: every weight by name, every optimizer moment as
  // kOptimizerTensorPrefix + its name, and metadata config, step, optimizer,
  // optimizer_hyperparameters, data_cursor (JSON: order, stride, seed, next step, data length
  // and sha256), seed, graph_hash (the compiled step graph's IR hash; provenance, not checked on
  // resume) and `engine_commit` (the caller's build).
  Checkpoint checkpoint(std::string_view engine_commit) const;
  // The trainable weights by name (what inference binds).
  std::map<std::string, Tensor> parameters() const;

 private:
  LanguageModelRun run_;
  std::vector<uint8_t> data_;
  std::string data_sha256_;
  std::unique_ptr<TrainingSession> session_;
};

}  // namespace volta::train
