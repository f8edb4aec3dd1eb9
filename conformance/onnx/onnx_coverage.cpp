#include "volta/conformance/onnx_coverage.h"

namespace volta::conformance {

std::string_view onnx_evidence_ctes() {
  return R"sql(
onnx_ranked AS (
  SELECT c.case_id, c.family, c.op, c.params, c.backend, r.outcome, r.verdict, r.message, r.run_id,
         row_number() OVER (PARTITION BY r.case_ref
                            ORDER BY run.started_at DESC, run.id DESC) AS recency
  FROM result r
  JOIN run ON run.id = r.run_id
  JOIN test_case c ON c.id = r.case_ref
  WHERE run.commit_sha = :commit AND run.status = 'complete'
    AND (:release = 0 OR run.dirty = 0) AND c.suite = 'onnx'
),
onnx_evidence AS (
  SELECT case_id, family, op, params, backend, outcome, verdict, message, run_id
  FROM onnx_ranked WHERE recency = 1
))sql";
}

std::vector<OnnxCoverageRow> onnx_coverage(const Database& db, std::string_view commit) {
  Statement query = db.prepare("WITH " + std::string(onnx_evidence_ctes()) + R"sql(
SELECT family, op, backend, count(*),
       sum(outcome = 'PASS'), sum(outcome = 'UNSUPPORTED'),
       sum(outcome NOT IN ('PASS', 'UNSUPPORTED', 'SKIPPED'))
FROM onnx_evidence WHERE outcome <> 'MISSING'
GROUP BY family, op, backend ORDER BY family, op, backend
)sql");
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

}  // namespace volta::conformance
