#pragma once
// `volta-audit report --perf`: one perf run for humans, as Markdown or a self-contained HTML
// page with a strip plot per benchmark. It reads what `volta-audit perf` recorded (run,
// perf_sample, perf_verdict, perf_baseline) and never writes.

#include <cstdint>
#include <optional>
#include <string>

#include "report.h"
#include "volta/conformance/sqlite.h"

namespace volta::audit {

// The newest complete run with perf samples or verdicts, or `run` when given (any status; a
// run that is not a perf run is refused). Header: commit, machine fingerprint, build, date,
// baseline commit range, counts per verdict, plan cache use; then a row per benchmark:
// regressions and noise first, then improvements, then the rest, by name. Throws StoreError
// when there is no such run.
std::string render_perf_report(const conformance::Database& db, ReportFormat format,
                               std::optional<int64_t> run = std::nullopt);

}  // namespace volta::audit
