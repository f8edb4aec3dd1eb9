#pragma once
// The suite runner every suite shares: filter the suite's cases, run each isolated, judge it
// against the suite's expectations, record rows in batches, and report progress.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "volta/conformance/expectations.h"
#include "volta/conformance/isolation.h"
#include "volta/conformance/store.h"

namespace volta::conformance {

// The precondition of every case that runs on CUDA.
inline constexpr std::string_view kCudaPrecondition =
    "the CUDA backend in this build and a CUDA device";

// Why this binary cannot run cases on `backend` here, or nullopt when it can: the backend is
// not built in ("no cuda backend in this build"), or it is and has no device to run on
// (its make_context refuses with R-NO-DEVICE, whose message names what is missing). Suites
// record such cases SKIPPED with this reason under their declared precondition. The context is
// made in a child process, so the caller's process never initialises a device runtime before
// forking its cases; any other failure throws VoltaError(DeviceFailure) with its message.
std::optional<std::string> backend_unavailable(std::string_view backend);

struct SuiteCase {
  std::string family, op, backend, case_id, params;
  CaseBody body;
  // What the case needs that a machine or build may lack ("a CUDA device"), declared up
  // front: a SKIPPED outcome is expected without an expectation only when it is declared.
  std::string precondition = {};
};

struct RunOptions {
  std::string family;  // empty: every family
  std::string filter;  // glob over case ids; empty: every case
  IsolationOptions isolation;
  std::string expectations_dir;  // where SUITE.tsv files live
  int batch_size = 64;           // results per transaction (fewer when traces are large)
  bool interactive = false;      // progress bar instead of plain lines
};

struct SuiteSummary {
  int64_t cases = 0;
  int64_t unexpected = 0;  // unexpected, unexpected-pass and expired verdicts
};

// The row recording case `c` of `suite` with its outcome, judged against its expectation
// (nullptr: none) on the date `today` (YYYY-MM-DD).
ResultRow result_row(const std::string& suite, const SuiteCase& c, const CaseOutcome& o,
                     const Expectation* expectation, std::string_view today);

// Runs the cases of `suite` that pass the filters into run `run_id`. Expectations naming a
// case id (no '*') that the suite did not produce are recorded as MISSING. Each case's
// traces (CaseOutcome::traces) are recorded with its row, in the same transaction.
SuiteSummary run_suite(ResultStore& store, int64_t run_id, const std::string& suite,
                       const std::vector<SuiteCase>& cases, const RunOptions& options);

}  // namespace volta::conformance
