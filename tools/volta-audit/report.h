#pragma once
// `volta-audit report`: the latest run for humans, as Markdown or standalone HTML.

#include <string>

#include "volta/conformance/sqlite.h"

namespace volta::audit {

enum class ReportFormat { Markdown, Html };

// Provenance of the latest complete run; per-suite and per-family outcome tables; the worst
// errors (max ULP / abs); every failing case by canonical id with its message; the gate table.
std::string render_report(const conformance::Database& db, ReportFormat format);

}  // namespace volta::audit
