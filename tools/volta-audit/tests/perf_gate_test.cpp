// The perf-double-pass gate over hand-built perf runs: complete evidence is a verdict for every
// benchmark volta-perf lists, the newest of any usable perf run of the commit, compared with a
// baseline of another commit, on the committed policy's samples, alpha and thresholds. Each way
// evidence can fall short of that has its case: a filtered rerun, an unlisted benchmark, a
// self-made baseline, a pass cut short, another policy, a planted slowdown, an error.
#define BOOST_TEST_MODULE perf_gate
#include <boost/test/unit_test.hpp>

#include "gate_testing.h"
#include "perf_evidence.h"

namespace volta::audit {
namespace {

using testing::add_perf_run;
using testing::check;
using testing::kCommit;
using testing::kOtherCommit;
using testing::TempStore;
using testing::verdict;

GateResult evaluate(TempStore& t, bool release = false, std::string_view commit = kCommit) {
  return testing::evaluate(t, "perf-double-pass", release, commit);
}

// A perf run listing `listed` with these verdicts.
int64_t perf_run(TempStore& t, const std::vector<std::string>& listed,
                 const std::vector<PerfVerdictRow>& verdicts,
                 const testing::PerfRunSpec& spec = {}) {
  testing::PerfRunSpec open = spec;
  open.complete = false;
  const int64_t run = add_perf_run(t, open);
  record_perf_listing(t.db(), run, listed);
  record_perf_verdicts(t.db(), run, verdicts);
  if (spec.complete) t.store().finish_run(run);
  return run;
}

std::string counted(int64_t runs, int compared, int unchanged, int noise, int improved) {
  return std::to_string(compared) + " benchmark(s) compared with their baseline in " +
         std::to_string(runs) + " perf run(s): " + std::to_string(unchanged) + " unchanged, " +
         std::to_string(noise) + " noise (suspect in pass 1, not repeated in pass 2), " +
         std::to_string(improved) + " improvement(s)";
}

BOOST_AUTO_TEST_CASE(complete_evidence_passes_counting_every_verdict) {
  TempStore t;
  perf_run(t, {"a", "b", "c", "d"},
           {verdict("a", PerfVerdict::Unchanged, 0.01, 0.4),
            verdict("b", PerfVerdict::Unchanged, -0.02, 0.3),
            verdict("c", PerfVerdict::Noise, 0.09, 0.002, 0.01, 0.6),
            verdict("d", PerfVerdict::Improvement, -0.2, 4e-5, -0.19, 2e-6)});
  check(evaluate(t), GateStatus::Pass, counted(1, 4, 2, 1, 1));
}

BOOST_AUTO_TEST_CASE(without_a_usable_perf_run_nothing_is_verified) {
  TempStore t;
  const int64_t killed =
      perf_run(t, {"gemm"}, {verdict("gemm", PerfVerdict::Unchanged)}, {.complete = false});
  (void)killed;
  check(evaluate(t), GateStatus::NotVerified,
        "no usable perf run for commit 0123456789ab; run `volta-audit perf`");
  perf_run(t, {"gemm"}, {verdict("gemm", PerfVerdict::Unchanged)}, {.dirty = true});
  BOOST_TEST(gate_status_name(evaluate(t).status) == "PASS");
  check(evaluate(t, true), GateStatus::NotVerified,
        "no usable perf run for commit 0123456789ab (runs of a dirty tree are not release "
        "evidence); run `volta-audit perf`");
}

BOOST_AUTO_TEST_CASE(regressions_fail_listing_both_passes) {
  TempStore t;
  const int64_t run =
      perf_run(t, {"softmax", "gemm/256", "conv", "attention"},
               {verdict("softmax", PerfVerdict::Unchanged, 0.01, 0.4),
                verdict("gemm/256", PerfVerdict::Regression, 0.213, 4.1e-5, 0.198, 1.5e-6),
                verdict("conv", PerfVerdict::Noise, 0.09, 0.002, 0.01, 0.6),
                verdict("attention", PerfVerdict::Regression, 0.07, 0.003, 0.065, 0.0004)});
  const std::string r = std::to_string(run);
  check(evaluate(t), GateStatus::Fail,
        "2 regression(s) seen in both passes: attention +7.0% (p=0.003) in pass 1, +6.5% "
        "(p=0.0004) in pass 2 (run " +
            r +
            "); gemm/256 +21.3% (p=4.1e-05) in pass 1, +19.8% "
            "(p=1.5e-06) in pass 2 (run " +
            r + ")");
}

// #1: a later run of a clean subset does not hide a regression of the full run.
BOOST_AUTO_TEST_CASE(a_filtered_rerun_does_not_hide_a_regression) {
  TempStore t;
  const std::vector<std::string> all = {"gemm", "softmax"};
  const int64_t full = perf_run(t, all,
                                {verdict("gemm", PerfVerdict::Regression, 0.2, 1e-4, 0.2, 1e-5),
                                 verdict("softmax", PerfVerdict::Unchanged)},
                                {.started_at = "2030-01-01T00:00:00Z"});
  perf_run(t, all, {verdict("softmax", PerfVerdict::Unchanged)},
           {.started_at = "2030-01-02T00:00:00Z"});
  check(evaluate(t), GateStatus::Fail,
        "1 regression(s) seen in both passes: gemm +20.0% (p=0.0001) in pass 1, +20.0% (p=1e-05) "
        "in pass 2 (run " +
            std::to_string(full) + ")");
  // Re-measuring the regressed benchmark itself is what supersedes it.
  perf_run(t, all, {verdict("gemm", PerfVerdict::Unchanged)},
           {.started_at = "2030-01-03T00:00:00Z"});
  check(evaluate(t), GateStatus::Pass, counted(2, 2, 2, 0, 0));
}

BOOST_AUTO_TEST_CASE(a_listed_benchmark_without_a_verdict_is_not_verified) {
  TempStore t;
  perf_run(t, {"gemm", "softmax", "zeta"}, {verdict("gemm", PerfVerdict::Unchanged)});
  check(evaluate(t), GateStatus::NotVerified,
        "2 of the 3 benchmarks volta-perf lists have no verdict for the commit; first: softmax; "
        "run `volta-audit perf`");
}

BOOST_AUTO_TEST_CASE(a_run_without_the_benchmark_list_proves_no_coverage) {
  TempStore t;
  perf_run(t, {}, {verdict("gemm", PerfVerdict::Unchanged)});
  check(evaluate(t), GateStatus::NotVerified,
        "no usable perf run of commit 0123456789ab recorded the list of volta-perf's benchmarks, "
        "so nothing says its verdicts cover them all; run `volta-audit perf`");
}

// #2: the commit compared with itself proves nothing about a change.
BOOST_AUTO_TEST_CASE(a_baseline_from_the_commit_under_test_is_not_verified) {
  TempStore t;
  PerfVerdictRow self = verdict("gemm", PerfVerdict::Unchanged, 0.0, 0.9);
  self.baseline = PerfBaseline{.id = 1, .commit = kCommit, .kind = "candidate"};
  const int64_t run = perf_run(t, {"gemm"}, {self});
  check(evaluate(t), GateStatus::NotVerified,
        "1 benchmark(s) compared with a baseline recorded from the commit under test, which "
        "proves nothing about a change; first: gemm (run " +
            std::to_string(run) +
            ", baseline candidate); a baseline must come from an earlier commit measured on this "
            "machine");
  PerfVerdictRow earlier = self;
  earlier.baseline->commit = kOtherCommit;
  perf_run(t, {"gemm"}, {earlier});
  check(evaluate(t), GateStatus::Pass, counted(1, 1, 1, 0, 0));
}

BOOST_AUTO_TEST_CASE(candidates_only_compare_nothing) {
  TempStore t;
  perf_run(t, {"a", "b"}, {verdict("a", PerfVerdict::New), verdict("b", PerfVerdict::New)});
  check(evaluate(t), GateStatus::NotVerified,
        "2 benchmark(s) only recorded candidate baselines, nothing was compared; first: a; a "
        "baseline must come from an earlier commit measured on this machine");
}

// #3: a pass 1 cut short (a crash midway) cannot reach alpha: it reads "unchanged".
BOOST_AUTO_TEST_CASE(verdicts_on_too_few_samples_are_not_verified) {
  TempStore t;
  PerfVerdictRow thin = verdict("gemm", PerfVerdict::Unchanged, 0.3, 0.4);
  thin.pass1.samples = 2;
  const int64_t run = perf_run(t, {"gemm"}, {thin});
  check(evaluate(t), GateStatus::NotVerified,
        "1 verdict(s) on fewer samples than the policy needs (9 in pass 1, 15 in pass 2 for a "
        "suspect); first: gemm (run " +
            std::to_string(run) +
            ": 2 + 0 samples, unchanged); run "
            "`volta-audit perf`");
  // A suspect that pass 2 re-measured with one sample reads as noise: not evidence either.
  TempStore u;
  PerfVerdictRow noise = verdict("gemm", PerfVerdict::Noise, 0.3, 1e-4, 0.2, 0.5);
  noise.pass2->samples = 1;
  perf_run(u, {"gemm"}, {noise});
  BOOST_TEST(gate_status_name(evaluate(u).status) == "NOT VERIFIED");
}

BOOST_AUTO_TEST_CASE(verdicts_judged_with_another_policy_are_not_verified) {
  TempStore t;
  PerfVerdictRow loose = verdict("gemm", PerfVerdict::Unchanged, 0.3, 0.4);
  loose.threshold = 0.5;
  const int64_t run = perf_run(t, {"gemm"}, {loose});
  check(evaluate(t), GateStatus::NotVerified,
        "1 verdict(s) judged with another alpha or threshold than governance/perf-slo.md (alpha "
        "0.01, threshold per benchmark); first: gemm (run " +
            std::to_string(run) + ": alpha 0.01, threshold 0.5 where the policy says 0.05)");
  TempStore u;
  PerfVerdictRow lax = verdict("gemm", PerfVerdict::Unchanged);
  lax.alpha = 0.5;
  perf_run(u, {"gemm"}, {lax});
  BOOST_TEST(gate_status_name(evaluate(u).status) == "NOT VERIFIED");
}

BOOST_AUTO_TEST_CASE(errors_are_not_verified_and_name_the_first) {
  TempStore t;
  const int64_t run = perf_run(t, {"softmax", "model/a", "model/b"},
                               {verdict("softmax", PerfVerdict::Unchanged, 0.01, 0.4),
                                verdict("model/b", PerfVerdict::Error, std::nullopt, std::nullopt,
                                        std::nullopt, std::nullopt, "no data"),
                                verdict("model/a", PerfVerdict::Error, std::nullopt, std::nullopt,
                                        std::nullopt, std::nullopt, "crashed")});
  check(evaluate(t), GateStatus::NotVerified,
        "2 benchmark(s) errored, so were not compared; first: model/a (run " + std::to_string(run) +
            "): crashed");
}

BOOST_AUTO_TEST_CASE(a_run_with_a_planted_slowdown_is_not_evidence) {
  TempStore t;
  const int64_t run =
      perf_run(t, {"gemm"}, {verdict("gemm", PerfVerdict::Regression, 0.2, 1e-4, 0.2, 1e-5)},
               {.inputs = {testing::committed_input("governance/perf-slo.md"),
                           {conformance::RunInput::Kind::Option, "VOLTA_PLANT_SLOWDOWN", "gemm:20",
                            "planted", "absent"}}});
  check(evaluate(t), GateStatus::NotVerified,
        "no usable perf run for commit 0123456789ab: 1 run(s) refused, first: run " +
            std::to_string(run) +
            " (perf) ran with VOLTA_PLANT_SLOWDOWN gemm:20, a planted test-only defect; run "
            "`volta-audit perf`");
}

BOOST_AUTO_TEST_CASE(another_commits_verdicts_are_not_this_commits) {
  TempStore t;
  perf_run(t, {"gemm"}, {verdict("gemm", PerfVerdict::Unchanged)});
  perf_run(t, {"gemm"}, {verdict("gemm", PerfVerdict::Regression, 0.2, 1e-4, 0.2, 1e-5)},
           {.commit = kOtherCommit});
  BOOST_TEST(gate_status_name(evaluate(t).status) == "PASS");
  BOOST_TEST(gate_status_name(evaluate(t, false, kOtherCommit).status) == "FAIL");
}

}  // namespace
}  // namespace volta::audit
