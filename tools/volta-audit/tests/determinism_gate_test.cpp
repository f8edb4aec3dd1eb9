// The determinism gates (determinism-100, thread-invariance, plan-stability,
// batch-invariance) over hand-built suite rows: complete evidence, then each way it can fall
// short (a subject missing, an ONNX test the CPU engine passes left out, fewer runs or
// processes than the gate's name promises, a configuration or batch size skipped, strict mode
// absent, controls only, a control not caught, a cross-build leg never shown able to fail),
// each with the exact reason a release engineer reads; and the determinism-evidence section.
#define BOOST_TEST_MODULE determinism_gate
#include <algorithm>
#include <boost/test/unit_test.hpp>

#include "determinism_evidence.h"
#include "docs_contract.h"
#include "gate_testing.h"

namespace volta::audit {
namespace {

using conformance::kBatchInvarianceFamily;
using conformance::kPlanStabilityFamily;
using conformance::kReplayFamily;
using conformance::kThreadInvarianceFamily;
using conformance::Outcome;
using conformance::ResultRow;
using conformance::Verdict;
using testing::add_build_run;
using testing::add_onnx_subjects;
using testing::add_passing_determinism_suite;
using testing::check;
using testing::determinism_row;
using testing::evaluate;
using testing::kCnnFingerprint;
using testing::kCommit;
using testing::kMlpFingerprint;
using testing::kOnnxSubjects;
using testing::passing_determinism_rows;
using testing::plan_row;
using testing::TempStore;
using testing::with;
using testing::without;

// Subjects: the three built-in models and onnx:node/test_abs.
constexpr std::string_view kReplayPass =
    "6 cases: 6 pass, 0 expected non-pass, 0 skipped; 2 negative controls caught their planted "
    "defects";
constexpr std::string_view kThreadsPass =
    "4 cases: 4 pass, 0 expected non-pass, 0 skipped; 3 negative controls caught their planted "
    "defects";
constexpr std::string_view kPlanPass =
    "4 cases: 4 pass, 0 expected non-pass, 0 skipped; 4 plan fingerprint(s) identical across 2 "
    "runs of build types Debug, RelWithDebInfo; 3 negative controls caught their planted defects";
constexpr std::string_view kBatchPass =
    "3 cases: 3 pass, 0 expected non-pass, 0 skipped; 1 negative control caught its planted "
    "defect";

// The newest run, as a later rerun of some cases of the suite.
// On another machine: on the first one an outcome that changes is FLAKY, a blocker of its own.
int64_t rerun(TempStore& t, const std::vector<ResultRow>& rows,
              std::string_view build_type = "RelWithDebInfo") {
  return add_build_run(t, rows, build_type,
                       {.started_at = "2030-01-02T00:00:00Z", .machine = "other-box / Test CPU"});
}

BOOST_AUTO_TEST_CASE(the_four_gates_block_pull_requests) {
  for (std::string_view name :
       {"determinism-100", "thread-invariance", "plan-stability", "batch-invariance"}) {
    const Gate* g = find_gate(name);
    BOOST_REQUIRE_MESSAGE(g != nullptr, "no gate " << name);
    BOOST_TEST(g->blocks_pr, name);
  }
}

BOOST_AUTO_TEST_CASE(complete_evidence_passes_every_determinism_gate) {
  TempStore t;
  add_passing_determinism_suite(t);
  check(evaluate(t, "determinism-100"), GateStatus::Pass, kReplayPass);
  check(evaluate(t, "thread-invariance"), GateStatus::Pass, kThreadsPass);
  check(evaluate(t, "plan-stability"), GateStatus::Pass, kPlanPass);
  check(evaluate(t, "batch-invariance"), GateStatus::Pass, kBatchPass);
}

BOOST_AUTO_TEST_CASE(no_rows_verify_nothing_and_say_what_to_run) {
  TempStore t;
  add_onnx_subjects(t, kOnnxSubjects);  // another suite's evidence
  check(evaluate(t, "determinism-100"), GateStatus::NotVerified,
        "no usable determinism (backend cpu) (families replay-100, strict-mode) results for commit "
        "0123456789ab; run `volta-audit run determinism --backend cpu`");
  check(evaluate(t, "batch-invariance"), GateStatus::NotVerified,
        "no usable determinism (backend cpu) (family batch-invariance) results for commit "
        "0123456789ab; run "
        "`volta-audit run determinism --backend cpu --family batch-invariance`");
}

// --- completeness (#4) ---

// The ONNX subjects are the ONNX tests the CPU engine passes: without the onnx evidence the
// list is unknown, and a determinism run over fewer of them (a small --data folder) cannot
// pass for all of them.
BOOST_AUTO_TEST_CASE(the_onnx_subjects_come_from_the_onnx_evidence) {
  TempStore t;
  add_build_run(t, passing_determinism_rows("Debug"), "Debug");
  add_build_run(t, passing_determinism_rows("RelWithDebInfo"), "RelWithDebInfo");
  check(evaluate(t, "determinism-100"), GateStatus::NotVerified,
        "the ONNX subjects (every ONNX test the CPU engine passes) are unknown: the commit has "
        "no usable onnx results on the cpu backend; run `volta-audit run onnx --backend cpu`");
  // Batch subjects are the built-in models only: the onnx evidence does not matter there.
  check(evaluate(t, "batch-invariance"), GateStatus::Pass, kBatchPass);

  add_onnx_subjects(t, {"node/test_abs", "node/test_add"});
  check(evaluate(t, "determinism-100"), GateStatus::NotVerified,
        "1 of the 7 cases the gate needs have no result; first: replay:onnx:node/test_add; run "
        "`volta-audit run determinism --backend cpu`");
  check(evaluate(t, "thread-invariance"), GateStatus::NotVerified,
        "1 of the 5 cases the gate needs have no result; first: threads:onnx:node/test_add; run "
        "`volta-audit run determinism --backend cpu --family thread-invariance`");
}

BOOST_AUTO_TEST_CASE(a_built_in_subject_left_out_is_missing) {
  TempStore t;
  add_onnx_subjects(t, kOnnxSubjects);
  const std::vector<ResultRow> rows =
      without(without(passing_determinism_rows("Debug"), "batch:model:mlp"), "replay:model:cnn");
  add_build_run(t, rows, "Debug");
  add_build_run(t, rows, "RelWithDebInfo");
  check(evaluate(t, "determinism-100"), GateStatus::NotVerified,
        "1 of the 6 cases the gate needs have no result; first: replay:model:cnn; run "
        "`volta-audit run determinism --backend cpu`");
  check(evaluate(t, "batch-invariance"), GateStatus::NotVerified,
        "1 of the 3 cases the gate needs have no result; first: batch:model:mlp; run "
        "`volta-audit run determinism --backend cpu --family batch-invariance`");
}

// `run determinism --family replay-100` records no strict-mode rows.
BOOST_AUTO_TEST_CASE(replay_without_strict_mode_is_not_verified) {
  TempStore t;
  add_onnx_subjects(t, kOnnxSubjects);
  std::vector<ResultRow> rows = passing_determinism_rows();
  for (std::string_view id : conformance::kStrictModeCases) rows = without(rows, id);
  add_build_run(t, rows, "RelWithDebInfo");
  check(evaluate(t, "determinism-100"), GateStatus::NotVerified,
        "2 of the 6 cases the gate needs have no result; first: strict:rejects-non-bit-exact; run "
        "`volta-audit run determinism --backend cpu`");
}

// `run determinism --filter 'control:*'`: every check shown able to fail, nothing replayed.
BOOST_AUTO_TEST_CASE(controls_alone_are_not_cases) {
  TempStore t;
  add_onnx_subjects(t, kOnnxSubjects);
  add_build_run(t, testing::control_rows("RelWithDebInfo"), "RelWithDebInfo");
  for (std::string_view gate :
       {"determinism-100", "thread-invariance", "plan-stability", "batch-invariance"}) {
    BOOST_TEST(gate_status_name(evaluate(t, gate).status) == "NOT VERIFIED", gate);
    BOOST_TEST(evaluate(t, gate).reason.starts_with("no usable determinism"), gate);
  }
}

// `run determinism --runs 5 --processes 0` must not pass a gate named determinism-100.
BOOST_AUTO_TEST_CASE(fewer_runs_or_processes_than_promised_are_not_verified) {
  TempStore t;
  add_onnx_subjects(t, kOnnxSubjects);
  std::vector<ResultRow> rows;
  for (ResultRow r : passing_determinism_rows()) {
    if (r.case_id.starts_with("replay:")) r.params = "runs=5 processes=0 threads=3";
    if (r.case_id.starts_with("plan:")) r.params = "compiles=2 processes=0";
    rows.push_back(r);
  }
  rows = with(rows, {determinism_row("control:replay:fresh-process-divergence", kReplayFamily,
                                     Outcome::FailNumeric, Verdict::Unexpected,
                                     "negative control NOT caught: no fresh process ran")});
  add_build_run(t, with(rows, testing::control_rows("Debug")), "Debug");
  add_build_run(t, rows, "RelWithDebInfo");
  check(evaluate(t, "determinism-100"), GateStatus::NotVerified,
        "4 case(s) with less evidence than the gate needs (every replay needs at least 100 runs "
        "and 3 fresh processes); first: replay:model:cnn (runs=5 processes=0 threads=3); run "
        "`volta-audit run determinism --backend cpu`; negative control "
        "control:replay:fresh-process-divergence "
        "did not catch its planted defect (FAIL_NUMERIC): negative control NOT caught: no fresh "
        "process ran");
  check(evaluate(t, "plan-stability"), GateStatus::NotVerified,
        "4 case(s) with less evidence than the gate needs (every plan needs 3 fresh processes' "
        "compiles); first: plan:model:cnn (compiles=2 processes=0); run `volta-audit run "
        "determinism --backend cpu --family plan-stability`");
  // Params recorded per result: an older complete run cannot lend a newer one its size.
  TempStore u;
  add_onnx_subjects(u, kOnnxSubjects);
  add_build_run(u, passing_determinism_rows(), "RelWithDebInfo",
                {.started_at = "2030-01-01T00:00:00Z"});
  rerun(u, {testing::replay_row("model:mlp", "runs=5 processes=0 threads=3")});
  BOOST_TEST(evaluate(u, "determinism-100")
                 .reason.starts_with("1 case(s) with less evidence than the gate needs"));
}

BOOST_AUTO_TEST_CASE(every_committed_configuration_and_batch_size_is_needed) {
  TempStore t;
  add_onnx_subjects(t, kOnnxSubjects);
  std::vector<ResultRow> rows = passing_determinism_rows();
  rows = with(rows, {testing::threads_row("model:cnn", "configurations=threads-1,threads-2"),
                     testing::batch_row("model:mlp", "batches=1,2 threads=3")});
  add_build_run(t, rows, "RelWithDebInfo");
  check(evaluate(t, "thread-invariance"), GateStatus::NotVerified,
        "1 case(s) with less evidence than the gate needs (every configuration committed under "
        "conformance/determinism/configs: chunk-scale-4x,chunk-scale-quarter,passes-off,"
        "task-order-reverse,threads-1,threads-2,threads-4,threads-8); first: threads:model:cnn "
        "(configurations=threads-1,threads-2); run `volta-audit run determinism --backend cpu "
        "--family "
        "thread-invariance`");
  check(evaluate(t, "batch-invariance"), GateStatus::NotVerified,
        "1 case(s) with less evidence than the gate needs (every subject compared at batch sizes "
        "1,2,3,7,16,64); first: batch:model:mlp (batches=1,2 threads=3); run `volta-audit run "
        "determinism --backend cpu --family batch-invariance`");
}

// --- results ---

BOOST_AUTO_TEST_CASE(an_unexpected_row_fails_each_gate_and_names_it) {
  TempStore t;
  add_passing_determinism_suite(t);
  rerun(t, {determinism_row("replay:model:mlp", kReplayFamily, Outcome::FailNumeric,
                            Verdict::Unexpected, "run 37 of 100: output 0 differs at element 5"),
            determinism_row("strict:rejects-non-bit-exact", conformance::kStrictModeFamily,
                            Outcome::FailNumeric, Verdict::Unexpected,
                            "Strict compiled a plan with a run-to-run kernel")});
  check(evaluate(t, "determinism-100"), GateStatus::Fail,
        "2 unexpected result(s); first: replay:model:mlp FAIL_NUMERIC (unexpected): run 37 of "
        "100: output 0 differs at element 5");
  rerun(t, {determinism_row("batch:model:cnn", kBatchInvarianceFamily, Outcome::FailNumeric,
                            Verdict::Unexpected, "batch 16, sample 3, output 0 differs")});
  check(evaluate(t, "batch-invariance"), GateStatus::Fail,
        "1 unexpected result(s); first: batch:model:cnn FAIL_NUMERIC (unexpected): batch 16, "
        "sample 3, output 0 differs");
  rerun(t,
        {determinism_row("plan:model:cnn", kPlanStabilityFamily, Outcome::Error,
                         Verdict::Unexpected, "fresh process exited with status 3")},
        "Debug");
  check(evaluate(t, "plan-stability"), GateStatus::Fail,
        "1 ERROR/CRASH/TIMEOUT result(s), which no expectation excuses; first: plan:model:cnn "
        "ERROR: fresh process exited with status 3");
}

// #6: an expectation excuses no difference in the determinism families.
BOOST_AUTO_TEST_CASE(an_expected_failure_is_still_a_failure_here) {
  TempStore t;
  add_passing_determinism_suite(t);
  ResultRow excused = determinism_row("threads:model:mlp", kThreadInvarianceFamily,
                                      Outcome::FailNumeric, Verdict::Expected, "threads-8 differs");
  excused.expectation = "threads:model:*";
  rerun(t, {excused});
  check(evaluate(t, "thread-invariance"), GateStatus::Fail,
        "1 case(s) did not pass, which this gate excuses for no expectation; first: "
        "threads:model:mlp FAIL_NUMERIC (expected by threads:model:*): threads-8 differs");
}

// --- negative controls ---

BOOST_AUTO_TEST_CASE(a_missing_negative_control_leaves_the_gate_not_verified) {
  TempStore t;
  add_onnx_subjects(t, kOnnxSubjects);
  for (const auto& [build_type, started] : {std::pair{"Debug", "2030-01-01T00:00:00Z"},
                                            std::pair{"RelWithDebInfo", "2030-01-01T01:00:00Z"}}) {
    std::vector<ResultRow> rows = passing_determinism_rows(build_type);
    rows = without(rows, "control:replay:timing-dependent-kernel");
    rows = without(rows, "control:config:chunk-size-kernel");
    rows = without(rows, "control:config:task-order-kernel");
    rows = without(rows, "control:plan:address-dependent-pass");
    rows = without(rows, "control:batch:batch-size-chunked-kernel");
    add_build_run(t, rows, build_type, {.started_at = started});
  }
  check(evaluate(t, "determinism-100"), GateStatus::NotVerified,
        "negative control control:replay:timing-dependent-kernel has no result: a check not "
        "shown able to fail is not evidence; run `volta-audit run determinism`");
  check(evaluate(t, "thread-invariance"), GateStatus::NotVerified,
        "negative controls control:config:chunk-size-kernel, control:config:task-order-kernel "
        "have no result: a check not shown able to fail is not evidence; run `volta-audit run "
        "determinism`");
  check(evaluate(t, "plan-stability"), GateStatus::NotVerified,
        "negative control control:plan:address-dependent-pass has no result: a check not shown "
        "able to fail is not evidence; run `volta-audit run determinism`");
  check(evaluate(t, "batch-invariance"), GateStatus::NotVerified,
        "negative control control:batch:batch-size-chunked-kernel has no result: a check not "
        "shown able to fail is not evidence; run `volta-audit run determinism`");

  // A later run of the controls alone completes the evidence.
  rerun(t, testing::control_rows("RelWithDebInfo"));
  check(evaluate(t, "determinism-100"), GateStatus::Pass, kReplayPass);
  check(evaluate(t, "thread-invariance"), GateStatus::Pass, kThreadsPass);
  check(evaluate(t, "batch-invariance"), GateStatus::Pass, kBatchPass);
  // The controls-only run compared no subject's fingerprint: still two runs of two build types.
  check(evaluate(t, "plan-stability"), GateStatus::Pass, kPlanPass);
}

BOOST_AUTO_TEST_CASE(a_control_excused_by_an_expectation_proves_nothing) {
  TempStore t;
  add_passing_determinism_suite(t);
  rerun(t, {determinism_row("control:threads:thread-count-kernel", kThreadInvarianceFamily,
                            Outcome::Skipped, Verdict::Expected, "one hardware thread")});
  check(evaluate(t, "thread-invariance"), GateStatus::NotVerified,
        "negative control control:threads:thread-count-kernel did not catch its planted defect "
        "(SKIPPED): one hardware thread");
}

// #7: the cross-build leg has a control too, judged by the same comparison as the plans.
BOOST_AUTO_TEST_CASE(the_cross_build_control_must_differ_between_builds) {
  TempStore t;
  add_onnx_subjects(t, kOnnxSubjects);
  // Both builds recorded the optimized fingerprint: the comparison never saw a difference.
  add_build_run(t, passing_determinism_rows("RelWithDebInfo"), "Debug");
  add_build_run(t, passing_determinism_rows("RelWithDebInfo"), "RelWithDebInfo");
  check(evaluate(t, "plan-stability"), GateStatus::NotVerified,
        "cross-build negative control control:plan:optimizer-dependent-pass did not catch its "
        "planted defect: its fingerprints from the Debug and the optimized build agree, so the "
        "comparison across builds is not shown able to fail");
  // Its own fingerprint differing is the catch, never a plan-stability failure.
  TempStore u;
  add_passing_determinism_suite(u);
  check(evaluate(u, "plan-stability"), GateStatus::Pass, kPlanPass);
}

BOOST_AUTO_TEST_CASE(each_blocker_has_its_own_reason_and_a_failure_outranks_missing_evidence) {
  TempStore t;
  add_onnx_subjects(t, kOnnxSubjects);
  std::vector<ResultRow> rows =
      without(passing_determinism_rows(), "control:replay:timing-dependent-kernel");
  rows = with(rows, {determinism_row("replay:onnx:node/test_abs", kReplayFamily, Outcome::Crash,
                                     Verdict::Unexpected, "SIGSEGV in fresh process 2")});
  add_build_run(t, rows, "RelWithDebInfo");
  check(evaluate(t, "determinism-100"), GateStatus::Fail,
        "1 ERROR/CRASH/TIMEOUT result(s), which no expectation excuses; first: "
        "replay:onnx:node/test_abs CRASH: SIGSEGV in fresh process 2; negative control "
        "control:replay:timing-dependent-kernel has no result: a check not shown able to fail is "
        "not evidence; run `volta-audit run determinism`");
}

// --- plan-stability: fingerprints across every run of the commit ---

BOOST_AUTO_TEST_CASE(a_fingerprint_that_differs_between_two_runs_fails_naming_both) {
  TempStore t;
  add_onnx_subjects(t, kOnnxSubjects);
  const std::string moved =
      "plan=0000000000000001 ir=0b9e4d2f3a1c5e60 schedule=7a2c9e1b0d4f3a85 "
      "allocation=3e8d1c0b9a2f4e67 passes=fold-constants:1a2b3c4d5e6f7081";
  const int64_t debug = add_build_run(t, passing_determinism_rows("Debug"), "Debug",
                                      {.started_at = "2030-01-01T00:00:00Z"});
  const int64_t optimized =
      add_build_run(t, with(passing_determinism_rows(), {plan_row("model:mlp", moved)}),
                    "RelWithDebInfo", {.started_at = "2030-01-01T01:00:00Z"});
  check(evaluate(t, "plan-stability"), GateStatus::Fail,
        "1 plan fingerprint(s) differ between runs of the commit on one machine; first: "
        "plan:model:mlp: run " +
            std::to_string(debug) + " (Debug) gave \"" + kMlpFingerprint + "\", run " +
            std::to_string(optimized) + " (RelWithDebInfo) gave \"" + moved + "\"");

  // The newest run agreeing again does not hide the older disagreement: every run is evidence.
  add_build_run(t, passing_determinism_rows("Release"), "Release",
                {.started_at = "2030-01-01T02:00:00Z"});
  BOOST_TEST(gate_status_name(evaluate(t, "plan-stability").status) == "FAIL");
  // Replay and thread evidence are untouched by a plan that moved.
  check(evaluate(t, "determinism-100"), GateStatus::Pass, kReplayPass);
}

BOOST_AUTO_TEST_CASE(the_first_diverging_case_by_id_is_named_and_all_are_counted) {
  TempStore t;
  add_onnx_subjects(t, kOnnxSubjects);
  const int64_t debug = add_build_run(t, passing_determinism_rows("Debug"), "Debug",
                                      {.started_at = "2030-01-01T00:00:00Z"});
  const int64_t release = add_build_run(
      t,
      with(passing_determinism_rows("Release"),
           {plan_row("model:mlp", kCnnFingerprint), plan_row("model:cnn", kMlpFingerprint)}),
      "Release", {.started_at = "2030-01-01T01:00:00Z"});
  check(evaluate(t, "plan-stability"), GateStatus::Fail,
        "2 plan fingerprint(s) differ between runs of the commit on one machine; first: "
        "plan:model:cnn: run " +
            std::to_string(debug) + " (Debug) gave \"" + kCnnFingerprint + "\", run " +
            std::to_string(release) + " (Release) gave \"" + kMlpFingerprint + "\"");
}

BOOST_AUTO_TEST_CASE(the_address_controls_own_fingerprint_is_not_compared) {
  TempStore t;
  add_onnx_subjects(t, kOnnxSubjects);
  // The planted pass makes the control's plan depend on a heap address: it differs per run.
  for (const auto& [build_type, hash] : {std::pair{"Debug", "plan=00007ffd1a2b"},
                                         std::pair{"RelWithDebInfo", "plan=00007ffc9e8d"}}) {
    ResultRow control =
        determinism_row("control:plan:address-dependent-pass", kPlanStabilityFamily);
    control.output_hash = hash;
    add_build_run(t, with(passing_determinism_rows(build_type), {control}), build_type);
  }
  check(evaluate(t, "plan-stability"), GateStatus::Pass, kPlanPass);
}

BOOST_AUTO_TEST_CASE(one_build_type_is_not_verified_and_says_which_build_is_missing) {
  TempStore t;
  add_onnx_subjects(t, kOnnxSubjects);
  add_build_run(t, passing_determinism_rows(), "RelWithDebInfo");
  add_build_run(t, passing_determinism_rows(), "RelWithDebInfo");
  check(evaluate(t, "plan-stability"), GateStatus::NotVerified,
        "plan fingerprints only from build type(s) RelWithDebInfo (2 run(s)); plan stability "
        "needs a Debug and an optimized (Release or RelWithDebInfo) build of the commit: run "
        "`volta-audit run determinism --backend cpu --family plan-stability` from a Debug build "
        "(scripts/ci/audit.sh builds the `debug` preset for it); cross-build negative control "
        "control:plan:optimizer-dependent-pass has no fingerprints from both a Debug and an "
        "optimized build on one machine; run `volta-audit run determinism --backend cpu --family "
        "plan-stability` from both builds");
  // The other gates compare within a run: one build type is enough for them.
  check(evaluate(t, "thread-invariance"), GateStatus::Pass, kThreadsPass);

  TempStore debug_only;
  add_onnx_subjects(debug_only, kOnnxSubjects);
  add_build_run(debug_only, passing_determinism_rows("Debug"), "Debug");
  BOOST_TEST(evaluate(debug_only, "plan-stability")
                 .reason.starts_with(
                     "plan fingerprints only from build type(s) Debug (1 run(s)); plan stability "
                     "needs a Debug and an optimized (Release or RelWithDebInfo) build of the "
                     "commit: run `volta-audit run determinism --backend cpu --family "
                     "plan-stability` from an "
                     "optimized build (the `relassert` preset)"));
}

// Kernel variants (ISA, tile) are part of the plan: machines are never compared with each other.
BOOST_AUTO_TEST_CASE(plans_are_compared_per_machine_only) {
  TempStore t;
  add_onnx_subjects(t, kOnnxSubjects);
  add_build_run(t, passing_determinism_rows("Debug"), "Debug");
  const int64_t other =
      add_build_run(t, with(passing_determinism_rows(), {plan_row("model:mlp", kCnnFingerprint)}),
                    "RelWithDebInfo");
  t.db()
      .prepare("UPDATE run SET machine = 'other-host / AVX2 CPU' WHERE id = ?")
      .bind(1, other)
      .run();
  BOOST_TEST(evaluate(t, "plan-stability")
                 .reason.starts_with(
                     "the Debug and optimized plan fingerprints come from "
                     "different machines; run `volta-audit run determinism "
                     "--backend cpu --family plan-stability` from both builds on one machine "
                     "(scripts/ci/audit.sh does)"));
  add_build_run(t, passing_determinism_rows("Release"), "Release");
  check(evaluate(t, "plan-stability"), GateStatus::Pass,
        "4 cases: 4 pass, 0 expected non-pass, 0 skipped; 4 plan fingerprint(s) identical across 3 "
        "runs of build types Debug, RelWithDebInfo, Release; 3 negative controls caught their "
        "planted defects");
}

BOOST_AUTO_TEST_CASE(plan_rows_without_a_fingerprint_compare_nothing) {
  TempStore t;
  add_onnx_subjects(t, kOnnxSubjects);
  for (std::string_view build_type : {"Debug", "Release"}) {
    std::vector<ResultRow> rows = passing_determinism_rows(build_type);
    for (ResultRow& r : rows) {
      if (r.case_id.starts_with("plan:")) r.output_hash.clear();
    }
    add_build_run(t, rows, build_type);
  }
  BOOST_TEST(evaluate(t, "plan-stability")
                 .reason.starts_with(
                     "no plan:SUBJECT case recorded a plan fingerprint; run "
                     "`volta-audit run determinism --backend cpu --family plan-stability`"));
}

// --- release: runs of dirty trees are not evidence ---

BOOST_AUTO_TEST_CASE(release_ignores_dirty_runs_in_every_determinism_gate) {
  TempStore t;
  add_onnx_subjects(t, kOnnxSubjects);
  add_build_run(t, passing_determinism_rows("Debug"), "Debug",
                {.dirty = true, .started_at = "2030-01-01T00:00:00Z"});
  check(evaluate(t, "determinism-100", true), GateStatus::NotVerified,
        "no usable determinism (backend cpu) (families replay-100, strict-mode) results for commit "
        "0123456789ab: only runs of a dirty tree, which are not release evidence; run "
        "`volta-audit run determinism --backend cpu`");

  add_build_run(t, passing_determinism_rows(), "RelWithDebInfo",
                {.started_at = "2030-01-01T01:00:00Z"});
  // The dirty Debug run completes the pair only outside a release.
  check(evaluate(t, "plan-stability"), GateStatus::Pass, kPlanPass);
  BOOST_TEST(evaluate(t, "plan-stability", true)
                 .reason.starts_with(
                     "plan fingerprints only from build type(s) RelWithDebInfo (1 run(s));"));

  // A newer dirty run that diverges and fails counts only outside a release.
  std::vector<ResultRow> rows =
      with(passing_determinism_rows("Debug"),
           {plan_row("model:mlp", "plan=dirty"),
            determinism_row("replay:model:mlp", kReplayFamily, Outcome::FailNumeric,
                            Verdict::Unexpected, "bits differ")});
  add_build_run(t, rows, "Debug", {.dirty = true, .started_at = "2030-01-02T00:00:00Z"});
  add_build_run(t, passing_determinism_rows("Debug"), "Debug",
                {.started_at = "2030-01-01T02:00:00Z"});
  BOOST_TEST(gate_status_name(evaluate(t, "determinism-100").status) == "FAIL");
  BOOST_TEST(gate_status_name(evaluate(t, "plan-stability").status) == "FAIL");
  check(evaluate(t, "determinism-100", true), GateStatus::Pass, kReplayPass);
  check(evaluate(t, "thread-invariance", true), GateStatus::Pass, kThreadsPass);
  check(evaluate(t, "plan-stability", true), GateStatus::Pass,
        "4 cases: 4 pass, 0 expected non-pass, 0 skipped; 4 plan fingerprint(s) identical across "
        "2 runs of build types Debug, RelWithDebInfo; 3 negative controls caught their planted "
        "defects");
}

// --- the determinism-evidence section ---

std::string render_evidence(TempStore& t, std::string_view commit = kCommit) {
  for (const GeneratedSection& section : generated_sections()) {
    if (section.name == "determinism-evidence") {
      BOOST_TEST(section.from_results);
      return section.render(ResultsSource{&t.db(), std::string(commit)});
    }
  }
  BOOST_FAIL("no generated section determinism-evidence");
  return {};
}

BOOST_AUTO_TEST_CASE(the_evidence_section_counts_each_family_and_its_controls) {
  TempStore t;
  add_passing_determinism_suite(t);
  add_build_run(t,
                {determinism_row("threads:model:cnn", kThreadInvarianceFamily, Outcome::FailNumeric,
                                 Verdict::Unexpected, "bits differ"),
                 determinism_row("control:config:task-order-kernel", kThreadInvarianceFamily,
                                 Outcome::FailNumeric, Verdict::Unexpected, "not caught")},
                "Release", {.started_at = "2030-01-02T00:00:00Z"});
  const std::string rule(129, '-');
  const std::string configurations =
      "configurations: chunk-scale-4x, chunk-scale-quarter, passes-off, task-order-reverse, "
      "threads-1, threads-2, threads-4, threads-8";
  auto row = [](std::string_view cells, std::string_view evidence) {
    // Padded to 127 characters (a "—" is one character of three bytes).
    const auto characters = static_cast<size_t>(std::ranges::count_if(
        evidence, [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
    return std::string(cells) + std::string(evidence) + std::string(127 - characters, ' ') + " |\n";
  };
  BOOST_TEST(
      render_evidence(t) ==
      row("| family            | cases | pass | fail | skipped | negative controls caught | ",
          "evidence") +
          "|-------------------|-------|------|------|---------|--------------------------|" +
          rule + "|\n" +
          row("| replay-100        | 4     | 4    | 0    | 0       | 2 of 2                   | ",
              "100 runs + 3 fresh processes at 3 threads") +
          row("| thread-invariance | 4     | 3    | 1    | 0       | 2 of 3                   | ",
              configurations) +
          row("| plan-stability    | 4     | 4    | 0    | 0       | 3 of 3                   | ",
              "build types Debug, RelWithDebInfo") +
          row("| batch-invariance  | 3     | 3    | 0    | 0       | 1 of 1                   | ",
              "batch sizes 1,2,3,7,16,64 at 3 threads") +
          row("| strict-mode       | 2     | 2    | 0    | 0       | —                        | ",
              "—"));
}

// --- determinism-cuda: the subjects' families on the cuda backend ---

// The cuda run's rows: replay, plan and batch for every built-in model (no controls, no
// thread-invariance there), plus `extra`.
std::vector<ResultRow> cuda_rows(std::vector<ResultRow> extra = {}) {
  std::vector<ResultRow> rows;
  for (std::string_view s : conformance::kBuiltinSubjects) {
    rows.push_back(testing::replay_row(s));
    rows.push_back(plan_row(s));
    rows.push_back(testing::batch_row(s));
  }
  for (ResultRow& r : extra) rows.push_back(std::move(r));
  for (ResultRow& r : rows) r.backend = "cuda";
  return rows;
}

ResultRow skipped_row(ResultRow row, std::string message) {
  row.outcome = Outcome::Skipped;
  row.message = std::move(message);
  row.precondition = std::string(conformance::kCudaSubjectPrecondition);
  return row;
}

BOOST_AUTO_TEST_CASE(determinism_cuda_reads_the_cuda_rows_only_and_does_not_block) {
  const Gate* g = find_gate("determinism-cuda");
  BOOST_REQUIRE(g != nullptr);
  BOOST_TEST(!g->blocks_pr);
  TempStore t;
  add_passing_determinism_suite(t);  // cpu evidence: not the cuda gate's
  check(evaluate(t, "determinism-cuda"), GateStatus::NotVerified,
        "no usable determinism (backend cuda) (families replay-100, plan-stability, "
        "batch-invariance) results for commit 0123456789ab; run `volta-audit run determinism "
        "--backend cuda`");
  // An ONNX subject the backend has no kernel for is skipped under its precondition: counted,
  // not required. The cpu gates do not see the cuda rows.
  add_build_run(
      t, cuda_rows({skipped_row(testing::replay_row("onnx:node/test_conv"), "no kernel for Conv")}),
      "RelWithDebInfo", {.started_at = "2030-01-03T00:00:00Z"});
  check(evaluate(t, "determinism-cuda"), GateStatus::Pass,
        "10 cases: 9 pass, 0 expected non-pass, 1 skipped");
  check(evaluate(t, "determinism-100"), GateStatus::Pass, kReplayPass);
  check(evaluate(t, "batch-invariance"), GateStatus::Pass, kBatchPass);
}

BOOST_AUTO_TEST_CASE(determinism_cuda_needs_every_built_in_model_to_pass) {
  TempStore t;
  std::vector<ResultRow> rows = cuda_rows();
  rows[0] = skipped_row(rows[0], "no NVIDIA driver");
  rows[0].backend = "cuda";
  add_build_run(t, rows, "RelWithDebInfo");
  check(evaluate(t, "determinism-cuda"), GateStatus::NotVerified,
        "1 built-in subject case(s) skipped; first: replay:model:cnn: no NVIDIA driver");

  TempStore failing;
  rows = cuda_rows();
  rows[2].outcome = Outcome::FailNumeric;
  rows[2].verdict = Verdict::Unexpected;
  rows[2].message = "sample 3 differs at batch 7";
  add_build_run(failing, rows, "RelWithDebInfo");
  check(evaluate(failing, "determinism-cuda"), GateStatus::Fail,
        "1 unexpected result(s); first: batch:model:cnn FAIL_NUMERIC (unexpected): sample 3 "
        "differs at batch 7");
}

BOOST_AUTO_TEST_CASE(the_evidence_section_is_unavailable_without_results) {
  TempStore t;
  add_passing_determinism_suite(t);
  BOOST_CHECK_EXCEPTION(render_evidence(t, testing::kOtherCommit), SectionUnavailable,
                        [](const SectionUnavailable& e) {
                          return std::string(e.what()) ==
                                 "no determinism results for commit fedcba987654; run "
                                 "`volta-audit run determinism --backend cpu` first";
                        });
}

}  // namespace
}  // namespace volta::audit
