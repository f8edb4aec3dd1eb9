// `volta train`, `volta generate`, `volta eval` and `volta export`: the tiny transformer
// (engine/model) trained on byte data, saved and resumed as checkpoint format v1, used for text
// and scored; and an imported ONNX causal LM fine-tuned the same way (volta/onnx/fine_tune.h).

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "build_info.h"
#include "commands.h"
#include "options.h"
#include "training_log.h"
#include "volta/model/language_model.h"
#include "volta/onnx/export.h"
#include "volta/onnx/fine_tune.h"
#include "volta/runtime/registry.h"
#include "volta/sha256.h"
#include "volta/train/language_model_training.h"

namespace volta::cli {
namespace {

const Backend& cpu() {
  static const std::unique_ptr<Backend> backend = make_backend("cpu");
  return *backend;
}

int threads_of(const Options& o) {
  return static_cast<int>(o.integer("--threads", 1, 256).value_or(1));
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError{"cannot read '" + path.string() + "'"};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// --config tiny|FILE, then the size flags over it.
model::TransformerConfig model_config(const Options& o) {
  model::TransformerConfig c = model::kTinyTransformer;
  if (const std::optional<std::string> config = o.text("--config"); config && *config != "tiny") {
    c = model::TransformerConfig::from_json(read_text(*config));
  }
  const auto size = [&](std::string_view flag, int64_t& field) {
    if (auto v = o.integer(flag, 1, int64_t{1} << 20)) field = *v;
  };
  size("--batch", c.batch);
  size("--seq", c.seq);
  size("--d-model", c.d_model);
  size("--layers", c.layers);
  size("--heads", c.heads);
  size("--d-ff", c.d_ff);
  if (auto seed = o.integer("--seed", 0, INT64_MAX)) c.seed = static_cast<uint64_t>(*seed);
  c.validate();
  return c;
}

// default_run's optimizer with the flags given over it.
train::OptimizerConfig optimizer_config(const Options& o, int64_t steps) {
  train::OptimizerConfig opt = train::default_run(steps).optimizer;
  using Kind = train::OptimizerConfig::Kind;
  if (const std::optional<std::string> kind = o.text("--optimizer")) {
    opt.kind = train::parse_optimizer_kind(*kind);
    if (opt.kind != Kind::AdamW) opt.weight_decay = 0;
    if (opt.kind == Kind::Sgd) opt.momentum = 0.9;
  }
  if (const std::optional<std::string> schedule = o.text("--schedule")) {
    opt.schedule.kind = train::parse_schedule_kind(*schedule);
  }
  if (const std::optional<double> lr = o.real("--lr", 0, 10)) {
    opt.schedule.base_lr = *lr;
    opt.schedule.min_lr = *lr / 10;
  }
  opt.schedule.min_lr = o.real("--min-lr", 0, 10).value_or(opt.schedule.min_lr);
  opt.schedule.warmup_steps = o.integer("--warmup", 0, steps).value_or(opt.schedule.warmup_steps);
  opt.schedule.step_size = o.integer("--step-size", 1, INT64_MAX).value_or(opt.schedule.step_size);
  opt.schedule.gamma = o.real("--gamma", 0, 1).value_or(opt.schedule.gamma);
  opt.weight_decay = o.real("--weight-decay", 0, 1).value_or(opt.weight_decay);
  opt.momentum = o.real("--momentum", 0, 1).value_or(opt.momentum);
  if (const std::optional<double> clip = o.real("--clip-norm", 0, 1e9)) {
    opt.clip_norm = *clip > 0 ? std::optional(*clip) : std::nullopt;
  }
  opt.validate();
  return opt;
}

// Windows one sequence apart unless --stride says otherwise; `seed` shuffles them.
train::BatchOrder batch_order(const Options& o, int64_t seq, uint64_t seed) {
  train::BatchOrder order = train::default_run(1).order;
  if (const std::optional<std::string> kind = o.text("--order")) {
    order.kind = train::parse_batch_order(*kind);
  }
  order.stride = o.integer("--stride", 1, INT64_MAX).value_or(seq);
  order.seed = seed;
  return order;
}

std::string seconds_text(double s) {
  char buffer[32];
  if (s >= 3600) {
    std::snprintf(buffer, sizeof buffer, "%dh%02dm", static_cast<int>(s / 3600),
                  static_cast<int>(std::fmod(s, 3600) / 60));
  } else if (s >= 60) {
    std::snprintf(buffer, sizeof buffer, "%dm%02ds", static_cast<int>(s / 60),
                  static_cast<int>(std::fmod(s, 60)));
  } else {
    std::snprintf(buffer, sizeof buffer, "%.1fs", s);
  }
  return buffer;
}

// A bar redrawn in place on a terminal; a plain line every twentieth of the run otherwise.
class TrainProgress {
 public:
  TrainProgress(int64_t first, int64_t last, int64_t tokens_per_step)
      : first_(first),
        last_(last),
        tokens_per_step_(tokens_per_step),
        interactive_(isatty(STDERR_FILENO) == 1),
        start_(std::chrono::steady_clock::now()) {}

  // Returns the tokens per second so far.
  double add(const train::StepRecord& r) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const int64_t done = r.step - first_ + 1;
    const double tokens_per_s =
        elapsed > 0 ? static_cast<double>(done * tokens_per_step_) / elapsed : 0;
    const double eta = static_cast<double>(last_ - r.step) * elapsed / static_cast<double>(done);
    const int64_t every = std::max<int64_t>(1, (last_ - first_ + 1) / 20);
    if (interactive_) {
      constexpr int kWidth = 24;
      const auto filled = static_cast<int>(kWidth * r.step / std::max<int64_t>(1, last_));
      std::fprintf(stderr, "\r  step %lld/%lld [%s%s] loss %.4f  %.0f tok/s  ETA %s   ",
                   static_cast<long long>(r.step), static_cast<long long>(last_),
                   std::string(static_cast<size_t>(filled), '#').c_str(),
                   std::string(static_cast<size_t>(kWidth - filled), '.').c_str(), r.loss,
                   tokens_per_s, seconds_text(eta).c_str());
      if (r.step == last_) std::fputc('\n', stderr);
    } else if (r.step == first_ || r.step == last_ || (r.step - first_ + 1) % every == 0) {
      std::fprintf(stderr, "step %lld/%lld loss %.6f grad_norm %.4f lr %.3g %.0f tok/s ETA %s\n",
                   static_cast<long long>(r.step), static_cast<long long>(last_), r.loss,
                   r.gradient_norm, r.learning_rate, tokens_per_s, seconds_text(eta).c_str());
    }
    std::fflush(stderr);
    return tokens_per_s;
  }

 private:
  int64_t first_, last_, tokens_per_step_;
  bool interactive_;
  std::chrono::steady_clock::time_point start_;
};

bool fine_tunes_onnx(const LoadedCheckpoint& checkpoint) {
  return checkpoint.checkpoint.metadata.contains(std::string(onnx::kFineTuneModelSha256Key));
}

// A fine-tune checkpoint where the built-in model's is needed: what to do with it instead.
void refuse_fine_tune(const LoadedCheckpoint& checkpoint, const std::string& path,
                      std::string_view instead) {
  if (!fine_tunes_onnx(checkpoint)) return;
  const auto model = checkpoint.checkpoint.metadata.find(std::string(onnx::kFineTuneModelKey));
  const std::string name =
      model == checkpoint.checkpoint.metadata.end() ? "MODEL.onnx" : model->second;
  std::string how(instead);
  for (size_t at = how.find("MODEL"); at != std::string::npos; at = how.find("MODEL", at + 1)) {
    how.replace(at, 5, name);
  }
  throw CheckpointError("CK-MODEL-MISMATCH", "'" + path + "' fine-tunes the ONNX model '" + name +
                                                 "', not the built-in tiny transformer; " + how);
}

model::TrainedModel load_model(const Options& o, std::string_view command) {
  const std::string path = o.required("--checkpoint");
  const LoadedCheckpoint checkpoint = load_checkpoint(path);
  refuse_fine_tune(checkpoint, path,
                   "volta " + std::string(command) +
                       " takes the built-in model's checkpoints (write the fine-tuned model with "
                       "`volta export --checkpoint " +
                       path + " --model MODEL --onnx OUT.onnx` and run it with `volta run`)");
  return model::trained_model(checkpoint);
}

// What `volta train` does once it has a trainer (LanguageModelTrainer or onnx::FineTuner): the
// steps up to --stop-at or `steps`, with progress, --db rows and --save / --save-every.
struct TrainLoop {
  const Options& options;
  std::span<const std::string_view> args;
  std::string data_path;
  int threads = 1;
  int64_t steps = 0;
  std::optional<int64_t> resumed_from;
  std::optional<int64_t> save_every;
  std::optional<std::string> save_path;

  // After --resume CKPT: the run goes on from the checkpoint's step to the end of the schedule it
  // was started with, unless --steps says otherwise.
  template <typename Trainer>
  void resumed(const Trainer& trainer, const std::string& checkpoint_path) {
    resumed_from = trainer.steps_taken();
    if (steps == 0) steps = trainer.run().optimizer.schedule.total_steps;
    std::fprintf(stderr, "resumed %s at step %lld\n", checkpoint_path.c_str(),
                 static_cast<long long>(*resumed_from));
  }

  template <typename Trainer>
  int run(Trainer& trainer, const std::string& what, int64_t tokens_per_step) const {
    // --stop-at: end early, as if interrupted, to go on later with --resume.
    const int64_t last_step = options.integer("--stop-at", 1, steps).value_or(steps);
    const int64_t first = trainer.steps_taken() + 1;
    std::fprintf(stderr, "training %s on %s: steps %lld..%lld, %s, threads %d\n", what.c_str(),
                 data_path.c_str(), static_cast<long long>(first),
                 static_cast<long long>(last_step),
                 train::optimizer_name(trainer.run().optimizer.kind).c_str(), threads);
    std::optional<TrainingLog> log;
    if (const std::optional<std::string> db = options.text("--db")) {
      conformance::TrainingRunInfo info = run_info(trainer);
      info.data_path = data_path;
      info.command = "volta train";
      for (const std::string_view a : args) info.command += " " + std::string(a);
      info.threads = threads;
      info.resumed_from = resumed_from;
      log.emplace(*db, std::move(info));
    }
    TrainProgress progress(first, last_step, tokens_per_step);
    train::StepRecord last;
    const auto save = [&] { save_checkpoint(trainer.checkpoint(build::kCommit), *save_path); };
    while (trainer.steps_taken() < last_step) {
      last = trainer.step();
      const double tokens_per_s = progress.add(last);
      if (log) log->step(last, tokens_per_s);
      if (save_every && last.step % *save_every == 0 && last.step != last_step) save();
    }
    if (log) log->finish();
    if (save_path) {
      save();
      std::fprintf(stderr, "saved %s (step %lld)\n", save_path->c_str(),
                   static_cast<long long>(trainer.steps_taken()));
    }
    if (first <= last_step) {
      std::printf("final loss %.6f at step %lld\n", last.loss, static_cast<long long>(last.step));
    }
    return 0;
  }
};

// The flags a checkpoint fixes: refused beside --resume.
constexpr std::string_view kFixedByCheckpoint[] = {
    "--config",       "--seed",     "--batch",     "--seq",       "--d-model",
    "--layers",       "--heads",    "--d-ff",      "--optimizer", "--lr",
    "--min-lr",       "--schedule", "--warmup",    "--step-size", "--gamma",
    "--weight-decay", "--momentum", "--clip-norm", "--order",     "--stride"};

void refuse_fixed_flags(const Options& o) {
  for (const std::string_view fixed : kFixedByCheckpoint) {
    if (o.has(fixed)) {
      throw UsageError{std::string(fixed) +
                       " conflicts with --resume: the checkpoint fixes the model, optimizer and "
                       "data order"};
    }
  }
}

// `volta train MODEL.onnx --data FILE ...`: fine-tune an imported causal LM.
int fine_tune_command(const Options& o, TrainLoop loop, const std::string& model_path,
                      std::vector<uint8_t> data) {
  for (const std::string_view size :
       {"--config", "--batch", "--seq", "--d-model", "--layers", "--heads", "--d-ff"}) {
    if (o.has(size)) {
      throw UsageError{std::string(size) + " does not apply to fine-tuning '" + model_path +
                       "': the ONNX model fixes its size, batch and sequence length"};
    }
  }
  const onnx::FineTuneModel model = onnx::FineTuneModel::load(model_path);
  std::optional<onnx::FineTuner> tuner;
  if (const std::optional<std::string> resume = o.text("--resume")) {
    refuse_fixed_flags(o);
    tuner.emplace(onnx::FineTuner::resume(model, load_checkpoint(*resume), std::move(data),
                                          loop.threads, cpu()));
    loop.resumed(*tuner, *resume);
  } else {
    if (loop.steps == 0) loop.steps = 1000;
    const onnx::CausalLmShape declared = onnx::declared_causal_lm(model.model);
    onnx::FineTuneRun run = onnx::default_fine_tune_run(loop.steps, declared.seq);
    run.optimizer = optimizer_config(o, loop.steps);
    const auto seed = o.integer("--seed", 0, INT64_MAX);
    run.order = batch_order(o, declared.seq, seed ? static_cast<uint64_t>(*seed) : run.order.seed);
    tuner.emplace(model, run, std::move(data), loop.threads, cpu());
  }
  const onnx::CausalLmShape& s = tuner->shape();
  const std::string what = "'" + model_path + "' (" + s.tokens + " int64 [" +
                           std::to_string(s.batch) + "," + std::to_string(s.seq) + "] -> " +
                           s.logits + " [" + std::to_string(s.batch) + "," + std::to_string(s.seq) +
                           "," + std::to_string(s.vocab) + "])";
  return loop.run(*tuner, what, s.batch * s.seq);
}

}  // namespace

int train_command(std::span<const std::string_view> args) {
  const Options o(
      "train", args,
      {"--data",         "--config",     "--steps",     "--seed",   "--threads",   "--batch",
       "--seq",          "--d-model",    "--layers",    "--heads",  "--d-ff",      "--optimizer",
       "--lr",           "--min-lr",     "--schedule",  "--warmup", "--step-size", "--gamma",
       "--weight-decay", "--momentum",   "--clip-norm", "--order",  "--stride",    "--stop-at",
       "--save",         "--save-every", "--resume",    "--db"});
  if (o.positional().size() > 1) {
    throw UsageError{"unexpected argument '" + o.positional()[1] +
                     "' (volta train takes at most one model, an ONNX file to fine-tune)"};
  }
  const std::string data_path = o.required("--data");
  std::vector<uint8_t> data = train::read_token_file(data_path);
  TrainLoop loop{.options = o,
                 .args = args,
                 .data_path = data_path,
                 .threads = threads_of(o),
                 .steps = o.integer("--steps", 1, int64_t{1} << 40).value_or(0),
                 .resumed_from = std::nullopt,
                 .save_every = o.integer("--save-every", 1, int64_t{1} << 40),
                 .save_path = o.text("--save")};
  if (loop.save_every && !loop.save_path) throw UsageError{"--save-every needs --save CKPT"};
  if (!o.positional().empty()) {
    return fine_tune_command(o, std::move(loop), o.positional()[0], std::move(data));
  }

  std::optional<train::LanguageModelTrainer> trainer;
  if (const std::optional<std::string> resume = o.text("--resume")) {
    refuse_fixed_flags(o);
    const LoadedCheckpoint checkpoint = load_checkpoint(*resume);
    refuse_fine_tune(
        checkpoint, *resume,
        "resume it with the model: `volta train MODEL --data FILE --resume " + *resume + "`");
    trainer.emplace(
        train::LanguageModelTrainer::resume(checkpoint, std::move(data), loop.threads, cpu()));
    loop.resumed(*trainer, *resume);
  } else {
    if (loop.steps == 0) loop.steps = 1000;
    train::LanguageModelRun run;
    run.model = model_config(o);
    run.optimizer = optimizer_config(o, loop.steps);
    run.order = batch_order(o, run.model.seq, run.model.seed);
    trainer.emplace(run, std::move(data), loop.threads, cpu());
  }
  const model::TransformerConfig& m = trainer->run().model;
  return loop.run(*trainer, m.to_json(), m.batch * m.seq);
}

int generate_command(std::span<const std::string_view> args) {
  const Options o("generate", args,
                  {"--checkpoint", "--prompt", "--tokens", "--temperature", "--seed", "--threads"});
  const model::TrainedModel trained = load_model(o, "generate");
  model::LanguageModel lm(trained, 1, threads_of(o), cpu());
  model::GenerateOptions options;
  options.tokens = o.integer("--tokens", 0, int64_t{1} << 20).value_or(options.tokens);
  options.temperature = o.real("--temperature", 0, 100).value_or(0);
  options.seed = static_cast<uint64_t>(o.integer("--seed", 0, INT64_MAX).value_or(1));
  const std::string text = model::generate(lm, o.required("--prompt"), options);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fputc('\n', stdout);
  return 0;
}

int eval_command(std::span<const std::string_view> args) {
  const Options o("eval", args, {"--checkpoint", "--data", "--threads"}, {"--digest"});
  const model::TrainedModel trained = load_model(o, "eval");
  const std::string data_path = o.required("--data");
  const model::Evaluation e =
      model::evaluate(trained, train::read_token_file(data_path), threads_of(o), cpu());
  std::printf("eval %s: %lld windows, %lld tokens, mean loss %.6f nats/token, perplexity %.4f\n",
              data_path.c_str(), static_cast<long long>(e.windows),
              static_cast<long long>(e.tokens), e.mean_loss, e.perplexity);
  if (o.flag("--digest")) {
    // The logits of the first `batch` windows, one sequence apart: what a reload is compared by.
    const model::TransformerConfig& c = trained.config;
    model::LanguageModel lm(trained, c.batch, threads_of(o), cpu());
    const train::BatchOrder order{.kind = train::BatchOrder::Kind::Sequential, .stride = c.seq};
    const Tensor logits = lm.logits(
        train::make_batch(train::read_token_file(data_path), order, c.batch, c.seq, c.vocab, 0)
            .tokens);
    std::printf(
        "logits_sha256 %s\n",
        sha256_hex(std::string_view(static_cast<const char*>(logits.data()), logits.nbytes()))
            .c_str());
  }
  return 0;
}

int export_command(std::span<const std::string_view> args) {
  const Options o("export", args, {"--checkpoint", "--onnx", "--batch", "--model"});
  const std::string path = o.required("--checkpoint");
  const LoadedCheckpoint checkpoint = load_checkpoint(path);
  const std::string out = o.required("--onnx");
  if (fine_tunes_onnx(checkpoint)) {
    // The original model with the trained initializers written into it.
    const std::optional<std::string> model_path = o.text("--model");
    if (!model_path) {
      throw UsageError{"'" + path +
                       "' fine-tunes an ONNX model: give that model with --model FILE.onnx to "
                       "write its fine-tuned initializers into it"};
    }
    if (o.has("--batch")) {
      throw UsageError{"--batch does not apply to a fine-tuned ONNX model: it keeps its own"};
    }
    const onnx::FineTuneModel model = onnx::FineTuneModel::load(*model_path);
    onnx::write_onnx_file(onnx::fine_tuned_onnx(model, checkpoint), out);
    const auto step = checkpoint.checkpoint.metadata.find("step");
    std::printf("exported %s: %s with the fine-tuned initializers of %s (step %s)\n", out.c_str(),
                model.name.c_str(), path.c_str(),
                step == checkpoint.checkpoint.metadata.end() ? "?" : step->second.c_str());
    return 0;
  }
  if (o.has("--model")) {
    throw UsageError{"--model is for fine-tune checkpoints; '" + path +
                     "' is the built-in tiny transformer's"};
  }
  const model::TrainedModel trained = model::trained_model(checkpoint);
  const int64_t batch = o.integer("--batch", 1, int64_t{1} << 20).value_or(1);
  const model::LanguageModelGraph lm = model::inference_graph(trained.config, batch);
  onnx::export_onnx_file(lm.graph, out, model::bind_parameters(lm.graph, trained.parameters));
  std::printf("exported %s: tokens int64 [%lld, %lld] -> logits f32 [%lld, %lld, %lld], opset 17\n",
              out.c_str(), static_cast<long long>(batch),
              static_cast<long long>(trained.config.seq), static_cast<long long>(batch),
              static_cast<long long>(trained.config.seq),
              static_cast<long long>(trained.config.vocab));
  return 0;
}

}  // namespace volta::cli
