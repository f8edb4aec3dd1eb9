#include "volta/conformance/runner.h"

#include <algorithm>
#include <iterator>

#include "volta/conformance/isolation.h"
#include "volta/conformance/progress.h"
#include "volta/conformance/trace_store.h"
#include "volta/error.h"
#include "volta/runtime/registry.h"

namespace volta::conformance {
namespace {

bool selected(const SuiteCase& c, const RunOptions& options) {
  return (options.family.empty() || c.family == options.family) &&
         (options.filter.empty() || glob_match(options.filter, c.case_id));
}

bool has_wildcard(std::string_view pattern) { return pattern.find('*') != std::string_view::npos; }

// Traces carry output bytes (up to kTraceDataCap each): a batch is flushed early once its
// traces hold this much, so a suite of large subjects does not pile them up in memory.
constexpr int64_t kTraceBytesPerBatch = int64_t{64} << 20;

int64_t trace_bytes(const std::vector<NodeTraceRow>& traces) {
  int64_t bytes = 0;
  for (const NodeTraceRow& t : traces) {
    if (t.data) bytes += static_cast<int64_t>(t.data->size());
  }
  return bytes;
}

}  // namespace

std::optional<std::string> backend_unavailable(std::string_view backend) {
  if (!has_backend(backend)) {
    return "no " + std::string(backend) + " backend in this build";
  }
  // The context is made in a child process: a device runtime initialised here would not
  // survive the fork of each isolated case (CUDA's does not: the child's first call fails
  // with an initialisation error), so this process never touches the device.
  const CaseOutcome probe = run_case(
      [name = std::string(backend)] {
        CaseOutcome o;
        try {
          make_backend(name)->make_context({});
          o.outcome = Outcome::Pass;
        } catch (const VoltaError& e) {
          if (e.code() != ErrorCode::DeviceUnavailable) throw;
          o.outcome = Outcome::Skipped;
          o.message = e.message();
        }
        return o;
      },
      IsolationOptions{});
  if (probe.outcome == Outcome::Pass) return std::nullopt;
  if (probe.outcome == Outcome::Skipped) return probe.message;
  fail(ErrorCode::DeviceFailure,
       "making a context of backend '" + std::string(backend) + "' failed: " + probe.message);
}

ResultRow result_row(const std::string& suite, const SuiteCase& c, const CaseOutcome& o,
                     const Expectation* expectation, std::string_view today) {
  ResultRow row;
  row.suite = suite;
  row.family = c.family;
  row.op = c.op;
  row.backend = c.backend;
  row.case_id = c.case_id;
  row.params = c.params;
  row.outcome = o.outcome;
  row.verdict = verdict_for(o.outcome, expectation, today, !c.precondition.empty());
  row.precondition = c.precondition;
  row.expectation = expectation ? expectation->pattern : "";
  row.max_abs = o.max_abs;
  row.max_rel = o.max_rel;
  row.max_ulp = o.max_ulp;
  row.tolerance_key = o.tolerance_key;
  row.tolerance = o.tolerance;
  row.output_hash = o.output_hash;
  row.duration_ms = o.duration_ms;
  row.kernel = o.kernel;
  row.message = o.message;
  row.not_bit_exact = o.not_bit_exact;
  return row;
}

SuiteSummary run_suite(ResultStore& store, int64_t run_id, const std::string& suite,
                       const std::vector<SuiteCase>& cases, const RunOptions& options) {
  // One run is one backend: its cases' backend chooses the backend's own expectations too.
  const std::vector<Expectation> expectations = load_expectations(
      options.expectations_dir, suite, cases.empty() ? "" : cases.front().backend);
  std::vector<ExpectationRow> recorded;
  recorded.reserve(expectations.size());
  for (const Expectation& e : expectations) {
    recorded.push_back(
        {suite, e.pattern, std::string(outcome_name(e.outcome)), e.reason, e.issue, e.expires});
  }
  store.record_expectations(run_id, recorded);

  std::vector<const SuiteCase*> chosen;
  for (const SuiteCase& c : cases) {
    if (selected(c, options)) chosen.push_back(&c);
  }
  const std::string today = today_utc();
  SuiteSummary summary;
  Progress progress(suite, static_cast<int64_t>(chosen.size()), options.interactive);
  std::vector<ResultRow> batch;
  std::vector<NodeTraceRow> traces;  // of the batch's cases
  int64_t batch_trace_bytes = 0;
  auto flush = [&] {
    // The rows and the traces of a batch land together or not at all.
    Transaction tx(store.db());
    store.record(run_id, batch);
    record_traces(store, run_id, traces);
    tx.commit();
    batch.clear();
    traces.clear();
    batch_trace_bytes = 0;
  };
  auto add = [&](ResultRow row, std::vector<NodeTraceRow> case_traces) {
    ++summary.cases;
    if (row.verdict != Verdict::Expected) ++summary.unexpected;
    progress.add(row.outcome, row.case_id);
    batch.push_back(std::move(row));
    batch_trace_bytes += trace_bytes(case_traces);
    std::move(case_traces.begin(), case_traces.end(), std::back_inserter(traces));
    if (static_cast<int>(batch.size()) >= options.batch_size ||
        batch_trace_bytes >= kTraceBytesPerBatch) {
      flush();
    }
  };

  std::vector<std::string> seen;
  for (const SuiteCase* c : chosen) {
    CaseOutcome outcome = run_case(c->body, options.isolation);
    ResultRow row =
        result_row(suite, *c, outcome, match_expectation(expectations, c->case_id), today);
    add(std::move(row), std::move(outcome.traces));
    seen.push_back(c->case_id);
  }
  // An expectation that names one exact case the suite no longer produces is MISSING: the
  // case was renamed or dropped, and the expectation would otherwise rot unnoticed.
  if (options.family.empty() && options.filter.empty()) {
    for (const Expectation& e : expectations) {
      if (has_wildcard(e.pattern) || std::find(seen.begin(), seen.end(), e.pattern) != seen.end()) {
        continue;
      }
      SuiteCase missing{"", "", cases.empty() ? "" : cases.front().backend, e.pattern, "", {}};
      CaseOutcome o;
      o.outcome = Outcome::Missing;
      o.message = "expectation at line " + std::to_string(e.line) + " of " + e.file +
                  " names a case the suite did not produce";
      add(result_row(suite, missing, o, &e, today), {});
    }
  }
  flush();
  progress.finish();
  return summary;
}

}  // namespace volta::conformance
