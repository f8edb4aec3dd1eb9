// `volta-audit gate`: evaluates every gate for a commit, appends the verdicts to gate_result
// and prints the table; the exit status is 0 only when every blocker passes.

#include <cstdio>
#include <filesystem>
#include <optional>

#include "build_info.h"
#include "commands.h"
#include "gates.h"
#include "volta/conformance/store.h"

namespace volta::audit {
namespace {

constexpr std::string_view kSupported = "--release, --commit SHA, --db PATH";

std::string commit_to_judge(const std::optional<std::string>& requested) {
  if (requested) return *requested;
  if (std::string_view(build::kCommit) == "unknown") {
    throw UsageError(
        "this volta-audit was built outside a git checkout and knows no commit: pass --commit SHA");
  }
  return build::kCommit;
}

}  // namespace

int gate_command(Args& args) {
  const bool release = args.flag("--release");
  const std::optional<std::string> requested = args.option("--commit");
  const std::string path = database_path(args);
  if (const std::vector<std::string> extra = args.positionals(kSupported); !extra.empty()) {
    throw UsageError("unexpected argument '" + extra.front() +
                     "' (supported: " + std::string(kSupported) + ")");
  }
  const std::string commit = commit_to_judge(requested);
  // Gates read evidence; they never create a store, which would only hold no evidence.
  if (!std::filesystem::exists(path)) {
    throw conformance::StoreError("results database '" + path +
                                  "' does not exist: run `volta-audit run` first, or pass "
                                  "--db PATH");
  }
  if (build::kDirty) {
    std::fprintf(stderr,
                 "warning: this volta-audit was built from a dirty tree (uncommitted changes on "
                 "%.12s); results of a dirty tree are not release evidence\n",
                 build::kCommit);
  }
  conformance::ResultStore store(path);  // read-write only to append the gate_result rows
  const std::vector<GateResult> results = evaluate_gates(store.db(), commit, release);
  record_gate_results(store.db(), commit, results);
  std::printf("gates for commit %s (%s)\n\n%s\n%s\n", commit.c_str(),
              release ? "release: every gate blocks" : "pull request: blockers marked yes",
              format_gate_table(results).c_str(), gate_verdict_line(results).c_str());
  return all_blockers_pass(results) ? 0 : 1;
}

}  // namespace volta::audit
