#include "report.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <vector>

#include "gates.h"
#include "queries.h"
#include "training_report.h"
#include "volta/conformance/outcome.h"

namespace volta::audit {

// Markdown cells: pipes would split the cell, and emphasis, code, link and HTML characters
// would be interpreted; a case id or a diagnostic must read exactly as recorded.
std::string markdown_text(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '\\':
      case '`':
      case '*':
      case '_':
      case '[':
      case ']':
      case '|':
        out += '\\';
        out += c;
        break;
      case '<':
        out += "&lt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '\n':
      case '\r':
        out += ' ';
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string markdown_row(const std::vector<std::string>& cells) {
  std::string row = "|";
  for (const std::string& cell : cells) row += " " + markdown_text(cell) + " |";
  return row + "\n";
}

std::string html_text(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string html_row(const std::vector<std::string>& cells, std::string_view tag) {
  std::string row = "<tr>";
  for (const std::string& cell : cells) {
    row += "<" + std::string(tag) + ">" + html_text(cell) + "</" + std::string(tag) + ">";
  }
  return row + "</tr>\n";
}

std::string svg_number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", value);
  return buffer;
}

namespace {

using conformance::Database;
using conformance::Statement;
using conformance::StoreError;

// One titled table of the report; `empty` replaces the table when it has no rows.
struct Section {
  std::string heading;
  std::string note;
  QueryResult table;
  std::string empty;
  std::vector<std::string> figures = {};  // HTML only: markup after the table
};

struct Report {
  std::string title;
  std::vector<Section> sections;
};

struct RunRef {
  int64_t id = 0;
  std::string commit;
};

// The report describes one run: the newest complete run that recorded results.
std::optional<RunRef> newest_run(const Database& db) {
  Statement newest = db.prepare(
      "SELECT id, commit_sha FROM run WHERE status = 'complete' "
      "AND EXISTS (SELECT 1 FROM result WHERE run_id = run.id) "
      "ORDER BY started_at DESC, id DESC LIMIT 1");
  if (!newest.step()) return std::nullopt;
  return RunRef{newest.column_int(0), newest.column_text(1)};
}

QueryResult fetch(const Database& db, std::string_view sql, int64_t run_id) {
  Statement query = db.prepare(sql);
  if (const int index = query.parameter_index(":run")) query.bind(index, run_id);
  return read_rows(query);
}

// One "field | value" row per column of the run row.
QueryResult provenance(const Database& db, int64_t run_id) {
  const QueryResult run = fetch(db, R"sql(
SELECT id AS run, commit_sha AS "commit", CASE dirty WHEN 0 THEN 'no' ELSE 'yes' END AS dirty,
       build_type AS "build type", compiler, cpu_model AS cpu, threads, backend, machine,
       suites, command, started_at AS started, ended_at AS ended, origin
FROM run WHERE id = :run
)sql",
                                run_id);
  QueryResult fields;
  fields.columns = {"field", "value"};
  for (size_t i = 0; i < run.columns.size(); ++i) {
    if (run.columns[i] == "origin" && run.rows.front()[i].empty()) continue;  // not merged
    fields.rows.push_back({run.columns[i], run.rows.front()[i]});
  }
  return fields;
}

// "count(*) AS cases, sum(r.outcome = 'PASS') AS "PASS", ..." over every outcome.
std::string outcome_counts() {
  std::string columns = "count(*) AS cases";
  for (int i = 0; i < conformance::kOutcomeCount; ++i) {
    const std::string name(conformance::outcome_name(static_cast<conformance::Outcome>(i)));
    columns.append(", sum(r.outcome = '").append(name).append("') AS \"").append(name).append("\"");
  }
  return columns;
}

QueryResult outcome_table(const Database& db, int64_t run_id, std::string_view grouping) {
  const std::string group(grouping);
  return fetch(db,
               "SELECT " + group + ", " + outcome_counts() +
                   " FROM result r JOIN test_case c ON c.id = r.case_ref WHERE r.run_id = :run "
                   "GROUP BY " +
                   group + " ORDER BY " + group,
               run_id);
}

QueryResult worst_errors(const Database& db, int64_t run_id, std::string_view metric) {
  const std::string column = "r." + std::string(metric);
  return fetch(db,
               "SELECT c.suite, c.backend, c.case_id, r.outcome, r.max_ulp, r.max_abs, r.max_rel, "
               "r.tolerance FROM result r JOIN test_case c ON c.id = r.case_ref "
               "WHERE r.run_id = :run AND " +
                   column + " IS NOT NULL ORDER BY " + column + " DESC, c.case_id LIMIT 10",
               run_id);
}

// Rows of the commit's complete runs whose plans ran kernels without a bit-exact guarantee
// (Relaxed mode): the determinism contract says every report shows them.
QueryResult not_bit_exact(const Database& db, const std::string& commit) {
  Statement query = db.prepare(
      "SELECT DISTINCT c.suite, c.backend, c.case_id, r.not_bit_exact AS nodes "
      "FROM result r JOIN test_case c ON c.id = r.case_ref JOIN run ON run.id = r.run_id "
      "WHERE run.commit_sha = ? AND run.status = 'complete' AND r.not_bit_exact <> '' "
      "ORDER BY c.suite, c.backend, c.case_id, nodes");
  query.bind(1, commit);
  return read_rows(query);
}

QueryResult gate_table(const Database& db, const std::string& commit) {
  QueryResult table;
  table.columns = {"gate", "status", "blocker", "reason"};
  for (const GateResult& r : evaluate_gates(db, commit, /*release=*/false)) {
    table.rows.push_back(
        {r.gate, std::string(gate_status_name(r.status)), r.blocker ? "yes" : "no", r.reason});
  }
  return table;
}

Section training(const Database& db, ReportFormat format) {
  TrainingSection t = training_section(db, format == ReportFormat::Html);
  return {"Training", std::move(t.note), std::move(t.table), std::string(kTrainingEmpty),
          std::move(t.figures)};
}

Report build_report(const Database& db, ReportFormat format) {
  const std::optional<RunRef> newest = newest_run(db);
  if (!newest) {
    // A database `volta train` wrote, with no conformance run: its training runs alone.
    Section section = training(db, format);
    if (section.table.rows.empty()) {
      throw StoreError("results database '" + db.path() +
                       "' holds no complete run with results: run `volta-audit run` first");
    }
    section.note =
        "The database holds no complete conformance run with results (`volta-audit "
        "run` records one). " +
        section.note;
    return Report{"Volta report: training runs", {std::move(section)}};
  }
  const auto& [run_id, commit] = *newest;
  Report report;
  report.title = "Volta conformance report: run " + std::to_string(run_id) + ", commit " +
                 commit.substr(0, 12);
  report.sections.push_back({"Provenance", "", provenance(db, run_id), ""});
  report.sections.push_back(
      {"Suites", "", outcome_table(db, run_id, "c.suite, c.backend"), "The run has no results."});
  report.sections.push_back(
      {"Families", "", outcome_table(db, run_id, "c.suite, c.family"), "The run has no results."});
  report.sections.push_back({"Worst errors by max ULP", "The 10 largest ULP distances.",
                             worst_errors(db, run_id, "max_ulp"),
                             "No result carries a ULP distance."});
  report.sections.push_back({"Worst errors by max abs", "The 10 largest absolute errors.",
                             worst_errors(db, run_id, "max_abs"),
                             "No result carries an absolute error."});
  report.sections.push_back(
      {"Results that do not match their expectations",
       "Unexpected outcomes, unexpected passes and expired expectations, by canonical case id.",
       fetch(db,
             "SELECT c.suite, c.backend, c.case_id, r.outcome, r.verdict, r.message "
             "FROM result r JOIN test_case c ON c.id = r.case_ref "
             "WHERE r.run_id = :run AND r.verdict <> 'expected' "
             "ORDER BY c.suite, c.backend, c.case_id",
             run_id),
       "None: every result matches its expectation."});
  report.sections.push_back(
      {"Not bit-exact",
       "Cases of commit " + commit.substr(0, 12) +
           " whose plans (Relaxed mode) run nodes on kernels without a bit-exact guarantee, "
           "with those nodes.",
       not_bit_exact(db, commit), "None: every plan of this commit's complete runs is bit-exact."});
  report.sections.push_back({"Gates",
                             "Every gate for commit " + commit.substr(0, 12) +
                                 ", with pull-request blockers (volta-audit gate --release makes "
                                 "every gate a blocker).",
                             gate_table(db, commit), ""});
  report.sections.push_back(training(db, format));
  return report;
}

std::string render_markdown(const Report& report) {
  std::string out = "# " + markdown_text(report.title) + "\n";
  for (const Section& s : report.sections) {
    out += "\n## " + markdown_text(s.heading) + "\n\n";
    if (!s.note.empty()) out += markdown_text(s.note) + "\n\n";
    if (s.table.rows.empty() && !s.empty.empty()) {
      out += markdown_text(s.empty) + "\n";
      continue;
    }
    out += markdown_row(s.table.columns);
    out += "|";
    for (size_t i = 0; i < s.table.columns.size(); ++i) out += "---|";
    out += "\n";
    for (const auto& row : s.table.rows) out += markdown_row(row);
  }
  return out;
}

std::string render_html(const Report& report) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<title>" + html_text(report.title) + "</title>\n";
  out += "<style>" + std::string(kReportHtmlStyle) + std::string(kTrainingStyle) +
         "</style>\n</head>\n<body>\n";
  out += "<h1>" + html_text(report.title) + "</h1>\n";
  for (const Section& s : report.sections) {
    out += "<h2>" + html_text(s.heading) + "</h2>\n";
    if (!s.note.empty()) out += "<p>" + html_text(s.note) + "</p>\n";
    if (s.table.rows.empty() && !s.empty.empty()) {
      out += "<p>" + html_text(s.empty) + "</p>\n";
      continue;
    }
    out += "<table>\n<thead>\n" + html_row(s.table.columns, "th") + "</thead>\n<tbody>\n";
    for (const auto& row : s.table.rows) out += html_row(row, "td");
    out += "</tbody>\n</table>\n";
    for (const std::string& figure : s.figures) out += figure + "\n";
  }
  return out + "</body>\n</html>\n";
}

}  // namespace

std::string render_report(const Database& db, ReportFormat format) {
  const Report report = build_report(db, format);
  return format == ReportFormat::Html ? render_html(report) : render_markdown(report);
}

}  // namespace volta::audit
