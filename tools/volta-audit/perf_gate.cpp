// The perf-double-pass gate: for every benchmark of the commit's volta-perf (the full list its
// newest usable perf run recorded, whatever that run's --filter), the newest verdict of any
// usable perf run of the commit, each benchmark judged against its machine's baseline by the
// double pass of governance/perf-slo.md. Complete evidence: a verdict per listed benchmark,
// compared with a baseline from another commit, on at least the policy's samples, with the
// committed policy's alpha and threshold. FAIL lists every regression with both passes'
// figures; everything short of complete evidence is NOT VERIFIED, never PASS.

#include <cstdio>
#include <sstream>
#include <string>

#include "committed_texts.h"
#include "gate_sql.h"
#include "perf_policy.h"
#include "volta/conformance/evidence.h"
#include "volta/error.h"

namespace volta::audit {
namespace {

constexpr std::string_view kPerfGateSql = R"sql(
WITH {usable_run},
{refused_run},
perf_run AS (SELECT * FROM usable_run WHERE suites = 'perf'),
listing AS (
  SELECT benchmark FROM perf_listing WHERE run_id = (
    SELECT r.id FROM perf_run r WHERE EXISTS (SELECT 1 FROM perf_listing l WHERE l.run_id = r.id)
    ORDER BY r.started_at DESC, r.id DESC LIMIT 1)
),
ranked AS (
  SELECT v.*, row_number() OVER (PARTITION BY v.benchmark
                                 ORDER BY run.started_at DESC, run.id DESC) AS recency
  FROM perf_verdict v JOIN perf_run run ON run.id = v.run_id
),
verdicts AS (
  SELECT * FROM ranked WHERE recency = 1 AND benchmark IN (SELECT benchmark FROM listing)
),
missing AS (
  SELECT benchmark FROM listing WHERE benchmark NOT IN (SELECT benchmark FROM verdicts)
),
compared AS (SELECT * FROM verdicts WHERE verdict NOT IN ('new', 'error')),
regressions AS (
  SELECT benchmark || ' ' || printf('%+.1f%%', 100 * pass1_change) || ' (p=' ||
         printf('%.2g', pass1_p) || ') in pass 1, ' || printf('%+.1f%%', 100 * pass2_change) ||
         ' (p=' || printf('%.2g', pass2_p) || ') in pass 2 (run ' || run_id || ')' AS line
  FROM verdicts WHERE verdict = 'regression'
),
own_baseline AS (SELECT * FROM compared WHERE baseline_commit = :commit),
thin AS (
  SELECT * FROM compared
  WHERE {policy_known} AND (
    pass1_samples < {repetitions}
    OR (pass2_samples > 0 AND pass2_samples < {pass2_repetitions})
    OR (verdict IN ('regression', 'improvement', 'noise') AND pass2_samples < {pass2_repetitions}))
),
off_policy AS (
  SELECT *, {threshold} AS policy_threshold FROM compared
  WHERE {policy_known} AND (alpha <> {alpha} OR threshold <> {threshold})
),
tally AS (
  SELECT (SELECT count(*) FROM perf_run) AS runs,
         (SELECT count(*) FROM listing) AS listed,
         count(*) AS benchmarks,
         coalesce(sum(verdict = 'regression'), 0) AS regressed,
         coalesce(sum(verdict = 'improvement'), 0) AS improved,
         coalesce(sum(verdict = 'unchanged'), 0) AS unchanged,
         coalesce(sum(verdict = 'noise'), 0) AS noise,
         coalesce(sum(verdict = 'new'), 0) AS new,
         coalesce(sum(verdict = 'error'), 0) AS errors,
         (SELECT count(DISTINCT run_id) FROM verdicts) AS verdict_runs
  FROM verdicts
),
reasons(k, status, reason) AS (
  SELECT 0, 'NOT VERIFIED', {policy_problem} WHERE {policy_problem} IS NOT NULL
  UNION ALL
  SELECT 0, 'NOT VERIFIED', 'this volta-audit knows the perf policy of its own commit ' ||
         substr(:lists_commit, 1, 12) || ' only; judge commit ' || substr(:commit, 1, 12) ||
         ' with a volta-audit built from it'
  WHERE :commit <> :lists_commit
  UNION ALL
  SELECT 1, 'FAIL', regressed || ' regression(s) seen in both passes: ' ||
         (SELECT group_concat(line, '; ') FROM (SELECT line FROM regressions ORDER BY line))
  FROM tally WHERE regressed > 0
  UNION ALL
  SELECT 2, 'NOT VERIFIED', (SELECT count(*) FROM missing) || ' of the ' || listed ||
         ' benchmarks volta-perf lists have no verdict for the commit; first: ' ||
         (SELECT benchmark FROM missing ORDER BY benchmark LIMIT 1) || '; run `volta-audit perf`'
  FROM tally WHERE EXISTS (SELECT 1 FROM missing)
  UNION ALL
  SELECT 3, 'NOT VERIFIED', errors || ' benchmark(s) errored, so were not compared; first: ' ||
         (SELECT benchmark || ' (run ' || run_id || '): ' || detail FROM verdicts
          WHERE verdict = 'error' ORDER BY benchmark LIMIT 1)
  FROM tally WHERE errors > 0
  UNION ALL
  SELECT 4, 'NOT VERIFIED', new || ' benchmark(s) only recorded candidate baselines, nothing ' ||
         'was compared; first: ' ||
         (SELECT benchmark FROM verdicts WHERE verdict = 'new' ORDER BY benchmark LIMIT 1) ||
         '; a baseline must come from an earlier commit measured on this machine'
  FROM tally WHERE new > 0
  UNION ALL
  SELECT 5, 'NOT VERIFIED', (SELECT count(*) FROM own_baseline) || ' benchmark(s) compared ' ||
         'with a baseline recorded from the commit under test, which proves nothing about a ' ||
         'change; first: ' || (SELECT benchmark || ' (run ' || run_id || ', baseline ' ||
                                      baseline_kind || ')'
                               FROM own_baseline ORDER BY benchmark LIMIT 1) ||
         '; a baseline must come from an earlier commit measured on this machine'
  WHERE EXISTS (SELECT 1 FROM own_baseline)
  UNION ALL
  SELECT 6, 'NOT VERIFIED', (SELECT count(*) FROM thin) || ' verdict(s) on fewer samples than ' ||
         'the policy needs ({repetitions} in pass 1, {pass2_repetitions} in pass 2 for a ' ||
         'suspect); first: ' ||
         (SELECT benchmark || ' (run ' || run_id || ': ' || pass1_samples || ' + ' ||
                 pass2_samples || ' samples, ' || verdict || ')'
          FROM thin ORDER BY benchmark LIMIT 1) || '; run `volta-audit perf`'
  WHERE EXISTS (SELECT 1 FROM thin)
  UNION ALL
  SELECT 7, 'NOT VERIFIED', (SELECT count(*) FROM off_policy) || ' verdict(s) judged with ' ||
         'another alpha or threshold than governance/perf-slo.md ({alpha_text}, threshold per ' ||
         'benchmark); first: ' ||
         (SELECT benchmark || ' (run ' || run_id || ': alpha ' || alpha || ', threshold ' ||
                 threshold || ' where the policy says ' || policy_threshold || ')'
          FROM off_policy ORDER BY benchmark LIMIT 1)
  WHERE EXISTS (SELECT 1 FROM off_policy)
)
SELECT
  CASE WHEN EXISTS (SELECT 1 FROM reasons WHERE status = 'FAIL') THEN 'FAIL'
       WHEN runs = 0 OR listed = 0 OR EXISTS (SELECT 1 FROM reasons) THEN 'NOT VERIFIED'
       ELSE 'PASS' END,
  CASE WHEN runs = 0 THEN
         coalesce((SELECT group_concat(reason, '; ')
                   FROM (SELECT reason FROM reasons WHERE k = 0 ORDER BY reason)) || '; ', '') ||
         'no usable perf run for commit ' || substr(:commit, 1, 12) ||
         coalesce(': ' || (SELECT count(*) FROM refused_run WHERE suites = 'perf') ||
                  ' run(s) refused, first: ' ||
                  (SELECT reason FROM refused_run WHERE suites = 'perf' ORDER BY reason LIMIT 1),
                  '') ||
         CASE WHEN :release = 1 AND EXISTS (
                SELECT 1 FROM run WHERE run.commit_sha = :commit AND run.status = 'complete'
                  AND run.suites = 'perf' AND run.dirty = 1)
              THEN ' (runs of a dirty tree are not release evidence)' ELSE '' END ||
         '; run `volta-audit perf`'
       WHEN listed = 0 THEN
         'no usable perf run of commit ' || substr(:commit, 1, 12) || ' recorded the list of ' ||
         'volta-perf''s benchmarks, so nothing says its verdicts cover them all; run ' ||
         '`volta-audit perf`'
       WHEN EXISTS (SELECT 1 FROM reasons) THEN
         (SELECT group_concat(reason, '; ') FROM (SELECT reason FROM reasons ORDER BY k, reason))
       ELSE
         benchmarks || ' benchmark(s) compared with their baseline in ' || verdict_runs ||
         ' perf run(s): ' || unchanged || ' unchanged, ' || noise ||
         ' noise (suspect in pass 1, not repeated in pass 2), ' || improved || ' improvement(s)'
  END
FROM tally
)sql";

// "%.17g": a double as SQL reads it back bit for bit.
std::string exact(double value) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return buffer;
}

}  // namespace

std::string perf_gate_sql() {
  std::string sql(kPerfGateSql);
  // The policy committed at the binary's commit, never the tree's copy.
  std::string problem;
  PerfPolicy policy;
  if (build::kCommittedPerfPolicy.empty()) {
    problem = "this volta-audit knows no committed " + std::string(kPerfPolicyFile) +
              " (built outside a git checkout)";
  } else {
    try {
      std::istringstream text{std::string(build::kCommittedPerfPolicy)};
      policy = parse_perf_policy(text, std::string(kPerfPolicyFile) + " (committed)");
    } catch (const VoltaError& e) {
      problem = std::string("the committed perf policy does not parse: ") + e.what();
    }
  }
  // The threshold the policy gives each benchmark: its first matching override, or the default.
  std::string threshold = exact(policy.default_threshold);
  if (!policy.overrides.empty()) {
    std::string cases;
    for (const ThresholdOverride& o : policy.overrides) {
      cases += " WHEN volta_regex_match(" + sql_literal(o.pattern) + ", benchmark) THEN " +
               exact(o.threshold);
    }
    threshold = "(CASE" + cases + " ELSE " + threshold + " END)";
  }
  replace_all(sql, "{usable_run}", conformance::usable_run_cte());
  replace_all(sql, "{refused_run}", conformance::refused_run_cte());
  replace_all(sql, "{policy_problem}", problem.empty() ? "NULL" : sql_literal(problem));
  replace_all(sql, "{threshold}", threshold);
  replace_all(sql, "{policy_known}", problem.empty() ? "1" : "0");
  char alpha_text[32];
  std::snprintf(alpha_text, sizeof alpha_text, "alpha %g", policy.alpha);
  replace_all(sql, "{alpha_text}", alpha_text);
  replace_all(sql, "{alpha}", exact(policy.alpha));
  replace_all(sql, "{repetitions}", std::to_string(policy.repetitions));
  replace_all(sql, "{pass2_repetitions}", std::to_string(policy.pass2_repetitions));
  return sql;
}

}  // namespace volta::audit
