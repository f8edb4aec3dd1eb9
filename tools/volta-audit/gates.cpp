#include "gates.h"

#include <algorithm>
#include <cstdint>

#include "build_info.h"
#include "queries.h"
#include "volta/conformance/matrix_suite.h"
#include "volta/conformance/onnx_coverage.h"
#include "volta/conformance/onnx_suite.h"
#include "volta/conformance/sqlite.h"

namespace volta::audit {
namespace {

using conformance::Database;
using conformance::Statement;
using conformance::StoreError;

// The cases a suite gate judges: one suite, optionally narrowed to a backend or a family.
struct Selection {
  std::string_view suite;
  std::string_view backend = {};  // empty: every backend
  std::string_view family = {};   // empty: every family
};

std::string sql_literal(std::string_view text) {
  std::string quoted = "'";
  for (char c : text) {
    quoted += c;
    if (c == '\'') quoted += '\'';
  }
  return quoted + "'";
}

// "parity (backend cuda)": how reasons name the evidence.
std::string selection_label(const Selection& s) {
  std::string label(s.suite);
  if (!s.backend.empty()) label += " (backend " + std::string(s.backend) + ")";
  if (!s.family.empty()) label += " (family " + std::string(s.family) + ")";
  return label;
}

// The command that produces the evidence, so a NOT VERIFIED reason says what to do.
std::string selection_command(const Selection& s) {
  std::string command = "volta-audit run " + std::string(s.suite);
  if (!s.backend.empty()) command += " --backend " + std::string(s.backend);
  if (!s.family.empty()) command += " --family " + std::string(s.family);
  return command;
}

std::string selection_filter(const Selection& s) {
  std::string filter = "c.suite = " + sql_literal(s.suite);
  if (!s.backend.empty()) filter += " AND c.backend = " + sql_literal(s.backend);
  if (!s.family.empty()) filter += " AND c.family = " + sql_literal(s.family);
  return filter;
}

// A suite gate's evidence is, for every case of the selection, its result in the newest
// complete run of the commit that has one: shards and reruns each contribute the cases they
// ran, and a rerun supersedes an older result. Under :release, runs of dirty trees are not
// evidence at all. Ties on started_at (one-second resolution) fall to the later run id.
// {filter}, {label} and {command} are filled in per gate by suite_gate_sql.
constexpr std::string_view kSuiteGateSql = R"sql(
WITH ranked AS (
  SELECT c.case_id, r.outcome, r.verdict, r.message,
         row_number() OVER (PARTITION BY r.case_ref
                            ORDER BY run.started_at DESC, run.id DESC) AS recency
  FROM result r
  JOIN run ON run.id = r.run_id
  JOIN test_case c ON c.id = r.case_ref
  WHERE run.commit_sha = :commit AND run.status = 'complete'
    AND (:release = 0 OR run.dirty = 0) AND {filter}
),
evidence AS (SELECT case_id, outcome, verdict, message FROM ranked WHERE recency = 1),
tally AS (
  SELECT count(*) AS cases,
         coalesce(sum(outcome = 'PASS'), 0) AS passed,
         coalesce(sum(outcome = 'SKIPPED'), 0) AS skipped,
         coalesce(sum(verdict <> 'expected'), 0) AS unexpected
  FROM evidence
),
-- Under :release a history of dirty-tree runs only would read as "no results"; say why.
dirty_only AS (
  SELECT :release = 1 AND EXISTS (
    SELECT 1 FROM result r
    JOIN run ON run.id = r.run_id
    JOIN test_case c ON c.id = r.case_ref
    WHERE run.commit_sha = :commit AND run.status = 'complete' AND run.dirty = 1 AND {filter}
  ) AS yes
)
SELECT
  CASE WHEN cases = 0 THEN 'NOT VERIFIED'
       WHEN unexpected > 0 THEN 'FAIL'
       WHEN skipped = cases THEN 'NOT VERIFIED'
       ELSE 'PASS' END,
  CASE WHEN cases = 0 AND (SELECT yes FROM dirty_only) THEN
         'only dirty-tree ' || {label} || ' results for commit ' || substr(:commit, 1, 12) ||
         ', which are not release evidence; run `' || {command} || '` from a clean checkout'
       WHEN cases = 0 THEN
         'no ' || {label} || ' results for commit ' || substr(:commit, 1, 12) ||
         '; run `' || {command} || '`'
       WHEN unexpected > 0 THEN
         unexpected || ' unexpected result(s); first: ' ||
         (SELECT case_id || ' ' || outcome || ' (' || verdict || '): ' || message
          FROM evidence WHERE verdict <> 'expected' ORDER BY case_id LIMIT 1)
       WHEN skipped = cases THEN
         'all ' || cases || ' ' || {label} || ' cases skipped: ' ||
         (SELECT message FROM evidence ORDER BY case_id LIMIT 1)
       ELSE
         cases || ' cases: ' || passed || ' pass, ' || (cases - passed - skipped) ||
         ' expected non-pass, ' || skipped || ' skipped'
  END
FROM tally
)sql";

void replace_all(std::string& text, std::string_view placeholder, std::string_view replacement) {
  for (size_t at = text.find(placeholder); at != std::string::npos;
       at = text.find(placeholder, at + replacement.size())) {
    text.replace(at, placeholder.size(), replacement);
  }
}

std::string suite_gate_sql(const Selection& s) {
  std::string sql(kSuiteGateSql);
  replace_all(sql, "{filter}", selection_filter(s));
  replace_all(sql, "{label}", sql_literal(selection_label(s)));
  replace_all(sql, "{command}", sql_literal(selection_command(s)));
  return sql;
}

// Evidence is the perf_sample rows of the newest complete run of the commit that has any.
// Samples are times, so a ratio above 1 is slower than the baseline. Pass 2 re-measures only
// the pass-1 suspects in fresh processes; a benchmark is a regression only when the median of
// both passes is more than 5% above its newest baseline on the run's machine (issue #7 adds
// the Mann-Whitney test and per-benchmark effect sizes on top of this rule).
constexpr std::string_view kPerfGateSql = R"sql(
WITH perf_run AS (
  SELECT run.id, run.machine FROM run
  WHERE run.commit_sha = :commit AND run.status = 'complete'
    AND (:release = 0 OR run.dirty = 0)
    AND EXISTS (SELECT 1 FROM perf_sample s WHERE s.run_id = run.id)
  ORDER BY run.started_at DESC, run.id DESC
  LIMIT 1
),
ranked AS (
  SELECT s.benchmark, s.pass, s.unit, s.value,
         row_number() OVER (PARTITION BY s.benchmark, s.pass, s.unit ORDER BY s.value) AS k,
         count(*) OVER (PARTITION BY s.benchmark, s.pass, s.unit) AS samples
  FROM perf_sample s JOIN perf_run ON s.run_id = perf_run.id
),
medians AS (
  SELECT benchmark, pass, unit, avg(value) AS median FROM ranked
  WHERE k IN ((samples + 1) / 2, (samples + 2) / 2)
  GROUP BY benchmark, pass, unit
),
baseline AS (
  SELECT benchmark, unit, value FROM (
    SELECT b.benchmark, b.unit, b.value,
           row_number() OVER (PARTITION BY b.benchmark, b.unit
                              ORDER BY b.created_at DESC, b.id DESC) AS recency
    FROM perf_baseline b JOIN perf_run ON b.machine = perf_run.machine
  ) WHERE recency = 1
),
compared AS (
  SELECT p1.benchmark, p1.median / b.value AS pass1, p2.median / b.value AS pass2
  FROM medians p1
  JOIN baseline b ON b.benchmark = p1.benchmark AND b.unit = p1.unit
  LEFT JOIN medians p2 ON p2.benchmark = p1.benchmark AND p2.unit = p1.unit AND p2.pass = 2
  WHERE p1.pass = 1
),
regressed AS (SELECT * FROM compared WHERE pass1 > 1.05 AND pass2 > 1.05),
tally AS (
  SELECT (SELECT count(*) FROM perf_run) AS runs,
         (SELECT machine FROM perf_run) AS machine,
         (SELECT count(*) FROM compared) AS compared,
         (SELECT count(DISTINCT benchmark) FROM medians WHERE pass = 1) AS benchmarks,
         (SELECT count(*) FROM regressed) AS regressions
)
SELECT
  CASE WHEN runs = 0 OR compared = 0 THEN 'NOT VERIFIED'
       WHEN regressions > 0 THEN 'FAIL'
       ELSE 'PASS' END,
  CASE WHEN runs = 0 THEN 'no perf samples for commit ' || substr(:commit, 1, 12)
       WHEN compared = 0 THEN 'no perf baseline for machine ' || machine
       WHEN regressions > 0 THEN
         regressions || ' benchmark(s) more than 5% slower than baseline in both passes; first: ' ||
         (SELECT benchmark || ' at ' || printf('%.3f', pass1) || 'x baseline in pass 1, ' ||
                 printf('%.3f', pass2) || 'x in pass 2'
          FROM regressed ORDER BY benchmark LIMIT 1)
       ELSE
         compared || ' benchmarks within 5% of baseline in both passes' ||
         CASE WHEN benchmarks > compared
              THEN '; ' || (benchmarks - compared) || ' without a baseline were not compared'
              ELSE '' END
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
dirty_only AS (
  SELECT :release = 1 AND EXISTS (
    SELECT 1 FROM result r
    JOIN run ON run.id = r.run_id
    JOIN test_case c ON c.id = r.case_ref
    WHERE run.commit_sha = :commit AND run.status = 'complete' AND run.dirty = 1
      AND c.suite = 'onnx'
  ) AS yes
)
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
dirty_only AS (
  SELECT :release = 1 AND EXISTS (
    SELECT 1 FROM result r
    JOIN run ON run.id = r.run_id
    JOIN test_case c ON c.id = r.case_ref
    WHERE run.commit_sha = :commit AND run.status = 'complete' AND run.dirty = 1
      AND c.suite = 'numerics'
  ) AS yes
)
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
  return sql;
}

std::vector<Gate> build_gates() {
  std::vector<Gate> all;
  const auto suite_gate = [&all](std::string_view name, std::string_view description,
                                 bool blocks_pr, const Selection& selection) {
    all.push_back({name, description, blocks_pr, suite_gate_sql(selection)});
  };
  all.push_back({"onnx-conformance",
                 "ONNX backend test data: every result as expected, corpus at its floor", true,
                 onnx_gate_sql()});
  all.push_back({"numerics-matrix", "numerics: per-family parity, NaN/Inf matrix, properties",
                 false, numerics_gate_sql()});
  suite_gate("parity-cpu-reference", "engine CPU matches the reference within tolerance", true,
             {.suite = "parity", .backend = "cpu"});
  suite_gate("parity-cuda-cpu", "CUDA matches engine CPU within tolerance", false,
             {.suite = "parity", .backend = "cuda"});
  suite_gate("determinism-100-run", "one plan gives bit-identical outputs 100 times", false,
             {.suite = "determinism", .family = "replay-100"});
  suite_gate("thread-invariance", "CPU outputs are bit-identical for 1, 2, 3, 4 and 8 threads",
             false, {.suite = "determinism", .family = "thread-invariance"});
  suite_gate("transformer-train-reload", "tiny transformer trains, saves, reloads, infers", false,
             {.suite = "model", .family = "transformer-train-reload"});
  suite_gate("checkpoint-round-trip", "a checkpoint reloads to the same bits", false,
             {.suite = "model", .family = "checkpoint-round-trip"});
  all.push_back({"perf-double-pass", "no benchmark regresses beyond 5% in both perf passes", false,
                 std::string(kPerfGateSql)});
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
