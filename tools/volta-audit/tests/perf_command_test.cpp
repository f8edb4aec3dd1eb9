#define BOOST_TEST_MODULE perf_command
// `volta-audit perf` end to end with the real volta-perf on a fresh database: the first run
// on a machine records candidate baselines (gate NOT VERIFIED), a planted 20 % GEMM slowdown
// (VOLTA_PLANT_SLOWDOWN=gemm:20) is a regression in both passes (exit 1; the gate refuses the
// planted run), and a rerun without it reports none (the gate stays NOT VERIFIED: a baseline
// of the commit under test proves no change). The filter stays robust to how the GEMM
// benchmarks are named.

#include <stdlib.h>

#include <boost/test/unit_test.hpp>
#include <map>
#include <string>

#include "store_builder.h"
#include "volta/conformance/store.h"
#include "volta_audit_binary.h"

namespace volta::audit {
namespace {

using testing::quoted;  // std::quoted would win by ADL on std::string: spelt testing::quoted there
using testing::volta_audit;

constexpr const char* kFilter = "f32_gemm/.*size:256/threads:1";

std::string perf_arguments(const testing::TempStore& t) {
  return std::string("perf --perf-binary ") + quoted(VOLTA_PERF_BINARY_FOR_TESTS) + " --filter " +
         quoted(kFilter) + " --db " + quoted(t.path());
}

// verdict -> count in the newest run.
std::map<std::string, int> newest_verdicts(testing::TempStore& t) {
  conformance::Statement q = t.db().prepare(
      "SELECT verdict, count(*) FROM perf_verdict WHERE run_id = (SELECT max(id) FROM run) "
      "GROUP BY verdict");
  std::map<std::string, int> out;
  while (q.step()) out[q.column_text(0)] = static_cast<int>(q.column_int(1));
  return out;
}

int64_t count(testing::TempStore& t, const std::string& sql) {
  conformance::Statement q = t.db().prepare(sql);
  BOOST_REQUIRE(q.step());
  return q.column_int(0);
}

BOOST_AUTO_TEST_CASE(first_run_then_a_planted_slowdown_then_no_change) {
  testing::TempStore t;
  unsetenv("VOLTA_PLANT_SLOWDOWN");

  const testing::ProcessResult first = volta_audit(perf_arguments(t));
  BOOST_TEST_MESSAGE(first.output);
  BOOST_TEST(first.status == 0);
  BOOST_TEST(first.output.find("unknown machine") != std::string::npos);
  BOOST_TEST(first.output.find("gate perf-double-pass: NOT VERIFIED") != std::string::npos);
  const int benchmarks = newest_verdicts(t)["new"];
  BOOST_TEST(benchmarks >= 1);
  BOOST_TEST(newest_verdicts(t).size() == 1u);
  BOOST_TEST(count(t,
                   "SELECT count(*) FROM perf_baseline WHERE kind = 'candidate' AND reason = "
                   "'first perf run on this machine'") == benchmarks);
  BOOST_TEST(count(t, "SELECT count(*) FROM perf_sample WHERE pass = 1") >= 9 * benchmarks);
  BOOST_TEST(count(t,
                   "SELECT count(*) FROM run WHERE suites = 'perf' AND status = 'complete' "
                   "AND machine LIKE 'cpu=%;isa=%;cores=%;compiler=%;build=%'") == 1);

  setenv("VOLTA_PLANT_SLOWDOWN", "gemm:20", 1);
  const testing::ProcessResult planted = volta_audit(perf_arguments(t));
  unsetenv("VOLTA_PLANT_SLOWDOWN");
  BOOST_TEST_MESSAGE(planted.output);
  BOOST_TEST(planted.status == 1);  // this run found regressions
  BOOST_TEST(newest_verdicts(t)["regression"] == benchmarks);
  // A run with a planted slowdown is a demonstration: the gate does not take it as evidence.
  BOOST_TEST(planted.output.find("gate perf-double-pass: NOT VERIFIED") != std::string::npos);
  BOOST_TEST(count(t,
                   "SELECT count(*) FROM run_input WHERE kind = 'option' AND name = "
                   "'VOLTA_PLANT_SLOWDOWN' AND path = 'gemm:20'") == 1);
  // Nor are its figures ever a baseline: accept takes the newest run without a plant.
  std::string bench;
  {  // a statement left mid-result would pin this connection's read snapshot
    conformance::Statement name = t.db().prepare("SELECT benchmark FROM perf_verdict LIMIT 1");
    BOOST_REQUIRE(name.step());
    bench = name.column_text(0);
  }
  const testing::ProcessResult accepted = volta_audit(
      "perf baseline accept " + testing::quoted(bench) + " --reason 'the clean run' " +
      "--perf-binary " + quoted(VOLTA_PERF_BINARY_FOR_TESTS) + " --db " + quoted(t.path()));
  BOOST_TEST(accepted.status == 0, accepted.output);
  BOOST_TEST(count(t,
                   "SELECT count(*) FROM perf_baseline WHERE kind = 'accepted' AND run_id = "
                   "(SELECT min(id) FROM run)") == 1);
  // Pass 2 re-measured every suspect in three fresh processes, and both passes saw > 5 %.
  BOOST_TEST(count(t,
                   "SELECT count(DISTINCT process) FROM perf_sample WHERE pass = 2 AND run_id = "
                   "(SELECT max(id) FROM run)") == 3);
  BOOST_TEST(count(t,
                   "SELECT count(*) FROM perf_verdict WHERE run_id = (SELECT max(id) FROM run) "
                   "AND pass1_change > 0.05 AND pass2_change > 0.05 AND pass2_samples >= 15") ==
             benchmarks);

  const testing::ProcessResult rerun = volta_audit(perf_arguments(t));
  BOOST_TEST_MESSAGE(rerun.output);
  BOOST_TEST(rerun.status == 0);
  BOOST_TEST(newest_verdicts(t)["regression"] == 0);
  // Its baselines were recorded by this same commit: the comparison proves nothing about a
  // change, and the filter left most of volta-perf's benchmarks without a verdict.
  BOOST_TEST(rerun.output.find("gate perf-double-pass: NOT VERIFIED") != std::string::npos);
  BOOST_TEST(rerun.output.find("compared with a baseline recorded from the commit under test") !=
             std::string::npos);
  BOOST_TEST(rerun.output.find("benchmarks volta-perf lists have no verdict for the commit") !=
             std::string::npos);
  // The whole list was recorded, whatever the filter.
  BOOST_TEST(
      count(t, "SELECT count(*) FROM perf_listing WHERE run_id = (SELECT max(id) FROM run)") >
      benchmarks);
}

BOOST_AUTO_TEST_CASE(baseline_accept_moves_with_a_reason_and_refuses_unknown_names) {
  testing::TempStore t;
  unsetenv("VOLTA_PLANT_SLOWDOWN");
  const std::string binary = std::string(" --perf-binary ") + quoted(VOLTA_PERF_BINARY_FOR_TESTS);
  BOOST_REQUIRE(volta_audit(perf_arguments(t)).status == 0);
  std::string bench;
  {  // a statement left mid-result would pin this connection's read snapshot
    conformance::Statement name = t.db().prepare("SELECT benchmark FROM perf_verdict LIMIT 1");
    BOOST_REQUIRE(name.step());
    bench = name.column_text(0);
  }

  const testing::ProcessResult moved =
      volta_audit("perf baseline accept " + testing::quoted(bench) +
                  " --reason 'measured on a quiet machine'" + binary + " --db " + quoted(t.path()));
  BOOST_TEST_MESSAGE(moved.output);
  BOOST_TEST(moved.status == 0);
  BOOST_TEST(count(t,
                   "SELECT count(*) FROM perf_baseline WHERE kind = 'accepted' AND "
                   "reason = 'measured on a quiet machine' AND old_value IS NOT NULL") == 1);

  const testing::ProcessResult unknown = volta_audit(
      "perf baseline accept no-such-benchmark --reason why" + binary + " --db " + quoted(t.path()));
  BOOST_TEST(unknown.status == 1);
  BOOST_TEST(unknown.output.find("no complete perf run on this machine has samples of "
                                 "'no-such-benchmark'") != std::string::npos);
  const testing::ProcessResult no_reason =
      volta_audit("perf baseline accept " + testing::quoted(bench) + " --reason ''" + binary +
                  " --db " + quoted(t.path()));
  BOOST_TEST(no_reason.status == 1);
  BOOST_TEST(no_reason.output.find("needs a reason") != std::string::npos);
  BOOST_TEST(volta_audit("perf baseline accept " + testing::quoted(bench) + binary + " --db " +
                         quoted(t.path()))
                 .status == 2);
  BOOST_TEST(volta_audit(perf_arguments(t) + " --repetitions 5").status == 2);
}

}  // namespace
}  // namespace volta::audit
