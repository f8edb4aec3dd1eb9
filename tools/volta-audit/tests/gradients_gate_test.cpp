// The gradients gate on hand-built evidence: complete evidence passes; a case missing on one
// backend, an engine case recorded with fewer thread counts, an uncaught control, an unexpected
// failure, or evidence only from a run that planted a wrong VJP does not.
#define BOOST_TEST_MODULE gradients_gate_test
#include <boost/test/unit_test.hpp>
#include <string>

#include "committed_inputs.h"
#include "gates.h"
#include "gradients_evidence.h"

namespace volta::audit {
namespace {

using conformance::Outcome;
using conformance::Verdict;
using testing::gradients_rows;
using testing::kCommit;
using testing::result;
using testing::TempStore;
using testing::Where;

GateResult gate(TempStore& t) {
  return evaluate_gate(t.db(), *find_gate("gradients"), kCommit, false, kCommit);
}

const testing::RunSpec kGradients{.suites = "gradients"};

BOOST_AUTO_TEST_CASE(complete_evidence_passes) {
  TempStore t;
  testing::add_passing_gradients_suite(t);
  const GateResult r = gate(t);
  BOOST_TEST(gate_status_name(r.status) == "PASS", r.reason);
  BOOST_TEST(r.reason.find("1 negative control caught its planted defect") != std::string::npos,
             r.reason);
  BOOST_TEST(r.blocker);
}

BOOST_AUTO_TEST_CASE(a_case_missing_on_one_backend_is_not_verified) {
  TempStore t;
  t.add_run(testing::without(gradients_rows("cpu"), "engine:Tanh(shape=[3,5])"), kGradients);
  t.add_run(gradients_rows("reference"), kGradients);
  const GateResult r = gate(t);
  BOOST_TEST(gate_status_name(r.status) == "NOT VERIFIED", r.reason);
  BOOST_TEST(r.reason.find("first: engine:Tanh(shape=[3,5]); run `volta-audit run gradients`") !=
                 std::string::npos,
             r.reason);
}

BOOST_AUTO_TEST_CASE(an_engine_case_with_fewer_thread_counts_is_not_verified) {
  TempStore t;
  std::vector<conformance::ResultRow> cpu = gradients_rows("cpu");
  for (conformance::ResultRow& row : cpu) {
    if (row.case_id == "engine:Tanh(shape=[3,5])") row.params = "dtypes=f32,f64 threads=1,2";
  }
  t.add_run(cpu, kGradients);
  t.add_run(gradients_rows("reference"), kGradients);
  const GateResult r = gate(t);
  BOOST_TEST(gate_status_name(r.status) == "NOT VERIFIED", r.reason);
  BOOST_TEST(r.reason.find("every engine case compares dtypes=f32,f64 threads=1,2,3,4,8") !=
                 std::string::npos,
             r.reason);
}

BOOST_AUTO_TEST_CASE(an_uncaught_control_or_an_unexpected_failure_blocks) {
  TempStore t;
  t.add_run(gradients_rows("cpu"), kGradients);
  t.add_run(testing::with(gradients_rows("reference"),
                          {result(std::string(conformance::kWrongVjpControl), Outcome::FailNumeric,
                                  Verdict::Unexpected, "negative control NOT caught",
                                  Where{"gradients", "reference", "controls"})}),
            kGradients);
  GateResult r = gate(t);
  BOOST_TEST(gate_status_name(r.status) == "NOT VERIFIED", r.reason);
  BOOST_TEST(r.reason.find("negative control control:gradients:wrong-vjp did not catch") !=
                 std::string::npos,
             r.reason);
  // On another machine: on the first one a case whose outcome changes is FLAKY.
  testing::RunSpec elsewhere = kGradients;
  elsewhere.machine = "other-box / Test CPU";
  t.add_run(
      testing::with(gradients_rows("reference"),
                    {result("vjp:Tanh(shape=[3,5])", Outcome::FailNumeric, Verdict::Unexpected,
                            "input 0 element 0: gradient 1, finite "
                            "difference -1",
                            Where{"gradients", "reference", "activation"})}),
      elsewhere);
  r = gate(t);
  BOOST_TEST(gate_status_name(r.status) == "FAIL", r.reason);
  BOOST_TEST(
      r.reason.find("1 unexpected result(s); first: vjp:Tanh(shape=[3,5]) FAIL_NUMERIC") == 0,
      r.reason);
}

BOOST_AUTO_TEST_CASE(a_run_that_planted_a_wrong_vjp_is_no_evidence) {
  TempStore t;
  testing::RunSpec planted = kGradients;
  planted.inputs.push_back(planted_option("--plant-wrong-vjp", "Tanh"));
  t.add_run(gradients_rows("cpu"), planted);
  t.add_run(gradients_rows("reference"), planted);
  const GateResult r = gate(t);
  BOOST_TEST(gate_status_name(r.status) == "NOT VERIFIED", r.reason);
  BOOST_TEST(r.reason.find("ran with --plant-wrong-vjp Tanh, a planted test-only defect") !=
                 std::string::npos,
             r.reason);
}

}  // namespace
}  // namespace volta::audit
