#include "training_log.h"

#include "build_info.h"
#include "volta/runtime/host.h"

namespace volta::cli {

conformance::TrainingRunInfo run_info(const train::LanguageModelTrainer& trainer) {
  conformance::TrainingRunInfo info;
  info.model = "tiny-transformer";
  info.config = trainer.run().model.to_json();
  info.optimizer = train::optimizer_to_json(trainer.run().optimizer);
  info.data_sha256 = trainer.data_sha256();
  info.data_bytes = trainer.data_bytes();
  info.seed = trainer.run().model.seed;
  return info;
}

conformance::TrainingRunInfo run_info(const onnx::FineTuner& tuner) {
  conformance::TrainingRunInfo info;
  info.model = tuner.model_name();
  info.config = tuner.config_json();
  info.optimizer = train::optimizer_to_json(tuner.run().optimizer);
  info.data_sha256 = tuner.data_sha256();
  info.data_bytes = tuner.data_bytes();
  info.seed = tuner.run().order.seed;
  return info;
}

TrainingLog::TrainingLog(const std::string& db_path, conformance::TrainingRunInfo info)
    : store_(db_path) {
  info.commit = build::kCommit;
  info.dirty = build::kDirty;
  info.build_type = build::kBuildType;
  info.compiler = std::string("g++ ") + __VERSION__;
  info.cpu_model = host_cpu_model();
  writer_ = std::make_unique<conformance::TrainingStepWriter>(
      store_, conformance::begin_training_run(store_, info));
}

void TrainingLog::step(const train::StepRecord& record, double tokens_per_s) {
  writer_->record({.step = record.step,
                   .loss = record.loss,
                   .grad_norm = record.gradient_norm,
                   .lr = record.learning_rate,
                   .tokens_per_s = tokens_per_s > 0 ? std::optional(tokens_per_s) : std::nullopt});
}

void TrainingLog::finish() { writer_->finish(conformance::TrainingStatus::Complete); }

}  // namespace volta::cli
