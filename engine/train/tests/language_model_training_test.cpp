// LanguageModelTrainer: the tiny transformer's loss falls on byte data; a checkpoint resumes to
// the same bits as an uninterrupted run (through the file's bytes); the run is the same at any
// thread count; and a checkpoint that does not fit the run is refused with its CK- code.

#define BOOST_TEST_MODULE language_model_training_test
#include "volta/train/language_model_training.h"

#include <boost/test/unit_test.hpp>
#include <memory>
#include <string>
#include <vector>

#include "lm_training_testing.h"
#include "volta/runtime/registry.h"
#include "volta/version.h"

namespace volta::train {
namespace {

using testing::checkpoint_file_after;
using testing::training_text;

const Backend& cpu() {
  static const std::unique_ptr<Backend> backend = make_backend("cpu");
  return *backend;
}

LanguageModelRun small_run() {
  LanguageModelRun run;
  run.model = {.d_model = 32, .layers = 1, .heads = 2, .d_ff = 64, .seq = 16, .batch = 4};
  run.optimizer = {.kind = OptimizerConfig::Kind::AdamW,
                   .schedule = {.kind = Schedule::Kind::WarmupCosine,
                                .base_lr = 1e-2,
                                .total_steps = 40,
                                .warmup_steps = 4,
                                .min_lr = 1e-3},
                   .weight_decay = 0.01,
                   .clip_norm = 1.0};
  run.order = {.kind = BatchOrder::Kind::Shuffled, .seed = 5};
  return run;
}

BOOST_AUTO_TEST_CASE(the_loss_falls_and_every_step_is_recorded) {
  LanguageModelTrainer trainer(small_run(), training_text(), 1, cpu());
  std::vector<StepRecord> steps(40);
  for (StepRecord& s : steps) s = trainer.step();
  BOOST_TEST_MESSAGE("loss " << steps.front().loss << " -> " << steps.back().loss);
  BOOST_TEST(steps.front().loss > 5.0);  // about ln 256 at the start
  BOOST_TEST(steps.back().loss < 0.7 * steps.front().loss);
  for (size_t i = 0; i < steps.size(); ++i) {
    BOOST_TEST(steps[i].step == static_cast<int64_t>(i + 1));
    BOOST_TEST(steps[i].gradient_norm > 0);
    BOOST_TEST(steps[i].learning_rate ==
               small_run().optimizer.schedule.learning_rate(static_cast<int64_t>(i + 1)));
  }
}

BOOST_AUTO_TEST_CASE(a_resumed_run_gives_the_uninterrupted_runs_bytes_at_any_thread_count) {
  LanguageModelTrainer whole(small_run(), training_text(), 1, cpu());
  const std::string uninterrupted = checkpoint_file_after(whole, 12);

  LanguageModelTrainer first(small_run(), training_text(), 3, cpu());
  const std::string at_five = checkpoint_file_after(first, 5);
  LanguageModelTrainer resumed =
      LanguageModelTrainer::resume(parse_checkpoint(at_five), training_text(), 2, cpu());
  BOOST_TEST(resumed.steps_taken() == 5);
  BOOST_TEST((resumed.run().optimizer.schedule.base_lr == small_run().optimizer.schedule.base_lr));
  const std::string continued = checkpoint_file_after(resumed, 12);
  BOOST_TEST((continued == uninterrupted),
             "resumed at 5 on 3 then 2 threads differs from 12 "
             "uninterrupted steps on 1 thread");
  // And save(load(f)) == f for a training checkpoint.
  BOOST_TEST((serialize_checkpoint(parse_checkpoint(continued).checkpoint) == continued));
}

BOOST_AUTO_TEST_CASE(the_optimizer_reads_back_to_the_same_bits) {
  OptimizerConfig o = small_run().optimizer;
  o.schedule.base_lr = 0.1 + 0.2;  // not a short decimal
  o.clip_norm = std::nullopt;
  const OptimizerConfig back = optimizer_from_json(optimizer_to_json(o));
  BOOST_TEST(optimizer_to_json(back) == optimizer_to_json(o));
  BOOST_TEST(back.schedule.base_lr == o.schedule.base_lr);
  BOOST_TEST(!back.clip_norm.has_value());
  BOOST_CHECK_THROW(optimizer_from_json(R"({"kind":"adamw","betta1":"0.9"})"), VoltaError);
  BOOST_CHECK_THROW(optimizer_from_json(R"({"kind":"lion"})"), VoltaError);
}

std::string diagnostic_of(const LoadedCheckpoint& c, const std::vector<uint8_t>& data) {
  try {
    LanguageModelTrainer::resume(c, data, 1, cpu());
  } catch (const CheckpointError& e) {
    return e.diagnostic();
  }
  return "accepted";
}

BOOST_AUTO_TEST_CASE(checkpoints_that_do_not_fit_the_run_are_refused_with_their_code) {
  LanguageModelTrainer trainer(small_run(), training_text(), 1, cpu());
  trainer.step();
  const LoadedCheckpoint good = parse_checkpoint(serialize_checkpoint(trainer.checkpoint("t")));
  BOOST_TEST(diagnostic_of(good, training_text()) == "accepted");

  std::vector<uint8_t> other = training_text();
  other[3] = 'x';
  BOOST_TEST(diagnostic_of(good, other) == "CK-DATA-MISMATCH");

  LoadedCheckpoint no_moment = good;
  std::erase_if(no_moment.checkpoint.tensors,
                [](const CheckpointTensor& t) { return t.name.starts_with("optimizer/"); });
  BOOST_TEST(diagnostic_of(no_moment, training_text()) == "CK-SHAPE-MISMATCH");

  LoadedCheckpoint misshaped = good;
  for (CheckpointTensor& t : misshaped.checkpoint.tensors) {
    if (t.name == "head.weight") t.shape = {t.shape[1], t.shape[0]};
  }
  BOOST_TEST(diagnostic_of(misshaped, training_text()) == "CK-SHAPE-MISMATCH");

  LoadedCheckpoint extra = good;
  extra.checkpoint.tensors.push_back(checkpoint_tensor("stray.weight", Tensor(DType::F32, {2})));
  BOOST_TEST(diagnostic_of(extra, training_text()) == "CK-SHAPE-MISMATCH");

  LoadedCheckpoint no_config = good;
  no_config.checkpoint.metadata.erase("config");
  BOOST_TEST(diagnostic_of(no_config, training_text()) == "CK-BAD-METADATA");

  LoadedCheckpoint bad_cursor = good;
  bad_cursor.checkpoint.metadata["data_cursor"] = R"({"order":"zigzag"})";
  BOOST_TEST(diagnostic_of(bad_cursor, training_text()) == "CK-BAD-METADATA");
}

// The writer's version and commit are provenance: recorded, known to the format (not reported
// as unknown keys), and not checked on resume, so another release resumes the file.
BOOST_AUTO_TEST_CASE(a_checkpoint_records_the_engine_version_and_another_version_resumes_it) {
  LanguageModelTrainer trainer(small_run(), training_text(), 1, cpu());
  trainer.step();
  LoadedCheckpoint loaded = parse_checkpoint(serialize_checkpoint(trainer.checkpoint("c0ffee")));
  BOOST_TEST(loaded.checkpoint.metadata.at("engine_version") == std::string(kVersion));
  BOOST_TEST(loaded.checkpoint.metadata.at("engine_commit") == "c0ffee");
  BOOST_TEST(loaded.unknown_metadata_keys.empty());
  loaded.checkpoint.metadata["engine_version"] = "0.0.1";
  loaded.checkpoint.metadata["engine_commit"] = "0ld";
  BOOST_TEST(diagnostic_of(loaded, training_text()) == "accepted");
  loaded.checkpoint.metadata.erase("engine_version");  // a 1.0 file has none
  BOOST_TEST(diagnostic_of(loaded, training_text()) == "accepted");
}

}  // namespace
}  // namespace volta::train
