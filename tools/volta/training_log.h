#pragma once
// `volta train --db FILE`: the run and its loss per step in the results store's training_run /
// training_step tables (conformance/harness training_store.h), which `volta-audit report` plots.

#include <cstdint>
#include <memory>
#include <string>

#include "volta/conformance/training_store.h"
#include "volta/onnx/fine_tune.h"
#include "volta/train/language_model_training.h"

namespace volta::cli {

// What a run trains, on what data: the record's model, config, optimizer, data and seed. The
// caller adds the data path, the command, the threads and where it resumed from.
conformance::TrainingRunInfo run_info(const train::LanguageModelTrainer& trainer);
conformance::TrainingRunInfo run_info(const onnx::FineTuner& tuner);

class TrainingLog {
 public:
  // Records `info` with this build's provenance (commit, build type, compiler, CPU).
  TrainingLog(const std::string& db_path, conformance::TrainingRunInfo info);
  void step(const train::StepRecord& record, double tokens_per_s);
  void finish();  // the run is 'complete'; a process killed before stays 'running'

 private:
  conformance::ResultStore store_;
  std::unique_ptr<conformance::TrainingStepWriter> writer_;
};

}  // namespace volta::cli
