#define BOOST_TEST_MODULE perf_store
// The perf rows: samples, verdicts, the newest baseline per benchmark with its samples, and
// explicit baseline moves (`volta-audit perf baseline accept`).

#include "perf_store.h"

#include <boost/test/unit_test.hpp>

#include "perf_evidence.h"
#include "volta/error.h"

namespace volta::audit {
namespace {

using testing::add_pass_samples;
using testing::add_perf_run;
using testing::kPerfMachine;
using testing::TempStore;

struct BaselineRow {
  std::string benchmark = {}, commit = {}, reason = {}, kind = {};
  double value = 0;
  std::optional<double> old_value = {};
  int64_t run_id = 0;
};

std::vector<BaselineRow> baseline_rows(TempStore& t) {
  conformance::Statement q = t.db().prepare(
      "SELECT benchmark, commit_sha, reason, kind, value, old_value, run_id, machine, unit "
      "FROM perf_baseline ORDER BY id");
  std::vector<BaselineRow> rows;
  while (q.step()) {
    BaselineRow r{q.column_text(0), q.column_text(1), q.column_text(2), q.column_text(3),
                  q.column_double(4)};
    if (!q.column_is_null(5)) r.old_value = q.column_double(5);
    r.run_id = q.column_int(6);
    BOOST_TEST(q.column_text(7) == kPerfMachine);
    BOOST_TEST(q.column_text(8) == "s");
    rows.push_back(r);
  }
  return rows;
}

BOOST_AUTO_TEST_CASE(samples_are_rows_with_their_pass_process_and_counters) {
  TempStore t;
  const int64_t run = add_perf_run(t);
  PerfSample s{.benchmark = "gemm",
               .pass = 2,
               .process = 1,
               .repetition = 4,
               .seconds = 0.002,
               .iterations = 50,
               .variant = "f32_gemm_avx512_14x32",
               .threads = 2,
               .gflops = 16.5,
               .gbytes_per_s = std::nullopt,
               .peak_bytes = 4096,
               .context = "k=1"};
  record_perf_samples(t.db(), run, std::vector{s});
  conformance::Statement q = t.db().prepare(
      "SELECT benchmark, pass, process, repetition, value, unit, variant, threads, gflops, "
      "gbytes_per_s, peak_bytes, context FROM perf_sample");
  BOOST_REQUIRE(q.step());
  BOOST_TEST(q.column_text(0) == "gemm");
  BOOST_TEST(q.column_int(1) == 2);
  BOOST_TEST(q.column_int(2) == 1);
  BOOST_TEST(q.column_int(3) == 4);
  BOOST_TEST(q.column_double(4) == 0.002);
  BOOST_TEST(q.column_text(5) == "s");
  BOOST_TEST(q.column_text(6) == "f32_gemm_avx512_14x32");
  BOOST_TEST(q.column_int(7) == 2);
  BOOST_TEST(q.column_double(8) == 16.5);
  BOOST_TEST(q.column_is_null(9));
  BOOST_TEST(q.column_int(10) == 4096);
  BOOST_TEST(q.column_text(11) == "k=1");
}

BOOST_AUTO_TEST_CASE(the_newest_baseline_brings_its_runs_pass_1_samples) {
  TempStore t;
  BOOST_TEST(!machine_has_baselines(t.db(), kPerfMachine));
  const int64_t first = add_perf_run(t);
  add_pass_samples(t, first, "gemm", 1, {3, 1, 2});
  add_pass_samples(t, first, "gemm", 2, {9, 9});  // pass 2 samples are never a baseline
  record_baseline_moves(t.db(), kPerfMachine,
                        std::vector<BaselineMove>{{.benchmark = "gemm",
                                                   .value = 2,
                                                   .commit = testing::kCommit,
                                                   .run_id = first,
                                                   .reason = "first perf run on this machine",
                                                   .kind = "candidate"}});
  BOOST_TEST(machine_has_baselines(t.db(), kPerfMachine));
  BOOST_TEST(!machine_has_baselines(t.db(), "cpu=Other"));
  const int64_t second = add_perf_run(t);
  add_pass_samples(t, second, "gemm", 1, {5, 6, 7}, "v2");
  record_baseline_moves(t.db(), kPerfMachine,
                        std::vector<BaselineMove>{{.benchmark = "gemm",
                                                   .value = 6,
                                                   .old_value = 2,
                                                   .commit = testing::kCommit,
                                                   .run_id = second,
                                                   .reason = "faster kernel"}});
  const auto baselines = newest_baselines(t.db(), kPerfMachine);
  BOOST_REQUIRE_EQUAL(baselines.size(), 1u);
  const PerfBaseline& b = baselines.at("gemm");
  BOOST_TEST(b.value == 6.0);
  BOOST_TEST(b.kind == "accepted");
  BOOST_TEST(*b.run_id == second);
  BOOST_TEST(b.variant == "v2");
  BOOST_TEST(b.samples == (std::vector<double>{5, 6, 7}), boost::test_tools::per_element());
  BOOST_TEST(newest_baselines(t.db(), "cpu=Other").empty());
}

BOOST_AUTO_TEST_CASE(accept_moves_to_the_newest_complete_run_with_a_reason_and_old_value) {
  TempStore t;
  const int64_t old_run = add_perf_run(t, {.started_at = "2030-01-01T00:00:00Z"});
  add_pass_samples(t, old_run, "gemm", 1, {1, 2, 3});
  add_pass_samples(t, old_run, "softmax", 1, {10, 20, 30});
  record_baseline_moves(t.db(), kPerfMachine,
                        std::vector<BaselineMove>{{.benchmark = "gemm",
                                                   .value = 2,
                                                   .commit = testing::kOtherCommit,
                                                   .run_id = old_run,
                                                   .reason = "first perf run on this machine",
                                                   .kind = "candidate"}});
  const int64_t new_run = add_perf_run(t, {.started_at = "2030-01-02T00:00:00Z"});
  add_pass_samples(t, new_run, "gemm", 1, {4, 6, 5, 7});
  // Neither an incomplete run nor another machine's run is a source.
  const int64_t killed = add_perf_run(t, {.complete = false, .started_at = "2030-01-03T00:00:00Z"});
  add_pass_samples(t, killed, "gemm", 1, {100});
  const int64_t elsewhere =
      add_perf_run(t, {.machine = "cpu=Other", .started_at = "2030-01-04T00:00:00Z"});
  add_pass_samples(t, elsewhere, "gemm", 1, {200});

  const std::vector<BaselineMove> moves =
      accept_baselines(t.db(), kPerfMachine, {"gemm", "softmax"}, "new GEMM tile is faster");
  BOOST_REQUIRE_EQUAL(moves.size(), 2u);
  const std::vector<BaselineRow> rows = baseline_rows(t);
  BOOST_REQUIRE_EQUAL(rows.size(), 3u);
  BOOST_TEST(rows[1].benchmark == "gemm");
  BOOST_TEST(rows[1].value == 5.5);  // median of the newest complete run's pass 1
  BOOST_TEST(*rows[1].old_value == 2.0);
  BOOST_TEST(rows[1].run_id == new_run);
  BOOST_TEST(rows[1].commit == testing::kCommit);
  BOOST_TEST(rows[1].reason == "new GEMM tile is faster");
  BOOST_TEST(rows[1].kind == "accepted");
  BOOST_TEST(rows[2].benchmark == "softmax");
  BOOST_TEST(rows[2].value == 20.0);
  BOOST_TEST(!rows[2].old_value.has_value());
  BOOST_TEST(rows[2].run_id == old_run);
  BOOST_TEST(newest_baselines(t.db(), kPerfMachine).at("gemm").value == 5.5);
}

BOOST_AUTO_TEST_CASE(accept_refuses_an_empty_reason_and_an_unknown_benchmark) {
  TempStore t;
  const int64_t run = add_perf_run(t);
  add_pass_samples(t, run, "gemm", 1, {1, 2, 3});
  BOOST_CHECK_EXCEPTION(accept_baselines(t.db(), kPerfMachine, {"gemm"}, "  "), VoltaError,
                        [](const VoltaError& e) {
                          return std::string(e.what()).find("needs a reason") != std::string::npos;
                        });
  // Exact names only, and nothing is moved when one name is unknown.
  BOOST_CHECK_EXCEPTION(accept_baselines(t.db(), kPerfMachine, {"gemm", "gem"}, "why"), VoltaError,
                        [](const VoltaError& e) {
                          return std::string(e.what()).find(
                                     "no complete perf run on this machine has samples of 'gem'") !=
                                 std::string::npos;
                        });
  BOOST_TEST(baseline_rows(t).empty());
  BOOST_CHECK_THROW(accept_baselines(t.db(), "cpu=Other", {"gemm"}, "why"), VoltaError);
}

BOOST_AUTO_TEST_CASE(verdicts_keep_both_passes_figures) {
  TempStore t;
  const int64_t run = add_perf_run(t);
  PerfVerdictRow row = testing::verdict("gemm", PerfVerdict::Regression, 0.2, 4e-5, 0.19, 1e-6,
                                        "slower in both passes");
  row.baseline = PerfBaseline{.commit = testing::kOtherCommit, .kind = "accepted"};
  row.baseline_median = 0.9e-3;
  PerfVerdictRow fresh = testing::verdict("new-one", PerfVerdict::New);
  record_perf_verdicts(t.db(), run, std::vector{row, fresh});
  conformance::Statement q = t.db().prepare(
      "SELECT benchmark, baseline_commit, baseline_kind, baseline_median, pass1_samples, "
      "pass1_change, pass1_p, pass2_samples, pass2_change, pass2_p, verdict, detail "
      "FROM perf_verdict ORDER BY benchmark");
  BOOST_REQUIRE(q.step());
  BOOST_TEST(q.column_text(0) == "gemm");
  BOOST_TEST(q.column_text(1) == testing::kOtherCommit);
  BOOST_TEST(q.column_text(2) == "accepted");
  BOOST_TEST(q.column_double(3) == 0.9e-3);
  BOOST_TEST(q.column_int(4) == 9);
  BOOST_TEST(q.column_double(5) == 0.2);
  BOOST_TEST(q.column_double(6) == 4e-5);
  BOOST_TEST(q.column_int(7) == 15);
  BOOST_TEST(q.column_double(8) == 0.19);
  BOOST_TEST(q.column_double(9) == 1e-6);
  BOOST_TEST(q.column_text(10) == "regression");
  BOOST_TEST(q.column_text(11) == "slower in both passes");
  BOOST_REQUIRE(q.step());
  BOOST_TEST(q.column_text(0) == "new-one");
  BOOST_TEST(q.column_text(1) == "");
  BOOST_TEST(q.column_is_null(3));
  BOOST_TEST(q.column_is_null(5));
  BOOST_TEST(q.column_int(7) == 0);
  BOOST_TEST(q.column_is_null(8));
  BOOST_TEST(q.column_text(10) == "new");
}

}  // namespace
}  // namespace volta::audit
