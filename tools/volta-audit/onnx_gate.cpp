// The onnx-conformance gates, one per ONNX corpus (onnx: ONNX 1.12's test data, onnx-current:
// the current release's): the corpus suite's evidence (onnx_evidence_ctes over the usable
// runs) with its blockers, each with its own reason: an unexpected outcome or unexpected pass
// (a SKIPPED without an expectation or declared precondition included), an ERROR / CRASH /
// TIMEOUT (expected or not), a backend with results for fewer tests than the corpus floor, and
// an expectation of the evidence runs past its expiry date. It judges the backends of
// kOnnxBackends; rows of the CUDA backend (`run onnx --backend cuda`) are reported, not gated
// here.

#include <string>

#include "gate_sql.h"
#include "volta/conformance/evidence.h"
#include "volta/conformance/onnx_corpus.h"
#include "volta/conformance/onnx_coverage.h"
#include "volta/conformance/onnx_suite.h"

namespace volta::audit {
namespace {

constexpr std::string_view kOnnxGateSql = R"sql(
WITH {usable_run},
{refused_run},
{flaky_case},
{evidence},
refused AS (
  SELECT f.reason FROM refused_run f
  WHERE EXISTS (SELECT 1 FROM result r JOIN test_case c ON c.id = r.case_ref
                WHERE r.run_id = f.run_id AND c.suite = {suite})
),
backends(backend) AS (VALUES {backends}),
judged AS (
  SELECT *, outcome IN ('ERROR', 'CRASH', 'TIMEOUT') AS broken,
         outcome NOT IN ('ERROR', 'CRASH', 'TIMEOUT') AND
           (verdict IN ('unexpected', 'unexpected-pass') OR
            (outcome = 'SKIPPED' AND expectation = '' AND precondition = '')) AS unexpected
  FROM onnx_evidence WHERE backend IN (SELECT backend FROM backends)
),
tally AS (
  SELECT count(*) AS results,
         coalesce(sum(outcome = 'PASS'), 0) AS passed,
         coalesce(sum(unexpected), 0) AS unexpected,
         coalesce(sum(broken), 0) AS broken
  FROM judged
),
corpus AS (
  SELECT b.backend,
         (SELECT count(*) FROM onnx_evidence e
          WHERE e.backend = b.backend AND e.outcome <> 'MISSING') AS tests,
         (SELECT count(*) FROM onnx_evidence e
          WHERE e.backend = b.backend AND e.outcome = 'PASS') AS passed
  FROM backends b
),
expired AS (
  SELECT DISTINCT x.pattern, x.expires FROM expectation x
  WHERE x.suite = {suite} AND x.expires < date('now')
    AND x.run_id IN (SELECT run_id FROM onnx_evidence)
),
reasons(k, reason) AS (
  SELECT 1, unexpected || ' unexpected result(s); first: ' ||
         (SELECT backend || ' ' || case_id || ' ' || outcome || ' (' ||
                 CASE WHEN verdict = 'expected' THEN 'skipped without an expectation or a ' ||
                                                     'declared precondition'
                      ELSE verdict END || '): ' || substr(message, 1, 300)
          FROM judged WHERE unexpected ORDER BY case_id, backend LIMIT 1)
  FROM tally WHERE unexpected > 0
  UNION ALL
  SELECT 0, {flaky_reason} WHERE EXISTS (SELECT 1 FROM flaky_case)
  UNION ALL
  SELECT 2, broken || ' ERROR/CRASH/TIMEOUT result(s), which no expectation excuses; first: ' ||
         (SELECT backend || ' ' || case_id || ' ' || outcome || ': ' || substr(message, 1, 300)
          FROM judged WHERE broken ORDER BY case_id, backend LIMIT 1)
  FROM tally WHERE broken > 0
  UNION ALL
  SELECT 3, 'backend ' || backend || ' has results for ' || tests ||
         ' tests, below the corpus floor of {floor}; run `volta-audit run {suite_name} --backend ' ||
         backend || '`'
  FROM corpus WHERE tests < {floor}
  UNION ALL
  SELECT 4, n || ' expired expectation(s); first: ' ||
         (SELECT pattern || ' (expired ' || expires || ')' FROM expired
          ORDER BY expires, pattern LIMIT 1) ||
         '; renew or remove them in {expectations}'
  FROM (SELECT count(*) AS n FROM expired) WHERE n > 0
)
SELECT
  CASE WHEN results = 0 THEN 'NOT VERIFIED'
       WHEN EXISTS (SELECT 1 FROM reasons) THEN 'FAIL'
       ELSE 'PASS' END,
  CASE WHEN results = 0 THEN
         'no usable {suite_name} results for commit ' || substr(:commit, 1, 12) ||
         coalesce(': ' || (SELECT count(*) FROM refused) || ' run(s) refused, first: ' ||
                  (SELECT reason FROM refused ORDER BY reason LIMIT 1), '') ||
         CASE WHEN :release = 1 AND EXISTS (
                SELECT 1 FROM run WHERE run.commit_sha = :commit AND run.status = 'complete'
                  AND run.dirty = 1 AND (',' || run.suites || ',') LIKE {suite_in_list})
              THEN ' (runs of a dirty tree are not release evidence)' ELSE '' END ||
         '; run `volta-audit run {suite_name}`{how_to_get}'
       WHEN EXISTS (SELECT 1 FROM reasons) THEN
         (SELECT group_concat(reason, '; ') FROM (SELECT reason FROM reasons ORDER BY k)) ||
         coalesce('; ' || (SELECT count(*) FROM refused) || ' run(s) refused as evidence, first: ' ||
                  (SELECT reason FROM refused ORDER BY reason LIMIT 1), '')
       ELSE
         (SELECT group_concat(backend || ': ' || passed || ' of ' || tests || ' tests pass', ', ')
          FROM (SELECT * FROM corpus ORDER BY backend)) ||
         '; every other result as expected (corpus floor {floor})'
  END
FROM tally
)sql";

}  // namespace

std::string onnx_gate_sql(const conformance::OnnxCorpus& corpus) {
  std::string sql(kOnnxGateSql);
  const std::string suite(corpus.suite);
  replace_all(sql, "{usable_run}", conformance::usable_run_cte());
  replace_all(sql, "{refused_run}", conformance::refused_run_cte());
  replace_all(sql, "{flaky_case}", flaky_case_cte("c.suite = {suite}"));
  replace_all(sql, "{flaky_reason}", kFlakyReason);
  replace_all(sql, "{evidence}", conformance::onnx_evidence_ctes("usable_run", suite));
  replace_all(sql, "{floor}", std::to_string(corpus.floor));
  replace_all(sql, "{suite}", sql_literal(suite));
  replace_all(sql, "{suite_name}", suite);
  replace_all(sql, "{suite_in_list}", sql_literal("%," + suite + ",%"));
  replace_all(sql, "{expectations}", std::string(corpus.expectations));
  // The data of the 1.12 corpus is a Debian package; the current one must be generated first.
  replace_all(sql, "{how_to_get}",
              corpus.suite == conformance::kOnnxCorpus.suite
                  ? std::string()
                  : " (" + std::string(corpus.how_to_get) + ")");
  std::string backends;
  for (std::string_view b : conformance::kOnnxBackends) {
    backends += (backends.empty() ? "(" : ", (") + sql_literal(b) + ")";
  }
  replace_all(sql, "{backends}", backends);
  return sql;
}

}  // namespace volta::audit
