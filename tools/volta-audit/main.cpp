// volta-audit: the release-gate CLI. Suites write rows into a SQLite results store; gates,
// reports and docs checks read them.
#include <cstdio>
#include <string>
#include <vector>

#include "build_info.h"
#include "commands.h"
#include "volta/conformance/determinism_suite.h"
#include "volta/conformance/sqlite.h"
#include "volta/error.h"

namespace {

struct Command {
  std::string_view name;
  int (*run)(volta::audit::Args&);
  std::string_view usage;
};

constexpr Command kCommands[] = {
    {"run", volta::audit::run_command,
     "run SUITE... [--family F] [--backend cpu|cuda|reference] [--filter PATTERN]\n"
     "              [--threads N] [--timeout SECONDS] [--no-isolate] [--expectations DIR]\n"
     "              [--data DIR] [--replay ID] [--runs N] [--processes N]\n"
     "              [--large-models] [--plant-divergence NODE] [--plant-wrong-vjp OP]\n"
     "              [--db PATH]\n"
     "      run suites (parity, onnx, onnx-current, numerics, determinism, gradients,\n"
     "      training) and record one row per case; onnx (ONNX 1.12's test data),\n"
     "      onnx-current (ONNX 1.23.2's, from scripts/ci/onnx_current_data.sh), numerics\n"
     "      and gradients run on cpu and reference (one run each) unless --backend names\n"
     "      one; numerics is the NaN/Inf matrix of\n"
     "      governance/numerics-policy.md (--family F narrows it; --replay ID reruns one\n"
     "      recorded case); determinism replays every subject --runs times (100) here and in\n"
     "      --processes fresh processes (3), checks the configuration matrix and plan\n"
     "      stability, and records node traces; gradients checks every VJP rule against\n"
     "      finite differences (reference) and the engine's gradients against the\n"
     "      reference's at 1-8 threads (cpu); --plant-wrong-vjp OP sign-flips OP's rule, a\n"
     "      demonstration the gate refuses as evidence"},
    {"gate", volta::audit::gate_command,
     "gate [--release] [--commit SHA] [--db PATH]\n"
     "      evaluate every gate for the commit; exit 0 only when every blocker passes"},
    {"report", volta::audit::report_command,
     "report [--perf [--run ID]] [--format md|html] [--db PATH] [-o FILE]\n"
     "      human report of the latest run: suites, families, worst errors, failures, gates;\n"
     "      --perf: the newest complete perf run (or run ID): per benchmark both passes'\n"
     "      medians, intervals, changes, p-values and verdicts against the baseline range,\n"
     "      peer ratios, and (html) a strip plot of the samples"},
    {"query", volta::audit::query_command,
     "query NAME | --sql \"SELECT ...\" [--commit SHA] [--db PATH]\n"
     "      canned questions (query --list) or any read-only SQL"},
    {"diff", volta::audit::diff_command,
     "diff RUN_A RUN_B [--subject S] [--db PATH]\n"
     "      compare two runs' node traces (volta-audit run determinism records them): per\n"
     "      subject, the first node in schedule order whose output differs, with its op,\n"
     "      kernel variants, the pass that produced it and the first differing element;\n"
     "      exit 0 when nothing diverges, 1 when something does"},
    {"perf", volta::audit::perf_command,
     "perf [--filter REGEX] [--repetitions N] [--pass2-repetitions N] [--pass2-processes N]\n"
     "              [--min-time SECONDS] [--policy PATH] [--perf-binary PATH] [--db PATH]\n"
     "      the perf double pass: pass 1 runs every volta-perf benchmark (N >= 9 interleaved\n"
     "      repetitions, default 9); suspects (Mann-Whitney p < alpha and a median change\n"
     "      beyond the threshold of governance/perf-slo.md) rerun in pass 2 in fresh processes\n"
     "      (15 repetitions over 3 processes); only a change seen in both passes is a\n"
     "      regression. Baselines are per machine fingerprint; an unknown machine records\n"
     "      candidate baselines. Exit 1 when the perf-double-pass gate fails\n"
     "  perf baseline accept BENCH... --reason TEXT [--perf-binary PATH] [--db PATH]\n"
     "      make the newest complete run's samples of BENCH (exact names) its baseline on\n"
     "      this machine; every move is a row with commit, reason and old/new value"},
    {"merge", volta::audit::merge_command,
     "merge SHARD.db... -o OUT.db\n"
     "      fold shard databases into one, keeping each run's provenance"},
    {"docs", volta::audit::docs_command,
     "docs check|sync [--no-evidence] [--root DIR] [--db PATH] [--commit SHA]\n"
     "      check or regenerate the generated doc sections and prose claims"},
};

void print_usage(std::FILE* to) {
  std::fputs("usage: volta-audit <command> [options] | volta-audit --version\n\ncommands:\n", to);
  for (const Command& c : kCommands) std::fprintf(to, "  %s\n", std::string(c.usage).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string_view> all(argv + 1, argv + argc);
  // The determinism suite's fresh processes: this binary, started again by the suite.
  if (!all.empty() && all[0] == "__determinism-worker") {
    try {
      return volta::conformance::determinism_worker_main({argv + 2, argv + argc});
    } catch (const std::exception& e) {
      std::fprintf(stderr, "volta-audit __determinism-worker: %s\n", e.what());
      return 1;
    }
  }
  if (all.empty() || all[0] == "--help" || all[0] == "-h" || all[0] == "help") {
    print_usage(all.empty() ? stderr : stdout);
    return all.empty() ? 2 : 0;
  }
  if (all[0] == "--version") {
    std::puts(volta::build::version_line("volta-audit").c_str());
    return 0;
  }
  for (const Command& c : kCommands) {
    if (c.name != all[0]) continue;
    volta::audit::Args args{std::span(all).subspan(1)};
    try {
      return c.run(args);
    } catch (const volta::audit::UsageError& e) {
      std::fprintf(stderr, "volta-audit %s: %s\nusage: volta-audit %s\n", argv[1], e.what(),
                   std::string(c.usage).c_str());
      return 2;
    } catch (const volta::conformance::StoreError& e) {
      std::fprintf(stderr, "volta-audit %s: %s\n", argv[1], e.what());
      return 1;
    } catch (const volta::VoltaError& e) {
      std::fprintf(stderr, "volta-audit %s: %s\n", argv[1], e.what());
      return 1;
    }
  }
  std::fprintf(stderr, "volta-audit: unknown command '%s'\n", argv[1]);
  print_usage(stderr);
  return 2;
}
