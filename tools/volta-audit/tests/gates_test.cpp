#define BOOST_TEST_MODULE gates
// The gates in general and the suite gate they share, shown through parity-cpu-reference: what
// counts as evidence (usable runs of the commit: complete, committed inputs, clean under
// --release), what complete evidence is (every case of the suite's list), and each way partial,
// stale, edited or planted evidence is refused. The other gates have their own tests
// (numerics_gate_test, onnx_gate_test, determinism_gate_test, perf_gate_test).
#include "gates.h"

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <filesystem>

#include "commands.h"
#include "determinism_evidence.h"
#include "gate_testing.h"
#include "gradients_evidence.h"
#include "numerics_evidence.h"
#include "onnx_evidence.h"
#include "queries.h"
#include "store_builder.h"
#include "training_evidence.h"

namespace volta::audit {
namespace {

using conformance::Outcome;
using conformance::ResultRow;
using conformance::RunInput;
using conformance::Verdict;
using testing::check;
using testing::evaluate;
using testing::kCommit;
using testing::kOtherCommit;
using testing::parity_rows;
using testing::result;
using testing::RunEnd;
using testing::TempStore;
using testing::Where;
using testing::with;
using testing::without;

const Where kTrainReload{
    .suite = "training", .backend = "cpu", .family = "transformer-train-reload"};

// Functions, not constants: the parity suite's list needs the op table, which another
// translation unit initialises at its own time.
size_t parity_count() { return parity_rows().size(); }

// "N cases: P pass, X expected non-pass, S skipped" for the parity suite.
std::string parity_pass(size_t pass, size_t non_pass = 0, size_t skipped = 0) {
  return std::to_string(parity_count()) + " cases: " + std::to_string(pass) + " pass, " +
         std::to_string(non_pass) + " expected non-pass, " + std::to_string(skipped) + " skipped";
}

// A parity row of case `id` (one of the suite's) with the given outcome.
ResultRow parity(const std::string& id, Outcome outcome, Verdict verdict = Verdict::Expected,
                 std::string message = "") {
  ResultRow r = result(id, outcome, verdict, std::move(message));
  r.expectation = verdict == Verdict::Expected && outcome != Outcome::Pass ? id : "";
  return r;
}

// Two case ids of the suite, in the order reasons name them.
std::string first_case() {
  std::vector<ResultRow> rows = parity_rows();
  std::ranges::sort(rows, {}, &ResultRow::case_id);
  return rows[0].case_id;
}
std::string second_case() {
  std::vector<ResultRow> rows = parity_rows();
  std::ranges::sort(rows, {}, &ResultRow::case_id);
  return rows[1].case_id;
}

BOOST_AUTO_TEST_CASE(gates_are_the_fifteen_release_gates_in_table_order) {
  std::vector<std::string_view> names;
  std::vector<std::string_view> pr_blockers;
  for (const Gate& g : gates()) {
    names.push_back(g.name);
    if (g.blocks_pr) pr_blockers.push_back(g.name);
    BOOST_TEST(!g.description.empty());
    BOOST_TEST(!g.evidence.empty(), g.name << " declares no complete evidence");
  }
  const std::vector<std::string_view> expected = {
      "onnx-conformance",      "onnx-current-conformance", "numerics-matrix",
      "parity-cpu-reference",  "parity-cuda-cpu",          "gradients",
      "determinism-100",       "thread-invariance",        "plan-stability",
      "batch-invariance",      "determinism-cuda",         "transformer-train-reload",
      "checkpoint-round-trip", "perf-double-pass",         "docs-contract"};
  BOOST_TEST(names == expected, boost::test_tools::per_element());
  const std::vector<std::string_view> blockers = {"onnx-conformance",
                                                  "onnx-current-conformance",
                                                  "numerics-matrix",
                                                  "parity-cpu-reference",
                                                  "gradients",
                                                  "determinism-100",
                                                  "thread-invariance",
                                                  "plan-stability",
                                                  "batch-invariance",
                                                  "transformer-train-reload",
                                                  "checkpoint-round-trip",
                                                  "docs-contract"};
  BOOST_TEST(pr_blockers == blockers, boost::test_tools::per_element());
  BOOST_TEST(find_gate("parity-cuda-cpu") == &gates()[4]);
  BOOST_TEST(find_gate("no-such-gate") == nullptr);
}

BOOST_AUTO_TEST_CASE(an_empty_store_verifies_nothing_and_says_what_to_run) {
  TempStore t;
  const std::vector<GateResult> results = evaluate_gates(t.db(), kCommit, false, kCommit);
  BOOST_REQUIRE_EQUAL(results.size(), gates().size());
  for (size_t i = 0; i < results.size(); ++i) {
    BOOST_TEST(results[i].gate == gates()[i].name);
    BOOST_TEST(gate_status_name(results[i].status) == "NOT VERIFIED");
  }
  const auto reason = [&results](std::string_view gate) {
    const auto it = std::ranges::find(results, gate, &GateResult::gate);
    return it == results.end() ? std::string("(no such gate)") : it->reason;
  };
  BOOST_TEST(reason("onnx-conformance") ==
             "no usable onnx results for commit 0123456789ab; run `volta-audit run onnx`");
  BOOST_TEST(reason("numerics-matrix") ==
             "no usable numerics results for commit 0123456789ab; run `volta-audit run numerics`");
  BOOST_TEST(reason("parity-cpu-reference") ==
             "no usable parity (backend cpu) results for commit 0123456789ab; run `volta-audit "
             "run parity --backend cpu`");
  BOOST_TEST(reason("parity-cuda-cpu") ==
             "no usable parity (backend cuda) results for commit 0123456789ab; run `volta-audit "
             "run parity --backend cuda`");
  BOOST_TEST(reason("gradients") ==
             "no usable gradients results for commit 0123456789ab; run `volta-audit run "
             "gradients`");
  BOOST_TEST(
      reason("determinism-100") ==
      "no usable determinism (backend cpu) (families replay-100, strict-mode) results for commit "
      "0123456789ab; run `volta-audit run determinism --backend cpu`");
  BOOST_TEST(reason("thread-invariance") ==
             "no usable determinism (backend cpu) (family thread-invariance) results for commit "
             "0123456789ab; "
             "run `volta-audit run determinism --backend cpu --family thread-invariance`");
  BOOST_TEST(reason("plan-stability") ==
             "no usable determinism (backend cpu) (family plan-stability) results for commit "
             "0123456789ab; run "
             "`volta-audit run determinism --backend cpu --family plan-stability`");
  BOOST_TEST(reason("batch-invariance") ==
             "no usable determinism (backend cpu) (family batch-invariance) results for commit "
             "0123456789ab; "
             "run `volta-audit run determinism --backend cpu --family batch-invariance`");
  BOOST_TEST(reason("transformer-train-reload") ==
             "no usable training (family transformer-train-reload) results for commit "
             "0123456789ab; run `volta-audit run training --family transformer-train-reload`");
  BOOST_TEST(reason("checkpoint-round-trip") ==
             "no usable training (family checkpoint-round-trip) results for commit "
             "0123456789ab; run `volta-audit run training --family checkpoint-round-trip`");
  BOOST_TEST(reason("perf-double-pass") ==
             "no usable perf run for commit 0123456789ab; run `volta-audit perf`");
  BOOST_TEST(reason("docs-contract") ==
             "docs check has not run for commit 0123456789ab; run `volta-audit docs check`");
}

// --- the suite gate: results ---

BOOST_AUTO_TEST_CASE(complete_evidence_passes_and_is_counted) {
  TempStore t;
  t.add_run(with(parity_rows(),
                 {parity(first_case(), Outcome::FailNumeric, Verdict::Expected, "off by 3 ulp"),
                  parity(second_case(), Outcome::Skipped, Verdict::Expected, "no kernel yet")}));
  check(evaluate(t, "parity-cpu-reference"), GateStatus::Pass,
        parity_pass(parity_count() - 2, 1, 1));
}

BOOST_AUTO_TEST_CASE(an_unexpected_result_fails_and_names_the_first_case) {
  TempStore t;
  t.add_run(
      with(parity_rows(),
           {parity(second_case(), Outcome::FailShape, Verdict::Unexpected, "got [3], want [2]"),
            parity(first_case(), Outcome::FailNumeric, Verdict::Unexpected, "max abs 0.5")}));
  check(
      evaluate(t, "parity-cpu-reference"), GateStatus::Fail,
      "2 unexpected result(s); first: " + first_case() + " FAIL_NUMERIC (unexpected): max abs 0.5");
}

BOOST_AUTO_TEST_CASE(an_unexpected_pass_and_an_expired_expectation_fail_the_gate) {
  TempStore t;
  t.add_run(with(parity_rows(), {parity(first_case(), Outcome::Pass, Verdict::UnexpectedPass,
                                        "expected FAIL_NUMERIC (#5): update the expectation")}));
  check(evaluate(t, "parity-cpu-reference"), GateStatus::Fail,
        "1 unexpected result(s); first: " + first_case() +
            " PASS (unexpected-pass): expected FAIL_NUMERIC (#5): update the expectation");
  t.add_run({parity(first_case(), Outcome::FailNumeric, Verdict::Expired, "expired on 2024-01-01")},
            {.machine = "other-box / Test CPU"});
  check(evaluate(t, "parity-cpu-reference"), GateStatus::Fail,
        "1 unexpected result(s); first: " + first_case() +
            " FAIL_NUMERIC (expired): expired on 2024-01-01");
}

// #6: an expectation may excuse a wrong answer, never a harness that broke.
BOOST_AUTO_TEST_CASE(expected_error_crash_and_timeout_still_fail) {
  for (Outcome broken : {Outcome::Error, Outcome::Crash, Outcome::Timeout}) {
    BOOST_TEST_CONTEXT(conformance::outcome_name(broken)) {
      TempStore t;
      t.add_run(with(parity_rows(), {parity(first_case(), broken, Verdict::Expected, "it broke")}));
      check(evaluate(t, "parity-cpu-reference"), GateStatus::Fail,
            "1 ERROR/CRASH/TIMEOUT result(s), which no expectation excuses; first: " +
                first_case() + " " + std::string(conformance::outcome_name(broken)) + ": it broke");
    }
  }
}

// #12: a skip needs a reason: an expectation, or the precondition its case declared.
BOOST_AUTO_TEST_CASE(a_skip_without_an_expectation_or_precondition_is_unexpected) {
  TempStore t;
  ResultRow skipped = parity(first_case(), Outcome::Skipped, Verdict::Expected, "not today");
  skipped.expectation = "";  // as older volta-audits judged a bare skip
  t.add_run(with(parity_rows(), {skipped}));
  check(evaluate(t, "parity-cpu-reference"), GateStatus::Fail,
        "1 unexpected result(s); first: " + first_case() +
            " SKIPPED (skipped without an expectation or a declared precondition): not today");
  skipped.precondition = std::string(conformance::kCudaPrecondition);
  t.add_run({skipped});
  check(evaluate(t, "parity-cpu-reference"), GateStatus::Pass,
        parity_pass(parity_count() - 1, 0, 1));
}

BOOST_AUTO_TEST_CASE(a_suite_whose_cases_are_all_skipped_is_not_verified) {
  TempStore t;
  t.add_run(parity_rows("cuda"));
  t.add_run(parity_rows("cpu"));
  check(evaluate(t, "parity-cuda-cpu"), GateStatus::NotVerified,
        "all " + std::to_string(parity_count()) +
            " parity (backend cuda) cases skipped: no CUDA backend in this build");
  check(evaluate(t, "parity-cpu-reference"), GateStatus::Pass, parity_pass(parity_count()));
}

// --- the suite gate: completeness (#4) ---

BOOST_AUTO_TEST_CASE(a_case_without_a_result_is_not_verified) {
  TempStore t;
  t.add_run(without(parity_rows(), second_case()));
  check(evaluate(t, "parity-cpu-reference"), GateStatus::NotVerified,
        "1 of the " + std::to_string(parity_count()) +
            " cases the gate needs have no result; "
            "first: " +
            second_case() + "; run `volta-audit run parity --backend cpu`");
}

BOOST_AUTO_TEST_CASE(one_passing_row_is_not_every_op) {
  TempStore t;
  t.add_run({parity(first_case(), Outcome::Pass)});
  check(evaluate(t, "parity-cpu-reference"), GateStatus::NotVerified,
        std::to_string(parity_count() - 1) + " of the " + std::to_string(parity_count()) +
            " cases the gate needs have no result; first: " + second_case() +
            "; run `volta-audit run parity --backend cpu`");
}

BOOST_AUTO_TEST_CASE(shards_and_reruns_add_up_case_by_case) {
  TempStore t;
  std::vector<ResultRow> all = parity_rows();
  const std::vector<ResultRow> half(all.begin(), all.begin() + all.size() / 2);
  const std::vector<ResultRow> rest(all.begin() + all.size() / 2, all.end());
  t.add_run(half);
  t.add_run(rest);
  check(evaluate(t, "parity-cpu-reference"), GateStatus::Pass, parity_pass(parity_count()));
}

BOOST_AUTO_TEST_CASE(each_suite_gate_reads_only_its_suite_backend_and_family) {
  TempStore t;
  t.add_run(parity_rows("cpu"));
  t.add_run({result("TrainReload(steps=10)", Outcome::Pass, Verdict::Expected, "", kTrainReload)});
  check(evaluate(t, "parity-cpu-reference"), GateStatus::Pass, parity_pass(parity_count()));
  BOOST_TEST(evaluate(t, "parity-cuda-cpu").reason.starts_with("no usable parity (backend cuda)"));
  BOOST_TEST(evaluate(t, "determinism-100").reason.starts_with("no usable determinism"),
             evaluate(t, "determinism-100").reason);
  BOOST_TEST(evaluate(t, "onnx-conformance").reason.starts_with("no usable onnx results"));
}

BOOST_AUTO_TEST_CASE(onnx_rows_of_the_cuda_backend_are_not_judged_by_onnx_conformance) {
  TempStore t;
  const Where cuda_onnx{.suite = "onnx", .backend = "cuda", .family = "movement"};
  t.add_run({result("node/test_identity", Outcome::Unsupported, Verdict::Unexpected,
                    "the CUDA backend has no Identity kernel", cuda_onnx)});
  BOOST_TEST(evaluate(t, "onnx-conformance").reason.starts_with("no usable onnx results"),
             evaluate(t, "onnx-conformance").reason);
}

// --- the suite gate: which runs are evidence ---

BOOST_AUTO_TEST_CASE(the_newest_usable_run_with_a_result_wins_per_case) {
  TempStore t;
  t.add_run(with(parity_rows(),
                 {parity(first_case(), Outcome::FailNumeric, Verdict::Unexpected, "old bug")}));
  // A rerun of one case supersedes its old failure; the other cases keep their older result.
  // (On another machine: on one machine an outcome that changes between runs is FLAKY.)
  t.add_run({parity(first_case(), Outcome::Pass)}, {.machine = "other-box / Test CPU"});
  check(evaluate(t, "parity-cpu-reference"), GateStatus::Pass, parity_pass(parity_count()));
  t.add_run({parity(second_case(), Outcome::FailNumeric, Verdict::Unexpected, "new bug")},
            {.machine = "other-box / Test CPU"});
  check(evaluate(t, "parity-cpu-reference"), GateStatus::Fail,
        "1 unexpected result(s); first: " + second_case() + " FAIL_NUMERIC (unexpected): new bug");
}

BOOST_AUTO_TEST_CASE(newest_means_latest_start_not_highest_id) {
  TempStore t;
  // A merged shard can give an older run a higher id.
  t.add_run(parity_rows(), {.started_at = "2030-01-02T00:00:00Z"});
  t.add_run({parity(first_case(), Outcome::Timeout, Verdict::Unexpected, "ran past 60 s")},
            {.started_at = "2030-01-01T00:00:00Z", .machine = "other-box / Test CPU"});
  check(evaluate(t, "parity-cpu-reference"), GateStatus::Pass, parity_pass(parity_count()));
}

// FLAKY: one case, one commit, one machine and build type, two outcomes. The gate fails naming
// both, and `query flaky` lists the case; other machines, build types and dirty trees do not
// count (their code or hardware may differ).
BOOST_AUTO_TEST_CASE(an_outcome_that_changes_between_runs_on_one_machine_is_flaky) {
  TempStore t;
  const int64_t first = t.add_run(parity_rows());
  t.add_run({parity(first_case(), Outcome::Pass)}, {.machine = "other-box / Test CPU"});
  t.add_run({parity(first_case(), Outcome::Pass)}, {.build_type = "Debug"});
  t.add_run({parity(first_case(), Outcome::FailNumeric, Verdict::Expected, "off by 3 ulp")},
            {.dirty = true});
  BOOST_TEST(evaluate(t, "parity-cpu-reference").reason.find("FLAKY") == std::string::npos);
  BOOST_TEST(run_read_only(t.db(), find_query("flaky")->sql, kCommit).rows.empty());
  const int64_t second =
      t.add_run({parity(first_case(), Outcome::FailNumeric, Verdict::Expected, "off by 3 ulp")});
  const std::string outcomes =
      "PASS in run " + std::to_string(first) + ", FAIL_NUMERIC in run " + std::to_string(second);
  check(evaluate(t, "parity-cpu-reference"), GateStatus::Fail,
        "1 FLAKY case(s), whose outcome differs between runs of this commit on one machine; "
        "first: cpu " +
            first_case() + " (" + outcomes + ")");
  const QueryResult flaky = run_read_only(t.db(), find_query("flaky")->sql, kCommit);
  BOOST_REQUIRE_EQUAL(flaky.rows.size(), 1U);
  BOOST_TEST(flaky.rows[0][2] == first_case());
  BOOST_TEST(flaky.rows[0][5] == outcomes);
}

BOOST_AUTO_TEST_CASE(incomplete_and_running_runs_are_not_evidence) {
  TempStore t;
  t.add_run(parity_rows());
  t.add_run({parity(first_case(), Outcome::Crash, Verdict::Unexpected, "killed")},
            {.end = RunEnd::Incomplete});
  t.add_run({parity(first_case(), Outcome::Error, Verdict::Unexpected, "half done")},
            {.end = RunEnd::Running});
  check(evaluate(t, "parity-cpu-reference"), GateStatus::Pass, parity_pass(parity_count()));
}

BOOST_AUTO_TEST_CASE(other_commits_are_not_evidence) {
  TempStore t;
  t.add_run(parity_rows(), {.commit = kOtherCommit});
  check(evaluate(t, "parity-cpu-reference"), GateStatus::NotVerified,
        "no usable parity (backend cpu) results for commit 0123456789ab; run `volta-audit run "
        "parity --backend cpu`");
  check(evaluate(t, "parity-cpu-reference", false, kOtherCommit), GateStatus::Pass,
        parity_pass(parity_count()));
}

BOOST_AUTO_TEST_CASE(release_ignores_runs_of_dirty_trees) {
  TempStore t;
  t.add_run(parity_rows(), {.dirty = true});
  check(evaluate(t, "parity-cpu-reference", false), GateStatus::Pass, parity_pass(parity_count()));
  check(evaluate(t, "parity-cpu-reference", true), GateStatus::NotVerified,
        "no usable parity (backend cpu) results for commit 0123456789ab: only runs of a dirty "
        "tree, which are not release evidence; run `volta-audit run parity --backend cpu`");

  // With a clean run present, release judges it and skips the newer dirty one.
  t.add_run(with(parity_rows(),
                 {parity(first_case(), Outcome::FailNumeric, Verdict::Unexpected, "clean bug")}),
            {.started_at = "2000-01-01T00:00:00Z"});
  check(evaluate(t, "parity-cpu-reference", true), GateStatus::Fail,
        "1 unexpected result(s); first: " + first_case() + " FAIL_NUMERIC (unexpected): clean bug");
  check(evaluate(t, "parity-cpu-reference", false), GateStatus::Pass, parity_pass(parity_count()));
}

// --- provenance (#5): a run's inputs must be the files committed at its commit ---

RunInput input(const std::string& name, std::string sha256, std::string committed) {
  return {RunInput::Kind::File, name, "/work/" + name, std::move(sha256), std::move(committed)};
}

const std::string kSha(64, 'a');
const std::string kOtherSha(64, 'b');

BOOST_AUTO_TEST_CASE(a_run_that_read_an_edited_input_is_refused_and_named) {
  TempStore t;
  const int64_t edited = t.add_run(
      parity_rows(), {.inputs = {input("conformance/expectations/parity.tsv", kOtherSha, kSha)}});
  check(
      evaluate(t, "parity-cpu-reference"), GateStatus::NotVerified,
      "no usable parity (backend cpu) results for commit 0123456789ab: 1 run(s) refused, "
      "first: run " +
          std::to_string(edited) +
          " (parity) read "
          "/work/conformance/expectations/parity.tsv as conformance/expectations/parity.tsv, which "
          "differs from the file committed at its commit (sha256 bbbbbbbbbbbb, committed "
          "aaaaaaaaaaaa); run `volta-audit run parity --backend cpu`");
  // An older run that read the committed file is evidence; the edited one still is not.
  t.add_run(with(parity_rows(), {parity(first_case(), Outcome::FailNumeric, Verdict::Unexpected,
                                        "committed bug")}),
            {.started_at = "2000-01-01T00:00:00Z"});
  check(evaluate(t, "parity-cpu-reference"), GateStatus::Fail,
        "1 unexpected result(s); first: " + first_case() +
            " FAIL_NUMERIC (unexpected): committed bug; 1 run(s) refused as evidence, first: run " +
            std::to_string(edited) +
            " (parity) read /work/conformance/expectations/parity.tsv as "
            "conformance/expectations/parity.tsv, which differs from the file committed at its "
            "commit (sha256 bbbbbbbbbbbb, committed aaaaaaaaaaaa)");
}

BOOST_AUTO_TEST_CASE(a_missing_an_added_and_an_unknown_input_are_refused) {
  const std::vector<std::pair<RunInput, std::string>> refused = {
      {input("conformance/expectations/parity.tsv", "absent", kSha),
       "found no conformance/expectations/parity.tsv (looked for "
       "/work/conformance/expectations/parity.tsv), which is committed at its commit"},
      {input("conformance/determinism/configs/new.conf", kSha, "absent"),
       "read /work/conformance/determinism/configs/new.conf as "
       "conformance/determinism/configs/new.conf, which is not committed at its commit"},
      {input("governance/perf-slo.md", kSha, "unknown"),
       "read governance/perf-slo.md, whose committed version its binary does not know (built "
       "outside a git checkout)"}};
  for (const auto& [bad, words] : refused) {
    BOOST_TEST_CONTEXT(bad.name) {
      TempStore t;
      const int64_t run = t.add_run(parity_rows(), {.inputs = {bad}});
      check(evaluate(t, "parity-cpu-reference"), GateStatus::NotVerified,
            "no usable parity (backend cpu) results for commit 0123456789ab: 1 run(s) refused, "
            "first: run " +
                std::to_string(run) + " (parity) " + words +
                "; run `volta-audit run parity --backend cpu`");
    }
  }
}

BOOST_AUTO_TEST_CASE(a_run_that_recorded_no_inputs_is_refused) {
  TempStore t;
  const int64_t run = t.add_run(parity_rows(), {.inputs = {}});
  check(evaluate(t, "parity-cpu-reference"), GateStatus::NotVerified,
        "no usable parity (backend cpu) results for commit 0123456789ab: 1 run(s) refused, "
        "first: run " +
            std::to_string(run) +
            " (parity) recorded no inputs (written by a "
            "volta-audit older than schema 4), so what decided its verdicts is unknown; run "
            "`volta-audit run parity --backend cpu`");
}

BOOST_AUTO_TEST_CASE(a_run_with_a_planted_defect_is_a_demonstration_not_evidence) {
  TempStore t;
  const int64_t run = t.add_run(
      parity_rows(),
      {.inputs = {testing::committed_input(),
                  {RunInput::Kind::Option, "--plant-divergence", "fc1", "planted", "absent"}}});
  check(evaluate(t, "parity-cpu-reference"), GateStatus::NotVerified,
        "no usable parity (backend cpu) results for commit 0123456789ab: 1 run(s) refused, "
        "first: run " +
            std::to_string(run) +
            " (parity) ran with --plant-divergence fc1, a "
            "planted test-only defect; run `volta-audit run parity --backend cpu`");
}

BOOST_AUTO_TEST_CASE(expected_cases_of_another_commit_cannot_verify_this_one) {
  TempStore t;
  t.add_run(parity_rows());
  const GateResult r =
      evaluate_gate(t.db(), *find_gate("parity-cpu-reference"), kCommit, false, kOtherCommit);
  check(r, GateStatus::NotVerified,
        "this volta-audit knows the expected cases of its own commit fedcba987654 only; judge "
        "commit 0123456789ab with a volta-audit built from it");
}

// #10: the model suite does not exist yet, so no rows can pass its gates.
BOOST_AUTO_TEST_CASE(release_makes_every_gate_a_blocker) {
  TempStore t;
  for (const GateResult& r : evaluate_gates(t.db(), kCommit, true, kCommit)) {
    BOOST_TEST_CONTEXT(r.gate) { BOOST_TEST(r.blocker); }
  }
  for (const GateResult& r : evaluate_gates(t.db(), kCommit, false, kCommit)) {
    BOOST_TEST_CONTEXT(r.gate) { BOOST_TEST(r.blocker == find_gate(r.gate)->blocks_pr); }
  }
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

// A check is current only when no usable run of the commit ended after it.
BOOST_AUTO_TEST_CASE(a_docs_check_older_than_a_run_is_stale) {
  TempStore t;
  t.add_claim("parity-claim", "README.md", 40, "PASS", "ok", "2020-01-01T00:00:00.000Z");
  const int64_t run = t.add_run(parity_rows());  // ends now, after the check
  const GateResult r = evaluate(t, "docs-contract");
  BOOST_TEST(gate_status_name(r.status) == "NOT VERIFIED");
  BOOST_TEST(r.reason.starts_with("the newest docs check (2020-01-01T00:00:00.000Z) did not see "
                                  "run " +
                                  std::to_string(run) + ", which ended after it ("),
             r.reason);
  t.add_claim("parity-claim", "README.md", 40, "PASS", "ok", "2999-01-01T00:00:00.000Z");
  check(evaluate(t, "docs-contract"), GateStatus::Pass, "1 claims and sections verified");
}

// #8: a check of edited docs (or by a binary of a dirty tree) is not release evidence.
BOOST_AUTO_TEST_CASE(docs_release_reads_only_checks_of_committed_docs) {
  TempStore t;
  t.add_claim("parity-claim", "README.md", 40, "PASS", "ok", "2030-01-02T00:00:00Z", kCommit, true);
  check(evaluate(t, "docs-contract"), GateStatus::Pass, "1 claims and sections verified");
  check(evaluate(t, "docs-contract", true), GateStatus::NotVerified,
        "only docs checks of edited docs or by a volta-audit of a dirty tree for commit "
        "0123456789ab, which are not release evidence; run `volta-audit docs check` from a "
        "clean checkout");
  t.add_claim("parity-claim", "README.md", 40, "FAIL", "clean but failing", "2030-01-01T00:00:00Z");
  check(evaluate(t, "docs-contract", true), GateStatus::Fail,
        "1 of 1 claims and sections do not pass; first: parity-claim at README.md:40 (FAIL): "
        "clean but failing");
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

// Every blocker of a pull request with complete evidence for `commit`: both ONNX corpora on both
// backends, the numerics matrix, parity, and the determinism suite over the built-in models and
// every ONNX test the corpus passes, the gradients suite and the training suite.
void add_every_pr_blocker(TempStore& t, const std::string& commit) {
  testing::add_passing_onnx_corpus(t, {.commit = commit});
  testing::add_passing_onnx_corpus(t, {.commit = commit}, conformance::kOnnxCurrentCorpus);
  testing::add_passing_numerics_matrix(t, {.commit = commit});
  t.add_run(parity_rows(), {.commit = commit});
  testing::add_passing_determinism_suite(t, testing::onnx_corpus_ids(), commit);
  testing::add_passing_gradients_suite(t, commit);
  testing::add_passing_training_suite(t, commit);
}

BOOST_AUTO_TEST_CASE(gate_command_exits_zero_only_when_every_blocker_passes) {
  TempStore t;
  // The command judges with this binary's expected cases: evidence of its own commit.
  const std::string commit = build::kCommit;
  add_every_pr_blocker(t, commit);
  BOOST_TEST(run_gate_command({"--commit", commit, "--db", t.path()}) == 1);  // docs not checked
  BOOST_TEST(gate_rows(t) == int64_t(gates().size()));

  t.add_claim("parity-claim", "README.md", 4, "PASS", "gate parity-cpu-reference: PASS",
              "2030-01-01T00:00:00Z", commit);
  BOOST_TEST(run_gate_command({"--commit", commit, "--db", t.path()}) == 0);
  BOOST_TEST(gate_rows(t) == 2 * int64_t(gates().size()));
  // Under --release the gates without evidence block too.
  BOOST_TEST(run_gate_command({"--release", "--commit", commit, "--db", t.path()}) == 1);
  BOOST_TEST(gate_rows(t) == 3 * int64_t(gates().size()));
  // Another commit's evidence cannot pass with this binary's lists.
  TempStore other;
  add_every_pr_blocker(other, kCommit);
  other.add_claim("parity-claim", "README.md", 4, "PASS", "ok", "2030-01-01T00:00:00Z");
  BOOST_TEST(run_gate_command({"--commit", kCommit, "--db", other.path()}) == 1);
}

}  // namespace
}  // namespace volta::audit
