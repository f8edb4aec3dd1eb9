#pragma once
// `volta-audit report`: the latest run for humans, as Markdown or standalone HTML.

#include <string>
#include <string_view>
#include <vector>

#include "volta/conformance/sqlite.h"

namespace volta::audit {

enum class ReportFormat { Markdown, Html };

// Provenance of the latest complete run; per-suite and per-family outcome tables; the worst
// errors (max ULP / abs); every failing case by canonical id with its message; the gate
// table; the newest training runs, with a loss chart each in HTML (training_report.h). A
// database with training runs and no complete run gets the training section alone; one with
// neither is refused (StoreError).
std::string render_report(const conformance::Database& db, ReportFormat format);

// Escaping and table helpers shared by the reports (report.cpp, perf_report.cpp).
// Markdown cell text: table, emphasis, code, link and HTML characters escaped, newlines folded.
std::string markdown_text(std::string_view text);
// "| a | b |\n" with every cell escaped.
std::string markdown_row(const std::vector<std::string>& cells);
// HTML text and attribute values: & < > " ' escaped.
std::string html_text(std::string_view text);
// "<tr><TAG>a</TAG>...</tr>\n" with every cell escaped.
std::string html_row(const std::vector<std::string>& cells, std::string_view tag);
// A number as the inline SVG charts write coordinates and sizes: one decimal ("%.1f").
std::string svg_number(double value);

// The reports' inline stylesheet: HTML reports are self-contained pages.
inline constexpr std::string_view kReportHtmlStyle = R"css(
body { font-family: system-ui, sans-serif; margin: 2rem; color: #222; }
table { border-collapse: collapse; margin-bottom: 1.5rem; }
th, td { border: 1px solid #ccc; padding: 0.2rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
td { font-family: ui-monospace, monospace; font-size: 0.9rem; }
)css";

}  // namespace volta::audit
