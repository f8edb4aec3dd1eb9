// The numerics-matrix gate: the numerics suite's newest usable result per case, judged against
// the cells the committed numerics policy defines on the verified backends (CPU engine and
// reference engine) and the properties of the op table (CPU engine, at least CI's iterations).

#include <string>
#include <vector>

#include "committed_texts.h"
#include "gate_sql.h"
#include "volta/conformance/evidence.h"
#include "volta/conformance/matrix_suite.h"
#include "volta/conformance/properties.h"

namespace volta::audit {
namespace {

constexpr std::string_view kPolicyFile = "governance/numerics-policy.md";

// One reason per kind of blocker: a policy that does not parse or is not the committed one,
// unexpected results, ERROR/CRASH/TIMEOUT whatever their verdict, cells and properties without
// a result (MISSING), properties drawn fewer times than CI draws them.
constexpr std::string_view kNumericsGateSql = R"sql(
WITH {usable_run},
{refused_run},
{flaky_case},
expected(case_id, backend) AS ({expected}),
ranked AS (
  SELECT c.case_id, c.backend, r.outcome, r.verdict, r.message, r.params, r.expectation,
         r.precondition,
         row_number() OVER (PARTITION BY r.case_ref
                            ORDER BY run.started_at DESC, run.id DESC) AS recency
  FROM result r
  JOIN usable_run run ON run.id = r.run_id
  JOIN test_case c ON c.id = r.case_ref
  WHERE c.suite = 'numerics'
),
evidence AS (
  SELECT *, outcome IN ('ERROR', 'CRASH', 'TIMEOUT') AS broken,
         outcome NOT IN ('ERROR', 'CRASH', 'TIMEOUT') AND
           (verdict <> 'expected' OR
            (outcome = 'SKIPPED' AND expectation = '' AND precondition = '')) AS unexpected
  FROM ranked WHERE recency = 1
),
missing AS (
  SELECT e.case_id, e.backend FROM expected e
  WHERE NOT EXISTS (SELECT 1 FROM evidence v WHERE v.case_id = e.case_id
                                               AND v.backend = e.backend)
),
thin AS (
  SELECT case_id, params FROM evidence
  WHERE substr(case_id, 1, 9) = 'property:'
    AND coalesce(CAST(volta_param(params, 'iterations') AS INTEGER), 0) < {iterations}
),
reasons(k, status, reason) AS (
  SELECT 0, 'FAIL', {policy_error} WHERE {policy_error} IS NOT NULL
  UNION ALL
  SELECT 0, 'NOT VERIFIED', {policy_problem} WHERE {policy_problem} IS NOT NULL
  UNION ALL
  SELECT 0, 'NOT VERIFIED', 'this volta-audit knows the policy cells of its own commit ' ||
         substr(:lists_commit, 1, 12) || ' only; judge commit ' || substr(:commit, 1, 12) ||
         ' with a volta-audit built from it'
  WHERE :commit <> :lists_commit
  UNION ALL
  SELECT 1, 'FAIL', (SELECT count(*) FROM evidence WHERE unexpected) ||
            ' unexpected result(s); first: ' ||
            (SELECT backend || ' ' || case_id || ' ' || outcome || ' (' ||
                    CASE WHEN verdict = 'expected' THEN 'skipped without an expectation or a ' ||
                                                        'declared precondition'
                         ELSE verdict END || '): ' || message
             FROM evidence WHERE unexpected ORDER BY backend, case_id LIMIT 1)
  WHERE EXISTS (SELECT 1 FROM evidence WHERE unexpected)
  UNION ALL
  SELECT 1, 'FAIL', {flaky_reason} WHERE EXISTS (SELECT 1 FROM flaky_case)
  UNION ALL
  SELECT 2, 'FAIL', (SELECT count(*) FROM evidence WHERE broken) ||
            ' ERROR/CRASH/TIMEOUT result(s), which no expectation excuses; first: ' ||
            (SELECT backend || ' ' || case_id || ' ' || outcome || ': ' || message
             FROM evidence WHERE broken ORDER BY backend, case_id LIMIT 1)
  WHERE EXISTS (SELECT 1 FROM evidence WHERE broken)
  UNION ALL
  SELECT 3, 'NOT VERIFIED', (SELECT count(*) FROM missing) ||
            ' policy cell(s) and properties MISSING (no result); first: ' ||
            (SELECT backend || ' ' || case_id FROM missing ORDER BY backend, case_id LIMIT 1) ||
            '; run `volta-audit run numerics`'
  WHERE EXISTS (SELECT 1 FROM missing)
  UNION ALL
  SELECT 4, 'NOT VERIFIED', (SELECT count(*) FROM thin) ||
            ' propert(ies) drawn fewer than {iterations} times, CI''s count; first: ' ||
            (SELECT case_id || ' (' || params || ')' FROM thin ORDER BY case_id LIMIT 1) ||
            '; run `volta-audit run numerics` without a lower VOLTA_PROPERTY_ITERATIONS'
  WHERE EXISTS (SELECT 1 FROM thin)
),
tally AS (
  SELECT count(*) AS cases,
         coalesce(sum(outcome = 'PASS'), 0) AS passed,
         coalesce(sum(outcome = 'SKIPPED'), 0) AS skipped
  FROM evidence
)
SELECT
  CASE WHEN EXISTS (SELECT 1 FROM reasons WHERE status = 'FAIL') THEN 'FAIL'
       WHEN cases = 0 OR EXISTS (SELECT 1 FROM reasons) THEN 'NOT VERIFIED'
       ELSE 'PASS' END,
  CASE WHEN cases = 0 AND NOT EXISTS (SELECT 1 FROM reasons WHERE status = 'FAIL') THEN
         coalesce((SELECT group_concat(reason, '; ')
                   FROM (SELECT reason FROM reasons WHERE k = 0 ORDER BY reason)) || '; ', '') ||
         'no usable numerics results for commit ' || substr(:commit, 1, 12) ||
         coalesce(': ' || (SELECT count(*) FROM refused_run WHERE suites LIKE '%numerics%') ||
                  ' run(s) refused, first: ' ||
                  (SELECT reason FROM refused_run WHERE suites LIKE '%numerics%'
                   ORDER BY reason LIMIT 1), '') ||
         '; run `volta-audit run numerics`'
       WHEN EXISTS (SELECT 1 FROM reasons) THEN
         (SELECT group_concat(reason, '; ') FROM (SELECT reason FROM reasons ORDER BY k, reason))
       ELSE
         cases || ' cases: ' || passed || ' pass, ' || (cases - passed - skipped) ||
         ' expected non-pass, ' || skipped || ' skipped'
  END
FROM tally
)sql";

}  // namespace

// The cells of the policy committed at the binary's commit (never the tree's copy, which may
// have been edited since), on the backends the matrix verifies, and every property (CPU
// engine only).
std::string numerics_gate_sql() {
  std::string expected;
  std::string policy_error = "NULL";
  auto add = [&expected](std::string_view id, std::string_view backend) {
    expected += (expected.empty() ? "VALUES (" : ", (") + sql_literal(id) + ", " +
                sql_literal(backend) + ")";
  };
  std::string problem;
  if (build::kCommittedNumericsPolicy.empty()) {
    problem = "this volta-audit knows no committed " + std::string(kPolicyFile) +
              " (built outside a git checkout)";
  } else {
    try {
      const conformance::Policy policy = conformance::parse_policy(build::kCommittedNumericsPolicy);
      for (const conformance::MatrixCell& cell : conformance::matrix_cells(policy)) {
        for (std::string_view backend : {"cpu", "reference"}) add(cell.id, backend);
      }
    } catch (const VoltaError& e) {
      policy_error = sql_literal(e.what());
    }
  }
  for (const conformance::SuiteCase& c : conformance::property_cases({})) add(c.case_id, "cpu");
  std::string sql(kNumericsGateSql);
  replace_all(sql, "{usable_run}", conformance::usable_run_cte());
  replace_all(sql, "{refused_run}", conformance::refused_run_cte());
  replace_all(sql, "{flaky_case}", flaky_case_cte("c.suite = 'numerics'"));
  replace_all(sql, "{flaky_reason}", kFlakyReason);
  replace_all(sql, "{expected}", expected.empty() ? "SELECT NULL, NULL WHERE 0" : expected);
  replace_all(sql, "{policy_error}", policy_error);
  replace_all(sql, "{policy_problem}", problem.empty() ? "NULL" : sql_literal(problem));
  replace_all(sql, "{iterations}", std::to_string(conformance::PropertyOptions{}.iterations));
  return sql;
}

}  // namespace volta::audit
