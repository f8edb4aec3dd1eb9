#pragma once
// `volta train --db FILE`: the run and its loss per step in the results store's training_run /
// training_step tables (conformance/harness training_store.h), which `volta-audit report` plots.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "volta/conformance/training_store.h"
#include "volta/train/language_model_training.h"

namespace volta::cli {

class TrainingLog {
 public:
  TrainingLog(const std::string& db_path, const train::LanguageModelTrainer& trainer,
              const std::string& data_path, const std::string& command, int threads,
              std::optional<int64_t> resumed_from);
  void step(const train::StepRecord& record, double tokens_per_s);
  void finish();  // the run is 'complete'; a process killed before stays 'running'

 private:
  conformance::ResultStore store_;
  std::unique_ptr<conformance::TrainingStepWriter> writer_;
};

}  // namespace volta::cli
