// `volta`: the user CLI: run, bench, check, info, doctor; train, generate, eval, export.
#include <cstdio>
#include <new>
#include <string_view>
#include <vector>

#include "build_info.h"
#include "commands.h"
#include "options.h"
#include "volta/error.h"

namespace {

constexpr const char* kUsage =
    "usage: volta <command> [options] | volta --version\n"
    "commands:\n"
    "  run      run an ONNX model on a backend (default cpu; `volta doctor` lists them)\n"
    "           volta run model.onnx [--input NAME=FILE.pb ...] [--output-dir DIR]\n"
    "                     [--threads N] [--backend NAME] [--strict | --relaxed]\n"
    "                     (mode default: strict)\n"
    "           writes DIR/<output name>.pb (TensorProto) and prints shapes and a summary\n"
    "  bench    steady-state latency of an ONNX model: median, p90, min, max and mean\n"
    "           volta bench model.onnx [--input NAME=FILE.pb ...] [--threads N] [--runs N]\n"
    "                       [--warmup N] [--backend NAME] [--strict | --relaxed] [--profile]\n"
    "           (100 timed runs after 10 warm-up runs by default; the first run, which\n"
    "           imports and compiles, is reported apart; static inputs default to zeros;\n"
    "           --profile: --runs more runs then print each step's median time, by op and\n"
    "           the slowest steps, on a host backend)\n"
    "  check    list every node of an ONNX model the importer cannot lower; exit 1 if any\n"
    "           volta check model.onnx [--backend NAME] | volta check --ops (the supported\n"
    "           ONNX ops)\n"
    "  info     print an ONNX model's imported graph, its plan and peak bytes\n"
    "           volta info model.onnx [--input NAME=FILE.pb ...] [--backend NAME]\n"
    "                      [--strict | --relaxed]\n"
    "           (inputs with static shapes default to zeros); without a model: a\n"
    "           built-in model of engine/model (default transformer-block)\n"
    "           volta info [--model mlp|cnn|transformer-block|...] [--batch N] [--train]\n"
    "                      [--mode strict|relaxed]\n"
    "           (--train: the transformer block's training step, forward + backward +\n"
    "           AdamW, and its plan's peak bytes)\n"
    "  doctor   compiler, CPU features, threads, CUDA backend and devices, determinism\n"
    "           readiness\n"
    "  train    train the tiny transformer on a file's bytes (engine/model), or fine-tune an\n"
    "           ONNX causal LM\n"
    "           volta train --data FILE [--config tiny|FILE] [--steps N] [--seed S]\n"
    "                       [--threads T] [--batch N --seq N --d-model N --layers N --heads N\n"
    "                       --d-ff N] [--optimizer sgd|adam|adamw] [--lr X] [--min-lr X]\n"
    "                       [--schedule constant|step|cosine|warmup-cosine] [--warmup N]\n"
    "                       [--weight-decay X] [--momentum X] [--clip-norm X (0: off)]\n"
    "                       [--order sequential|shuffled] [--stride N]\n"
    "                       [--save CKPT] [--save-every K] [--resume CKPT] [--stop-at N]\n"
    "                       [--db FILE]\n"
    "           (--steps: the run's length, 1000 by default, the end of the schedule;\n"
    "           --resume goes on to it; --stop-at N ends early to resume later. Defaults:\n"
    "           AdamW at 3e-3, warm-up then cosine, clip 1; --db records the loss per step)\n"
    "           volta train MODEL.onnx --data FILE [the options above except --config and\n"
    "                       the size flags; --seed seeds --order shuffled]\n"
    "           fine-tunes an ONNX causal LM (int64 tokens [B, T] -> logits [B, T, V]): its\n"
    "           float initializers are trained; its checkpoints resume with the same model\n"
    "  generate volta generate --checkpoint CKPT --prompt TEXT [--tokens N]\n"
    "                          [--temperature X --seed S] [--threads T]  (greedy by default)\n"
    "  eval     volta eval --checkpoint CKPT --data FILE [--threads T] [--digest]: loss and\n"
    "           perplexity (--digest: sha256 of the logits of the first batch of windows)\n"
    "  export   volta export --checkpoint CKPT --onnx OUT.onnx [--batch N]: the inference\n"
    "           graph as ONNX (opset 17)\n"
    "           volta export --checkpoint CKPT --model MODEL.onnx --onnx OUT.onnx: a\n"
    "           fine-tuned model, MODEL with the checkpoint's initializers\n";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version") {
    std::puts(volta::build::version_line("volta").c_str());
    return 0;
  }
  const std::string_view command = args[0];
  const std::span<const std::string_view> rest(args.data() + 1, args.size() - 1);
  try {
    if (command == "run") return volta::cli::run(rest);
    if (command == "check") return volta::cli::check(rest);
    if (command == "bench") return volta::cli::bench(rest);
    if (command == "info") {
      const bool has_model = !rest.empty() && !rest[0].starts_with("--");
      return has_model ? volta::cli::info_model(rest) : volta::cli::info(rest);
    }
    if (command == "doctor") return volta::cli::doctor(rest);
    if (command == "train") return volta::cli::train_command(rest);
    if (command == "generate") return volta::cli::generate_command(rest);
    if (command == "eval") return volta::cli::eval_command(rest);
    if (command == "export") return volta::cli::export_command(rest);
  } catch (const volta::cli::UsageError& e) {
    std::fprintf(stderr, "volta %s: %s\n%s", std::string(command).c_str(), e.message.c_str(),
                 kUsage);
    return 2;
  } catch (const volta::VoltaError& e) {
    std::fprintf(stderr, "volta %s: %s\n", std::string(command).c_str(), e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr,
                 "volta %s: out of memory: the model, batch or plan asked is larger than this "
                 "machine can hold; try smaller sizes\n",
                 std::string(command).c_str());
    return 1;
  }
  std::fprintf(stderr,
               "volta: unknown command '%s' (supported: run, bench, check, info, doctor, train, "
               "generate, eval, export)\n%s",
               std::string(command).c_str(), kUsage);
  return 2;
}
