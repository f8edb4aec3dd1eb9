// The transformer-train-reload family: the milestone's training guarantees, each one case.

#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "training_cases.h"
#include "volta/model/language_model.h"
#include "volta/runtime/registry.h"
#include "volta/sha256.h"
#include "volta/train/token_data.h"

namespace volta::conformance::training {
namespace {

const Backend& cpu() {
  static const std::unique_ptr<Backend> backend = make_backend("cpu");
  return *backend;
}

std::string tensor_sha256(const Tensor& t) {
  return sha256_hex(std::string_view(static_cast<const char*>(t.data()), t.nbytes()));
}

std::string short_hash(const std::string& hex) { return hex.substr(0, 16); }

// The logits `volta eval --digest` hashes: the first `batch` windows, one sequence apart.
Tensor digest_tokens(const std::vector<uint8_t>& data, const model::TransformerConfig& c) {
  const train::BatchOrder order{.kind = train::BatchOrder::Kind::Sequential, .stride = c.seq};
  return train::make_batch(data, order, c.batch, c.seq, c.vocab, 0).tokens;
}

// The value after "KEY " in the CLI's output, or "".
std::string field(const std::string& output, const std::string& key) {
  const size_t at = output.rfind(key + " ");
  if (at == std::string::npos) return "";
  std::istringstream rest(output.substr(at + key.size() + 1));
  std::string value;
  rest >> value;
  return value;
}

std::string steps_flag(int64_t steps) { return std::to_string(steps); }

// `volta train` with the defaults for `steps` steps, saving to `checkpoint`; extra flags after.
CliResult train_cli(const TrainingSuiteOptions& o, int64_t steps,
                    const std::filesystem::path& checkpoint, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"train",           "--data", o.data.string(),    "--steps",
                                   steps_flag(steps), "--save", checkpoint.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_volta(o, args);
}

std::string cli_failure(const std::string& what, const CliResult& r) {
  return what + " exited " + std::to_string(r.exit_code) + ": " +
         r.output.substr(r.output.size() > 600 ? r.output.size() - 600 : 0);
}

CaseOutcome loss_falls(const TrainingSuiteOptions& o) {
  const ScratchDir dir(o, "loss-falls");
  const CliResult r =
      run_volta(o, {"train", "--data", o.data.string(), "--save", (dir / "default.ckpt").string()});
  if (r.exit_code != 0) return failed(cli_failure("volta train (the defaults)", r));
  const std::string first =
      field(r.output.substr(0, r.output.find('\n', r.output.find("step 1/"))), "loss");
  const double last = std::stod(field(r.output, "final loss"));
  const std::string summary = "the default run on " + o.data.filename().string() + ": loss " +
                              first + " at step 1, " + std::to_string(last) +
                              " at the last step (ceiling " +
                              std::to_string(kDefaultRunLossCeiling) + ")";
  return last < kDefaultRunLossCeiling ? pass(summary) : failed(summary);
}

CaseOutcome reload_in_fresh_processes(const TrainingSuiteOptions& o) {
  const ScratchDir dir(o, "reload");
  const std::vector<uint8_t> data = read_data(o);
  train::LanguageModelTrainer trainer(train::default_run(20), data, 1, cpu());
  while (trainer.steps_taken() < 20) trainer.step();
  const model::TrainedModel trained{trainer.run().model, trainer.parameters()};
  model::LanguageModel lm(trained, trained.config.batch, 1, cpu());
  const std::string before = tensor_sha256(lm.logits(digest_tokens(data, trained.config)));
  const std::filesystem::path checkpoint = dir / "trained.ckpt";
  save_checkpoint(trainer.checkpoint(o.engine_commit), checkpoint);
  std::string message = "logits sha256 before save " + short_hash(before);
  for (const char* threads : {"1", "3"}) {
    const CliResult r = run_volta(o, {"eval", "--checkpoint", checkpoint.string(), "--data",
                                      o.data.string(), "--digest", "--threads", threads});
    if (r.exit_code != 0) return failed(cli_failure("volta eval --digest", r));
    const std::string after = field(r.output, "logits_sha256");
    message += "; fresh process at " + std::string(threads) + " thread(s) " + short_hash(after);
    if (after != before) return failed(message + ": the reloaded model's logits differ");
  }
  return pass(message);
}

CaseOutcome thread_counts(const TrainingSuiteOptions& o) {
  const std::vector<uint8_t> data = read_data(o);
  constexpr int64_t kSteps = 8;
  std::vector<uint32_t> reference_losses;
  std::string reference_file;
  for (const int threads : kTrainingThreadCounts) {
    train::LanguageModelTrainer trainer(train::default_run(kSteps), data, threads, cpu());
    std::vector<uint32_t> losses;
    while (trainer.steps_taken() < kSteps) {
      const auto loss = static_cast<float>(trainer.step().loss);  // an f32 loss: exact
      uint32_t bits = 0;
      std::memcpy(&bits, &loss, sizeof bits);
      losses.push_back(bits);
    }
    const std::string file = serialize_checkpoint(trainer.checkpoint(o.engine_commit));
    if (threads == kTrainingThreadCounts[0]) {
      reference_losses = losses;
      reference_file = file;
    } else if (losses != reference_losses) {
      return failed("the loss bits at " + std::to_string(threads) + " threads differ from 1's");
    } else if (file != reference_file) {
      return failed("the checkpoint bytes at " + std::to_string(threads) +
                    " threads differ from 1's");
    }
  }
  return pass(std::to_string(kSteps) + " steps: loss bits and checkpoint bytes (sha256 " +
              short_hash(sha256_hex(reference_file)) + ") identical at 1, 2, 3, 4 and 8 threads");
}

CaseOutcome across_processes(const TrainingSuiteOptions& o) {
  const ScratchDir dir(o, "processes");
  constexpr int64_t kSteps = 8;
  const CliResult a = train_cli(o, kSteps, dir / "a.ckpt", {"--threads", "1"});
  const CliResult b = train_cli(o, kSteps, dir / "b.ckpt", {"--threads", "4"});
  if (a.exit_code != 0) return failed(cli_failure("volta train (process 1)", a));
  if (b.exit_code != 0) return failed(cli_failure("volta train (process 2)", b));
  train::LanguageModelTrainer trainer(train::default_run(kSteps), read_data(o), 2, cpu());
  while (trainer.steps_taken() < kSteps) trainer.step();
  const std::string here = serialize_checkpoint(trainer.checkpoint(o.engine_commit));
  const std::string fa = read_file(dir / "a.ckpt");
  const std::string fb = read_file(dir / "b.ckpt");
  const std::string message = "checkpoints after " + std::to_string(kSteps) +
                              " steps: process 1 (1 thread) " + short_hash(sha256_hex(fa)) +
                              ", process 2 (4 threads) " + short_hash(sha256_hex(fb)) +
                              ", this process (2 threads) " + short_hash(sha256_hex(here));
  return fa == fb && fa == here ? pass(message) : failed(message + ": they differ");
}

CaseOutcome resume_equals_uninterrupted(const TrainingSuiteOptions& o) {
  const ScratchDir dir(o, "resume");
  constexpr int64_t kTotal = 16;
  const CliResult whole = train_cli(o, kTotal, dir / "whole.ckpt");
  const CliResult half = train_cli(o, kTotal, dir / "half.ckpt", {"--stop-at", "7"});
  if (whole.exit_code != 0) return failed(cli_failure("volta train (uninterrupted)", whole));
  if (half.exit_code != 0) return failed(cli_failure("volta train --stop-at 7", half));
  const CliResult resumed =
      run_volta(o, {"train", "--data", o.data.string(), "--resume", (dir / "half.ckpt").string(),
                    "--save", (dir / "resumed.ckpt").string()});
  if (resumed.exit_code != 0) return failed(cli_failure("volta train --resume", resumed));
  const std::string a = read_file(dir / "whole.ckpt");
  const std::string b = read_file(dir / "resumed.ckpt");
  const std::string message =
      "7 steps, save, resume for 9 in a new process: " + short_hash(sha256_hex(b)) +
      "; 16 uninterrupted: " + short_hash(sha256_hex(a));
  return a == b ? pass(message) : failed(message + ": the checkpoints differ");
}

CaseOutcome resume_after_kill(const TrainingSuiteOptions& o) {
  const ScratchDir dir(o, "kill");
  constexpr int64_t kTotal = 40;
  const CliResult whole = train_cli(o, kTotal, dir / "whole.ckpt");
  if (whole.exit_code != 0) return failed(cli_failure("volta train (uninterrupted)", whole));
  // A random point after the first save: the step to wait for, then up to 20 ms more.
  std::random_device entropy;
  std::mt19937_64 pick(entropy());
  const int64_t wait_for = std::uniform_int_distribution<int64_t>(4, 28)(pick);
  const int extra_ms = std::uniform_int_distribution<int>(0, 20)(pick);
  const std::filesystem::path checkpoint = dir / "killed.ckpt";
  int64_t saved_step = 0;
  {
    BackgroundVolta training(o, {"train", "--data", o.data.string(), "--steps", steps_flag(kTotal),
                                 "--save", checkpoint.string(), "--save-every", "4"});
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (saved_step < wait_for && std::chrono::steady_clock::now() < deadline) {
      if (!training.running()) {
        return failed("volta train finished before the kill at step " + std::to_string(wait_for) +
                      " (saved " + std::to_string(saved_step) + ")");
      }
      std::error_code missing;
      if (std::filesystem::exists(checkpoint, missing)) {
        saved_step = std::stoll(load_checkpoint(checkpoint).checkpoint.metadata.at("step"));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(extra_ms));
    if (!training.running()) {
      return failed("volta train finished before the kill (waited for step " +
                    std::to_string(wait_for) + ")");
    }
    training.kill_hard();
  }
  // The last save must be whole: it loads (digests and all) and the run resumes from it.
  const LoadedCheckpoint last = load_checkpoint(checkpoint);
  const std::string killed_at = last.checkpoint.metadata.at("step");
  const CliResult resumed =
      run_volta(o, {"train", "--data", o.data.string(), "--resume", checkpoint.string(), "--save",
                    (dir / "resumed.ckpt").string()});
  if (resumed.exit_code != 0) return failed(cli_failure("volta train --resume", resumed));
  const std::string a = read_file(dir / "whole.ckpt");
  const std::string b = read_file(dir / "resumed.ckpt");
  const std::string message =
      "kill -9 after step " + std::to_string(wait_for) + " + " + std::to_string(extra_ms) +
      " ms, the last save at step " + killed_at + ", resumed to " + std::to_string(kTotal) + ": " +
      short_hash(sha256_hex(b)) + "; uninterrupted: " + short_hash(sha256_hex(a));
  return a == b ? pass(message) : failed(message + ": the checkpoints differ");
}

CaseOutcome onnx_runtime_agrees(const TrainingSuiteOptions& o) {
  std::string why_not;
  const std::optional<std::filesystem::path> python = interop_python(o, why_not);
  if (!python) return skipped(why_not);
  const ScratchDir dir(o, "onnxruntime");
  const std::vector<uint8_t> data = read_data(o);
  train::LanguageModelTrainer trainer(train::default_run(10), data, 1, cpu());
  while (trainer.steps_taken() < 10) trainer.step();
  const std::filesystem::path checkpoint = dir / "trained.ckpt";
  save_checkpoint(trainer.checkpoint(o.engine_commit), checkpoint);
  constexpr int64_t kBatch = 2;
  const std::filesystem::path onnx_file = dir / "model.onnx";
  const CliResult exported = run_volta(o, {"export", "--checkpoint", checkpoint.string(), "--onnx",
                                           onnx_file.string(), "--batch", std::to_string(kBatch)});
  if (exported.exit_code != 0) return failed(cli_failure("volta export", exported));
  model::TransformerConfig config = trainer.run().model;
  const model::TrainedModel trained{config, trainer.parameters()};
  model::LanguageModel lm(trained, kBatch, 1, cpu());
  config.batch = kBatch;
  const Tensor tokens = digest_tokens(data, config);
  const Tensor logits = lm.logits(tokens);
  const model::LanguageModelGraph graph = model::inference_graph(config, kBatch);
  const std::string output = graph.graph.value(graph.output).name;
  save_checkpoint({.tensors = {checkpoint_tensor("tokens", tokens)}, .metadata = {}},
                  dir / "in.safetensors");
  save_checkpoint({.tensors = {checkpoint_tensor(output, logits)}, .metadata = {}},
                  dir / "out.safetensors");
  const CliResult ort =
      run_program({python->string(), (o.interop_scripts / "run_onnxruntime.py").string(),
                   onnx_file.string(), "--inputs", (dir / "in.safetensors").string(), "--expect",
                   (dir / "out.safetensors").string(), "--atol", "1e-5"});
  std::string summary = ort.output;
  while (!summary.empty() && summary.back() == '\n') summary.pop_back();
  const std::string message =
      "volta export --batch 2 of a 10-step checkpoint in ONNX Runtime "
      "(one thread) against Volta's logits, atol 1e-5: " +
      summary;
  return ort.exit_code == 0 ? pass(message) : failed(message);
}

}  // namespace

void train_reload_cases(const TrainingSuiteOptions& options, std::vector<TrainingCase>& out) {
  const std::string family(kTrainReloadFamily);
  const auto add = [&](std::string id, std::string params,
                       CaseOutcome (*body)(const TrainingSuiteOptions&),
                       std::string precondition = {}) {
    out.push_back({family, std::move(id), std::move(params),
                   [options, body] { return body(options); }, std::move(precondition)});
  };
  add("loss-falls:default-run", "steps=1000 config=tiny data=" + options.data.filename().string(),
      loss_falls);
  add("reload:fresh-process", "steps=20 processes=2 threads=1,3", reload_in_fresh_processes);
  add("threads:1,2,3,4,8", "steps=8", thread_counts);
  add("processes:2", "steps=8 threads=1,4,2", across_processes);
  add("resume:7+9", "steps=16", resume_equals_uninterrupted);
  add("resume:kill-9", "steps=40 save-every=4", resume_after_kill);
  add("interop:onnxruntime", "steps=10 batch=2 atol=1e-5", onnx_runtime_agrees,
      "the interop venv (scripts/ci/bootstrap.sh)");
  add("memory-budget", "file=governance/memory-budget.tsv", memory_budget);
}

}  // namespace volta::conformance::training
