// The docs-contract gate: the doc_claim rows of the newest `docs check` of the commit (under
// :release, the newest check of committed docs: a check of edited docs, or by a binary of a
// dirty tree, is not release evidence). A claim that is NOT VERIFIED (no evidence was
// consulted) fails the gate: an unproven claim may not ship.

#include <string>

#include "gate_sql.h"

namespace volta::audit {
namespace {

constexpr std::string_view kDocsGateSql = R"sql(
WITH checks AS (
  SELECT * FROM doc_claim WHERE commit_sha = :commit AND (:release = 0 OR dirty = 0)
),
latest_check AS (
  SELECT claim, file, line, status, detail FROM checks
  WHERE checked_at = (SELECT max(checked_at) FROM checks)
),
tally AS (
  SELECT count(*) AS claims, coalesce(sum(status <> 'PASS'), 0) AS failing FROM latest_check
)
SELECT
  CASE WHEN claims = 0 THEN 'NOT VERIFIED'
       WHEN failing > 0 THEN 'FAIL'
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
       ELSE claims || ' claims and sections verified'
  END
FROM tally
)sql";

}  // namespace

std::string docs_gate_sql() { return std::string(kDocsGateSql); }

}  // namespace volta::audit
