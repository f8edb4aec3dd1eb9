#include "volta/conformance/determinism_suite.h"

#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include "checks.h"
#include "controls.h"
#include "traced_run.h"
#include "volta/conformance/expectations.h"
#include "volta/conformance/process.h"
#include "volta/runtime/registry.h"

namespace volta::conformance {
namespace {

namespace fs = std::filesystem;

using ProcessReports = std::map<std::string, std::vector<ProcessReport>>;

// What every case body shares: read once when the cases are built.
struct Shared {
  DeterminismOptions options;
  SubjectSource source;
  ConfigMatrix matrix;
  ProcessReports processes;  // subject -> one report per fresh process
};

std::unique_ptr<Backend> subject_backend(const DeterminismOptions& options) {
  return options.plant_divergence_node.empty()
             ? make_backend(options.backend)
             : make_planted_backend(options.plant_divergence_node);
}

CaseOutcome skipped(std::string why) {
  CaseOutcome o;
  o.outcome = Outcome::Skipped;
  o.message = std::move(why);
  return o;
}

// A subject case on a backend other than the CPU: SKIPPED when the backend cannot run here, or
// cannot run the subject because an op has no kernel on it (compiling says which); any other
// failure stays what it is.
CaseBody on_backend(const DeterminismOptions& options,
                    const std::optional<std::string>& unavailable, CaseBody body) {
  if (options.backend == "cpu") return body;
  if (unavailable) {
    return [why = *unavailable + ": determinism on " + options.backend +
                  " needs that backend and its device"] { return skipped(why); };
  }
  return [body = std::move(body)] {
    try {
      return body();
    } catch (const VoltaError& e) {
      if (e.code() != ErrorCode::MissingKernel) throw;
      return skipped(std::string("the subject has an op without a kernel on this backend: ") +
                     e.what());
    }
  };
}

// Runs argv, returns its standard output; throws when it cannot start or exits non-zero.
std::string run_worker(const std::vector<std::string>& argv) {
  const ProcessOutcome out = run_process(argv, StandardError::Inherit);
  if (!out.ok()) {
    fail(ErrorCode::InvalidArgument,
         "fresh process " + argv[0] + " " + argv[1] + " failed (" + out.describe() + ")");
  }
  return out.output;
}

// `processes` fresh workers, each computing every subject once.
ProcessReports run_fresh_processes(const DeterminismOptions& options,
                                   const std::vector<std::string>& subjects) {
  ProcessReports reports;
  if (subjects.empty() || options.processes <= 0 || options.worker_command.empty()) return reports;
  char pattern[] = "/tmp/volta-determinism-XXXXXX";
  const int fd = mkstemp(pattern);
  if (fd < 0) fail(ErrorCode::InvalidArgument, "cannot create the fresh processes' subject list");
  close(fd);
  const std::string list = pattern;
  {
    std::ofstream out(list);
    for (const std::string& s : subjects) out << s << "\n";
  }
  std::vector<std::string> argv = options.worker_command;
  for (const std::string& a :
       {std::string("--subjects"), list, std::string("--threads"), std::to_string(options.threads),
        std::string("--backend"), options.backend}) {
    argv.push_back(a);
  }
  if (!options.onnx_data.empty()) {
    argv.insert(argv.end(), {"--onnx-data", options.onnx_data.string(), "--onnx-expectations",
                             options.onnx_expectations.string()});
  }
  if (!options.plant_divergence_node.empty()) {
    argv.insert(argv.end(), {"--plant-divergence", options.plant_divergence_node});
  }
  for (int p = 0; p < options.processes; ++p) {
    std::string output;
    std::string error;
    try {
      output = run_worker(argv);
    } catch (const VoltaError& e) {
      error = e.what();
    }
    std::map<std::string, ProcessReport> got;
    std::istringstream in(output);
    for (std::string line; std::getline(in, line);) {
      const size_t a = line.find('\t');
      const size_t b = a == std::string::npos ? a : line.find('\t', a + 1);
      if (b == std::string::npos) continue;
      ProcessReport r;
      if (line.substr(a + 1, b - a - 1) == "ERROR") {
        r.error = line.substr(b + 1);
      } else {
        r.output_hash = line.substr(a + 1, b - a - 1);
        r.plan_fingerprint = line.substr(b + 1);
      }
      got[line.substr(0, a)] = r;
    }
    for (const std::string& s : subjects) {
      auto it = got.find(s);
      reports[s].push_back(
          it != got.end()
              ? it->second
              : ProcessReport{"", "", error.empty() ? "reported nothing for it" : error});
    }
  }
  fs::remove(list);
  return reports;
}

bool selected(const DeterminismOptions& o, std::string_view family, const std::string& case_id) {
  return (o.family.empty() || o.family == family) &&
         (o.filter.empty() || glob_match(o.filter, case_id));
}

// "configurations=chunk-scale-4x,...,threads-8": what a threads:SUBJECT case compares.
std::string configurations_param(const ConfigMatrix& m) {
  std::string names;
  for (const ConfigFile& f : m.variations) names += (names.empty() ? "" : ",") + f.name;
  return "configurations=" + names;
}

CaseOutcome outcome_of(const CheckResult& r) {
  CaseOutcome out;
  out.outcome = r.identical ? Outcome::Pass : Outcome::FailNumeric;
  out.message = r.summary;
  out.output_hash = r.hash;
  out.kernel = r.kernels;
  out.traces = r.trace;
  return out;
}

// A negative control passes when its check found the planted defect.
CaseOutcome control_outcome(const CheckResult& r, std::string_view defect) {
  CaseOutcome out;
  out.outcome = r.identical ? Outcome::FailNumeric : Outcome::Pass;
  out.message = r.identical ? "negative control NOT caught: " + std::string(defect) +
                                  ", yet the check found: " + r.summary
                            : "caught " + std::string(defect) + ": " + r.summary;
  out.kernel = r.kernels;
  return out;
}

// The matrix's variations of one setting; `threads` (when > 0) replaces every thread count.
ConfigMatrix variations_of(const ConfigMatrix& m, std::string_view setting, int threads = 0) {
  ConfigMatrix out{m.baseline, {}};
  for (const ConfigFile& f : m.variations) {
    if (f.setting == setting) out.variations.push_back(f);
  }
  if (threads > 0) {
    out.baseline.threads = threads;
    for (ConfigFile& f : out.variations) f.config.threads = threads;
  }
  return out;
}

// The controls' places in kNegativeControls, checked here so a reordering cannot mislabel one.
enum ControlIndex : size_t {
  kTimingControl,
  kFreshReplayControl,
  kThreadCountControl,
  kChunkSizeControl,
  kTaskOrderControl,
  kAddressControl,
  kFreshPlanControl,
  kOptimizerControl,
  kBatchControl,
};
static_assert(kNegativeControls[kTimingControl].case_id ==
              "control:replay:timing-dependent-kernel");
static_assert(kNegativeControls[kFreshReplayControl].case_id ==
              "control:replay:fresh-process-divergence");
static_assert(kNegativeControls[kThreadCountControl].case_id ==
              "control:threads:thread-count-kernel");
static_assert(kNegativeControls[kChunkSizeControl].case_id == "control:config:chunk-size-kernel");
static_assert(kNegativeControls[kTaskOrderControl].case_id == "control:config:task-order-kernel");
static_assert(kNegativeControls[kAddressControl].case_id == "control:plan:address-dependent-pass");
static_assert(kNegativeControls[kFreshPlanControl].case_id ==
              "control:plan:fresh-process-divergence");
static_assert(kNegativeControls[kOptimizerControl].case_id ==
              "control:plan:optimizer-dependent-pass");
static_assert(kNegativeControls[kOptimizerControl].across_builds);
static_assert(kNegativeControls[kBatchControl].case_id ==
              "control:batch:batch-size-chunked-kernel");
static_assert(kNegativeControls.size() == kBatchControl + 1);

bool control_selected(const DeterminismOptions& o, ControlIndex control) {
  const NegativeControl& c = kNegativeControls[control];
  return selected(o, c.family, std::string(c.case_id));
}

// "batches=1,2,3,7,16,64 threads=3": what a batch:SUBJECT case compares.
std::string batch_param(int threads) {
  std::string sizes;
  for (const int64_t b : kBatchSizes) sizes += (sizes.empty() ? "" : ",") + std::to_string(b);
  return "batches=" + sizes + " threads=" + std::to_string(threads);
}

// The fresh processes' reports for `subject` (none without fresh processes).
std::vector<ProcessReport> reports_for(const Shared& shared, std::string_view subject) {
  const auto it = shared.processes.find(std::string(subject));
  return it == shared.processes.end() ? std::vector<ProcessReport>{} : it->second;
}

std::vector<SuiteCase> control_cases(const std::shared_ptr<const Shared>& shared) {
  const int threads = shared->options.threads;
  const int runs = shared->options.runs;
  std::vector<SuiteCase> cases;
  auto add = [&](ControlIndex control, std::string op, std::string params, CaseBody body) {
    const NegativeControl& c = kNegativeControls[control];
    cases.push_back({std::string(c.family), std::move(op), "cpu", std::string(c.case_id),
                     std::move(params), std::move(body)});
  };
  add(kTimingControl, "ReduceSum",
      "runs=" + std::to_string(runs) + " threads=" + std::to_string(threads),
      [shared, runs, threads] {
        const auto backend =
            make_defective_backend(DefectiveSum::CompletionOrder, KernelDeterminism::BitExact);
        return control_outcome(check_replay(control_subject(), *backend, runs, threads, {}),
                               "a sum adding its partials in the order their tasks finish");
      });
  add(kFreshReplayControl, "ReduceSum",
      "runs=" + std::to_string(runs) +
          " processes=" + std::to_string(reports_for(*shared, kWorkerFlipsOutputSubject).size()) +
          " threads=" + std::to_string(threads),
      [shared, runs, threads] {
        const auto cpu = make_backend("cpu");
        return control_outcome(
            check_replay(fresh_process_control_subject(kWorkerFlipsOutputSubject), *cpu, runs,
                         threads, reports_for(*shared, kWorkerFlipsOutputSubject)),
            "fresh worker processes that flip the lowest bit of the output (this process runs "
            "clean)");
      });
  add(kThreadCountControl, "ReduceSum", "configurations=threads-*", [shared] {
    const auto backend =
        make_defective_backend(DefectiveSum::PerThread, KernelDeterminism::BitExact);
    return control_outcome(
        check_configurations(control_subject(), *backend, variations_of(shared->matrix, "threads")),
        "a sum split into one partial per thread");
  });
  add(kChunkSizeControl, "ReduceSum", "configurations=chunk-scale-*", [shared] {
    const auto backend =
        make_defective_backend(DefectiveSum::PerChunk, KernelDeterminism::BitExact);
    return control_outcome(check_configurations(control_subject(), *backend,
                                                variations_of(shared->matrix, "chunk_scale")),
                           "a sum with one partial per scheduling chunk");
  });
  add(kTaskOrderControl, "ReduceSum", "configurations=task-order-* threads=1", [shared] {
    const auto backend =
        make_defective_backend(DefectiveSum::CompletionOrder, KernelDeterminism::BitExact);
    // One thread: the task order is the only thing that changes between the two runs.
    return control_outcome(check_configurations(control_subject(), *backend,
                                                variations_of(shared->matrix, "task_order", 1)),
                           "a sum that adds its partials in the order its tasks run");
  });
  add(kAddressControl, "ReduceSum", "subject=model:mlp", [shared] {
    const auto cpu = make_backend("cpu");
    return control_outcome(
        check_plan(load_subject("model:mlp", shared->source), *cpu, address_dependent_pass, {}),
        "a pass that writes a heap address into a node name");
  });
  add(kFreshPlanControl, "ReduceSum",
      "compiles=2 processes=" +
          std::to_string(reports_for(*shared, kWorkerRenamesNodeSubject).size()),
      [shared] {
        const auto cpu = make_backend("cpu");
        return control_outcome(
            check_plan(fresh_process_control_subject(kWorkerRenamesNodeSubject), *cpu, {},
                       reports_for(*shared, kWorkerRenamesNodeSubject)),
            "fresh worker processes that rename a node before compiling (this process compiles "
            "clean)");
      });
  add(kOptimizerControl, "graph", "subject=model:mlp", [shared] {
    const auto cpu = make_backend("cpu");
    const CheckResult r =
        check_plan(load_subject("model:mlp", shared->source), *cpu, optimizer_dependent_pass, {});
    CaseOutcome out = outcome_of(r);
    out.message =
        r.identical
            ? "recorded the plan fingerprint of model:mlp after a pass that appends '." +
                  std::string(optimizer_dependent_suffix()) + "' to a node name (this build is " +
                  (optimizer_dependent_suffix() == "opt" ? "optimized" : "not optimized") +
                  "): the plan-stability gate must see this fingerprint differ between the "
                  "Debug and the optimized builds of the commit, or its cross-build comparison "
                  "cannot fail; " +
                  r.summary
            : "the cross-build control's plan is not even stable in one process: " + r.summary;
    return out;
  });
  add(kBatchControl, "ReduceSum", batch_param(threads), [threads] {
    const auto backend = make_batch_chunked_backend();
    return control_outcome(check_batch(batch_control_subject, *backend, kBatchSizes, threads),
                           "a row sum whose chunks follow the batch size");
  });
  return cases;
}

std::vector<SuiteCase> strict_cases() {
  std::vector<SuiteCase> cases;
  cases.push_back(
      {std::string(kStrictModeFamily), "ReduceSum", "cpu", "strict:rejects-non-bit-exact",
       "mode=strict", [] {
         const auto backend =
             make_defective_backend(DefectiveSum::PerThread, KernelDeterminism::RunToRun);
         CaseOutcome out;
         out.outcome = Outcome::FailNumeric;
         try {
           compile(control_subject().graph, *backend, DeterminismMode::Strict);
           out.message = "Strict compiled a plan with a run-to-run kernel";
         } catch (const VoltaError& e) {
           const std::string m = e.what();
           const bool names_it = e.code() == ErrorCode::NonDeterministicKernel &&
                                 m.find("node 'control.sum' (ReduceSum)") != std::string::npos &&
                                 m.find("f32_sum_per_thread") != std::string::npos;
           out.outcome = names_it ? Outcome::Pass : Outcome::FailNumeric;
           out.message =
               (names_it ? "refused as documented: " : "refused without naming node and kernel: ") +
               m;
         }
         return out;
       }});
  cases.push_back(
      {std::string(kStrictModeFamily), "ReduceSum", "cpu", "strict:relaxed-lists-non-bit-exact",
       "mode=relaxed", [] {
         const auto backend =
             make_defective_backend(DefectiveSum::PerThread, KernelDeterminism::RunToRun);
         const Subject subject = control_subject();
         const ExecutionPlan plan = compile(subject.graph, *backend, DeterminismMode::Relaxed);
         const std::unique_ptr<ExecutionContext> ctx_context =
             backend->make_context({.threads = 2});
         ExecutionContext& ctx = *ctx_context;
         const TracedRun run = run_plan(plan, *backend, ctx, subject.inputs, false);
         const std::vector<std::string> lines = non_bit_exact_steps(plan);
         CaseOutcome out;
         for (const std::string& line : lines) {
           out.not_bit_exact += (out.not_bit_exact.empty() ? "" : "; ") + line;
         }
         const bool listed =
             lines.size() == 1 && lines[0].find("control.sum") != std::string::npos &&
             describe_plan(plan).find("not bit-exact: 1 step(s)") != std::string::npos;
         out.outcome = listed ? Outcome::Pass : Outcome::FailNumeric;
         out.output_hash = run.hash;
         out.kernel = "f32_sum_per_thread";
         out.message = listed ? "Relaxed compiled and ran it; the plan lists: " + out.not_bit_exact
                              : "the Relaxed plan does not list exactly node 'control.sum' as not "
                                "bit-exact: '" +
                                    out.not_bit_exact + "'";
         return out;
       }});
  return cases;
}

}  // namespace

std::vector<SuiteCase> determinism_cases(const DeterminismOptions& options) {
  if (options.backend != "cpu" && options.backend != "cuda") {
    fail(ErrorCode::InvalidArgument,
         "the determinism suite has no backend '" + options.backend + "' (supported: cpu, cuda)");
  }
  const bool on_cpu = options.backend == "cpu";
  // Off the CPU, a backend this binary lacks or a machine without its device is a declared
  // precondition: the cases say so, and no fresh process is started for them.
  const std::optional<std::string> unavailable =
      on_cpu ? std::nullopt : backend_unavailable(options.backend);
  auto shared = std::make_shared<Shared>();
  shared->options = options;
  shared->source = {options.onnx_data, options.onnx_expectations, options.large_models};
  shared->matrix = load_config_matrix(options.configs);
  const std::vector<std::string> subjects = subject_names(shared->source);
  std::vector<std::string> needs_processes;
  for (const std::string& s : subjects) {
    if (!unavailable && (selected(options, kReplayFamily, "replay:" + s) ||
                         selected(options, kPlanStabilityFamily, "plan:" + s))) {
      needs_processes.push_back(s);
    }
  }
  if (on_cpu && control_selected(options, kFreshReplayControl)) {
    needs_processes.emplace_back(kWorkerFlipsOutputSubject);
  }
  if (on_cpu && control_selected(options, kFreshPlanControl)) {
    needs_processes.emplace_back(kWorkerRenamesNodeSubject);
  }
  shared->processes = run_fresh_processes(options, needs_processes);

  std::vector<SuiteCase> cases;
  if (on_cpu) {
    cases = control_cases(shared);
    for (SuiteCase& c : strict_cases()) cases.push_back(std::move(c));
  }
  const std::string op = "graph";
  const std::string precondition = on_cpu ? "" : std::string(kCudaSubjectPrecondition);
  auto add = [&](std::string_view family, std::string case_id, std::string params, CaseBody body) {
    cases.push_back({std::string(family), op, options.backend, std::move(case_id),
                     std::move(params), on_backend(options, unavailable, std::move(body)),
                     precondition});
  };
  for (const std::string& s : subjects) {
    auto processes = [shared, s] {
      const auto it = shared->processes.find(s);
      return it == shared->processes.end() ? std::vector<ProcessReport>{} : it->second;
    };
    add(kReplayFamily, "replay:" + s,
        "runs=" + std::to_string(options.runs) + " processes=" +
            std::to_string(processes().size()) + " threads=" + std::to_string(options.threads),
        [shared, s, processes] {
          const auto backend = subject_backend(shared->options);
          return outcome_of(check_replay(load_subject(s, shared->source), *backend,
                                         shared->options.runs, shared->options.threads,
                                         processes()));
        });
    if (on_cpu) {
      add(kThreadInvarianceFamily, "threads:" + s, configurations_param(shared->matrix),
          [shared, s] {
            const auto backend = subject_backend(shared->options);
            return outcome_of(
                check_configurations(load_subject(s, shared->source), *backend, shared->matrix));
          });
    }
    add(kPlanStabilityFamily, "plan:" + s,
        "compiles=2 processes=" + std::to_string(processes().size()), [shared, s, processes] {
          const auto backend = subject_backend(shared->options);
          return outcome_of(check_plan(load_subject(s, shared->source), *backend, {}, processes()));
        });
  }
  for (const std::string& s : batch_subject_names(shared->source)) {
    add(kBatchInvarianceFamily, "batch:" + s, batch_param(options.threads), [shared, s] {
      const auto backend = subject_backend(shared->options);
      return outcome_of(check_batch([&s](int64_t batch) { return load_batch_subject(s, batch); },
                                    *backend, kBatchSizes, shared->options.threads));
    });
  }
  return cases;
}

int determinism_worker_main(const std::vector<std::string>& args) {
  DeterminismOptions options;
  fs::path subjects_file;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (i + 1 >= args.size()) {
      std::fprintf(stderr, "determinism worker: %s needs a value\n", a.c_str());
      return 2;
    }
    const std::string& v = args[++i];
    if (a == "--subjects") {
      subjects_file = v;
    } else if (a == "--threads") {
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), options.threads);
      if (ec != std::errc() || end != v.data() + v.size() || options.threads < 1) {
        std::fprintf(stderr, "determinism worker: --threads takes a positive integer, got '%s'\n",
                     v.c_str());
        return 2;
      }
    } else if (a == "--backend") {
      options.backend = v;
    } else if (a == "--onnx-data") {
      options.onnx_data = v;
    } else if (a == "--onnx-expectations") {
      options.onnx_expectations = v;
    } else if (a == "--plant-divergence") {
      options.plant_divergence_node = v;
    } else {
      std::fprintf(
          stderr,
          "determinism worker: unknown option %s (supported: --subjects FILE, --threads N, "
          "--backend NAME, --onnx-data DIR, --onnx-expectations FILE, --plant-divergence "
          "NODE)\n",
          a.c_str());
      return 2;
    }
  }
  std::ifstream in(subjects_file);
  if (!in) {
    std::fprintf(stderr, "determinism worker: cannot read --subjects %s\n", subjects_file.c_str());
    return 2;
  }
  const SubjectSource source{options.onnx_data, options.onnx_expectations, true};
  const auto backend = subject_backend(options);
  for (std::string name; std::getline(in, name);) {
    if (name.empty()) continue;
    std::string line;
    try {
      // A fresh-process control's subject brings its own defect: this process alone has it.
      std::optional<WorkerControl> control = worker_control(name);
      const Subject subject = control ? std::move(control->subject) : load_subject(name, source);
      const Backend& runs_on = control ? *control->backend : *backend;
      const ExecutionPlan plan = compile(subject.graph, runs_on, DeterminismMode::Strict);
      const std::unique_ptr<ExecutionContext> ctx_context =
          runs_on.make_context({.threads = options.threads});
      ExecutionContext& ctx = *ctx_context;
      const TracedRun run = run_plan(plan, runs_on, ctx, subject.inputs, false);
      line = name + "\t" + run.hash + "\t" + plan_fingerprint(plan);
    } catch (const std::exception& e) {
      std::string message = e.what();
      for (char& c : message) {
        if (c == '\n' || c == '\t') c = ' ';
      }
      line = name;
      line += "\tERROR\t";
      line += message;
    }
    std::printf("%s\n", line.c_str());
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace volta::conformance
