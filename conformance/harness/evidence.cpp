#include "volta/conformance/evidence.h"

namespace volta::conformance {

std::string_view usable_run_cte() {
  return R"sql(
usable_run AS (
  SELECT run.* FROM run
  WHERE run.commit_sha = :commit AND run.status = 'complete' AND (:release = 0 OR run.dirty = 0)
    AND EXISTS (SELECT 1 FROM run_input i WHERE i.run_id = run.id)
    AND NOT EXISTS (SELECT 1 FROM run_input i
                    WHERE i.run_id = run.id AND i.sha256 <> i.committed_sha256)
))sql";
}

std::string_view refused_run_cte() {
  return R"sql(
refused_run AS (
  SELECT run.id AS run_id, run.suites,
         'run ' || run.id || ' (' || run.suites || ') ' ||
         coalesce((SELECT CASE
                     WHEN i.kind = 'option' THEN
                       'ran with ' || i.name || ' ' || i.path || ', a planted test-only defect'
                     WHEN i.committed_sha256 = 'unknown' THEN
                       'read ' || i.name || ', whose committed version its binary does not ' ||
                       'know (built outside a git checkout)'
                     WHEN i.sha256 = 'absent' THEN
                       'found no ' || i.name || ' (looked for ' || i.path ||
                       '), which is committed at its commit'
                     WHEN i.committed_sha256 = 'absent' THEN
                       'read ' || i.path || ' as ' || i.name || ', which is not committed at ' ||
                       'its commit'
                     ELSE
                       'read ' || i.path || ' as ' || i.name || ', which differs from the ' ||
                       'file committed at its commit (sha256 ' || substr(i.sha256, 1, 12) ||
                       ', committed ' || substr(i.committed_sha256, 1, 12) || ')'
                     END
                   FROM run_input i
                   WHERE i.run_id = run.id AND i.sha256 <> i.committed_sha256
                   ORDER BY i.kind DESC, i.name LIMIT 1),
                  'recorded no inputs (written by a volta-audit older than schema 4), so ' ||
                  'what decided its verdicts is unknown') AS reason
  FROM run
  WHERE run.commit_sha = :commit AND run.status = 'complete' AND (:release = 0 OR run.dirty = 0)
    AND run.id NOT IN (SELECT id FROM usable_run)
))sql";
}

}  // namespace volta::conformance
