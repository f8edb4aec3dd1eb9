#include "gates.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "gate_sql.h"
#include "queries.h"
#include "volta/conformance/determinism_suite.h"
#include "volta/conformance/parity_suite.h"
#include "volta/conformance/sqlite.h"
#include "volta/conformance/training_suite.h"

namespace volta::audit {
namespace {

using conformance::Database;
using conformance::Statement;
using conformance::StoreError;

// Every case id the parity suite defines: the same for every backend.
std::string parity_cases() {
  std::vector<std::string> ids;
  for (const conformance::SuiteCase& c : conformance::parity_suite("cpu", 1)) {
    ids.push_back(c.case_id);
  }
  return values_list(ids);
}

std::string parity_gate(std::string_view backend) {
  SuiteGateSpec spec;
  spec.selection = {.suite = "parity", .backend = backend};
  spec.expected = parity_cases();
  return suite_gate_sql(spec);
}

// A family of the training suite: every case it defines has a result, none unexpected or
// broken, and none skipped: an interop case skipped for want of its venv leaves the guarantee
// unverified, not passed.
std::string training_gate(std::string_view family) {
  std::vector<std::string> ids;
  for (const conformance::SuiteCase& c : conformance::training_suite("cpu", {})) {
    if (c.family == family) ids.push_back(c.case_id);
  }
  SuiteGateSpec spec;
  spec.selection = {.suite = conformance::kTrainingSuite, .families = {family}};
  spec.expected = values_list(ids);
  spec.extra_reasons = R"sql(
  UNION ALL
  SELECT 9, 'NOT VERIFIED', n || ' case(s) skipped for a missing precondition; first: ' ||
         first_skip
  FROM (SELECT count(*) AS n,
               (SELECT case_id || ': ' || message FROM judged WHERE outcome = 'SKIPPED'
                ORDER BY case_id LIMIT 1) AS first_skip
        FROM judged WHERE outcome = 'SKIPPED')
  WHERE n > 0)sql";
  return suite_gate_sql(spec);
}

std::vector<Gate> build_gates() {
  std::vector<Gate> all;
  all.push_back({"onnx-conformance",
                 "ONNX backend test data: every result as expected, corpus at its floor",
                 "every backend (cpu, reference) has results for at least the corpus floor of "
                 "tests; no unexpected result, no ERROR/CRASH/TIMEOUT, no expired expectation",
                 true, onnx_gate_sql()});
  all.push_back({"numerics-matrix", "numerics: per-family parity, NaN/Inf matrix, properties",
                 "every cell of the committed numerics policy on cpu and reference and every "
                 "property on cpu (drawn at least CI's 25 times) has a result; none unexpected, "
                 "none ERROR/CRASH/TIMEOUT",
                 true, numerics_gate_sql()});
  all.push_back({"parity-cpu-reference", "engine CPU matches the reference within tolerance",
                 "every case of the parity suite on cpu has a result; none unexpected, none "
                 "ERROR/CRASH/TIMEOUT, not all skipped",
                 true, parity_gate("cpu")});
  all.push_back({"parity-cuda-cpu", "CUDA matches engine CPU within tolerance",
                 "every case of the parity suite on cuda has a result and they are not all "
                 "skipped (a skip needs its declared precondition: no CUDA device means NOT "
                 "VERIFIED)",
                 false, parity_gate("cuda")});
  all.push_back({"gradients",
                 "every VJP rule: float64 gradients match finite differences, engine gradients "
                 "match them and are thread-invariant",
                 "every case of the gradients suite has a result on reference (finite "
                 "differences or the documented subgradient) and on cpu (f32 and f64 at 1, 2, 3, "
                 "4 and 8 threads); none unexpected, none ERROR/CRASH/TIMEOUT; the planted "
                 "wrong-VJP control caught",
                 true, gradients_gate_sql()});
  all.push_back({"determinism-100",
                 "one plan gives bit-identical outputs 100 times, in one process and across "
                 "processes; Strict refuses non-bit-exact kernels",
                 "replay:SUBJECT passes for every built-in model and every ONNX test the CPU "
                 "engine passes, each with >= 100 runs and >= 3 fresh processes; both strict-mode "
                 "cases pass; every replay control (timing, fresh process) caught its defect",
                 true, determinism_gate_sql(conformance::kReplayFamily)});
  all.push_back({"thread-invariance",
                 "CPU outputs are bit-identical for 1, 2, 3, 4 and 8 threads and every schedule "
                 "configuration",
                 "threads:SUBJECT passes for every subject over every committed configuration "
                 "file; the thread-count, chunk-size and task-order controls caught their defects",
                 true, determinism_gate_sql(conformance::kThreadInvarianceFamily)});
  all.push_back({"plan-stability",
                 "IR, schedule, allocation and plan hashes agree across runs, processes and "
                 "Debug vs optimized builds",
                 "plan:SUBJECT passes for every subject with >= 3 fresh processes, its "
                 "fingerprints agree across every run on one machine that recorded a Debug and an "
                 "optimized build; the address, fresh-process and optimizer controls caught "
                 "their defects",
                 true, determinism_gate_sql(conformance::kPlanStabilityFamily)});
  all.push_back({"batch-invariance",
                 "a sample's outputs are bit-identical alone and inside batches of 2, 3, 7, 16 "
                 "and 64",
                 "batch:SUBJECT passes for every built-in model at every batch size of the "
                 "policy; the batch-size-chunked control caught its defect",
                 true, determinism_gate_sql(conformance::kBatchInvarianceFamily)});
  all.push_back({"determinism-cuda",
                 "on CUDA, one plan gives bit-identical outputs 100 times, plans are stable and "
                 "a sample's outputs do not depend on its batch",
                 "replay:, plan: and batch:SUBJECT pass on cuda for every built-in model (>= 100 "
                 "runs, >= 3 fresh processes); no result unexpected or ERROR/CRASH/TIMEOUT; "
                 "without a CUDA device every "
                 "case is skipped and the gate NOT VERIFIED",
                 false, determinism_cuda_gate_sql()});
  all.push_back({"transformer-train-reload",
                 "tiny transformer trains, saves, reloads, infers: bit-exact across reloads, "
                 "thread counts, processes and resumes",
                 "every transformer-train-reload case of the training suite passes: the default "
                 "run's loss below its ceiling, logits equal after reload in fresh processes, "
                 "losses and checkpoints equal at 1, 2, 3, 4 and 8 threads and across "
                 "processes, resume (also after kill -9) equal to an uninterrupted run, ONNX "
                 "Runtime within 1e-5 of the exported model, plans within their memory budget; "
                 "none skipped",
                 true, training_gate(conformance::kTrainReloadFamily)});
  all.push_back({"checkpoint-round-trip", "a checkpoint reloads to the same bits",
                 "every checkpoint-round-trip case of the training suite passes: save(load(f)) "
                 "== f, the safetensors package reads the same arrays, damaged files refused "
                 "with their CK- code and left unchanged, an interrupted save keeps the previous "
                 "file; none skipped",
                 true, training_gate(conformance::kCheckpointFamily)});
  all.push_back({"perf-double-pass",
                 "no benchmark regresses in both perf passes (Mann-Whitney test and effect size)",
                 "every benchmark volta-perf lists has a verdict against a baseline of an earlier "
                 "commit on this machine, on the policy's samples, with its alpha and thresholds",
                 false, perf_gate_sql()});
  all.push_back({"docs-contract", "generated docs are in sync and every claim has evidence",
                 "the newest docs check of the commit (of committed docs, under --release) has "
                 "every claim and generated section PASS",
                 true, docs_gate_sql()});
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
                         bool release, std::string_view lists_commit) {
  Statement query = db.prepare(gate.sql);
  bind_if_named(query, ":commit", commit);
  bind_if_named(query, ":release", int64_t{release});
  bind_if_named(query, ":lists_commit", lists_commit);
  if (!query.step()) throw StoreError("gate '" + std::string(gate.name) + "' returned no row");
  GateResult result;
  result.gate = gate.name;
  result.status = parse_gate_status(gate.name, query.column_text(0));
  result.reason = query.column_text(1);
  result.blocker = release || gate.blocks_pr;
  return result;
}

std::vector<GateResult> evaluate_gates(const Database& db, std::string_view commit, bool release,
                                       std::string_view lists_commit) {
  std::vector<GateResult> results;
  for (const Gate& gate : gates()) {
    results.push_back(evaluate_gate(db, gate, commit, release, lists_commit));
  }
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
