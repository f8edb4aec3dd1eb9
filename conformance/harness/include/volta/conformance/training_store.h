#pragma once
// Training runs in the results store: a training_run row per training process (provenance as a
// conformance run records it, the model, its config, the optimizer, the data and the seed) and
// a training_step row per step (loss, gradient norm, learning rate, throughput), which
// `volta-audit report` draws as loss curves.
//
// Status: a training run starts 'running'; finish_training_run makes it 'complete' or
// 'interrupted' (stopped on purpose, e.g. on SIGINT). A run whose process died (kill -9, a
// crash) stays 'running' until a writer next opens the file on the same host, which marks it
// 'interrupted', as ResultStore marks a dead conformance run 'incomplete'; readers show the
// status as recorded. Resuming from a checkpoint starts a new training run whose resumed_from
// is the checkpoint's step: its steps continue that numbering (resumed at 100: 101, 102, ...).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "volta/conformance/sqlite.h"
#include "volta/conformance/store.h"

namespace volta::conformance {

enum class TrainingStatus : uint8_t { Running, Complete, Interrupted };
std::string_view training_status_name(TrainingStatus status);  // "running", ...
// The status named `name`; StoreError naming it and the known ones otherwise.
TrainingStatus parse_training_status(std::string_view name);

struct TrainingRunInfo {
  // Provenance, as RunInfo records it.
  std::string commit;
  bool dirty = false;
  std::string build_type;
  std::string compiler;
  std::string cpu_model;
  std::string machine;  // host fingerprint; empty: "HOSTNAME / CPU MODEL"
  int threads = 1;
  std::string command;  // the command line that trained
  // What was trained, on what.
  std::string model;      // "tiny-transformer", or the ONNX model fine-tuned
  std::string config;     // the model config, JSON
  std::string optimizer;  // the optimizer with its schedule, JSON (train::optimizer_to_json)
  std::string data_path;
  std::string data_sha256;
  int64_t data_bytes = 0;
  uint64_t seed = 0;
  std::optional<int64_t> resumed_from;  // the resumed checkpoint's step; nullopt: a fresh run
};

struct TrainingStepRow {
  int64_t step = 0;  // 1-based over the whole training, not this process
  double loss = 0;   // NaN is refused; an infinite loss (divergence) is recorded
  double grad_norm = 0;
  double lr = 0;
  std::optional<double> tokens_per_s = {};

  bool operator==(const TrainingStepRow&) const = default;
};

// A training run as recorded, with a summary of its steps.
struct TrainingRunRecord {
  int64_t id = 0;
  TrainingRunInfo info;
  std::string started_at;
  std::string ended_at;  // empty while running, and for a run that died
  TrainingStatus status = TrainingStatus::Running;
  std::string origin;  // the shard a merged run came from; empty otherwise
  // The Volta version of the binary that wrote the run; empty: written before schema v6.
  std::string volta_version;
  int64_t steps = 0;                                     // steps recorded
  std::optional<TrainingStepRow> first_step, last_step;  // by step number
};

// Inserts a 'running' training run, stamped with the time, host, pid and this build's
// volta::kVersion, and returns its id.
// Throws StoreError naming the field a CHECK refuses (an empty model, threads < 1, ...).
int64_t begin_training_run(ResultStore& store, const TrainingRunInfo& info);

// One transaction (a savepoint of the caller's, when it has one open). The run must be
// 'running'; a step below 1, at or below the run's resumed_from, recorded before, or with a
// NaN, a negative gradient norm or learning rate, or a throughput <= 0 is refused with the
// batch (StoreError naming the run and the step).
void record_training_steps(ResultStore& store, int64_t run_id,
                           std::span<const TrainingStepRow> rows);

// Ends a 'running' run as Complete or Interrupted, with its end time.
void finish_training_run(ResultStore& store, int64_t run_id, TrainingStatus status);

// Records a training loop's steps with one prepared statement, committing every
// `steps_per_commit` (>= 1) steps and at flush() or finish(): a step costs a few microseconds
// of the loop, and a process killed between commits loses at most the steps since the last
// one. A step is checked when recorded; rules and errors as record_training_steps. Lives no
// longer than `store`.
class TrainingStepWriter {
 public:
  static constexpr int kDefaultStepsPerCommit = 16;
  TrainingStepWriter(ResultStore& store, int64_t run_id,
                     int steps_per_commit = kDefaultStepsPerCommit);
  // Flushes what is pending; an error there is dropped (it would end the program): call
  // flush() to see it.
  ~TrainingStepWriter();
  TrainingStepWriter(const TrainingStepWriter&) = delete;
  TrainingStepWriter& operator=(const TrainingStepWriter&) = delete;

  void record(const TrainingStepRow& row);
  // Commits the pending steps in one transaction. Throws StoreError, keeping none of them.
  void flush();
  // flush(), then finish_training_run: steps still pending when the run is finished by
  // finish_training_run alone are refused by the destructor's flush, silently.
  void finish(TrainingStatus status);
  int64_t run_id() const { return run_id_; }

 private:
  ResultStore& store_;
  int64_t run_id_;
  size_t steps_per_commit_;
  std::optional<int64_t> resumed_from_;
  Statement insert_;
  std::vector<TrainingStepRow> pending_;
};

// The `limit` newest training runs (by start time, then id), newest first; every run when
// `limit` is nullopt.
std::vector<TrainingRunRecord> load_training_runs(const Database& db,
                                                  std::optional<int64_t> limit = std::nullopt);
// The run `run_id`; nullopt when there is none.
std::optional<TrainingRunRecord> load_training_run(const Database& db, int64_t run_id);
// Every step of `run_id`, by step number. Empty when it has none.
std::vector<TrainingStepRow> load_training_steps(const Database& db, int64_t run_id);

}  // namespace volta::conformance
