#define BOOST_TEST_MODULE gates
#include "gates.h"

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <filesystem>

#include "commands.h"
#include "determinism_evidence.h"
#include "numerics_evidence.h"
#include "perf_evidence.h"
#include "store_builder.h"
#include "volta/conformance/onnx_corpus.h"

namespace volta::audit {
namespace {

using conformance::Outcome;
using conformance::Verdict;
using testing::kCommit;
using testing::kOtherCommit;
using testing::result;
using testing::RunEnd;
using testing::TempStore;
using testing::Where;

const Where kCuda{.suite = "parity", .backend = "cuda", .family = "elementwise"};
const Where kReplay{.suite = "determinism", .backend = "cpu", .family = "replay-100"};
const Where kThreads{.suite = "determinism", .backend = "cpu", .family = "thread-invariance"};
const Where kPlanStability{.suite = "determinism", .backend = "cpu", .family = "plan-stability"};
const Where kTrainReload{.suite = "model", .backend = "cpu", .family = "transformer-train-reload"};
const Where kCheckpoint{.suite = "model", .backend = "cpu", .family = "checkpoint-round-trip"};
const Where kOnnx{.suite = "onnx", .backend = "cpu", .family = "elementwise"};
const Where kNumerics{.suite = "numerics", .backend = "cpu", .family = "reduction"};

GateResult evaluate(TempStore& t, std::string_view gate, bool release = false,
                    std::string_view commit = kCommit) {
  const Gate* g = find_gate(gate);
  BOOST_REQUIRE_MESSAGE(g != nullptr, "no gate " << gate);
  return evaluate_gate(t.db(), *g, commit, release);
}

void check(const GateResult& r, GateStatus status, std::string_view reason) {
  BOOST_TEST(gate_status_name(r.status) == gate_status_name(status));
  BOOST_TEST(r.reason == reason);
}

BOOST_AUTO_TEST_CASE(gates_are_the_eleven_release_gates_in_table_order) {
  std::vector<std::string_view> names;
  std::vector<std::string_view> pr_blockers;
  for (const Gate& g : gates()) {
    names.push_back(g.name);
    if (g.blocks_pr) pr_blockers.push_back(g.name);
  }
  const std::vector<std::string_view> expected = {
      "onnx-conformance",      "numerics-matrix",
      "parity-cpu-reference",  "parity-cuda-cpu",
      "determinism-100",       "thread-invariance",
      "plan-stability",        "transformer-train-reload",
      "checkpoint-round-trip", "perf-double-pass",
      "docs-contract"};
  BOOST_TEST(names == expected, boost::test_tools::per_element());
  const std::vector<std::string_view> blockers = {
      "onnx-conformance",  "numerics-matrix", "parity-cpu-reference", "determinism-100",
      "thread-invariance", "plan-stability",  "docs-contract"};
  BOOST_TEST(pr_blockers == blockers, boost::test_tools::per_element());
  BOOST_TEST(find_gate("parity-cuda-cpu") == &gates()[3]);
  BOOST_TEST(find_gate("no-such-gate") == nullptr);
}

BOOST_AUTO_TEST_CASE(an_empty_store_verifies_nothing_and_says_what_to_run) {
  TempStore t;
  const std::vector<GateResult> results = evaluate_gates(t.db(), kCommit, false);
  BOOST_REQUIRE_EQUAL(results.size(), 11u);
  for (size_t i = 0; i < results.size(); ++i) {
    BOOST_TEST(results[i].gate == gates()[i].name);
    BOOST_TEST(gate_status_name(results[i].status) == "NOT VERIFIED");
  }
  const auto reason = [&results](std::string_view gate) {
    const auto it = std::ranges::find(results, gate, &GateResult::gate);
    return it == results.end() ? std::string("(no such gate)") : it->reason;
  };
  BOOST_TEST(reason("onnx-conformance") ==
             "no onnx results for commit 0123456789ab; run `volta-audit run onnx`");
  BOOST_TEST(reason("numerics-matrix") ==
             "no numerics results for commit 0123456789ab; run `volta-audit run numerics`");
  BOOST_TEST(reason("parity-cpu-reference") ==
             "no parity (backend cpu) results for commit 0123456789ab; run `volta-audit run "
             "parity --backend cpu`");
  BOOST_TEST(reason("parity-cuda-cpu") ==
             "no parity (backend cuda) results for commit 0123456789ab; run `volta-audit run "
             "parity --backend cuda`");
  BOOST_TEST(reason("determinism-100") ==
             "no determinism (families replay-100, strict-mode) results for commit "
             "0123456789ab; run `volta-audit run determinism`");
  BOOST_TEST(reason("thread-invariance") ==
             "no determinism (family thread-invariance) results for commit 0123456789ab; run "
             "`volta-audit run determinism --family thread-invariance`");
  BOOST_TEST(reason("plan-stability") ==
             "no determinism (family plan-stability) results for commit 0123456789ab; run "
             "`volta-audit run determinism --family plan-stability`");
  BOOST_TEST(reason("transformer-train-reload") ==
             "no model (family transformer-train-reload) results for commit 0123456789ab; run "
             "`volta-audit run model --family transformer-train-reload`");
  BOOST_TEST(reason("checkpoint-round-trip") ==
             "no model (family checkpoint-round-trip) results for commit 0123456789ab; run "
             "`volta-audit run model --family checkpoint-round-trip`");
  BOOST_TEST(reason("perf-double-pass") ==
             "no perf run for commit 0123456789ab; run `volta-audit perf`");
  BOOST_TEST(reason("docs-contract") ==
             "docs check has not run for commit 0123456789ab; run `volta-audit docs check`");
}

BOOST_AUTO_TEST_CASE(expected_results_pass_and_are_counted) {
  TempStore t;
  t.add_run({result("Add(shape=[2])", Outcome::Pass), result("Mul(shape=[2])", Outcome::Pass),
             result("Erf(shape=[2])", Outcome::FailNumeric, Verdict::Expected, "off by 3 ulp"),
             result("Gelu(shape=[2])", Outcome::Skipped, Verdict::Expected, "no kernel yet")});
  check(evaluate(t, "parity-cpu-reference"), GateStatus::Pass,
        "4 cases: 2 pass, 1 expected non-pass, 1 skipped");
}

BOOST_AUTO_TEST_CASE(an_unexpected_result_fails_and_names_the_first_case) {
  TempStore t;
  t.add_run(
      {result("Add(shape=[2])", Outcome::Pass),
       result("Sub(shape=[2])", Outcome::FailShape, Verdict::Unexpected, "got [3], want [2]"),
       result("Div(shape=[2])", Outcome::FailNumeric, Verdict::Unexpected, "max abs 0.5 at [1]")});
  check(evaluate(t, "parity-cpu-reference"), GateStatus::Fail,
        "2 unexpected result(s); first: Div(shape=[2]) FAIL_NUMERIC (unexpected): max abs 0.5 at "
        "[1]");
}

BOOST_AUTO_TEST_CASE(an_unexpected_pass_fails_the_gate) {
  TempStore t;
  t.add_run({result("Erf(shape=[2])", Outcome::Pass, Verdict::UnexpectedPass,
                    "expected FAIL_NUMERIC (#5): update the expectation")});
  check(evaluate(t, "parity-cpu-reference"), GateStatus::Fail,
        "1 unexpected result(s); first: Erf(shape=[2]) PASS (unexpected-pass): expected "
        "FAIL_NUMERIC (#5): update the expectation");
}

BOOST_AUTO_TEST_CASE(an_expired_expectation_fails_the_gate) {
  TempStore t;
  t.add_run({result("Erf(shape=[2])", Outcome::FailNumeric, Verdict::Expired,
                    "expectation expired on 2024-01-01")});
  check(evaluate(t, "parity-cpu-reference"), GateStatus::Fail,
        "1 unexpected result(s); first: Erf(shape=[2]) FAIL_NUMERIC (expired): expectation "
        "expired on 2024-01-01");
}

BOOST_AUTO_TEST_CASE(a_suite_whose_cases_are_all_skipped_is_not_verified) {
  TempStore t;
  t.add_run({result("Add(shape=[2])", Outcome::Skipped, Verdict::Expected, "no CUDA device", kCuda),
             result("Mul(shape=[2])", Outcome::Skipped, Verdict::Expected, "no CUDA device", kCuda),
             result("Add(shape=[2])", Outcome::Pass)});
  check(evaluate(t, "parity-cuda-cpu"), GateStatus::NotVerified,
        "all 2 parity (backend cuda) cases skipped: no CUDA device");
  check(evaluate(t, "parity-cpu-reference"), GateStatus::Pass,
        "1 cases: 1 pass, 0 expected non-pass, 0 skipped");
}

BOOST_AUTO_TEST_CASE(each_suite_gate_reads_only_its_suite_backend_and_family) {
  TempStore t;
  t.add_run({
      result("Replay(model=mlp)", Outcome::Pass, Verdict::Expected, "", kReplay),
      result("Threads(model=mlp)", Outcome::FailNumeric, Verdict::Unexpected, "bits differ at 3",
             kThreads),
      result("PlanHash(model=mlp)", Outcome::FailNumeric, Verdict::Unexpected, "hash moved",
             kPlanStability),
      result("TrainReload(steps=10)", Outcome::Pass, Verdict::Expected, "", kTrainReload),
      result("Checkpoint(model=tiny)", Outcome::Crash, Verdict::Unexpected, "SIGSEGV", kCheckpoint),
      result("test_abs", Outcome::Pass, Verdict::Expected, "", kOnnx),
      result("ReduceSum(axis=0)", Outcome::Pass, Verdict::Expected, "", kNumerics),
  });
  // The determinism gates also want their negative controls (determinism_gate_test).
  check(evaluate(t, "determinism-100"), GateStatus::NotVerified,
        "negative control control:replay:timing-dependent-kernel has no result: a check not "
        "shown able to fail is not evidence; run `volta-audit run determinism`");
  BOOST_TEST(evaluate(t, "thread-invariance")
                 .reason.starts_with("1 unexpected result(s); first: Threads(model=mlp) "
                                     "FAIL_NUMERIC (unexpected): bits differ at 3; "));
  BOOST_TEST(evaluate(t, "plan-stability")
                 .reason.starts_with("1 unexpected result(s); first: PlanHash(model=mlp) "
                                     "FAIL_NUMERIC (unexpected): hash moved; "));
  check(evaluate(t, "transformer-train-reload"), GateStatus::Pass,
        "1 cases: 1 pass, 0 expected non-pass, 0 skipped");
  check(evaluate(t, "checkpoint-round-trip"), GateStatus::Fail,
        "1 unexpected result(s); first: Checkpoint(model=tiny) CRASH (unexpected): SIGSEGV");
  // One onnx test is far below the corpus floor (onnx_gate_test covers that gate).
  BOOST_TEST(evaluate(t, "onnx-conformance").reason.starts_with("backend cpu has results for 1 "));
  // One numerics row is far from the policy's cells: the rest are MISSING.
  const GateResult numerics = evaluate(t, "numerics-matrix");
  BOOST_TEST(gate_status_name(numerics.status) == "FAIL");
  BOOST_TEST(
      numerics.reason.find(" policy cell(s) MISSING (a rule without a result); first: cpu ") !=
      std::string::npos);
  BOOST_TEST(evaluate(t, "parity-cpu-reference").reason.starts_with("no parity (backend cpu)"));
}

BOOST_AUTO_TEST_CASE(the_newest_complete_run_with_a_result_wins_per_case) {
  TempStore t;
  t.add_run({result("Add(shape=[2])", Outcome::FailNumeric, Verdict::Unexpected, "old bug"),
             result("Mul(shape=[2])", Outcome::Pass)});
  // A rerun of one case supersedes its old failure; the other case keeps its older result.
  t.add_run({result("Add(shape=[2])", Outcome::Pass)});
  check(evaluate(t, "parity-cpu-reference"), GateStatus::Pass,
        "2 cases: 2 pass, 0 expected non-pass, 0 skipped");
  t.add_run({result("Mul(shape=[2])", Outcome::Error, Verdict::Unexpected, "threw")});
  check(evaluate(t, "parity-cpu-reference"), GateStatus::Fail,
        "1 unexpected result(s); first: Mul(shape=[2]) ERROR (unexpected): threw");
}

BOOST_AUTO_TEST_CASE(newest_means_latest_start_not_highest_id) {
  TempStore t;
  // A merged shard can give an older run a higher id.
  t.add_run({result("Add(shape=[2])", Outcome::Pass)}, {.started_at = "2030-01-02T00:00:00Z"});
  t.add_run({result("Add(shape=[2])", Outcome::Timeout, Verdict::Unexpected, "ran past 60 s")},
            {.started_at = "2030-01-01T00:00:00Z"});
  check(evaluate(t, "parity-cpu-reference"), GateStatus::Pass,
        "1 cases: 1 pass, 0 expected non-pass, 0 skipped");
}

BOOST_AUTO_TEST_CASE(incomplete_and_running_runs_are_not_evidence) {
  TempStore t;
  t.add_run({result("Add(shape=[2])", Outcome::Pass)});
  t.add_run({result("Add(shape=[2])", Outcome::Crash, Verdict::Unexpected, "killed")},
            {.end = RunEnd::Incomplete});
  t.add_run({result("Add(shape=[2])", Outcome::Error, Verdict::Unexpected, "half done")},
            {.end = RunEnd::Running});
  check(evaluate(t, "parity-cpu-reference"), GateStatus::Pass,
        "1 cases: 1 pass, 0 expected non-pass, 0 skipped");
}

BOOST_AUTO_TEST_CASE(other_commits_are_not_evidence) {
  TempStore t;
  t.add_run({result("Add(shape=[2])", Outcome::Pass)}, {.commit = kOtherCommit});
  check(evaluate(t, "parity-cpu-reference"), GateStatus::NotVerified,
        "no parity (backend cpu) results for commit 0123456789ab; run `volta-audit run parity "
        "--backend cpu`");
  check(evaluate(t, "parity-cpu-reference", false, kOtherCommit), GateStatus::Pass,
        "1 cases: 1 pass, 0 expected non-pass, 0 skipped");
}

BOOST_AUTO_TEST_CASE(release_ignores_runs_of_dirty_trees) {
  TempStore t;
  t.add_run({result("Add(shape=[2])", Outcome::Pass)}, {.dirty = true});
  check(evaluate(t, "parity-cpu-reference", false), GateStatus::Pass,
        "1 cases: 1 pass, 0 expected non-pass, 0 skipped");
  check(evaluate(t, "parity-cpu-reference", true), GateStatus::NotVerified,
        "only dirty-tree parity (backend cpu) results for commit 0123456789ab, which are not "
        "release evidence; run `volta-audit run parity --backend cpu` from a clean checkout");

  // With a clean run present, release judges it and skips the newer dirty one.
  t.add_run({result("Add(shape=[2])", Outcome::FailNumeric, Verdict::Unexpected, "clean bug")},
            {.started_at = "2000-01-01T00:00:00Z"});
  check(evaluate(t, "parity-cpu-reference", true), GateStatus::Fail,
        "1 unexpected result(s); first: Add(shape=[2]) FAIL_NUMERIC (unexpected): clean bug");
  check(evaluate(t, "parity-cpu-reference", false), GateStatus::Pass,
        "1 cases: 1 pass, 0 expected non-pass, 0 skipped");
}

BOOST_AUTO_TEST_CASE(release_makes_every_gate_a_blocker) {
  TempStore t;
  for (const GateResult& r : evaluate_gates(t.db(), kCommit, true)) {
    BOOST_TEST_CONTEXT(r.gate) { BOOST_TEST(r.blocker); }
  }
  for (const GateResult& r : evaluate_gates(t.db(), kCommit, false)) {
    BOOST_TEST_CONTEXT(r.gate) {
      BOOST_TEST(r.blocker == (r.gate == "onnx-conformance" || r.gate == "numerics-matrix" ||
                               r.gate == "parity-cpu-reference" || r.gate == "determinism-100" ||
                               r.gate == "thread-invariance" || r.gate == "plan-stability" ||
                               r.gate == "docs-contract"));
    }
  }
}

// --- perf-double-pass ---

using testing::add_perf_run;
using testing::verdict;

BOOST_AUTO_TEST_CASE(perf_without_a_perf_run_is_not_verified) {
  TempStore t;
  // A parity run of the commit is no perf evidence, nor is an incomplete perf run.
  t.add_run({result("Add(shape=[2])", Outcome::Pass)});
  const int64_t killed = add_perf_run(t, {.complete = false});
  record_perf_verdicts(t.db(), killed, std::vector{verdict("gemm", PerfVerdict::Unchanged)});
  check(evaluate(t, "perf-double-pass"), GateStatus::NotVerified,
        "no perf run for commit 0123456789ab; run `volta-audit perf`");
  // Under --release a dirty-tree run is not evidence, and the reason says so.
  const int64_t dirty = add_perf_run(t, {.dirty = true});
  record_perf_verdicts(t.db(), dirty, std::vector{verdict("gemm", PerfVerdict::Unchanged)});
  check(evaluate(t, "perf-double-pass", true), GateStatus::NotVerified,
        "only dirty-tree perf runs for commit 0123456789ab, which are not release evidence; run "
        "`volta-audit perf` from a clean checkout");
  BOOST_TEST(gate_status_name(evaluate(t, "perf-double-pass").status) == "PASS");
}

BOOST_AUTO_TEST_CASE(perf_with_only_candidate_baselines_is_not_verified) {
  TempStore t;
  const int64_t run = add_perf_run(t);
  record_perf_verdicts(t.db(), run,
                       std::vector{verdict("a", PerfVerdict::New), verdict("b", PerfVerdict::New)});
  check(evaluate(t, "perf-double-pass"), GateStatus::NotVerified,
        "perf run " + std::to_string(run) +
            " only recorded candidate baselines (2 benchmark(s) new on this machine), nothing "
            "was compared; run `volta-audit perf` again to compare with them");
  const int64_t empty = add_perf_run(t);
  check(evaluate(t, "perf-double-pass"), GateStatus::NotVerified,
        "perf run " + std::to_string(empty) + " recorded no verdicts");
}

BOOST_AUTO_TEST_CASE(perf_regressions_fail_listing_both_passes) {
  TempStore t;
  const int64_t run = add_perf_run(t);
  record_perf_verdicts(
      t.db(), run,
      std::vector{verdict("softmax", PerfVerdict::Unchanged, 0.01, 0.4),
                  verdict("gemm/256", PerfVerdict::Regression, 0.213, 4.1e-5, 0.198, 1.5e-6),
                  verdict("conv", PerfVerdict::Noise, 0.09, 0.002, 0.01, 0.6),
                  verdict("attention", PerfVerdict::Regression, 0.07, 0.003, 0.065, 0.0004),
                  verdict("layernorm", PerfVerdict::Error, std::nullopt, std::nullopt, std::nullopt,
                          std::nullopt, "crashed")});
  check(evaluate(t, "perf-double-pass"), GateStatus::Fail,
        "2 regression(s) seen in both passes of perf run " + std::to_string(run) +
            ": attention +7.0% (p=0.003) in pass 1, +6.5% (p=0.0004) in pass 2; gemm/256 +21.3% "
            "(p=4.1e-05) in pass 1, +19.8% (p=1.5e-06) in pass 2");
}

BOOST_AUTO_TEST_CASE(perf_errors_are_not_verified_and_name_the_first) {
  TempStore t;
  const int64_t run = add_perf_run(t);
  record_perf_verdicts(t.db(), run,
                       std::vector{verdict("softmax", PerfVerdict::Unchanged, 0.01, 0.4),
                                   verdict("model/b", PerfVerdict::Error, std::nullopt,
                                           std::nullopt, std::nullopt, std::nullopt, "no data"),
                                   verdict("model/a", PerfVerdict::Error, std::nullopt,
                                           std::nullopt, std::nullopt, std::nullopt, "crashed")});
  check(evaluate(t, "perf-double-pass"), GateStatus::NotVerified,
        "2 benchmark(s) errored in perf run " + std::to_string(run) +
            ", so were not compared; first: model/a: crashed");
}

BOOST_AUTO_TEST_CASE(perf_passes_counting_unchanged_noise_improvements_and_new) {
  TempStore t;
  const int64_t run = add_perf_run(t);
  record_perf_verdicts(t.db(), run,
                       std::vector{verdict("a", PerfVerdict::Unchanged, 0.01, 0.4),
                                   verdict("b", PerfVerdict::Unchanged, -0.02, 0.3),
                                   verdict("c", PerfVerdict::Noise, 0.09, 0.002, 0.01, 0.6),
                                   verdict("d", PerfVerdict::Improvement, -0.2, 4e-5, -0.19, 2e-6),
                                   verdict("e", PerfVerdict::New)});
  check(evaluate(t, "perf-double-pass"), GateStatus::Pass,
        "4 benchmark(s) compared with their baseline in perf run " + std::to_string(run) +
            ": 2 unchanged, 1 noise (suspect in pass 1, not repeated in pass 2), 1 "
            "improvement(s); 1 new (candidate baselines recorded)");
}

BOOST_AUTO_TEST_CASE(perf_judges_the_newest_complete_perf_run_of_the_commit) {
  TempStore t;
  const int64_t old_run = add_perf_run(t, {.started_at = "2030-01-01T00:00:00Z"});
  record_perf_verdicts(t.db(), old_run,
                       std::vector{verdict("gemm", PerfVerdict::Regression, 0.2, 1e-4, 0.2, 1e-5)});
  const int64_t new_run = add_perf_run(t, {.started_at = "2030-01-02T00:00:00Z"});
  record_perf_verdicts(t.db(), new_run, std::vector{verdict("gemm", PerfVerdict::Unchanged)});
  BOOST_TEST(gate_status_name(evaluate(t, "perf-double-pass").status) == "PASS");
  // Another commit's regression is not this commit's.
  const int64_t other = add_perf_run(t, {.commit = kOtherCommit});
  record_perf_verdicts(t.db(), other,
                       std::vector{verdict("gemm", PerfVerdict::Regression, 0.2, 1e-4, 0.2, 1e-5)});
  BOOST_TEST(gate_status_name(evaluate(t, "perf-double-pass").status) == "PASS");
  BOOST_TEST(gate_status_name(evaluate(t, "perf-double-pass", false, kOtherCommit).status) ==
             "FAIL");
}

// --- docs-contract ---

BOOST_AUTO_TEST_CASE(docs_contract_reads_the_newest_check_of_the_commit) {
  TempStore t;
  t.add_claim("section:op-backend-matrix", "governance/ops.md", 3, "PASS", "in sync",
              "2030-01-01T00:00:00Z");
  t.add_claim("parity-claim", "README.md", 40, "FAIL", "gate parity-cpu-reference: FAIL",
              "2030-01-01T00:00:00Z");
  t.add_claim("cuda-claim", "README.md", 12, "NOT VERIFIED", "no evidence consulted",
              "2030-01-01T00:00:00Z");
  check(evaluate(t, "docs-contract"), GateStatus::Fail,
        "2 of 3 claims and sections do not pass; first: cuda-claim at README.md:12 (NOT "
        "VERIFIED): no evidence consulted");

  t.add_claim("section:op-backend-matrix", "governance/ops.md", 3, "PASS", "in sync",
              "2030-01-02T00:00:00Z");
  t.add_claim("parity-claim", "README.md", 40, "PASS", "gate parity-cpu-reference: PASS",
              "2030-01-02T00:00:00Z");
  t.add_claim("stale", "README.md", 1, "FAIL", "another commit", "2030-01-03T00:00:00Z",
              kOtherCommit);
  check(evaluate(t, "docs-contract"), GateStatus::Pass, "2 claims and sections verified");
}

// --- blockers, the table, the record ---

std::vector<GateResult> fixed_results() {
  return {
      {"parity-cpu-reference", GateStatus::Pass,
       "12 cases: 12 pass, 0 expected non-pass, 0 skipped", true},
      {"parity-cuda-cpu", GateStatus::NotVerified,
       "all 12 parity (backend cuda) cases skipped: "
       "no CUDA device",
       false},
      {"docs-contract", GateStatus::Fail, "1 of 4 claims and sections do not pass", true},
  };
}

BOOST_AUTO_TEST_CASE(the_gate_table_aligns_gate_status_blocker_and_reason) {
  const std::vector<GateResult> results = fixed_results();
  BOOST_TEST(format_gate_table(results) ==
             "GATE                  STATUS        BLOCKER  REASON\n"
             "parity-cpu-reference  PASS          yes      12 cases: 12 pass, 0 expected "
             "non-pass, 0 skipped\n"
             "parity-cuda-cpu       NOT VERIFIED  no       all 12 parity (backend cuda) cases "
             "skipped: no CUDA device\n"
             "docs-contract         FAIL          yes      1 of 4 claims and sections do not "
             "pass\n");
}

BOOST_AUTO_TEST_CASE(only_blockers_decide_the_exit_status) {
  std::vector<GateResult> results = fixed_results();
  BOOST_TEST(!all_blockers_pass(results));
  BOOST_TEST(gate_verdict_line(results) == "gate: FAIL (1 of 2 blockers do not pass)");

  results[2].status = GateStatus::Pass;  // a NOT VERIFIED non-blocker does not block
  BOOST_TEST(all_blockers_pass(results));
  BOOST_TEST(gate_verdict_line(results) == "gate: PASS (all 2 blockers pass)");

  results[1].blocker = true;  // as under --release: NOT VERIFIED is never PASS
  BOOST_TEST(!all_blockers_pass(results));
  BOOST_TEST(gate_verdict_line(results) == "gate: FAIL (1 of 3 blockers do not pass)");
}

BOOST_AUTO_TEST_CASE(gate_results_are_appended_to_the_store) {
  TempStore t;
  const std::vector<GateResult> results = fixed_results();
  record_gate_results(t.db(), kCommit, results);
  record_gate_results(t.db(), kCommit, results);
  conformance::Statement rows = t.db().prepare(
      "SELECT commit_sha, gate, blocker, status, reason, evaluated_at FROM gate_result "
      "ORDER BY id");
  int count = 0;
  while (rows.step()) {
    const GateResult& r = results[static_cast<size_t>(count++ % 3)];
    BOOST_TEST(rows.column_text(0) == kCommit);
    BOOST_TEST(rows.column_text(1) == r.gate);
    BOOST_TEST(rows.column_int(2) == int64_t{r.blocker});
    BOOST_TEST(rows.column_text(3) == gate_status_name(r.status));
    BOOST_TEST(rows.column_text(4) == r.reason);
    BOOST_TEST(rows.column_text(5).size() == std::string_view("2030-01-01T00:00:00Z").size());
  }
  BOOST_TEST(count == 6);
}

// --- the command ---

int run_gate_command(std::vector<std::string_view> words) {
  Args args(words);
  return gate_command(args);
}

int64_t gate_rows(TempStore& t) {
  conformance::Statement count = t.db().prepare("SELECT count(*) FROM gate_result");
  count.step();
  return count.column_int(0);
}

BOOST_AUTO_TEST_CASE(gate_command_refuses_to_create_a_store) {
  TempStore t;
  const std::string missing = (t.dir() / "missing.db").string();
  try {
    run_gate_command({"--commit", kCommit, "--db", missing});
    BOOST_FAIL("gate ran without a store");
  } catch (const conformance::StoreError& e) {
    BOOST_TEST(std::string(e.what()) == "results database '" + missing +
                                            "' does not exist: run `volta-audit run` first, or "
                                            "pass --db PATH");
  }
  BOOST_TEST(!std::filesystem::exists(missing));
  BOOST_CHECK_THROW(run_gate_command({"--db", t.path(), "extra"}), UsageError);
}

// A whole ONNX corpus passing on `backend`: the onnx-conformance gate's evidence.
void add_passing_onnx_corpus(TempStore& t, const std::string& backend) {
  std::vector<conformance::ResultRow> rows;
  const Where where{.suite = "onnx", .backend = backend, .family = "elementwise"};
  for (int64_t n = 0; n < conformance::kOnnxCorpusFloor; ++n) {
    rows.push_back(
        result("node/test_" + std::to_string(n), Outcome::Pass, Verdict::Expected, "", where));
  }
  t.add_run(rows);
}

BOOST_AUTO_TEST_CASE(gate_command_exits_zero_only_when_every_blocker_passes) {
  TempStore t;
  t.add_run({result("Add(shape=[2])", Outcome::Pass)});
  add_passing_onnx_corpus(t, "cpu");
  add_passing_onnx_corpus(t, "reference");
  testing::add_passing_numerics_matrix(t);
  testing::add_passing_determinism_suite(t);
  BOOST_TEST(run_gate_command({"--commit", kCommit, "--db", t.path()}) == 1);  // docs not checked
  BOOST_TEST(gate_rows(t) == 11);

  t.add_claim("parity-claim", "README.md", 4, "PASS", "gate parity-cpu-reference: PASS",
              "2030-01-01T00:00:00Z");
  BOOST_TEST(run_gate_command({"--commit", kCommit, "--db", t.path()}) == 0);
  BOOST_TEST(gate_rows(t) == 22);
  // Under --release the five gates without evidence block too.
  BOOST_TEST(run_gate_command({"--release", "--commit", kCommit, "--db", t.path()}) == 1);
  BOOST_TEST(gate_rows(t) == 33);
}

}  // namespace
}  // namespace volta::audit
