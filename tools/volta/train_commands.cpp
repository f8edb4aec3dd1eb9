// `volta train`, `volta generate` and `volta eval`: the tiny transformer (engine/model) trained
// on byte data, saved and resumed as checkpoint format v1, used for text and scored.

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

train::BatchOrder batch_order(const Options& o, const model::TransformerConfig& c) {
  train::BatchOrder order = train::default_run(1).order;
  if (const std::optional<std::string> kind = o.text("--order")) {
    order.kind = train::parse_batch_order(*kind);
  }
  order.stride = o.integer("--stride", 1, INT64_MAX).value_or(c.seq);
  order.seed = c.seed;
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

void save(const train::LanguageModelTrainer& trainer, const std::string& path) {
  save_checkpoint(trainer.checkpoint(build::kCommit), path);
}

model::TrainedModel load_model(const Options& o) {
  return model::trained_model(load_checkpoint(o.required("--checkpoint")));
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
  if (!o.positional().empty()) {
    throw UsageError{"unexpected argument '" + o.positional()[0] +
                     "' (fine-tuning an ONNX model is not supported yet; train the built-in "
                     "tiny transformer with --data FILE)"};
  }
  const std::string data_path = o.required("--data");
  std::vector<uint8_t> data = train::read_token_file(data_path);
  const int threads = threads_of(o);
  std::optional<int64_t> steps = o.integer("--steps", 1, int64_t{1} << 40);
  const std::optional<int64_t> save_every = o.integer("--save-every", 1, int64_t{1} << 40);
  const std::optional<std::string> save_path = o.text("--save");
  if (save_every && !save_path) throw UsageError{"--save-every needs --save CKPT"};

  std::optional<train::LanguageModelTrainer> trainer;
  std::optional<int64_t> resumed_from;
  if (const std::optional<std::string> resume = o.text("--resume")) {
    for (const std::string_view fixed :
         {"--config",       "--seed",     "--batch",     "--seq",       "--d-model",
          "--layers",       "--heads",    "--d-ff",      "--optimizer", "--lr",
          "--min-lr",       "--schedule", "--warmup",    "--step-size", "--gamma",
          "--weight-decay", "--momentum", "--clip-norm", "--order",     "--stride"}) {
      if (o.has(fixed)) {
        throw UsageError{std::string(fixed) +
                         " conflicts with --resume: the checkpoint fixes the model, optimizer and "
                         "data order"};
      }
    }
    trainer.emplace(train::LanguageModelTrainer::resume(load_checkpoint(*resume), std::move(data),
                                                        threads, cpu()));
    resumed_from = trainer->steps_taken();
    // The run goes on to the end of the schedule it was started with unless told otherwise.
    if (!steps) steps = trainer->run().optimizer.schedule.total_steps;
    std::fprintf(stderr, "resumed %s at step %lld\n", resume->c_str(),
                 static_cast<long long>(*resumed_from));
  } else {
    if (!steps) steps = 1000;
    train::LanguageModelRun run;
    run.model = model_config(o);
    run.optimizer = optimizer_config(o, *steps);
    run.order = batch_order(o, run.model);
    trainer.emplace(run, std::move(data), threads, cpu());
  }
  // --stop-at: end early, as if interrupted, to go on later with --resume.
  const int64_t last_step = o.integer("--stop-at", 1, *steps).value_or(*steps);
  const train::LanguageModelRun& run = trainer->run();
  const int64_t first = trainer->steps_taken() + 1;
  std::fprintf(stderr, "training %s on %s: steps %lld..%lld, %s, threads %d\n",
               run.model.to_json().c_str(), data_path.c_str(), static_cast<long long>(first),
               static_cast<long long>(last_step), train::optimizer_name(run.optimizer.kind).c_str(),
               threads);

  std::optional<TrainingLog> log;
  if (const std::optional<std::string> db = o.text("--db")) {
    std::string command = "volta train";
    for (const std::string_view a : args) command += " " + std::string(a);
    log.emplace(*db, *trainer, data_path, command, threads, resumed_from);
  }
  TrainProgress progress(first, last_step, run.model.batch * run.model.seq);
  train::StepRecord last;
  while (trainer->steps_taken() < last_step) {
    last = trainer->step();
    const double tokens_per_s = progress.add(last);
    if (log) log->step(last, tokens_per_s);
    if (save_every && last.step % *save_every == 0 && last.step != last_step) {
      save(*trainer, *save_path);
    }
  }
  if (log) log->finish();
  if (save_path) {
    save(*trainer, *save_path);
    std::fprintf(stderr, "saved %s (step %lld)\n", save_path->c_str(),
                 static_cast<long long>(trainer->steps_taken()));
  }
  if (first <= last_step)
    std::printf("final loss %.6f at step %lld\n", last.loss, static_cast<long long>(last.step));
  return 0;
}

int generate_command(std::span<const std::string_view> args) {
  const Options o("generate", args,
                  {"--checkpoint", "--prompt", "--tokens", "--temperature", "--seed", "--threads"});
  const model::TrainedModel trained = load_model(o);
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
  const model::TrainedModel trained = load_model(o);
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
  const Options o("export", args, {"--checkpoint", "--onnx", "--batch"});
  const model::TrainedModel trained = load_model(o);
  const std::string out = o.required("--onnx");
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
