#include "checks.h"

#include "traced_run.h"
#include "volta/conformance/first_divergence.h"

namespace volta::conformance {
namespace {

ExecutionPlan compile_subject(const Subject& subject, const Backend& backend, bool passes) {
  return compile(subject.graph, backend, DeterminismMode::Strict, {.optimize = passes});
}

// Why two traced runs differ: the first divergent node, or (when every node output agrees,
// which a correct trace never shows) that only the final copy differed.
std::string explain(const TracedRun& a, const TracedRun& b) {
  if (const std::optional<Divergence> d = first_divergence(a.trace, b.trace)) return describe(*d);
  return "every traced node output agrees; the outputs differ after the last step";
}

}  // namespace

CheckResult check_replay(const Subject& subject, const Backend& backend, int runs, int threads,
                         std::span<const ProcessReport> processes) {
  CheckResult result;
  const ExecutionPlan plan = compile_subject(subject, backend, true);
  result.kernels = kernel_variants(plan);
  ExecutionContext ctx(threads);
  TracedRun first =
      run_plan(plan, backend, ctx, subject.inputs, true, subject.name, subject.frontend);
  int differing = 0;
  for (int run = 2; run <= runs; ++run) {
    const TracedRun again =
        run_plan(plan, backend, ctx, subject.inputs, true, subject.name, subject.frontend);
    if (again.hash == first.hash) continue;
    if (differing++ == 0) {
      result.summary = "run " + std::to_string(run) + " of " + std::to_string(runs) +
                       " differs from run 1 (output hash " + again.hash + " vs " + first.hash +
                       "): " + explain(first, again);
    }
  }
  if (differing > 0) {
    result.identical = false;
    result.summary = std::to_string(differing) + " of " + std::to_string(runs - 1) +
                     " repeated runs differ from run 1; first: " + result.summary;
  }
  for (size_t p = 0; p < processes.size() && result.identical; ++p) {
    const ProcessReport& report = processes[p];
    if (!report.error.empty() || report.output_hash != first.hash) {
      result.identical = false;
      result.summary = "fresh process " + std::to_string(p + 1) + " of " +
                       std::to_string(processes.size()) + " " +
                       (report.error.empty() ? "gave output hash " + report.output_hash +
                                                   ", this process " + first.hash
                                             : "failed: " + report.error);
    }
  }
  result.hash = first.hash;
  result.params = "runs=" + std::to_string(runs) +
                  " processes=" + std::to_string(processes.size()) +
                  " threads=" + std::to_string(threads);
  if (result.identical) {
    result.summary = std::to_string(runs) + " runs in one process at " + std::to_string(threads) +
                     " threads and " + std::to_string(processes.size()) +
                     " fresh processes: identical outputs (hash " + first.hash + ")";
  }
  result.trace = std::move(first.trace);
  return result;
}

CheckResult check_configurations(const Subject& subject, const Backend& backend,
                                 const ConfigMatrix& matrix) {
  CheckResult result;
  auto run_config = [&](const ExecutionConfig& config, const ExecutionPlan& plan) {
    ExecutionContext ctx(config.threads, config.schedule);
    return run_plan(plan, backend, ctx, subject.inputs, true, subject.name, subject.frontend);
  };
  const ExecutionPlan plan = compile_subject(subject, backend, matrix.baseline.passes);
  result.kernels = kernel_variants(plan);
  const TracedRun baseline = run_config(matrix.baseline, plan);
  std::string names;
  int differing = 0;
  for (const ConfigFile& variation : matrix.variations) {
    names += (names.empty() ? "" : ",") + variation.name;
    std::optional<ExecutionPlan> own;  // only a change of passes changes the plan
    if (variation.config.passes != matrix.baseline.passes) {
      own = compile_subject(subject, backend, variation.config.passes);
    }
    const TracedRun run = run_config(variation.config, own ? *own : plan);
    if (run.hash == baseline.hash) continue;
    if (differing++ == 0) {
      result.summary = variation.name + " (" + variation.setting +
                       " changed: " + describe(variation.config) + ") differs from the baseline (" +
                       describe(matrix.baseline) + "), output hash " + run.hash + " vs " +
                       baseline.hash + ": " + explain(baseline, run);
    }
  }
  result.hash = baseline.hash;
  result.params = "baseline=" + describe(matrix.baseline) + " variations=" + names;
  if (differing > 0) {
    result.identical = false;
    result.summary = std::to_string(differing) + " of " + std::to_string(matrix.variations.size()) +
                     " configurations differ from the baseline; first: " + result.summary;
  } else {
    result.summary = "baseline and " + std::to_string(matrix.variations.size()) +
                     " configurations (" + names + "): identical outputs (hash " + baseline.hash +
                     ")";
  }
  return result;
}

CheckResult check_plan(const Subject& subject, const Backend& backend,
                       const std::function<void(Graph&)>& before_compile,
                       std::span<const ProcessReport> processes) {
  CheckResult result;
  // Both graphs are alive at once, so nothing in the second compile can reuse an address of
  // the first: a plan that depends on addresses shows up here, not only across processes.
  Graph graphs[2] = {subject.graph, subject.graph};
  if (before_compile) {
    for (Graph& g : graphs) before_compile(g);
  }
  const ExecutionPlan first = compile(graphs[0], backend, DeterminismMode::Strict);
  const ExecutionPlan second = compile(graphs[1], backend, DeterminismMode::Strict);
  result.kernels = kernel_variants(first);
  result.hash = plan_fingerprint(first);
  const std::string again = plan_fingerprint(second);
  if (again != result.hash) {
    result.identical = false;
    result.summary = "two compiles in one process differ: " + result.hash + " vs " + again;
  }
  for (size_t p = 0; p < processes.size() && result.identical; ++p) {
    const ProcessReport& report = processes[p];
    if (!report.error.empty() || report.plan_fingerprint != result.hash) {
      result.identical = false;
      result.summary = "fresh process " + std::to_string(p + 1) + " of " +
                       std::to_string(processes.size()) + " " +
                       (report.error.empty() ? "compiled " + report.plan_fingerprint +
                                                   ", this process " + result.hash
                                             : "failed: " + report.error);
    }
  }
  result.params = "compiles=2 processes=" + std::to_string(processes.size());
  if (result.identical) {
    result.summary = "2 compiles in one process and " + std::to_string(processes.size()) +
                     " fresh processes: identical plans (" + result.hash + ")";
  }
  return result;
}

}  // namespace volta::conformance
