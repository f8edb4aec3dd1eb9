#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <map>
#include <set>
#include <thread>

#include "build_info.h"
#include "commands.h"
#include "committed_inputs.h"
#include "tool_paths.h"
#include "volta/conformance/determinism_suite.h"
#include "volta/conformance/gradient_suite.h"
#include "volta/conformance/isolation.h"
#include "volta/conformance/matrix_suite.h"
#include "volta/conformance/onnx_suite.h"
#include "volta/conformance/parity_suite.h"
#include "volta/conformance/progress.h"
#include "volta/conformance/properties.h"
#include "volta/conformance/runner.h"
#include "volta/conformance/store.h"
#include "volta/conformance/training_suite.h"
#include "volta/onnx/model.h"
#include "volta/runtime/host.h"
#ifdef VOLTA_CUDA_BACKEND
#include "volta/backends/cuda.h"
#endif

namespace volta::audit {
namespace {

// The device a run's cases use, as its run row records it: for cuda, device 0's name, compute
// capability, SM count, driver and toolkit (cuda_device_summary), read in a child process like
// the suites' own probe (a CUDA runtime initialised here would not survive the fork of each
// isolated case); empty for the other backends and where there is no usable device.
std::string device_of(const std::string& backend) {
#ifdef VOLTA_CUDA_BACKEND
  if (backend != "cuda") return "";
  const conformance::CaseOutcome probe = conformance::run_case(
      [] {
        conformance::CaseOutcome o;
        o.outcome = conformance::Outcome::Pass;
        if (const CudaReport report = cuda_report(); report.unavailable.empty()) {
          o.message = cuda_device_summary(report);
        }
        return o;
      },
      conformance::IsolationOptions{});
  return probe.outcome == conformance::Outcome::Pass ? probe.message : "";
#else
  (void)backend;
  return "";
#endif
}

using conformance::SuiteCase;

constexpr std::string_view kSuites =
    "parity, onnx, onnx-current, numerics, determinism, gradients, training";
constexpr std::string_view kRunOptions =
    "--family F, --backend cpu|cuda|reference, --filter PATTERN, --threads N, "
    "--timeout SECONDS, --no-isolate, --expectations DIR, --data DIR, --replay ID, --runs N, "
    "--processes N, --large-models, --plant-divergence NODE, --plant-wrong-vjp OP, --db PATH";

int positive_int(const std::string& text, std::string_view option) {
  try {
    size_t used = 0;
    const int v = std::stoi(text, &used);
    if (used == text.size() && v > 0) return v;
  } catch (const std::exception&) {
  }
  throw UsageError(std::string(option) + " takes a positive integer, got '" + text + "'");
}

void check_suite(const std::string& suite) {
  if (suite != "parity" && conformance::find_onnx_corpus(suite) == nullptr &&
      suite != conformance::kNumericsSuite && suite != conformance::kDeterminismSuite &&
      suite != conformance::kGradientsSuite && suite != conformance::kTrainingSuite) {
    throw UsageError("unknown suite '" + suite + "' (available: " + std::string(kSuites) + ")");
  }
}

// The backends a suite runs on when --backend is not given: parity judges the CPU backend
// (CUDA only on request), onnx and onnx-current run every test on the CPU backend and the
// reference engine,
// numerics checks the policy on both (its CUDA cells are NOT VERIFIED: --backend cuda),
// gradients checks the reference against finite differences and the CPU engine against it.
std::vector<std::string> default_backends(const std::string& suite) {
  if (conformance::find_onnx_corpus(suite) != nullptr) {
    return {conformance::kOnnxBackends.begin(), conformance::kOnnxBackends.end()};
  }
  if (suite == conformance::kNumericsSuite || suite == conformance::kGradientsSuite) {
    return {"cpu", "reference"};
  }
  return {"cpu"};
}

// What an ONNX corpus suite (onnx, onnx-current) needs beyond the common options, read once for
// all its backends.
struct OnnxInputs {
  const conformance::OnnxCorpus* corpus = nullptr;
  std::vector<conformance::OnnxTest> tests;
  std::string expectations_file;
  std::vector<conformance::OnnxExpectation> expectations;
};

// The corpus's expectations: `--expectations DIR` reads DIR/<suite>.tsv, else the committed file.
std::string onnx_expectations_file(const conformance::OnnxCorpus& corpus,
                                   const std::optional<std::string>& expectations_dir) {
  return expectations_dir ? *expectations_dir + "/" + std::string(corpus.suite) + ".tsv"
                          : (source_dir() / corpus.expectations).string();
}

// The data root: --data, else the corpus's default (a relative one is under the source tree).
std::filesystem::path onnx_data_root(const conformance::OnnxCorpus& corpus,
                                     const std::optional<std::string>& data_arg) {
  if (data_arg) return *data_arg;
  const std::filesystem::path root(corpus.data_root);
  return root.is_absolute() ? root : source_dir() / root;
}

OnnxInputs load_onnx_inputs(const conformance::OnnxCorpus& corpus,
                            const std::optional<std::string>& data_arg,
                            const std::optional<std::string>& expectations_dir) {
  OnnxInputs in;
  in.corpus = &corpus;
  in.tests = conformance::discover_onnx_corpus(onnx_data_root(corpus, data_arg),
                                               onnx::onnx_op_family, corpus.floor, corpus);
  in.expectations_file = onnx_expectations_file(corpus, expectations_dir);
  in.expectations = conformance::load_onnx_expectations(in.expectations_file);
  return in;
}

// The numerics suite's cases on one backend: the NaN/Inf matrix of the policy the binary was
// built from.
std::vector<SuiteCase> numerics_cases(const conformance::Policy& policy, const std::string& backend,
                                      int threads) {
  std::vector<SuiteCase> cases = conformance::matrix_suite(policy, backend, threads);
  // Properties judge the CPU engine against the reference: they belong to the cpu run.
  if (backend == "cpu") {
    std::ranges::move(conformance::property_cases({}), std::back_inserter(cases));
  }
  return cases;
}

// Replays the newest recorded failure of a property case; exit 1 when it reproduces.
int replay_property_case(conformance::ResultStore& store, const std::string& case_id) {
  conformance::Statement row = store.db().prepare(
      "SELECT r.message FROM result r JOIN test_case c ON c.id = r.case_ref "
      "WHERE c.case_id = ?1 AND r.outcome != 'PASS' ORDER BY r.id DESC LIMIT 1");
  row.bind(1, case_id);
  if (!row.step()) {
    throw UsageError("--replay: no recorded failure of '" + case_id +
                     "' in the database (run `volta-audit run numerics` first)");
  }
  const conformance::CaseOutcome outcome =
      conformance::replay_property(case_id, row.column_text(0));
  std::printf("replay %s: %s\n%s\n", case_id.c_str(),
              std::string(conformance::outcome_name(outcome.outcome)).c_str(),
              outcome.message.c_str());
  return outcome.outcome == conformance::Outcome::Pass ? 0 : 1;
}

// This executable's path, for the determinism suite's fresh processes.
std::string self_executable() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) throw UsageError("cannot find this executable (/proc/self/exe): " + error.message());
  return self.string();
}

int non_negative_int(const std::string& text, std::string_view option) {
  return text == "0" ? 0 : positive_int(text, option);
}

// One suite on one backend, its cases built before any run opens.
struct PlannedSuite {
  std::string suite, backend;
  std::vector<SuiteCase> cases;
};

// Everything a run of `suites` reads that decides its verdicts, as the committed files it stands
// for: each suite's expectations, the onnx expectations (the onnx suite, and the determinism
// suite's list of ONNX subjects), the numerics policy, the determinism configurations; and a
// planted divergence or wrong VJP, which makes the run a demonstration, never evidence.
// The training suite runs this build's `volta` CLI (VOLTA_CLI overrides where it is looked
// for: beside volta-audit, or in the build tree's tools/volta), the interop venv
// (VOLTA_INTEROP_VENV; default build/interop-venv) and the committed memory budget.
conformance::TrainingSuiteOptions training_options() {
  namespace fs = std::filesystem;
  conformance::TrainingSuiteOptions o;
  o.volta_cli = volta_cli_path();
  if (!fs::exists(o.volta_cli)) {
    throw UsageError("the training suite runs the `volta` CLI, which is not at " +
                     o.volta_cli.string() + " (build it, or set VOLTA_CLI)");
  }
  const fs::path source = source_dir();
  o.interop_scripts = source / "conformance/training/interop";
  o.interop_venv = interop_venv_path();
  o.memory_budget = source / "governance/memory-budget.tsv";
  o.scratch = fs::temp_directory_path() / "volta-training-suite";
  o.engine_commit = build::kCommit;
  return o;
}

std::vector<conformance::RunInput> run_inputs(const std::vector<std::string>& suites,
                                              const std::string& backend,
                                              const std::string& expectations_dir,
                                              const std::string& onnx_expectations,
                                              const std::optional<std::string>& expectations_arg,
                                              const std::optional<std::string>& plant,
                                              const std::optional<std::string>& wrong_vjp) {
  namespace fs = std::filesystem;
  const fs::path source = source_dir();
  std::vector<conformance::RunInput> inputs;
  bool onnx_read = false;
  for (const std::string& suite : suites) {
    if (suite == conformance::kOnnxSuite || suite == conformance::kDeterminismSuite) {
      onnx_read = true;
    }
    if (suite == conformance::kOnnxCurrentSuite) {
      const conformance::OnnxCorpus& corpus = conformance::kOnnxCurrentCorpus;
      inputs.push_back(file_input(std::string(corpus.expectations),
                                  onnx_expectations_file(corpus, expectations_arg)));
    }
    if (conformance::find_onnx_corpus(suite) == nullptr) {
      inputs.push_back(file_input("conformance/expectations/" + suite + ".tsv",
                                  fs::path(expectations_dir) / (suite + ".tsv")));
      // The backend's own expectations, where it has them here or at the commit.
      std::string name = "conformance/expectations/";
      name += backend;
      name += '/';
      name += suite;
      name += ".tsv";
      const fs::path path =
          conformance::backend_expectations_path(expectations_dir, suite, backend);
      if (fs::exists(path) || committed_sha256(name) != conformance::kAbsent) {
        inputs.push_back(file_input(name, path));
      }
    }
    if (suite == conformance::kNumericsSuite) {
      inputs.push_back(
          file_input("governance/numerics-policy.md", source / "governance/numerics-policy.md"));
    }
    if (suite == conformance::kTrainingSuite) {
      inputs.push_back(
          file_input("governance/memory-budget.tsv", source / "governance/memory-budget.tsv"));
    }
    if (suite == conformance::kDeterminismSuite) {
      for (conformance::RunInput& input :
           folder_inputs("conformance/determinism/configs",
                         source / "conformance/determinism/configs", ".conf")) {
        inputs.push_back(std::move(input));
      }
    }
  }
  if (onnx_read) {
    inputs.push_back(file_input("conformance/onnx/expectations.tsv", onnx_expectations));
  }
  if (plant) inputs.push_back(planted_option("--plant-divergence", *plant));
  if (wrong_vjp) inputs.push_back(planted_option("--plant-wrong-vjp", *wrong_vjp));
  return inputs;
}

}  // namespace

int run_command(Args& args) {
  const std::string db = database_path(args);
  conformance::RunOptions options;
  options.family = args.option("--family").value_or("");
  options.filter = args.option("--filter").value_or("");
  const std::optional<std::string> backend_arg = args.option("--backend");
  const std::optional<std::string> threads_arg = args.option("--threads");
  const int threads = threads_arg ? positive_int(*threads_arg, "--threads") : 3;
  if (const std::optional<std::string> timeout = args.option("--timeout")) {
    options.isolation.timeout_s = positive_int(*timeout, "--timeout");
  }
  options.isolation.isolate = !args.flag("--no-isolate");
  const std::optional<std::string> expectations_arg = args.option("--expectations");
  options.expectations_dir =
      expectations_arg.value_or(source_dir().string() + "/conformance/expectations");
  const std::optional<std::string> data_arg = args.option("--data");
  const std::optional<std::string> replay_arg = args.option("--replay");
  const std::optional<std::string> runs_arg = args.option("--runs");
  const std::optional<std::string> processes_arg = args.option("--processes");
  const std::optional<std::string> plant_arg = args.option("--plant-divergence");
  const std::optional<std::string> wrong_vjp_arg = args.option("--plant-wrong-vjp");
  const bool large_models = args.flag("--large-models");
  options.interactive = conformance::Progress::stderr_is_terminal();
  const std::vector<std::string> suites = args.positionals(kRunOptions);
  if (suites.empty()) {
    throw UsageError("name at least one suite (available: " + std::string(kSuites) + ")");
  }
  std::for_each(suites.begin(), suites.end(), check_suite);
  std::vector<const conformance::OnnxCorpus*> corpora;  // the ONNX corpus suites asked for
  for (const std::string& suite : suites) {
    if (const conformance::OnnxCorpus* c = conformance::find_onnx_corpus(suite))
      corpora.push_back(c);
  }
  const bool numerics = std::find(suites.begin(), suites.end(),
                                  std::string(conformance::kNumericsSuite)) != suites.end();
  const bool determinism = std::find(suites.begin(), suites.end(),
                                     std::string(conformance::kDeterminismSuite)) != suites.end();
  if ((runs_arg || processes_arg || plant_arg || large_models) && !determinism) {
    throw UsageError(
        "--runs, --processes, --large-models and --plant-divergence apply to the determinism "
        "suite");
  }
  const bool gradients = std::find(suites.begin(), suites.end(),
                                   std::string(conformance::kGradientsSuite)) != suites.end();
  if (wrong_vjp_arg && !gradients) {
    throw UsageError("--plant-wrong-vjp applies to the gradients suite");
  }
  conformance::GradientRunOptions gradient_options;
  if (wrong_vjp_arg) {
    try {
      gradient_options.plant = conformance::parse_planted_wrong_vjp(*wrong_vjp_arg);
    } catch (const VoltaError& e) {
      throw UsageError(e.message());
    }
  }
  if (data_arg && corpora.empty() && !determinism) {
    throw UsageError("--data DIR applies to the onnx, onnx-current and determinism suites only");
  }
  if (data_arg && corpora.size() + (determinism ? 1 : 0) > 1) {
    throw UsageError(
        "--data DIR names one corpus: run onnx, onnx-current and determinism one "
        "at a time with it");
  }

  if (replay_arg) {
    if (!numerics || suites.size() != 1) {
      throw UsageError("--replay ID applies to the numerics suite alone");
    }
    if (!options.filter.empty()) throw UsageError("--replay ID and --filter exclude each other");
    // A case id is its own glob (ids hold no '*'): the run holds exactly that case.
    options.filter = *replay_arg;
  }
  if (!std::filesystem::is_directory(options.expectations_dir)) {
    throw UsageError("expectations directory '" + options.expectations_dir +
                     "' does not exist (pass --expectations DIR)");
  }

  // Build every suite's cases before opening a run, so a bad argument records nothing.
  std::map<std::string, OnnxInputs, std::less<>> onnx_inputs;  // by suite
  for (const conformance::OnnxCorpus* corpus : corpora) {
    onnx_inputs.emplace(corpus->suite, load_onnx_inputs(*corpus, data_arg, expectations_arg));
  }
  const std::string onnx_expectations =
      onnx_expectations_file(conformance::kOnnxCorpus, expectations_arg);
  std::optional<conformance::Policy> policy;
  if (numerics) policy = conformance::load_policy(source_dir().string());
  conformance::DeterminismOptions determinism_options;
  if (determinism) {
    if (backend_arg && *backend_arg != "cpu" && *backend_arg != "cuda") {
      throw UsageError("the determinism suite runs on the cpu and cuda backends (got --backend " +
                       *backend_arg + ")");
    }
    if (plant_arg && backend_arg && *backend_arg != "cpu") {
      throw UsageError("--plant-divergence plants its defect in the cpu backend (got --backend " +
                       *backend_arg + ")");
    }
    determinism_options.backend = backend_arg.value_or("cpu");
    determinism_options.runs = runs_arg ? positive_int(*runs_arg, "--runs") : 100;
    determinism_options.processes =
        processes_arg ? non_negative_int(*processes_arg, "--processes") : 3;
    determinism_options.threads = threads;
    determinism_options.onnx_data = data_arg.value_or(std::string(conformance::kOnnxDataRoot));
    determinism_options.onnx_expectations = onnx_expectations;
    determinism_options.configs = source_dir().string() + "/conformance/determinism/configs";
    determinism_options.worker_command = {self_executable(), "__determinism-worker"};
    determinism_options.family = options.family;
    determinism_options.filter = options.filter;
    determinism_options.plant_divergence_node = plant_arg.value_or("");
    determinism_options.large_models = large_models;
  }
  std::vector<PlannedSuite> planned;
  std::vector<std::string> backends;  // in order of first use: one run each
  std::set<std::string> families;
  for (const std::string& suite : suites) {
    const std::vector<std::string> chosen =
        backend_arg ? std::vector<std::string>{*backend_arg} : default_backends(suite);
    for (const std::string& backend : chosen) {
      const auto onnx_it = onnx_inputs.find(suite);
      std::vector<SuiteCase> cases =
          onnx_it != onnx_inputs.end()
              ? conformance::onnx_suite_cases(onnx_it->second.tests, backend, threads)
          : suite == conformance::kNumericsSuite ? numerics_cases(*policy, backend, threads)
          : suite == conformance::kDeterminismSuite
              ? conformance::determinism_cases(determinism_options)
          : suite == conformance::kGradientsSuite
              ? conformance::gradient_suite(backend, gradient_options)
          : suite == conformance::kTrainingSuite
              ? conformance::training_suite(backend, training_options())
              : conformance::parity_suite(backend, threads);
      for (const SuiteCase& c : cases) families.insert(c.family);
      planned.push_back({suite, backend, std::move(cases)});
      if (std::find(backends.begin(), backends.end(), backend) == backends.end()) {
        backends.push_back(backend);
      }
    }
  }
  if (!options.family.empty() && !families.contains(options.family)) {
    std::string known;
    for (const std::string& f : families) known += (known.empty() ? "" : ", ") + f;
    throw UsageError("no family '" + options.family + "' in the chosen suites (families: " + known +
                     ")");
  }

  if (replay_arg) {
    const bool found = std::ranges::any_of(planned, [&](const PlannedSuite& p) {
      return std::ranges::any_of(p.cases,
                                 [&](const SuiteCase& c) { return c.case_id == *replay_arg; });
    });
    if (!found) {
      throw UsageError("--replay: the numerics suite has no case '" + *replay_arg +
                       "' (`volta-audit query` lists recorded case ids)");
    }
  }
  conformance::ResultStore store(db);
  // A property failure is replayed from its recorded seed and iteration count (the nightly
  // runs more iterations than CI), not rerun with today's options.
  if (replay_arg && replay_arg->starts_with("property:"))
    return replay_property_case(store, *replay_arg);
  int64_t unexpected = 0;
  for (const std::string& backend : backends) {
    conformance::RunInfo info;
    info.commit = build::kCommit;
    info.dirty = build::kDirty;
    info.build_type = build::kBuildType;
    info.compiler = std::string("g++ ") + __VERSION__;
    info.cpu_model = host_cpu_model();
    info.threads = threads;
    info.backend = backend;
    info.device = device_of(backend);
    std::vector<std::string> run_suites;
    for (const PlannedSuite& p : planned) {
      if (p.backend != backend) continue;
      info.suites += (info.suites.empty() ? "" : ",") + p.suite;
      run_suites.push_back(p.suite);
    }
    info.command =
        "volta-audit run " + info.suites + " --backend " + backend + " --threads " +
        std::to_string(threads) + (options.family.empty() ? "" : " --family " + options.family) +
        (options.filter.empty() || replay_arg ? "" : " --filter " + options.filter) +
        (expectations_arg ? " --expectations " + *expectations_arg : "") +
        (options.isolation.isolate ? "" : " --no-isolate") +
        (data_arg ? " --data " + *data_arg : "") + (runs_arg ? " --runs " + *runs_arg : "") +
        (processes_arg ? " --processes " + *processes_arg : "") +
        (plant_arg ? " --plant-divergence " + *plant_arg : "") +
        (wrong_vjp_arg ? " --plant-wrong-vjp " + *wrong_vjp_arg : "") +
        (large_models ? " --large-models" : "") +
        (replay_arg ? " --replay '" + *replay_arg + "'" : "");
    const int64_t run_id = store.begin_run(info);
    store.record_inputs(run_id,
                        run_inputs(run_suites, backend, options.expectations_dir, onnx_expectations,
                                   expectations_arg, plant_arg, wrong_vjp_arg));
    std::fprintf(stderr, "run %lld: commit %.12s%s, backend %s, database %s\n",
                 static_cast<long long>(run_id), build::kCommit, build::kDirty ? " (dirty)" : "",
                 backend.c_str(), db.c_str());
    int64_t run_unexpected = 0;
    for (const PlannedSuite& p : planned) {
      if (p.backend != backend) continue;
      const auto onnx_it = onnx_inputs.find(p.suite);
      run_unexpected +=
          onnx_it != onnx_inputs.end()
              ? conformance::run_onnx_suite(store, run_id, backend, p.cases,
                                            onnx_it->second.expectations, options, p.suite)
                    .unexpected
              : conformance::run_suite(store, run_id, p.suite, p.cases, options).unexpected;
    }
    store.finish_run(run_id);
    std::printf("run %lld complete: %lld unexpected result(s)\n", static_cast<long long>(run_id),
                static_cast<long long>(run_unexpected));
    unexpected += run_unexpected;
  }
  std::printf("`volta-audit report` and `volta-audit gate` read the run(s)\n");
  return unexpected == 0 ? 0 : 1;
}

}  // namespace volta::audit
