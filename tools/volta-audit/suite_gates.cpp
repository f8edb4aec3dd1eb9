// The suite gate every suite shares (parity, the determinism families, the model suites):
// what is evidence, what is complete evidence, and the blockers, as one SQL query.

#include <string>

#include "gate_sql.h"
#include "volta/conformance/determinism_suite.h"
#include "volta/conformance/evidence.h"
#include "volta/conformance/gradient_suite.h"
#include "volta/conformance/matrix_suite.h"
#include "volta/conformance/onnx_suite.h"
#include "volta/conformance/training_suite.h"

namespace volta::audit {
namespace {

// Suites `volta-audit run` records (run_command.cpp checks the same names).
constexpr std::string_view kRunnableSuites[] = {"parity",
                                                conformance::kOnnxSuite,
                                                conformance::kOnnxCurrentSuite,
                                                conformance::kNumericsSuite,
                                                conformance::kDeterminismSuite,
                                                conformance::kGradientsSuite,
                                                conformance::kTrainingSuite};

std::string joined(const std::vector<std::string_view>& words, std::string_view separator) {
  std::string out;
  for (std::string_view w : words)
    out += (out.empty() ? "" : std::string(separator)) + std::string(w);
  return out;
}

// Evidence: for every case of the selection, its result in the newest usable run of the
// commit that has one; shards and reruns each contribute the cases they ran, and a rerun
// supersedes an older result. Ties on started_at (one-second resolution) fall to the later
// run id. `ranked` keeps every result of the usable runs for gates that compare runs.
// Negative controls (case ids "control:...") prove checks; they are not cases. A result is
// unexpected when its verdict says so or when it is a SKIPPED that neither an expectation nor
// a declared precondition explains (rows written before verdicts knew the difference).
constexpr std::string_view kSuiteGateSql = R"sql(
WITH {usable_run},
{refused_run},
{flaky_case},
{extra_ctes}
ranked AS (
  SELECT c.case_id, c.family, r.outcome, r.verdict, r.message, r.output_hash, r.params,
         r.expectation, r.precondition, run.id AS run_id, run.build_type, run.machine,
         run.started_at,
         row_number() OVER (PARTITION BY r.case_ref
                            ORDER BY run.started_at DESC, run.id DESC) AS recency
  FROM result r
  JOIN usable_run run ON run.id = r.run_id
  JOIN test_case c ON c.id = r.case_ref
  WHERE {filter}
),
evidence AS (SELECT * FROM ranked WHERE recency = 1),
judged AS (
  SELECT *, outcome IN ('ERROR', 'CRASH', 'TIMEOUT') AS broken,
         outcome NOT IN ('ERROR', 'CRASH', 'TIMEOUT') AND
           (verdict <> 'expected' OR
            (outcome = 'SKIPPED' AND expectation = '' AND precondition = '')) AS unexpected
  FROM evidence WHERE substr(case_id, 1, 8) <> 'control:'
),
expected_case(case_id) AS ({expected}),
missing AS (
  SELECT case_id FROM expected_case WHERE case_id NOT IN (SELECT case_id FROM evidence)
),
controls(case_id) AS ({controls}),
control_evidence AS (
  SELECT k.case_id, e.outcome, e.verdict, e.message
  FROM controls k LEFT JOIN evidence e ON e.case_id = k.case_id
),
-- A case that passed on less evidence than the gate needs (a failed one is a blocker already).
weak AS (
  SELECT case_id, params FROM judged WHERE outcome = 'PASS' AND NOT coalesce({params_rule}, 0)
),
{late_ctes}
tally AS (
  SELECT count(*) AS cases,
         coalesce(sum(outcome = 'PASS'), 0) AS passed,
         coalesce(sum(outcome = 'SKIPPED'), 0) AS skipped,
         coalesce(sum(unexpected), 0) AS unexpected,
         coalesce(sum(broken), 0) AS broken,
         coalesce(sum({no_expected_failures} AND outcome <> 'PASS' AND NOT unexpected
                      AND NOT broken), 0) AS excused,
         (SELECT count(*) FROM controls) AS controls,
         (SELECT count(*) FROM missing) AS missing
  FROM judged
),
refused AS (
  SELECT f.reason FROM refused_run f
  WHERE EXISTS (SELECT 1 FROM result r JOIN test_case c ON c.id = r.case_ref
                WHERE r.run_id = f.run_id AND {filter})
),
reasons(k, status, reason) AS (
  SELECT 0, 'NOT VERIFIED', {gate_input_problem} WHERE {gate_input_problem} IS NOT NULL
  UNION ALL
  SELECT 0, 'NOT VERIFIED', 'this volta-audit knows the expected cases of its own commit ' ||
         substr(:lists_commit, 1, 12) || ' only; judge commit ' || substr(:commit, 1, 12) ||
         ' with a volta-audit built from it'
  WHERE {lists_from_binary} AND :commit <> :lists_commit
  UNION ALL
  SELECT 0, 'NOT VERIFIED', {no_list_reason} WHERE {no_list_reason} IS NOT NULL
  UNION ALL
  SELECT 1, 'FAIL', unexpected || ' unexpected result(s); first: ' ||
         (SELECT case_id || ' ' || outcome || ' (' ||
                 CASE WHEN verdict = 'expected' THEN 'skipped without an expectation or a ' ||
                                                     'declared precondition'
                      ELSE verdict END || '): ' || message
          FROM judged WHERE unexpected ORDER BY case_id LIMIT 1)
  FROM tally WHERE unexpected > 0
  UNION ALL
  SELECT 1, 'FAIL', {flaky_reason} WHERE EXISTS (SELECT 1 FROM flaky_case)
  UNION ALL
  SELECT 2, 'FAIL', broken || ' ERROR/CRASH/TIMEOUT result(s), which no expectation excuses; ' ||
         'first: ' || (SELECT case_id || ' ' || outcome || ': ' || message
                       FROM judged WHERE broken ORDER BY case_id LIMIT 1)
  FROM tally WHERE broken > 0
  UNION ALL
  SELECT 3, 'FAIL', excused || ' case(s) did not pass, which this gate excuses for no ' ||
         'expectation; first: ' ||
         (SELECT case_id || ' ' || outcome || ' (expected by ' || expectation || '): ' || message
          FROM judged WHERE outcome <> 'PASS' AND NOT unexpected AND NOT broken
          ORDER BY case_id LIMIT 1)
  FROM tally WHERE excused > 0
  UNION ALL
  SELECT 4, 'NOT VERIFIED', 'all ' || cases || ' ' || {label} || ' cases skipped: ' ||
         (SELECT message FROM judged ORDER BY case_id LIMIT 1)
  FROM tally WHERE cases > 0 AND skipped = cases
  UNION ALL
  SELECT 5, 'NOT VERIFIED', missing || ' of the ' || (SELECT count(*) FROM expected_case) ||
         ' cases the gate needs have no result; first: ' ||
         (SELECT case_id FROM missing ORDER BY case_id LIMIT 1) || '; run `' || {command} || '`'
  FROM tally WHERE cases > 0 AND missing > 0
  UNION ALL
  SELECT 6, 'NOT VERIFIED', (SELECT count(*) FROM weak) || ' case(s) with less evidence than ' ||
         'the gate needs (' || {params_words} || '); first: ' ||
         (SELECT case_id || ' (' || CASE WHEN params = '' THEN 'no params recorded'
                                         ELSE params END || ')'
          FROM weak ORDER BY case_id LIMIT 1) || '; run `' || {command} || '`'
  WHERE EXISTS (SELECT 1 FROM weak)
  UNION ALL
  SELECT 7, 'NOT VERIFIED',
         CASE WHEN n = 1 THEN 'negative control ' || ids || ' has'
              ELSE 'negative controls ' || ids || ' have' END ||
         ' no result: a check not shown able to fail is not evidence; run `' ||
         {suite_command} || '`'
  FROM (SELECT count(*) AS n, group_concat(case_id, ', ') AS ids
        FROM (SELECT case_id FROM control_evidence WHERE outcome IS NULL ORDER BY case_id))
  WHERE n > 0
  UNION ALL
  SELECT 8, 'NOT VERIFIED', 'negative control ' || case_id || ' did not catch its planted ' ||
         'defect (' || outcome || '): ' || message
  FROM control_evidence WHERE outcome <> 'PASS'
  {extra_reasons}
  UNION ALL
  SELECT 20, 'NOTE', (SELECT count(*) FROM refused) || ' run(s) refused as evidence, first: ' ||
         (SELECT reason FROM refused ORDER BY reason LIMIT 1)
  WHERE EXISTS (SELECT 1 FROM refused)
),
blockers AS (SELECT * FROM reasons WHERE status <> 'NOTE')
SELECT
  CASE WHEN EXISTS (SELECT 1 FROM blockers WHERE status = 'FAIL') THEN 'FAIL'
       WHEN cases = 0 OR EXISTS (SELECT 1 FROM blockers) THEN 'NOT VERIFIED'
       ELSE 'PASS' END,
  CASE WHEN cases = 0 AND NOT EXISTS (SELECT 1 FROM blockers WHERE status = 'FAIL') THEN
         coalesce((SELECT group_concat(reason, '; ')
                   FROM (SELECT reason FROM blockers WHERE k = 0 ORDER BY reason)) || '; ', '') ||
         'no usable ' || {label} || ' results for commit ' || substr(:commit, 1, 12) ||
         CASE WHEN EXISTS (SELECT 1 FROM refused) THEN
                ': ' || (SELECT count(*) FROM refused) || ' run(s) refused, first: ' ||
                (SELECT reason FROM refused ORDER BY reason LIMIT 1)
              WHEN :release = 1 AND EXISTS (
                SELECT 1 FROM result r JOIN run ON run.id = r.run_id
                JOIN test_case c ON c.id = r.case_ref
                WHERE run.commit_sha = :commit AND run.status = 'complete' AND run.dirty = 1
                  AND {filter}) THEN
                ': only runs of a dirty tree, which are not release evidence'
              ELSE '' END ||
         CASE WHEN {command} IS NULL THEN '' ELSE '; run `' || {command} || '`' END
       WHEN EXISTS (SELECT 1 FROM blockers) THEN
         (SELECT group_concat(reason, '; ') FROM (SELECT reason FROM reasons ORDER BY k, reason))
       ELSE
         cases || ' cases: ' || passed || ' pass, ' || (cases - passed - skipped) ||
         ' expected non-pass, ' || skipped || ' skipped' || {pass_detail} ||
         CASE WHEN controls = 0 THEN ''
              WHEN controls = 1 THEN '; 1 negative control caught its planted defect'
              ELSE '; ' || controls || ' negative controls caught their planted defects' END
  END
FROM tally
)sql";

}  // namespace

std::string flaky_case_cte(std::string_view filter) {
  std::string sql = R"sql(flaky_case AS (
  SELECT c.case_id, c.backend, group_concat(o.outcome || ' in run ' || o.first_run, ', ')
         AS outcomes
  FROM (SELECT r.case_ref, run.machine, run.build_type, r.outcome, min(run.id) AS first_run
        FROM result r JOIN usable_run run ON run.id = r.run_id
        WHERE run.dirty = 0
        GROUP BY r.case_ref, run.machine, run.build_type, r.outcome
        ORDER BY first_run) o
  JOIN test_case c ON c.id = o.case_ref
  WHERE substr(c.case_id, 1, 8) <> 'control:' AND {filter}
  GROUP BY o.case_ref, o.machine, o.build_type
  HAVING count(*) > 1
))sql";
  replace_all(sql, "{filter}", filter);
  return sql;
}

std::string sql_literal(std::string_view text) {
  std::string quoted = "'";
  for (char c : text) {
    quoted += c;
    if (c == '\'') quoted += '\'';
  }
  return quoted + "'";
}

std::string values_list(const std::vector<std::string>& values) {
  if (values.empty()) return "SELECT NULL WHERE 0";
  std::string list;
  for (const std::string& v : values)
    list += (list.empty() ? "VALUES (" : ", (") + sql_literal(v) + ")";
  return list;
}

void replace_all(std::string& text, std::string_view placeholder, std::string_view replacement) {
  for (size_t at = text.find(placeholder); at != std::string::npos;
       at = text.find(placeholder, at + replacement.size())) {
    text.replace(at, placeholder.size(), replacement);
  }
}

bool suite_exists(std::string_view suite) {
  for (std::string_view s : kRunnableSuites) {
    if (s == suite) return true;
  }
  return false;
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

std::string selection_label(const Selection& s) {
  std::string label(s.suite);
  if (!s.backend.empty()) label += " (backend " + std::string(s.backend) + ")";
  if (s.families.size() == 1) label += " (family " + std::string(s.families[0]) + ")";
  if (s.families.size() > 1) label += " (families " + joined(s.families, ", ") + ")";
  return label;
}

// `run` takes one --family: a selection of several families runs the whole suite.
std::string selection_command(const Selection& s) {
  std::string command = "volta-audit run " + std::string(s.suite);
  if (!s.backend.empty()) command += " --backend " + std::string(s.backend);
  if (s.families.size() == 1) command += " --family " + std::string(s.families[0]);
  return command;
}

std::string suite_gate_sql(const SuiteGateSpec& spec) {
  const Selection& s = spec.selection;
  const bool runnable = suite_exists(s.suite);
  std::string sql(kSuiteGateSql);
  replace_all(sql, "{usable_run}", conformance::usable_run_cte());
  replace_all(sql, "{refused_run}", conformance::refused_run_cte());
  replace_all(sql, "{flaky_case}", flaky_case_cte(selection_filter(spec.selection)));
  replace_all(sql, "{flaky_reason}", kFlakyReason);
  replace_all(sql, "{extra_ctes}", spec.extra_ctes);
  replace_all(sql, "{late_ctes}", spec.late_ctes);
  replace_all(sql, "{extra_reasons}", spec.extra_reasons);
  replace_all(sql, "{pass_detail}", spec.pass_detail);
  replace_all(sql, "{expected}", spec.expected.empty() ? "SELECT NULL WHERE 0" : spec.expected);
  replace_all(sql, "{no_list_reason}",
              spec.expected.empty() ? sql_literal(spec.no_list_reason) : "NULL");
  replace_all(sql, "{lists_from_binary}",
              spec.lists_from_binary && !spec.expected.empty() ? "1" : "0");
  replace_all(sql, "{controls}", values_list(spec.controls));
  replace_all(sql, "{no_expected_failures}", spec.no_expected_failures ? "1" : "0");
  replace_all(sql, "{params_rule}", spec.params_rule.empty() ? "1" : "(" + spec.params_rule + ")");
  replace_all(sql, "{params_words}", sql_literal(spec.params_words));
  replace_all(sql, "{gate_input_problem}",
              spec.gate_input_problem.empty() ? "NULL" : sql_literal(spec.gate_input_problem));
  replace_all(sql, "{filter}", selection_filter(s));
  replace_all(sql, "{label}", sql_literal(selection_label(s)));
  replace_all(sql, "{command}", runnable ? sql_literal(selection_command(s)) : "NULL");
  replace_all(sql, "{suite_command}", sql_literal("volta-audit run " + std::string(s.suite)));
  return sql;
}

}  // namespace volta::audit
