#include "queries.h"

#include <algorithm>
#include <array>

namespace volta::audit {
namespace {

using conformance::Database;
using conformance::Statement;
using conformance::StoreError;

// "The newest complete run" of the canned questions is the newest complete run of :commit
// that recorded results. `query` binds :commit to the commit of the newest complete run, so
// there it is simply the latest run; a docs claim binds the commit it checks.
constexpr std::array<CannedQuery, 8> kQueries = {{
    {"failures-by-family",
     "non-passing, non-skipped outcomes per suite and family in the newest complete run",
     R"sql(
WITH newest AS (
  SELECT id FROM run
  WHERE commit_sha = :commit AND status = 'complete'
    AND EXISTS (SELECT 1 FROM result WHERE run_id = run.id)
  ORDER BY started_at DESC, id DESC LIMIT 1
)
SELECT c.suite, c.family, r.outcome, count(*) AS cases
FROM result r
JOIN newest ON r.run_id = newest.id
JOIN test_case c ON c.id = r.case_ref
WHERE r.outcome NOT IN ('PASS', 'SKIPPED')
GROUP BY c.suite, c.family, r.outcome
ORDER BY c.suite, c.family, r.outcome
)sql"},
    {"slowest-cases", "the 20 slowest cases of the newest complete run", R"sql(
WITH newest AS (
  SELECT id FROM run
  WHERE commit_sha = :commit AND status = 'complete'
    AND EXISTS (SELECT 1 FROM result WHERE run_id = run.id)
  ORDER BY started_at DESC, id DESC LIMIT 1
)
SELECT c.suite, c.backend, c.case_id, r.outcome, printf('%.3f', r.duration_ms) AS duration_ms
FROM result r
JOIN newest ON r.run_id = newest.id
JOIN test_case c ON c.id = r.case_ref
ORDER BY r.duration_ms DESC, c.case_id
LIMIT 20
)sql"},
    {"unsupported-ops",
     "ops a backend refused in the newest complete run, with the first diagnostic", R"sql(
WITH newest AS (
  SELECT id FROM run
  WHERE commit_sha = :commit AND status = 'complete'
    AND EXISTS (SELECT 1 FROM result WHERE run_id = run.id)
  ORDER BY started_at DESC, id DESC LIMIT 1
),
unsupported AS (
  SELECT c.op, c.backend, r.message,
         row_number() OVER (PARTITION BY c.op, c.backend ORDER BY c.case_id) AS k,
         count(*) OVER (PARTITION BY c.op, c.backend) AS cases
  FROM result r
  JOIN newest ON r.run_id = newest.id
  JOIN test_case c ON c.id = r.case_ref
  WHERE r.outcome = 'UNSUPPORTED'
)
SELECT op, backend, cases, message AS first_message
FROM unsupported WHERE k = 1
ORDER BY op, backend
)sql"},
    {"tolerance-changes",
     "cases judged by a different tolerance in the two newest complete runs that ran them",
     R"sql(
WITH ranked AS (
  SELECT r.case_ref, r.run_id, r.tolerance,
         row_number() OVER (PARTITION BY r.case_ref
                            ORDER BY run.started_at DESC, run.id DESC) AS recency
  FROM result r JOIN run ON run.id = r.run_id
  WHERE run.status = 'complete'
)
SELECT c.suite, c.backend, c.case_id, older.run_id AS before_run, older.tolerance AS before,
       newer.run_id AS after_run, newer.tolerance AS after
FROM ranked newer
JOIN ranked older ON older.case_ref = newer.case_ref AND older.recency = 2
JOIN test_case c ON c.id = newer.case_ref
WHERE newer.recency = 1 AND newer.tolerance <> older.tolerance
ORDER BY c.suite, c.backend, c.case_id
)sql"},
    {"expectations", "the expectations the newest complete run was judged against", R"sql(
WITH newest AS (
  SELECT id FROM run
  WHERE commit_sha = :commit AND status = 'complete'
    AND EXISTS (SELECT 1 FROM expectation WHERE run_id = run.id)
  ORDER BY started_at DESC, id DESC LIMIT 1
)
SELECT e.suite, e.pattern, e.outcome, e.reason, e.issue, e.expires
FROM expectation e JOIN newest ON e.run_id = newest.id
ORDER BY e.suite, e.id
)sql"},
    {"runs", "every run with its provenance and status", R"sql(
SELECT id, commit_sha, dirty, build_type, compiler, cpu_model, threads, backend, machine,
       suites, started_at, ended_at, status, origin,
       (SELECT count(*) FROM result WHERE run_id = run.id) AS results
FROM run
ORDER BY started_at, id
)sql"},
    {"flaky",
     "FLAKY cases: an outcome that differs between complete runs of :commit on one machine and "
     "build type (clean trees), with each outcome and the first run that gave it",
     R"sql(
WITH outcome_run AS (
  SELECT r.case_ref, run.machine, run.build_type, r.outcome, min(run.id) AS first_run
  FROM result r JOIN run ON run.id = r.run_id
  WHERE run.commit_sha = :commit AND run.status = 'complete' AND run.dirty = 0
  GROUP BY r.case_ref, run.machine, run.build_type, r.outcome
)
SELECT c.suite, c.backend, c.case_id, o.machine, o.build_type,
       group_concat(o.outcome || ' in run ' || o.first_run, ', ') AS outcomes
FROM (SELECT * FROM outcome_run ORDER BY first_run) o JOIN test_case c ON c.id = o.case_ref
GROUP BY o.case_ref, o.machine, o.build_type
HAVING count(*) > 1
ORDER BY c.suite, c.backend, c.case_id
)sql"},
    {"training-runs", "every training run with its status, seed, steps and first and last loss",
     R"sql(
SELECT t.id, t.commit_sha, t.dirty, t.status, t.model, t.seed, t.threads, t.resumed_from,
       t.started_at, t.ended_at, t.origin,
       (SELECT count(*) FROM training_step s WHERE s.run_id = t.id) AS steps,
       (SELECT max(s.step) FROM training_step s WHERE s.run_id = t.id) AS last_step,
       (SELECT s.loss FROM training_step s WHERE s.run_id = t.id
        ORDER BY s.step LIMIT 1) AS first_loss,
       (SELECT s.loss FROM training_step s WHERE s.run_id = t.id
        ORDER BY s.step DESC LIMIT 1) AS last_loss
FROM training_run t
ORDER BY t.started_at, t.id
)sql"},
}};

bool query_only(const Database& db) {
  Statement pragma = db.prepare("PRAGMA query_only");
  pragma.step();
  return pragma.column_int(0) != 0;
}

void set_query_only(const Database& db, bool on) {
  db.prepare(on ? "PRAGMA query_only = 1" : "PRAGMA query_only = 0").run();
}

// Makes the connection refuse writes for one query and gives it back as it was: callers
// share their read-write connection (docs check records its findings after asking).
class QueryOnlyScope {
 public:
  explicit QueryOnlyScope(const Database& db) : db_(db), was_on_(query_only(db)) {
    set_query_only(db_, true);
  }
  ~QueryOnlyScope() {
    if (was_on_) return;
    try {
      set_query_only(db_, false);
    } catch (const StoreError&) {
      // A connection that cannot run a PRAGMA is failing already; leaving it read-only is
      // the safe side, and the error that ends the caller's work is reported there.
    }
  }
  QueryOnlyScope(const QueryOnlyScope&) = delete;
  QueryOnlyScope& operator=(const QueryOnlyScope&) = delete;

 private:
  const Database& db_;
  bool was_on_;
};

// Columns measure code points, so UTF-8 text (the "×" of a shape) does not skew them.
size_t display_width(std::string_view text) {
  return static_cast<size_t>(std::ranges::count_if(
      text, [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string one_line(std::string_view text) {
  std::string line;
  for (char c : text) {
    if (c == '\n') {
      line += "\\n";
    } else if (c == '\t') {
      line += "\\t";
    } else if (c == '\r') {
      line += "\\r";
    } else {
      line += c;
    }
  }
  return line;
}

void append_row(std::string& out, const std::vector<std::string>& cells,
                const std::vector<size_t>& widths) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) {
    const std::string cell = one_line(cells[i]);
    line += cell;
    if (i + 1 < cells.size()) line.append(widths[i] - display_width(cell) + 2, ' ');
  }
  out += line + "\n";
}

}  // namespace

std::span<const CannedQuery> canned_queries() { return kQueries; }

const CannedQuery* find_query(std::string_view name) {
  const auto it = std::ranges::find(kQueries, name, &CannedQuery::name);
  return it == kQueries.end() ? nullptr : &*it;
}

QueryResult run_read_only(const Database& db, std::string_view sql, std::string_view commit) {
  const QueryOnlyScope read_only(db);
  Statement query = db.prepare(sql);
  // query_only would stop a write too, with SQLite's terse "readonly database"; refusing
  // before the first step says what is wrong.
  if (!query.read_only()) {
    throw StoreError("results database '" + db.path() + "': refused `" +
                     std::string(sql.substr(0, 100)) +
                     "`: it would write, and queries are read-only (SELECT, WITH, read-only "
                     "PRAGMAs)");
  }
  if (const int index = query.parameter_index(":commit")) {
    if (commit.empty()) {
      throw StoreError("results database '" + db.path() +
                       "': the query names :commit and there is no commit to bind (the store "
                       "has no complete run)");
    }
    query.bind(index, commit);
  }
  return read_rows(query);
}

QueryResult read_rows(Statement& statement) {
  QueryResult result;
  for (int i = 0; i < statement.column_count(); ++i) {
    result.columns.push_back(statement.column_name(i));
  }
  while (statement.step()) {
    std::vector<std::string>& row = result.rows.emplace_back();
    for (int i = 0; i < statement.column_count(); ++i) row.push_back(statement.column_text(i));
  }
  return result;
}

std::string format_table(const QueryResult& result) {
  std::vector<size_t> widths(result.columns.size(), 0);
  const auto widen = [&widths](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], display_width(one_line(cells[i])));
    }
  };
  widen(result.columns);
  for (const auto& row : result.rows) widen(row);
  std::string out;
  append_row(out, result.columns, widths);
  for (const auto& row : result.rows) append_row(out, row, widths);
  return out;
}

std::string latest_commit(const Database& db) {
  Statement newest = db.prepare(
      "SELECT commit_sha FROM run WHERE status = 'complete' "
      "ORDER BY started_at DESC, id DESC LIMIT 1");
  return newest.step() ? newest.column_text(0) : std::string();
}

}  // namespace volta::audit
