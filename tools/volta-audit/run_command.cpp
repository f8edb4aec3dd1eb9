#include <cstdio>
#include <filesystem>
#include <set>
#include <thread>

#include "build_info.h"
#include "commands.h"
#include "volta/conformance/parity_suite.h"
#include "volta/conformance/progress.h"
#include "volta/conformance/runner.h"
#include "volta/conformance/store.h"
#include "volta/runtime/host.h"

namespace volta::audit {
namespace {

using conformance::SuiteCase;

constexpr std::string_view kSuites = "parity";
constexpr std::string_view kRunOptions =
    "--family F, --backend cpu|cuda, --filter PATTERN, --threads N, --timeout SECONDS, "
    "--no-isolate, --expectations DIR, --db PATH";

int positive_int(const std::string& text, std::string_view option) {
  try {
    size_t used = 0;
    const int v = std::stoi(text, &used);
    if (used == text.size() && v > 0) return v;
  } catch (const std::exception&) {
  }
  throw UsageError(std::string(option) + " takes a positive integer, got '" + text + "'");
}

std::vector<SuiteCase> suite_cases(const std::string& suite, const std::string& backend,
                                   int threads) {
  if (suite == "parity") return conformance::parity_suite(backend, threads);
  throw UsageError("unknown suite '" + suite + "' (available: " + std::string(kSuites) + ")");
}

}  // namespace

int run_command(Args& args) {
  const std::string db = database_path(args);
  conformance::RunOptions options;
  options.family = args.option("--family").value_or("");
  options.filter = args.option("--filter").value_or("");
  const std::string backend = args.option("--backend").value_or("cpu");
  const std::optional<std::string> threads_arg = args.option("--threads");
  const int threads = threads_arg ? positive_int(*threads_arg, "--threads") : 3;
  if (const std::optional<std::string> timeout = args.option("--timeout")) {
    options.isolation.timeout_s = positive_int(*timeout, "--timeout");
  }
  options.isolation.isolate = !args.flag("--no-isolate");
  options.expectations_dir =
      args.option("--expectations")
          .value_or(std::string(build::kSourceDir) + "/conformance/expectations");
  options.interactive = conformance::Progress::stderr_is_terminal();
  const std::vector<std::string> suites = args.positionals(kRunOptions);
  if (suites.empty()) {
    throw UsageError("name at least one suite (available: " + std::string(kSuites) + ")");
  }
  if (!std::filesystem::is_directory(options.expectations_dir)) {
    throw UsageError("expectations directory '" + options.expectations_dir +
                     "' does not exist (pass --expectations DIR)");
  }
  // Build every suite's cases before opening a run, so a bad argument records nothing.
  std::vector<std::pair<std::string, std::vector<SuiteCase>>> planned;
  std::set<std::string> families;
  for (const std::string& suite : suites) {
    planned.emplace_back(suite, suite_cases(suite, backend, threads));
    for (const SuiteCase& c : planned.back().second) families.insert(c.family);
  }
  if (!options.family.empty() && !families.contains(options.family)) {
    std::string known;
    for (const std::string& f : families) known += (known.empty() ? "" : ", ") + f;
    throw UsageError("no family '" + options.family + "' in the chosen suites (families: " + known +
                     ")");
  }

  conformance::ResultStore store(db);
  conformance::RunInfo info;
  info.commit = build::kCommit;
  info.dirty = build::kDirty;
  info.build_type = build::kBuildType;
  info.compiler = std::string("g++ ") + __VERSION__;
  info.cpu_model = host_cpu_model();
  info.threads = threads;
  info.backend = backend;
  for (const std::string& suite : suites) info.suites += (info.suites.empty() ? "" : ",") + suite;
  info.command = "volta-audit run " + info.suites + " --backend " + backend +
                 (options.family.empty() ? "" : " --family " + options.family) +
                 (options.filter.empty() ? "" : " --filter " + options.filter);
  const int64_t run_id = store.begin_run(info);
  std::fprintf(stderr, "run %lld: commit %.12s%s, backend %s, database %s\n",
               static_cast<long long>(run_id), build::kCommit, build::kDirty ? " (dirty)" : "",
               backend.c_str(), db.c_str());

  int64_t unexpected = 0;
  for (const auto& [suite, cases] : planned) {
    unexpected += conformance::run_suite(store, run_id, suite, cases, options).unexpected;
  }
  store.finish_run(run_id);
  std::printf(
      "run %lld complete: %lld unexpected result(s); `volta-audit report` and "
      "`volta-audit gate` read it\n",
      static_cast<long long>(run_id), static_cast<long long>(unexpected));
  return unexpected == 0 ? 0 : 1;
}

}  // namespace volta::audit
