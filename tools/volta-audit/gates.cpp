#include "gates.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "build_info.h"
#include "queries.h"
#include "volta/conformance/determinism_suite.h"
#include "volta/conformance/matrix_suite.h"
#include "volta/conformance/onnx_coverage.h"
#include "volta/conformance/onnx_suite.h"
#include "volta/conformance/sqlite.h"

namespace volta::audit {
namespace {

using conformance::Database;
using conformance::Statement;
using conformance::StoreError;

// The cases a suite gate judges: one suite, optionally narrowed to a backend or to families.
struct Selection {
  std::string_view suite;
  std::string_view backend = {};                // empty: every backend
  std::vector<std::string_view> families = {};  // empty: every family
};

std::string sql_literal(std::string_view text) {
  std::string quoted = "'";
  for (char c : text) {
    quoted += c;
    if (c == '\'') quoted += '\'';
  }
  return quoted + "'";
}

std::string joined(const std::vector<std::string_view>& words, std::string_view separator) {
  std::string out;
  for (std::string_view w : words)
    out += (out.empty() ? "" : std::string(separator)) + std::string(w);
  return out;
}

// "parity (backend cuda)", "determinism (families replay-100, strict-mode)": how reasons name
// the evidence.
std::string selection_label(const Selection& s) {
  std::string label(s.suite);
  if (!s.backend.empty()) label += " (backend " + std::string(s.backend) + ")";
  if (s.families.size() == 1) label += " (family " + std::string(s.families[0]) + ")";
  if (s.families.size() > 1) label += " (families " + joined(s.families, ", ") + ")";
  return label;
}

// The command that produces the evidence, so a NOT VERIFIED reason says what to do. `run`
// takes one --family: a selection of several families runs the whole suite.
std::string selection_command(const Selection& s) {
  std::string command = "volta-audit run " + std::string(s.suite);
  if (!s.backend.empty()) command += " --backend " + std::string(s.backend);
  if (s.families.size() == 1) command += " --family " + std::string(s.families[0]);
  return command;
}

std::string selection_filter(const Selection& s) {
  std::string filter = "c.suite = " + sql_literal(s.suite);
  if (!s.backend.empty()) filter += " AND c.backend = " + sql_literal(s.backend);
  if (!s.families.empty()) {
    std::string quoted;
    for (std::string_view f : s.families) quoted += (quoted.empty() ? "" : ", ") + sql_literal(f);
    filter += " AND c.family IN (" + quoted + ")";
  }
  return filter;
}

// The negative controls that prove the checks of the selection's families can fail.
std::vector<std::string_view> negative_controls(const Selection& s) {
  std::vector<std::string_view> controls;
  if (s.suite != conformance::kDeterminismSuite) return controls;
  for (const conformance::NegativeControl& control : conformance::kNegativeControls) {
    if (std::ranges::find(s.families, control.family) != s.families.end()) {
      controls.push_back(control.case_id);
    }
  }
  return controls;
}

// Under :release a history of dirty-tree runs only would read as "no results"; this CTE says
// whether that is the case for the gate's {filter}, so its reason can say why.
constexpr std::string_view kDirtyOnlyCte = R"sql(
dirty_only AS (
  SELECT :release = 1 AND EXISTS (
    SELECT 1 FROM result r
    JOIN run ON run.id = r.run_id
    JOIN test_case c ON c.id = r.case_ref
    WHERE run.commit_sha = :commit AND run.status = 'complete' AND run.dirty = 1 AND {filter}
  ) AS yes
)
)sql";

// What every suite gate reads. Its evidence is, for every case of the selection, its result
// in the newest complete run of the commit that has one: shards and reruns each contribute the
// cases they ran, and a rerun supersedes an older result. Under :release, runs of dirty trees
// are not evidence at all. Ties on started_at (one-second resolution) fall to the later run id.
// `ranked` keeps every result of the evidence runs for gates that compare runs. {filter},
// {label}, {command} and {controls} are filled in per gate by fill_suite_gate.
constexpr std::string_view kSuiteEvidenceCtes = R"sql(
ranked AS (
  SELECT c.case_id, r.outcome, r.verdict, r.message, r.output_hash,
         run.id AS run_id, run.build_type, run.machine, run.started_at,
         row_number() OVER (PARTITION BY r.case_ref
                            ORDER BY run.started_at DESC, run.id DESC) AS recency
  FROM result r
  JOIN run ON run.id = r.run_id
  JOIN test_case c ON c.id = r.case_ref
  WHERE run.commit_sha = :commit AND run.status = 'complete'
    AND (:release = 0 OR run.dirty = 0) AND {filter}
),
evidence AS (SELECT case_id, outcome, verdict, message FROM ranked WHERE recency = 1),
-- A check is evidence only once its negative control (a planted defect) made it fail.
controls(case_id) AS ({controls}),
control_evidence AS (
  SELECT k.case_id, e.outcome, e.verdict, e.message
  FROM controls k LEFT JOIN evidence e ON e.case_id = k.case_id
),
tally AS (
  SELECT count(*) AS cases,
         coalesce(sum(outcome = 'PASS'), 0) AS passed,
         coalesce(sum(outcome = 'SKIPPED'), 0) AS skipped,
         coalesce(sum(verdict <> 'expected'), 0) AS unexpected,
         (SELECT count(*) FROM controls) AS controls
  FROM evidence
),
{dirty_only}
)sql";

// The blockers every suite gate shares, as rows of reasons(k, status, reason): unexpected
// results, a selection whose cases were all skipped, and negative controls without a result or
// that did not catch their defect (an expectation excused them). The latter two are NOT
// VERIFIED: nothing failed, but nothing was shown either.
constexpr std::string_view kSuiteReasons = R"sql(
  SELECT 1, 'FAIL', unexpected || ' unexpected result(s); first: ' ||
         (SELECT case_id || ' ' || outcome || ' (' || verdict || '): ' || message
          FROM evidence WHERE verdict <> 'expected' ORDER BY case_id LIMIT 1)
  FROM tally WHERE unexpected > 0
  UNION ALL
  SELECT 2, 'NOT VERIFIED', 'all ' || cases || ' ' || {label} || ' cases skipped: ' ||
         (SELECT message FROM evidence ORDER BY case_id LIMIT 1)
  FROM tally WHERE cases > 0 AND skipped = cases
  UNION ALL
  SELECT 3, 'NOT VERIFIED',
         CASE WHEN n = 1 THEN 'negative control ' || ids || ' has'
              ELSE 'negative controls ' || ids || ' have' END ||
         ' no result: a check not shown able to fail is not evidence; run `{suite_command}`'
  FROM (SELECT count(*) AS n, group_concat(case_id, ', ') AS ids
        FROM (SELECT case_id FROM control_evidence WHERE outcome IS NULL ORDER BY case_id))
  WHERE n > 0
  UNION ALL
  SELECT 4, 'NOT VERIFIED', 'negative control ' || case_id || ' did not catch its planted ' ||
         'defect (' || outcome || ', expected): ' || message
  FROM control_evidence WHERE outcome <> 'PASS' AND verdict = 'expected'
)sql";

// "; 3 negative controls caught their planted defects", or nothing for a gate without any.
constexpr std::string_view kControlsCaught = R"sql(
CASE WHEN controls = 0 THEN ''
     WHEN controls = 1 THEN '; 1 negative control caught its planted defect'
     ELSE '; ' || controls || ' negative controls caught their planted defects' END
)sql";

// The verdict every suite gate ends with, over `tally` and `reasons`: {pass_detail} adds a
// gate's own figures to its PASS reason ('' for none).
constexpr std::string_view kSuiteVerdict = R"sql(
SELECT
  CASE WHEN cases = 0 THEN 'NOT VERIFIED'
       WHEN EXISTS (SELECT 1 FROM reasons WHERE status = 'FAIL') THEN 'FAIL'
       WHEN EXISTS (SELECT 1 FROM reasons) THEN 'NOT VERIFIED'
       ELSE 'PASS' END,
  CASE WHEN cases = 0 AND (SELECT yes FROM dirty_only) THEN
         'only dirty-tree ' || {label} || ' results for commit ' || substr(:commit, 1, 12) ||
         ', which are not release evidence; run `' || {command} || '` from a clean checkout'
       WHEN cases = 0 THEN
         'no ' || {label} || ' results for commit ' || substr(:commit, 1, 12) ||
         '; run `' || {command} || '`'
       WHEN EXISTS (SELECT 1 FROM reasons) THEN
         (SELECT group_concat(reason, '; ') FROM (SELECT reason FROM reasons ORDER BY k, reason))
       ELSE
         cases || ' cases: ' || passed || ' pass, ' || (cases - passed - skipped) ||
         ' expected non-pass, ' || skipped || ' skipped' || {pass_detail} || {controls_caught}
  END
FROM tally
)sql";

// A suite gate: the shared evidence and blockers. FAIL when any blocker failed, NOT VERIFIED
// when the others only lack evidence; every blocker gets its reason.
constexpr std::string_view kSuiteGateSql = R"sql(
WITH {evidence},
reasons(k, status, reason) AS ({reasons})
{verdict}
)sql";

// plan-stability: the suite gate's blockers over family plan-stability, plus the plan
// fingerprint (output_hash of every plan:SUBJECT case: plan, IR-after-each-pass, schedule and
// allocation hashes) compared across every evidence run of the commit, not only the newest,
// and those runs must include a Debug and an optimized build: the optimizer must not change
// a plan. A case whose fingerprint differs is reported with the oldest run's fingerprint and
// the first run that disagrees with it.
constexpr std::string_view kPlanStabilityGateSql = R"sql(
WITH {evidence},
-- Plans are compared per machine: the kernel variant (ISA, tile) is part of the plan, and the
-- policy promises nothing across machines with different instruction sets.
fingerprints AS (
  SELECT case_id, run_id, build_type, machine, started_at, output_hash FROM ranked
  WHERE substr(case_id, 1, 5) = 'plan:' AND output_hash <> ''
),
first_fingerprint AS (
  SELECT * FROM (
    SELECT f.*, row_number() OVER (PARTITION BY case_id, machine ORDER BY started_at, run_id) AS k
    FROM fingerprints f
  ) WHERE k = 1
),
diverged AS (
  SELECT * FROM (
    SELECT a.case_id, a.run_id AS run_a, a.build_type AS type_a, a.output_hash AS hash_a,
           b.run_id AS run_b, b.build_type AS type_b, b.output_hash AS hash_b,
           row_number() OVER (PARTITION BY a.case_id ORDER BY b.started_at, b.run_id) AS k
    FROM first_fingerprint a
    JOIN fingerprints b ON b.case_id = a.case_id AND b.machine = a.machine
                       AND b.output_hash <> a.output_hash
  ) WHERE k = 1
),
-- Machines on which both a Debug and an optimized build recorded plans.
cross_build AS (
  SELECT machine FROM fingerprints GROUP BY machine
  HAVING sum(build_type = 'Debug') > 0 AND sum(build_type <> 'Debug') > 0
),
compared AS (
  SELECT (SELECT count(DISTINCT case_id) FROM fingerprints) AS plans,
         (SELECT count(DISTINCT run_id) FROM fingerprints) AS runs,
         coalesce((SELECT group_concat(build_type, ', ')
                   FROM (SELECT DISTINCT build_type FROM fingerprints ORDER BY build_type)),
                  'none') AS build_types,
         EXISTS (SELECT 1 FROM fingerprints WHERE build_type = 'Debug') AS debug,
         EXISTS (SELECT 1 FROM fingerprints WHERE build_type <> 'Debug') AS optimized,
         EXISTS (SELECT 1 FROM cross_build) AS same_machine
),
reasons(k, status, reason) AS (
  {reasons}
  UNION ALL
  SELECT 5, 'FAIL', (SELECT count(*) FROM diverged) ||
          ' plan fingerprint(s) differ between runs of the commit on one machine; first: ' ||
         (SELECT case_id || ': run ' || run_a || ' (' || type_a || ') gave "' || hash_a ||
                 '", run ' || run_b || ' (' || type_b || ') gave "' || hash_b || '"'
          FROM diverged ORDER BY case_id LIMIT 1)
  WHERE EXISTS (SELECT 1 FROM diverged)
  UNION ALL
  SELECT 6, 'NOT VERIFIED',
         CASE WHEN runs = 0 THEN
                'no plan:SUBJECT case recorded a plan fingerprint; run `{command_text}`'
              WHEN debug AND optimized THEN
                'the Debug and optimized plan fingerprints come from different machines; ' ||
                'run `{command_text}` from both builds on one machine (scripts/ci/audit.sh does)'
              ELSE
                'plan fingerprints only from build type(s) ' || build_types || ' (' || runs ||
                ' run(s)); plan stability needs a Debug and an optimized (Release or ' ||
                'RelWithDebInfo) build of the commit: run `{command_text}` from ' ||
                CASE WHEN debug THEN 'an optimized build (the `relassert` preset)'
                     ELSE 'a Debug build (scripts/ci/audit.sh builds the `debug` preset for it)'
                END
         END
  FROM compared WHERE NOT same_machine
)
{verdict}
)sql";

// The plan-stability gate's own figures in its PASS reason.
constexpr std::string_view kPlanPassDetail =
    "'; ' || (SELECT plans || ' plan fingerprint(s) identical across ' || runs || "
    "' runs of build types ' || build_types FROM compared)";

void replace_all(std::string& text, std::string_view placeholder, std::string_view replacement) {
  for (size_t at = text.find(placeholder); at != std::string::npos;
       at = text.find(placeholder, at + replacement.size())) {
    text.replace(at, placeholder.size(), replacement);
  }
}

// Fills a suite gate template for one selection. The shared fragments ({verdict}, {evidence},
// {dirty_only}, ...) are spliced in first, so that the placeholders inside them ({filter},
// {label}, ...) are then filled together with the template's own. `pass_detail` is an SQL
// expression appended to the PASS reason.
std::string fill_suite_gate(std::string_view sql_template, const Selection& s,
                            std::string_view pass_detail = "''") {
  std::string sql(sql_template);
  replace_all(sql, "{verdict}", kSuiteVerdict);
  replace_all(sql, "{pass_detail}", pass_detail);
  replace_all(sql, "{evidence}", kSuiteEvidenceCtes);
  replace_all(sql, "{dirty_only}", kDirtyOnlyCte);
  replace_all(sql, "{reasons}", kSuiteReasons);
  replace_all(sql, "{controls_caught}", kControlsCaught);
  std::string controls;
  for (std::string_view id : negative_controls(s)) {
    controls += (controls.empty() ? "VALUES (" : ", (") + sql_literal(id) + ")";
  }
  replace_all(sql, "{controls}", controls.empty() ? "SELECT NULL WHERE 0" : controls);
  replace_all(sql, "{filter}", selection_filter(s));
  replace_all(sql, "{label}", sql_literal(selection_label(s)));
  replace_all(sql, "{command}", sql_literal(selection_command(s)));
  // Inside string literals: the commands as plain text.
  replace_all(sql, "{command_text}", selection_command(s));
  replace_all(sql, "{suite_command}", "volta-audit run " + std::string(s.suite));
  return sql;
}

// perf-double-pass reads the verdicts `volta-audit perf` recorded in the newest complete perf
// run of the commit: each benchmark judged against its machine's baseline by the double pass
// (a Mann-Whitney test and the effect-size threshold of governance/perf-slo.md, confirmed in
// fresh processes). FAIL lists every regression with both passes' figures. A run that only
// recorded candidate baselines (a machine seen for the first time) compared nothing, and a
// benchmark that errored was not measured: both are NOT VERIFIED, never PASS.
constexpr std::string_view kPerfGateSql = R"sql(
WITH perf_run AS (
  SELECT run.id FROM run
  WHERE run.commit_sha = :commit AND run.status = 'complete' AND run.suites = 'perf'
    AND (:release = 0 OR run.dirty = 0)
  ORDER BY run.started_at DESC, run.id DESC
  LIMIT 1
),
verdicts AS (SELECT v.* FROM perf_verdict v JOIN perf_run ON v.run_id = perf_run.id),
regressions AS (
  SELECT benchmark || ' ' || printf('%+.1f%%', 100 * pass1_change) || ' (p=' ||
         printf('%.2g', pass1_p) || ') in pass 1, ' || printf('%+.1f%%', 100 * pass2_change) ||
         ' (p=' || printf('%.2g', pass2_p) || ') in pass 2' AS line
  FROM verdicts WHERE verdict = 'regression'
),
tally AS (
  SELECT (SELECT count(*) FROM perf_run) AS runs,
         (SELECT id FROM perf_run) AS run_id,
         count(*) AS benchmarks,
         coalesce(sum(verdict = 'regression'), 0) AS regressed,
         coalesce(sum(verdict = 'improvement'), 0) AS improved,
         coalesce(sum(verdict = 'unchanged'), 0) AS unchanged,
         coalesce(sum(verdict = 'noise'), 0) AS noise,
         coalesce(sum(verdict = 'new'), 0) AS new,
         coalesce(sum(verdict = 'error'), 0) AS errors,
         EXISTS (SELECT 1 FROM run WHERE run.commit_sha = :commit AND run.status = 'complete'
                 AND run.suites = 'perf' AND run.dirty = 1) AS dirty_runs
  FROM verdicts
)
SELECT
  CASE WHEN runs = 0 OR benchmarks = 0 THEN 'NOT VERIFIED'
       WHEN regressed > 0 THEN 'FAIL'
       WHEN errors > 0 OR new = benchmarks THEN 'NOT VERIFIED'
       ELSE 'PASS' END,
  CASE WHEN runs = 0 AND :release = 1 AND dirty_runs THEN
         'only dirty-tree perf runs for commit ' || substr(:commit, 1, 12) ||
         ', which are not release evidence; run `volta-audit perf` from a clean checkout'
       WHEN runs = 0 THEN
         'no perf run for commit ' || substr(:commit, 1, 12) || '; run `volta-audit perf`'
       WHEN benchmarks = 0 THEN 'perf run ' || run_id || ' recorded no verdicts'
       WHEN regressed > 0 THEN
         regressed || ' regression(s) seen in both passes of perf run ' || run_id || ': ' ||
         (SELECT group_concat(line, '; ') FROM (SELECT line FROM regressions ORDER BY line))
       WHEN errors > 0 THEN
         errors || ' benchmark(s) errored in perf run ' || run_id || ', so were not compared; ' ||
         'first: ' || (SELECT benchmark || ': ' || detail FROM verdicts WHERE verdict = 'error'
                       ORDER BY benchmark LIMIT 1)
       WHEN new = benchmarks THEN
         'perf run ' || run_id || ' only recorded candidate baselines (' || new ||
         ' benchmark(s) new on this machine), nothing was compared; run `volta-audit perf` ' ||
         'again to compare with them'
       ELSE
         (benchmarks - new) || ' benchmark(s) compared with their baseline in perf run ' ||
         run_id || ': ' || unchanged || ' unchanged, ' || noise ||
         ' noise (suspect in pass 1, not repeated in pass 2), ' || improved ||
         ' improvement(s)' ||
         CASE WHEN new > 0 THEN '; ' || new || ' new (candidate baselines recorded)' ELSE '' END
  END
FROM tally
)sql";

// Evidence is the doc_claim rows of the newest `docs check` of the commit. A claim that is
// NOT VERIFIED (no evidence was consulted) fails the gate: an unproven claim may not ship.
constexpr std::string_view kDocsGateSql = R"sql(
WITH latest_check AS (
  SELECT claim, file, line, status, detail FROM doc_claim
  WHERE commit_sha = :commit
    AND checked_at = (SELECT max(checked_at) FROM doc_claim WHERE commit_sha = :commit)
),
tally AS (
  SELECT count(*) AS claims, coalesce(sum(status <> 'PASS'), 0) AS failing FROM latest_check
)
SELECT
  CASE WHEN claims = 0 THEN 'NOT VERIFIED'
       WHEN failing > 0 THEN 'FAIL'
       ELSE 'PASS' END,
  CASE WHEN claims = 0 THEN
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

// The onnx-conformance gate: the onnx suite's evidence (onnx_evidence_ctes) with four
// blockers, each with its own reason: an unexpected outcome or unexpected pass, an ERROR /
// CRASH / TIMEOUT (expected or not), a backend with results for fewer tests than the corpus
// floor, and an expectation of the evidence runs past its expiry date.
// {evidence}, {floor} and {backends} are filled in by onnx_gate_sql.
constexpr std::string_view kOnnxGateSql = R"sql(
WITH {evidence},
tally AS (
  SELECT count(*) AS results,
         coalesce(sum(outcome = 'PASS'), 0) AS passed,
         coalesce(sum(verdict IN ('unexpected', 'unexpected-pass')
                      AND outcome NOT IN ('ERROR', 'CRASH', 'TIMEOUT')), 0) AS unexpected,
         coalesce(sum(outcome IN ('ERROR', 'CRASH', 'TIMEOUT')), 0) AS broken
  FROM onnx_evidence
),
backends(backend) AS (VALUES {backends}),
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
  WHERE x.suite = 'onnx' AND x.expires < date('now')
    AND x.run_id IN (SELECT run_id FROM onnx_evidence)
),
reasons(k, reason) AS (
  SELECT 1, unexpected || ' unexpected result(s); first: ' ||
         (SELECT backend || ' ' || case_id || ' ' || outcome || ' (' || verdict || '): ' ||
                 substr(message, 1, 300)
          FROM onnx_evidence
          WHERE verdict IN ('unexpected', 'unexpected-pass')
            AND outcome NOT IN ('ERROR', 'CRASH', 'TIMEOUT')
          ORDER BY case_id, backend LIMIT 1)
  FROM tally WHERE unexpected > 0
  UNION ALL
  SELECT 2, broken || ' ERROR/CRASH/TIMEOUT result(s), which no expectation excuses; first: ' ||
         (SELECT backend || ' ' || case_id || ' ' || outcome || ': ' || substr(message, 1, 300)
          FROM onnx_evidence WHERE outcome IN ('ERROR', 'CRASH', 'TIMEOUT')
          ORDER BY case_id, backend LIMIT 1)
  FROM tally WHERE broken > 0
  UNION ALL
  SELECT 3, 'backend ' || backend || ' has results for ' || tests ||
         ' tests, below the corpus floor of {floor}; run `volta-audit run onnx --backend ' ||
         backend || '`'
  FROM corpus WHERE tests < {floor}
  UNION ALL
  SELECT 4, n || ' expired expectation(s); first: ' ||
         (SELECT pattern || ' (expired ' || expires || ')' FROM expired
          ORDER BY expires, pattern LIMIT 1) ||
         '; renew or remove them in conformance/onnx/expectations.tsv'
  FROM (SELECT count(*) AS n FROM expired) WHERE n > 0
),
{dirty_only}
SELECT
  CASE WHEN results = 0 THEN 'NOT VERIFIED'
       WHEN EXISTS (SELECT 1 FROM reasons) THEN 'FAIL'
       ELSE 'PASS' END,
  CASE WHEN results = 0 AND (SELECT yes FROM dirty_only) THEN
         'only dirty-tree onnx results for commit ' || substr(:commit, 1, 12) ||
         ', which are not release evidence; run `volta-audit run onnx` from a clean checkout'
       WHEN results = 0 THEN
         'no onnx results for commit ' || substr(:commit, 1, 12) || '; run `volta-audit run onnx`'
       WHEN EXISTS (SELECT 1 FROM reasons) THEN
         (SELECT group_concat(reason, '; ') FROM (SELECT reason FROM reasons ORDER BY k))
       ELSE
         (SELECT group_concat(backend || ': ' || passed || ' of ' || tests || ' tests pass', ', ')
          FROM (SELECT * FROM corpus ORDER BY backend)) ||
         '; every other result as expected (corpus floor {floor})'
  END
FROM tally
)sql";

std::string onnx_gate_sql() {
  std::string sql(kOnnxGateSql);
  replace_all(sql, "{evidence}", conformance::onnx_evidence_ctes());
  replace_all(sql, "{dirty_only}", kDirtyOnlyCte);
  replace_all(sql, "{filter}", "c.suite = 'onnx'");
  replace_all(sql, "{floor}", std::to_string(conformance::kOnnxCorpusFloor));
  std::string backends;
  for (std::string_view b : conformance::kOnnxBackends) {
    backends += (backends.empty() ? "(" : ", (") + sql_literal(b) + ")";
  }
  replace_all(sql, "{backends}", backends);
  return sql;
}

// The numerics matrix: evidence as in kSuiteGateSql over suite "numerics", judged against the
// cells the numerics policy defines on the verified backends. One reason per kind of blocker:
// a policy that does not parse, cells without a result (MISSING: a rule nobody ran), and
// unexpected results. CUDA cells are SKIPPED (expected) until that backend exists.
constexpr std::string_view kNumericsGateSql = R"sql(
WITH expected(case_id, backend) AS ({expected}),
ranked AS (
  SELECT c.case_id, c.backend, r.outcome, r.verdict, r.message,
         row_number() OVER (PARTITION BY r.case_ref
                            ORDER BY run.started_at DESC, run.id DESC) AS recency
  FROM result r
  JOIN run ON run.id = r.run_id
  JOIN test_case c ON c.id = r.case_ref
  WHERE run.commit_sha = :commit AND run.status = 'complete'
    AND (:release = 0 OR run.dirty = 0) AND c.suite = 'numerics'
),
evidence AS (SELECT case_id, backend, outcome, verdict, message FROM ranked WHERE recency = 1),
missing AS (
  SELECT e.case_id, e.backend FROM expected e
  WHERE NOT EXISTS (SELECT 1 FROM evidence v WHERE v.case_id = e.case_id
                                               AND v.backend = e.backend)
),
unexpected AS (SELECT * FROM evidence WHERE verdict <> 'expected'),
reasons(k, reason) AS (
  SELECT 1, {policy_error} WHERE {policy_error} IS NOT NULL
  UNION ALL
  SELECT 2, (SELECT count(*) FROM missing) ||
            ' policy cell(s) MISSING (a rule without a result); first: ' ||
            (SELECT backend || ' ' || case_id FROM missing ORDER BY backend, case_id LIMIT 1)
  WHERE EXISTS (SELECT 1 FROM missing)
  UNION ALL
  SELECT 3, (SELECT count(*) FROM unexpected) || ' unexpected result(s); first: ' ||
            (SELECT backend || ' ' || case_id || ' ' || outcome || ' (' || verdict || '): ' ||
                    message
             FROM unexpected ORDER BY backend, case_id LIMIT 1)
  WHERE EXISTS (SELECT 1 FROM unexpected)
),
tally AS (
  SELECT count(*) AS cases,
         coalesce(sum(outcome = 'PASS'), 0) AS passed,
         coalesce(sum(outcome = 'SKIPPED'), 0) AS skipped
  FROM evidence
),
{dirty_only}
SELECT
  CASE WHEN cases = 0 THEN 'NOT VERIFIED'
       WHEN EXISTS (SELECT 1 FROM reasons) THEN 'FAIL'
       ELSE 'PASS' END,
  CASE WHEN cases = 0 AND (SELECT yes FROM dirty_only) THEN
         'only dirty-tree numerics results for commit ' || substr(:commit, 1, 12) ||
         ', which are not release evidence; run `volta-audit run numerics` from a clean checkout'
       WHEN cases = 0 THEN
         'no numerics results for commit ' || substr(:commit, 1, 12) ||
         '; run `volta-audit run numerics`'
       WHEN EXISTS (SELECT 1 FROM reasons) THEN
         (SELECT group_concat(reason, '; ') FROM (SELECT reason FROM reasons ORDER BY k))
       ELSE
         cases || ' cases: ' || passed || ' pass, ' || (cases - passed - skipped) ||
         ' expected non-pass, ' || skipped || ' skipped'
  END
FROM tally
)sql";

// The cells of the policy the binary was built from, on the backends the matrix verifies.
std::string numerics_gate_sql() {
  std::string expected;
  std::string policy_error = "NULL";
  try {
    const conformance::Policy policy = conformance::load_policy(build::kSourceDir);
    for (const conformance::MatrixCell& cell : conformance::matrix_cells(policy)) {
      for (std::string_view backend : {"cpu", "reference"}) {
        expected += (expected.empty() ? "VALUES (" : ", (") + sql_literal(cell.id) + ", " +
                    sql_literal(backend) + ")";
      }
    }
  } catch (const VoltaError& e) {
    policy_error = sql_literal(e.what());
  }
  std::string sql(kNumericsGateSql);
  replace_all(sql, "{expected}", expected.empty() ? "SELECT NULL, NULL WHERE 0" : expected);
  replace_all(sql, "{policy_error}", policy_error);
  replace_all(sql, "{dirty_only}", kDirtyOnlyCte);
  replace_all(sql, "{filter}", "c.suite = 'numerics'");
  return sql;
}

std::vector<Gate> build_gates() {
  std::vector<Gate> all;
  const auto suite_gate = [&all](std::string_view name, std::string_view description,
                                 bool blocks_pr, const Selection& selection) {
    all.push_back({name, description, blocks_pr, fill_suite_gate(kSuiteGateSql, selection)});
  };
  using conformance::kDeterminismSuite;
  all.push_back({"onnx-conformance",
                 "ONNX backend test data: every result as expected, corpus at its floor", true,
                 onnx_gate_sql()});
  all.push_back({"numerics-matrix", "numerics: per-family parity, NaN/Inf matrix, properties", true,
                 numerics_gate_sql()});
  suite_gate("parity-cpu-reference", "engine CPU matches the reference within tolerance", true,
             {.suite = "parity", .backend = "cpu"});
  suite_gate("parity-cuda-cpu", "CUDA matches engine CPU within tolerance", false,
             {.suite = "parity", .backend = "cuda"});
  suite_gate("determinism-100",
             "one plan gives bit-identical outputs 100 times, in one process and across "
             "processes; Strict refuses non-bit-exact kernels",
             true,
             {.suite = kDeterminismSuite,
              .families = {conformance::kReplayFamily, conformance::kStrictModeFamily}});
  suite_gate("thread-invariance",
             "CPU outputs are bit-identical for 1, 2, 3, 4 and 8 threads and every schedule "
             "configuration",
             true,
             {.suite = kDeterminismSuite, .families = {conformance::kThreadInvarianceFamily}});
  all.push_back({"plan-stability",
                 "IR, schedule, allocation and plan hashes agree across runs, processes and "
                 "Debug vs optimized builds",
                 true,
                 fill_suite_gate(
                     kPlanStabilityGateSql,
                     {.suite = kDeterminismSuite, .families = {conformance::kPlanStabilityFamily}},
                     kPlanPassDetail)});
  suite_gate("transformer-train-reload", "tiny transformer trains, saves, reloads, infers", false,
             {.suite = "model", .families = {"transformer-train-reload"}});
  suite_gate("checkpoint-round-trip", "a checkpoint reloads to the same bits", false,
             {.suite = "model", .families = {"checkpoint-round-trip"}});
  all.push_back({"perf-double-pass",
                 "no benchmark regresses in both perf passes (Mann-Whitney test and effect size)",
                 false, std::string(kPerfGateSql)});
  all.push_back({"docs-contract", "generated docs are in sync and every claim has evidence", true,
                 std::string(kDocsGateSql)});
  return all;
}

GateStatus parse_gate_status(std::string_view gate, std::string_view text) {
  for (GateStatus s : {GateStatus::Pass, GateStatus::Fail, GateStatus::NotVerified}) {
    if (gate_status_name(s) == text) return s;
  }
  throw StoreError("gate '" + std::string(gate) + "' returned status '" + std::string(text) +
                   "'; a gate returns PASS, FAIL or NOT VERIFIED");
}

void bind_if_named(Statement& statement, std::string_view name, std::string_view value) {
  if (const int index = statement.parameter_index(name)) statement.bind(index, value);
}
void bind_if_named(Statement& statement, std::string_view name, int64_t value) {
  if (const int index = statement.parameter_index(name)) statement.bind(index, value);
}

}  // namespace

std::string_view gate_status_name(GateStatus status) {
  switch (status) {
    case GateStatus::Pass:
      return "PASS";
    case GateStatus::Fail:
      return "FAIL";
    case GateStatus::NotVerified:
      return "NOT VERIFIED";
  }
  return "NOT VERIFIED";
}

std::span<const Gate> gates() {
  static const std::vector<Gate> all = build_gates();
  return all;
}

const Gate* find_gate(std::string_view name) {
  const auto all = gates();
  const auto it = std::ranges::find(all, name, &Gate::name);
  return it == all.end() ? nullptr : &*it;
}

GateResult evaluate_gate(const Database& db, const Gate& gate, std::string_view commit,
                         bool release) {
  Statement query = db.prepare(gate.sql);
  bind_if_named(query, ":commit", commit);
  bind_if_named(query, ":release", int64_t{release});
  if (!query.step()) throw StoreError("gate '" + std::string(gate.name) + "' returned no row");
  GateResult result;
  result.gate = gate.name;
  result.status = parse_gate_status(gate.name, query.column_text(0));
  result.reason = query.column_text(1);
  result.blocker = release || gate.blocks_pr;
  return result;
}

std::vector<GateResult> evaluate_gates(const Database& db, std::string_view commit, bool release) {
  std::vector<GateResult> results;
  for (const Gate& gate : gates()) results.push_back(evaluate_gate(db, gate, commit, release));
  return results;
}

void record_gate_results(Database& db, std::string_view commit,
                         std::span<const GateResult> results) {
  conformance::Transaction tx(db);
  Statement insert = db.prepare(
      "INSERT INTO gate_result (commit_sha, gate, blocker, status, reason, evaluated_at) "
      "VALUES (?, ?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))");
  for (const GateResult& r : results) {
    insert.reset();
    insert.bind(1, commit)
        .bind(2, r.gate)
        .bind(3, int64_t{r.blocker})
        .bind(4, gate_status_name(r.status))
        .bind(5, r.reason);
    insert.run();
  }
  tx.commit();
}

std::string format_gate_table(std::span<const GateResult> results) {
  QueryResult table;
  table.columns = {"GATE", "STATUS", "BLOCKER", "REASON"};
  for (const GateResult& r : results) {
    table.rows.push_back(
        {r.gate, std::string(gate_status_name(r.status)), r.blocker ? "yes" : "no", r.reason});
  }
  return format_table(table);
}

bool all_blockers_pass(std::span<const GateResult> results) {
  return std::ranges::all_of(
      results, [](const GateResult& r) { return !r.blocker || r.status == GateStatus::Pass; });
}

std::string gate_verdict_line(std::span<const GateResult> results) {
  const auto blockers = std::ranges::count_if(results, &GateResult::blocker);
  const auto failing = std::ranges::count_if(
      results, [](const GateResult& r) { return r.blocker && r.status != GateStatus::Pass; });
  if (failing == 0) return "gate: PASS (all " + std::to_string(blockers) + " blockers pass)";
  return "gate: FAIL (" + std::to_string(failing) + " of " + std::to_string(blockers) +
         " blockers do not pass)";
}

}  // namespace volta::audit
