// The determinism gates (determinism-100, thread-invariance, plan-stability) over hand-built
// suite rows: each blocker on its own, with the exact reason a release engineer reads, and the
// determinism-evidence section of governance/determinism-policy.md.
#define BOOST_TEST_MODULE determinism_gate
#include <boost/test/unit_test.hpp>

#include "determinism_evidence.h"
#include "docs_contract.h"
#include "gates.h"

namespace volta::audit {
namespace {

using conformance::kPlanStabilityFamily;
using conformance::kReplayFamily;
using conformance::kThreadInvarianceFamily;
using conformance::Outcome;
using conformance::Verdict;
using testing::add_build_run;
using testing::add_passing_determinism_suite;
using testing::determinism_row;
using testing::kCnnFingerprint;
using testing::kCommit;
using testing::kMlpFingerprint;
using testing::passing_determinism_rows;
using testing::plan_row;
using testing::TempStore;
using testing::without;

GateResult evaluate(TempStore& t, std::string_view gate, bool release = false) {
  const Gate* g = find_gate(gate);
  BOOST_REQUIRE_MESSAGE(g != nullptr, "no gate " << gate);
  return evaluate_gate(t.db(), *g, kCommit, release);
}

void check(const GateResult& r, GateStatus status, std::string_view reason) {
  BOOST_TEST(gate_status_name(r.status) == gate_status_name(status));
  BOOST_TEST(r.reason == reason);
}

constexpr std::string_view kReplayPass =
    "5 cases: 5 pass, 0 expected non-pass, 0 skipped; 1 negative control caught its planted "
    "defect";
constexpr std::string_view kThreadsPass =
    "6 cases: 6 pass, 0 expected non-pass, 0 skipped; 3 negative controls caught their planted "
    "defects";
constexpr std::string_view kPlanPass =
    "3 cases: 3 pass, 0 expected non-pass, 0 skipped; 2 plan fingerprint(s) identical across 2 "
    "runs of build types Debug, RelWithDebInfo; 1 negative control caught its planted defect";

BOOST_AUTO_TEST_CASE(the_three_gates_block_pull_requests) {
  for (std::string_view name : {"determinism-100", "thread-invariance", "plan-stability"}) {
    const Gate* g = find_gate(name);
    BOOST_REQUIRE_MESSAGE(g != nullptr, "no gate " << name);
    BOOST_TEST(g->blocks_pr, name);
  }
  BOOST_TEST(find_gate("determinism-100-run") == nullptr);
}

BOOST_AUTO_TEST_CASE(complete_evidence_passes_every_determinism_gate) {
  TempStore t;
  add_passing_determinism_suite(t);
  check(evaluate(t, "determinism-100"), GateStatus::Pass, kReplayPass);
  check(evaluate(t, "thread-invariance"), GateStatus::Pass, kThreadsPass);
  check(evaluate(t, "plan-stability"), GateStatus::Pass, kPlanPass);
}

BOOST_AUTO_TEST_CASE(no_rows_verify_nothing_and_say_what_to_run) {
  TempStore t;
  t.add_run({testing::result("Add(shape=[2])", Outcome::Pass)});  // another suite's evidence
  check(evaluate(t, "determinism-100"), GateStatus::NotVerified,
        "no determinism (families replay-100, strict-mode) results for commit 0123456789ab; run "
        "`volta-audit run determinism`");
  check(evaluate(t, "thread-invariance"), GateStatus::NotVerified,
        "no determinism (family thread-invariance) results for commit 0123456789ab; run "
        "`volta-audit run determinism --family thread-invariance`");
  check(evaluate(t, "plan-stability"), GateStatus::NotVerified,
        "no determinism (family plan-stability) results for commit 0123456789ab; run "
        "`volta-audit run determinism --family plan-stability`");
}

BOOST_AUTO_TEST_CASE(an_unexpected_row_fails_each_gate_and_names_it) {
  TempStore t;
  add_passing_determinism_suite(t);
  add_build_run(
      t,
      {determinism_row("replay:model:mlp", kReplayFamily, Outcome::FailNumeric, Verdict::Unexpected,
                       "run 37 of 100: output 0 differs at element 5"),
       determinism_row("strict:rejects-non-bit-exact", conformance::kStrictModeFamily,
                       Outcome::FailNumeric, Verdict::Unexpected,
                       "Strict compiled a plan with a run-to-run kernel")},
      "RelWithDebInfo", {.started_at = "2030-01-02T00:00:00Z"});
  check(evaluate(t, "determinism-100"), GateStatus::Fail,
        "2 unexpected result(s); first: replay:model:mlp FAIL_NUMERIC (unexpected): run 37 of "
        "100: output 0 differs at element 5");

  add_build_run(t,
                {determinism_row("threads:model:transformer-block", kThreadInvarianceFamily,
                                 Outcome::FailNumeric, Verdict::Unexpected,
                                 "output 1 differs from the baseline at element 0")},
                "RelWithDebInfo", {.started_at = "2030-01-02T00:00:00Z"});
  check(evaluate(t, "thread-invariance"), GateStatus::Fail,
        "1 unexpected result(s); first: threads:model:transformer-block FAIL_NUMERIC (unexpected): "
        "output 1 differs from the baseline at element 0");

  add_build_run(t,
                {determinism_row("plan:model:cnn", kPlanStabilityFamily, Outcome::Error,
                                 Verdict::Unexpected, "fresh process exited with status 3")},
                "Debug", {.started_at = "2030-01-02T00:00:00Z"});
  check(evaluate(t, "plan-stability"), GateStatus::Fail,
        "1 unexpected result(s); first: plan:model:cnn ERROR (unexpected): fresh process exited "
        "with status 3");
}

BOOST_AUTO_TEST_CASE(a_missing_negative_control_leaves_the_gate_not_verified) {
  TempStore t;
  std::vector<conformance::ResultRow> rows = passing_determinism_rows();
  rows = without(rows, "control:replay:timing-dependent-kernel");
  rows = without(rows, "control:config:chunk-size-kernel");
  rows = without(rows, "control:config:task-order-kernel");
  rows = without(rows, "control:plan:address-dependent-pass");
  add_build_run(t, rows, "Debug", {.started_at = "2030-01-01T00:00:00Z"});
  add_build_run(t, rows, "RelWithDebInfo", {.started_at = "2030-01-01T01:00:00Z"});
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

  // A later run of the controls alone completes the evidence.
  std::vector<conformance::ResultRow> controls;
  controls.reserve(conformance::kNegativeControls.size());
  for (const conformance::NegativeControl& control : conformance::kNegativeControls) {
    controls.push_back(determinism_row(std::string(control.case_id), control.family));
  }
  add_build_run(t, controls, "RelWithDebInfo", {.started_at = "2030-01-02T00:00:00Z"});
  check(evaluate(t, "determinism-100"), GateStatus::Pass, kReplayPass);
  check(evaluate(t, "thread-invariance"), GateStatus::Pass, kThreadsPass);
  // The controls-only run compared no fingerprint: still two runs of two build types.
  check(evaluate(t, "plan-stability"), GateStatus::Pass, kPlanPass);
}

BOOST_AUTO_TEST_CASE(a_control_excused_by_an_expectation_proves_nothing) {
  TempStore t;
  add_passing_determinism_suite(t);
  add_build_run(t,
                {determinism_row("control:threads:thread-count-kernel", kThreadInvarianceFamily,
                                 Outcome::Skipped, Verdict::Expected, "one hardware thread")},
                "RelWithDebInfo", {.started_at = "2030-01-02T00:00:00Z"});
  check(evaluate(t, "thread-invariance"), GateStatus::NotVerified,
        "negative control control:threads:thread-count-kernel did not catch its planted defect "
        "(SKIPPED, expected): one hardware thread");
}

BOOST_AUTO_TEST_CASE(each_blocker_has_its_own_reason_and_a_failure_outranks_missing_evidence) {
  TempStore t;
  std::vector<conformance::ResultRow> rows =
      without(passing_determinism_rows(), "control:replay:timing-dependent-kernel");
  rows.push_back(determinism_row("replay:onnx:test_add", kReplayFamily, Outcome::Crash,
                                 Verdict::Unexpected, "SIGSEGV in fresh process 2"));
  add_build_run(t, rows, "RelWithDebInfo");
  check(evaluate(t, "determinism-100"), GateStatus::Fail,
        "1 unexpected result(s); first: replay:onnx:test_add CRASH (unexpected): SIGSEGV in fresh "
        "process 2; negative control control:replay:timing-dependent-kernel has no result: a "
        "check not shown able to fail is not evidence; run `volta-audit run determinism`");
}

// --- plan-stability: fingerprints across every run of the commit ---

BOOST_AUTO_TEST_CASE(a_fingerprint_that_differs_between_two_runs_fails_naming_both) {
  TempStore t;
  const std::string moved =
      "plan=0000000000000001 ir=0b9e4d2f3a1c5e60 schedule=7a2c9e1b0d4f3a85 "
      "allocation=3e8d1c0b9a2f4e67 passes=fold-constants:1a2b3c4d5e6f7081";
  add_build_run(t, passing_determinism_rows(), "Debug", {.started_at = "2030-01-01T00:00:00Z"});
  std::vector<conformance::ResultRow> rows = without(passing_determinism_rows(), "plan:model:mlp");
  rows.push_back(plan_row("model:mlp", moved));
  const int64_t optimized =
      add_build_run(t, rows, "RelWithDebInfo", {.started_at = "2030-01-01T01:00:00Z"});
  BOOST_TEST(optimized == 2);
  check(evaluate(t, "plan-stability"), GateStatus::Fail,
        "1 plan fingerprint(s) differ between runs of the commit on one machine; first: "
        "plan:model:mlp: run 1 "
        "(Debug) gave \"" +
            kMlpFingerprint + "\", run 2 (RelWithDebInfo) gave \"" + moved + "\"");

  // The newest run agreeing again does not hide the older disagreement: every run is evidence.
  add_build_run(t, passing_determinism_rows(), "Release", {.started_at = "2030-01-01T02:00:00Z"});
  BOOST_TEST(gate_status_name(evaluate(t, "plan-stability").status) == "FAIL");
  // Replay and thread evidence are untouched by a plan that moved.
  check(evaluate(t, "determinism-100"), GateStatus::Pass, kReplayPass);
}

BOOST_AUTO_TEST_CASE(the_first_diverging_case_by_id_is_named_and_all_are_counted) {
  TempStore t;
  add_build_run(t, passing_determinism_rows(), "Debug", {.started_at = "2030-01-01T00:00:00Z"});
  std::vector<conformance::ResultRow> rows =
      without(without(passing_determinism_rows(), "plan:model:mlp"), "plan:model:cnn");
  rows.push_back(plan_row("model:mlp", kCnnFingerprint));
  rows.push_back(plan_row("model:cnn", kMlpFingerprint));
  add_build_run(t, rows, "Release", {.started_at = "2030-01-01T01:00:00Z"});
  check(evaluate(t, "plan-stability"), GateStatus::Fail,
        "2 plan fingerprint(s) differ between runs of the commit on one machine; first: "
        "plan:model:cnn: run 1 "
        "(Debug) gave \"" +
            kCnnFingerprint + "\", run 2 (Release) gave \"" + kMlpFingerprint + "\"");
}

BOOST_AUTO_TEST_CASE(the_negative_controls_own_fingerprint_is_not_compared) {
  TempStore t;
  // The planted pass makes the control's plan depend on a heap address: it differs per run.
  for (const auto& [build_type, hash] : {std::pair{"Debug", "plan=00007ffd1a2b"},
                                         std::pair{"RelWithDebInfo", "plan=00007ffc9e8d"}}) {
    std::vector<conformance::ResultRow> rows =
        without(passing_determinism_rows(), "control:plan:address-dependent-pass");
    rows.push_back(determinism_row("control:plan:address-dependent-pass", kPlanStabilityFamily));
    rows.back().output_hash = hash;
    add_build_run(t, rows, build_type);
  }
  check(evaluate(t, "plan-stability"), GateStatus::Pass, kPlanPass);
}

BOOST_AUTO_TEST_CASE(one_build_type_is_not_verified_and_says_which_build_is_missing) {
  TempStore t;
  add_build_run(t, passing_determinism_rows(), "RelWithDebInfo");
  add_build_run(t, passing_determinism_rows(), "RelWithDebInfo");
  check(evaluate(t, "plan-stability"), GateStatus::NotVerified,
        "plan fingerprints only from build type(s) RelWithDebInfo (2 run(s)); plan stability "
        "needs a Debug and an optimized (Release or RelWithDebInfo) build of the commit: run "
        "`volta-audit run determinism --family plan-stability` from a Debug build "
        "(scripts/ci/audit.sh builds the `debug` preset for it)");
  // The other gates compare within a run: one build type is enough for them.
  check(evaluate(t, "thread-invariance"), GateStatus::Pass, kThreadsPass);

  TempStore debug_only;
  add_build_run(debug_only, passing_determinism_rows(), "Debug");
  check(evaluate(debug_only, "plan-stability"), GateStatus::NotVerified,
        "plan fingerprints only from build type(s) Debug (1 run(s)); plan stability needs a "
        "Debug and an optimized (Release or RelWithDebInfo) build of the commit: run "
        "`volta-audit run determinism --family plan-stability` from an optimized build (the "
        "`relassert` preset)");
}

// Kernel variants (ISA, tile) are part of the plan: machines are never compared with each other.
BOOST_AUTO_TEST_CASE(plans_are_compared_per_machine_only) {
  TempStore t;
  add_build_run(t, passing_determinism_rows(), "Debug");
  std::vector<conformance::ResultRow> rows = without(passing_determinism_rows(), "plan:model:mlp");
  rows.push_back(plan_row("model:mlp", kCnnFingerprint));
  const int64_t other = add_build_run(t, rows, "RelWithDebInfo");
  t.db()
      .prepare("UPDATE run SET machine = 'other-host / AVX2 CPU' WHERE id = ?")
      .bind(1, other)
      .run();
  check(evaluate(t, "plan-stability"), GateStatus::NotVerified,
        "the Debug and optimized plan fingerprints come from different machines; run "
        "`volta-audit run determinism --family plan-stability` from both builds on one machine "
        "(scripts/ci/audit.sh does)");
  add_build_run(t, passing_determinism_rows(), "Release");
  check(evaluate(t, "plan-stability"), GateStatus::Pass,
        "3 cases: 3 pass, 0 expected non-pass, 0 skipped; 2 plan fingerprint(s) identical across 3 "
        "runs of build types Debug, RelWithDebInfo, Release; 1 negative control caught its "
        "planted defect");
}

BOOST_AUTO_TEST_CASE(plan_rows_without_a_fingerprint_compare_nothing) {
  TempStore t;
  std::vector<conformance::ResultRow> rows = passing_determinism_rows();
  for (conformance::ResultRow& r : rows) {
    if (r.case_id.starts_with("plan:")) r.output_hash.clear();
  }
  add_build_run(t, rows, "Debug");
  add_build_run(t, rows, "Release");
  check(evaluate(t, "plan-stability"), GateStatus::NotVerified,
        "no plan:SUBJECT case recorded a plan fingerprint; run `volta-audit run determinism "
        "--family plan-stability`");
}

// --- release: runs of dirty trees are not evidence ---

BOOST_AUTO_TEST_CASE(release_ignores_dirty_runs_in_every_determinism_gate) {
  TempStore t;
  add_build_run(t, passing_determinism_rows(), "Debug",
                {.dirty = true, .started_at = "2030-01-01T00:00:00Z"});
  check(evaluate(t, "determinism-100", true), GateStatus::NotVerified,
        "only dirty-tree determinism (families replay-100, strict-mode) results for commit "
        "0123456789ab, which are not release evidence; run `volta-audit run determinism` from a "
        "clean checkout");
  check(evaluate(t, "plan-stability", true), GateStatus::NotVerified,
        "only dirty-tree determinism (family plan-stability) results for commit 0123456789ab, "
        "which are not release evidence; run `volta-audit run determinism --family "
        "plan-stability` from a clean checkout");

  add_build_run(t, passing_determinism_rows(), "RelWithDebInfo",
                {.started_at = "2030-01-01T01:00:00Z"});
  // The dirty Debug run completes the pair only outside a release.
  check(evaluate(t, "plan-stability"), GateStatus::Pass, kPlanPass);
  BOOST_TEST(evaluate(t, "plan-stability", true)
                 .reason.starts_with(
                     "plan fingerprints only from build type(s) RelWithDebInfo (1 run(s));"));

  // A newer dirty run that diverges and fails counts only outside a release.
  std::vector<conformance::ResultRow> rows = without(passing_determinism_rows(), "plan:model:mlp");
  rows.push_back(plan_row("model:mlp", "plan=dirty"));
  rows = without(rows, "replay:model:mlp");
  rows.push_back(determinism_row("replay:model:mlp", kReplayFamily, Outcome::FailNumeric,
                                 Verdict::Unexpected, "bits differ"));
  add_build_run(t, rows, "Debug", {.dirty = true, .started_at = "2030-01-02T00:00:00Z"});
  add_build_run(t, passing_determinism_rows(), "Debug", {.started_at = "2030-01-01T02:00:00Z"});
  BOOST_TEST(gate_status_name(evaluate(t, "determinism-100").status) == "FAIL");
  BOOST_TEST(gate_status_name(evaluate(t, "plan-stability").status) == "FAIL");
  check(evaluate(t, "determinism-100", true), GateStatus::Pass, kReplayPass);
  check(evaluate(t, "thread-invariance", true), GateStatus::Pass, kThreadsPass);
  check(evaluate(t, "plan-stability", true), GateStatus::Pass, kPlanPass);
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
  BOOST_TEST(render_evidence(t) ==
             "| family            | cases | pass | fail | skipped | negative controls caught | "
             "evidence                                                  |\n"
             "|-------------------|-------|------|------|---------|--------------------------|"
             "-----------------------------------------------------------|\n"
             "| replay-100        | 2     | 2    | 0    | 0       | 1 of 1                   | "
             "100 runs + 3 fresh processes at 3 threads                 |\n"
             "| thread-invariance | 3     | 2    | 1    | 0       | 2 of 3                   | "
             "configurations: passes-off, task-order-reverse, threads-1 |\n"
             "| plan-stability    | 2     | 2    | 0    | 0       | 1 of 1                   | "
             "build types Debug, RelWithDebInfo                         |\n"
             "| strict-mode       | 2     | 2    | 0    | 0       | —                        | "
             "—                                                         |\n");
}

BOOST_AUTO_TEST_CASE(the_evidence_section_is_unavailable_without_results) {
  TempStore t;
  add_passing_determinism_suite(t);
  BOOST_CHECK_EXCEPTION(render_evidence(t, testing::kOtherCommit), SectionUnavailable,
                        [](const SectionUnavailable& e) {
                          return std::string(e.what()) ==
                                 "no determinism results for commit fedcba987654; run "
                                 "`volta-audit run determinism` first";
                        });
}

}  // namespace
}  // namespace volta::audit
