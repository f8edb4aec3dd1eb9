// `volta-audit diff RUN_A RUN_B`: compares the node traces two runs recorded and names, per
// subject, the first node (in schedule order) whose output bits differ. The comparison is the
// harness's (first_divergence.h); this file is the command line around it.

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "volta/conformance/first_divergence.h"
#include "volta/conformance/store.h"

namespace volta::audit {
namespace {

using conformance::NodeTraceRow;

constexpr std::string_view kSupported = "--subject S, --db PATH";
constexpr std::string_view kWhereTracesComeFrom =
    "node traces are recorded by `volta-audit run determinism`";

// The run's traces; a run that does not exist or traced nothing is a usage error.
std::vector<NodeTraceRow> traces_of(const conformance::Database& db, int64_t run_id) {
  conformance::Statement run = db.prepare("SELECT status FROM run WHERE id = ?");
  run.bind(1, run_id);
  if (!run.step()) {
    throw UsageError("run " + std::to_string(run_id) + " does not exist in '" + db.path() + "'; " +
                     std::string(kWhereTracesComeFrom));
  }
  std::vector<NodeTraceRow> rows = conformance::load_traces(db, run_id);
  if (rows.empty()) {
    throw UsageError("run " + std::to_string(run_id) + " (" + run.column_text(0) +
                     ") recorded no node traces; " + std::string(kWhereTracesComeFrom));
  }
  return rows;
}

bool traces_subject(const std::vector<NodeTraceRow>& rows, const std::string& subject) {
  for (const NodeTraceRow& r : rows) {
    if (r.subject == subject) return true;
  }
  return false;
}

std::vector<NodeTraceRow> only_subject(std::vector<NodeTraceRow> rows, const std::string& subject) {
  std::erase_if(rows, [&](const NodeTraceRow& r) { return r.subject != subject; });
  return rows;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// "a, b, c and 7 more": messages name a few subjects, not hundreds.
std::string some_subjects(const std::vector<std::string>& names) {
  constexpr size_t kShown = 3;
  if (names.size() <= kShown) return joined(names);
  return joined({names.begin(), names.begin() + kShown}) + " and " +
         std::to_string(names.size() - kShown) + " more";
}

}  // namespace

int diff_command(Args& args) {
  const std::optional<std::string> subject = args.option("--subject");
  const std::string path = database_path(args);
  const std::vector<std::string> runs = args.positionals(kSupported);
  if (runs.size() != 2) {
    throw UsageError("name exactly two runs to compare, RUN_A and RUN_B (got " +
                     std::to_string(runs.size()) + ")");
  }
  const int64_t run_a = parse_run_id(runs[0]), run_b = parse_run_id(runs[1]);
  const conformance::ResultStore store(path, conformance::Database::Mode::ReadOnly);
  std::vector<NodeTraceRow> a = traces_of(store.db(), run_a);
  std::vector<NodeTraceRow> b = traces_of(store.db(), run_b);
  if (subject) {
    if (!traces_subject(a, *subject) && !traces_subject(b, *subject)) {
      throw UsageError("subject '" + *subject + "' is traced in neither run " +
                       std::to_string(run_a) + " nor run " + std::to_string(run_b) +
                       " (subjects look like \"model:mlp\" or \"onnx:test_add\")");
    }
    a = only_subject(std::move(a), *subject);
    b = only_subject(std::move(b), *subject);
  }

  const conformance::TraceDiff diff = conformance::diff_traces(a, b);
  if (diff.subjects == 0) {
    throw UsageError("runs " + std::to_string(run_a) + " and " + std::to_string(run_b) +
                     " share no traced subject, so there is nothing to compare (run " +
                     std::to_string(run_a) + ": " + some_subjects(diff.only_in_a) + "; run " +
                     std::to_string(run_b) + ": " + some_subjects(diff.only_in_b) + ")");
  }
  std::printf("A = run %lld, B = run %lld\n", static_cast<long long>(run_a),
              static_cast<long long>(run_b));
  for (const conformance::Divergence& d : diff.divergences) {
    std::printf("\n%s", conformance::describe(d).c_str());
  }
  if (!diff.only_in_a.empty() || !diff.only_in_b.empty()) std::printf("\n");
  if (!diff.only_in_a.empty()) {
    std::printf("traced in run A only: %zu subject(s): %s\n", diff.only_in_a.size(),
                some_subjects(diff.only_in_a).c_str());
  }
  if (!diff.only_in_b.empty()) {
    std::printf("traced in run B only: %zu subject(s): %s\n", diff.only_in_b.size(),
                some_subjects(diff.only_in_b).c_str());
  }
  const std::string verdict = diff.divergences.empty()
                                  ? "no divergence"
                                  : std::to_string(diff.divergences.size()) + " diverge";
  std::printf("\ndiff: %lld subjects, %lld node outputs compared, %s\n",
              static_cast<long long>(diff.subjects), static_cast<long long>(diff.outputs),
              verdict.c_str());
  return diff.divergences.empty() ? 0 : 1;
}

}  // namespace volta::audit
