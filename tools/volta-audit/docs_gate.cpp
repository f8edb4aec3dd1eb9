// The docs-contract gate: the doc_claim rows of the newest `docs check` of the commit (under
// :release, the newest check of committed docs: a check of edited docs, or by a binary of a
// dirty tree, is not release evidence). A claim that is NOT VERIFIED (no evidence was
// consulted) fails the gate: an unproven claim may not ship. A check older than a usable run
// of the commit is stale: its claims were judged without that run's results.

#include <string>

#include "gate_sql.h"
#include "volta/conformance/evidence.h"

namespace volta::audit {
namespace {

constexpr std::string_view kDocsGateSql = R"sql(
WITH {usable_run},
checks AS (
  SELECT * FROM doc_claim WHERE commit_sha = :commit AND (:release = 0 OR dirty = 0)
),
latest_check AS (
  SELECT claim, file, line, status, detail, checked_at FROM checks
  WHERE checked_at = (SELECT max(checked_at) FROM checks)
),
-- Claims are judged against the results the check saw: a usable run that ended after it may
-- have changed any of them.
newer_run AS (
  SELECT id, ended_at FROM usable_run
  WHERE julianday(ended_at) > (SELECT julianday(max(checked_at)) FROM latest_check)
  ORDER BY julianday(ended_at) DESC, id DESC LIMIT 1
),
tally AS (
  SELECT count(*) AS claims, coalesce(sum(status <> 'PASS'), 0) AS failing FROM latest_check
)
SELECT
  CASE WHEN claims = 0 THEN 'NOT VERIFIED'
       WHEN failing > 0 THEN 'FAIL'
       WHEN EXISTS (SELECT 1 FROM newer_run) THEN 'NOT VERIFIED'
       ELSE 'PASS' END,
  CASE WHEN claims = 0 AND :release = 1 AND EXISTS (
         SELECT 1 FROM doc_claim WHERE commit_sha = :commit AND dirty = 1) THEN
         'only docs checks of edited docs or by a volta-audit of a dirty tree for commit ' ||
         substr(:commit, 1, 12) || ', which are not release evidence; run `volta-audit docs ' ||
         'check` from a clean checkout'
       WHEN claims = 0 THEN
         'docs check has not run for commit ' || substr(:commit, 1, 12) ||
         '; run `volta-audit docs check`'
       WHEN failing > 0 THEN
         failing || ' of ' || claims || ' claims and sections do not pass; first: ' ||
         (SELECT claim || ' at ' || file || ':' || line || ' (' || status || '): ' || detail
          FROM latest_check WHERE status <> 'PASS' ORDER BY file, line, claim LIMIT 1)
       WHEN EXISTS (SELECT 1 FROM newer_run) THEN
         'the newest docs check (' || (SELECT max(checked_at) FROM latest_check) ||
         ') did not see run ' || (SELECT id FROM newer_run) || ', which ended after it (' ||
         (SELECT ended_at FROM newer_run) || ') and may change what its claims cite; run ' ||
         '`volta-audit docs check`'
       ELSE claims || ' claims and sections verified'
  END
FROM tally
)sql";

}  // namespace

std::string docs_gate_sql() {
  std::string sql(kDocsGateSql);
  replace_all(sql, "{usable_run}", conformance::usable_run_cte());
  return sql;
}

}  // namespace volta::audit
