#include "volta/conformance/onnx_coverage.h"

#include "volta/conformance/evidence.h"

namespace volta::conformance {

std::string onnx_evidence_ctes(std::string_view runs, std::string_view suite) {
  std::string sql = R"sql(
onnx_ranked AS (
  SELECT c.case_id, c.family, c.op, r.params, c.backend, r.outcome, r.verdict, r.message, r.run_id,
         r.expectation, r.precondition,
         row_number() OVER (PARTITION BY r.case_ref
                            ORDER BY run.started_at DESC, run.id DESC) AS recency
  FROM result r
  JOIN {runs} run ON run.id = r.run_id
  JOIN test_case c ON c.id = r.case_ref
  WHERE c.suite = {suite}
),
onnx_evidence AS (
  SELECT case_id, family, op, params, backend, outcome, verdict, message, run_id, expectation,
         precondition
  FROM onnx_ranked WHERE recency = 1
))sql";
  sql.replace(sql.find("{runs}"), 6, runs);
  std::string quoted = "'";  // an SQL string literal of the suite name
  for (char c : suite) quoted += c == '\'' ? std::string("''") : std::string(1, c);
  sql.replace(sql.find("{suite}"), 7, quoted + "'");
  return sql;
}

namespace {

// The evidence tallied per backend, grouped by `family` and `op` (SQL expressions over
// onnx_evidence) and ordered by `order`.
std::vector<OnnxCoverageRow> tally(const Database& db, std::string_view commit,
                                   std::string_view suite, const std::string& family,
                                   const std::string& op, const std::string& order) {
  Statement query = db.prepare("WITH " + std::string(usable_run_cte()) + "," +
                               onnx_evidence_ctes("usable_run", suite) + "\nSELECT " + family +
                               ", " + op + R"sql(, backend, count(*),
       sum(outcome = 'PASS'), sum(outcome = 'UNSUPPORTED'),
       sum(outcome NOT IN ('PASS', 'UNSUPPORTED', 'SKIPPED'))
FROM onnx_evidence WHERE outcome <> 'MISSING'
GROUP BY 1, 2, backend ORDER BY )sql" +
                               order + ", backend");
  query.bind(query.parameter_index(":commit"), commit);
  query.bind(query.parameter_index(":release"), int64_t{0});
  std::vector<OnnxCoverageRow> rows;
  while (query.step()) {
    rows.push_back({query.column_text(0), query.column_text(1), query.column_text(2),
                    query.column_int(3), query.column_int(4), query.column_int(5),
                    query.column_int(6)});
  }
  return rows;
}

}  // namespace

std::vector<OnnxCoverageRow> onnx_coverage(const Database& db, std::string_view commit,
                                           std::string_view suite) {
  return tally(db, commit, suite, "family", "op", "family, op");
}

std::vector<OnnxCoverageRow> onnx_coverage_by_dtype(const Database& db, std::string_view commit,
                                                    std::string_view suite) {
  // params: "opset=N dtype=T ops=..." (onnx_suite.cpp's params_of).
  const std::string rest = "substr(params, instr(params, ' dtype=') + 7)";
  const std::string dtype = "CASE WHEN instr(params, ' dtype=') > 0 THEN substr(" + rest +
                            ", 1, instr(" + rest + ", ' ') - 1) ELSE '' END";
  return tally(db, commit, suite, "''", dtype, dtype);
}

std::vector<OnnxCoverageRow> onnx_coverage_by_opset(const Database& db, std::string_view commit,
                                                    std::string_view suite) {
  // params: "opset=N dtype=T ops=..." (onnx_suite.cpp's params_of).
  const std::string opset = "substr(params, 7, instr(params, ' ') - 7)";
  return tally(db, commit, suite, "''", opset, "CAST(" + opset + " AS INTEGER)");
}

}  // namespace volta::conformance
