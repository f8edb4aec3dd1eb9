// The gradients lane: the whole `gradients` suite through the built volta-audit into a scratch
// database, its gate; then a run planting a wrong VJP: that op's finite-difference cases fail,
// the run records the planted option, and the gate refuses it as evidence.
#define BOOST_TEST_MODULE gradients_conformance
#include <boost/test/unit_test.hpp>
#include <string>

#include "build_info.h"
#include "gates.h"
#include "store_builder.h"
#include "volta_audit_binary.h"

namespace volta::audit {
namespace {

using testing::quoted;
using testing::TempStore;
using testing::volta_audit;

// Results of the store's runs matching `where` (over result r and test_case c).
int64_t count(TempStore& t, const std::string& where) {
  conformance::Statement q = t.db().prepare(
      "SELECT count(*) FROM result r JOIN test_case c ON c.id = r.case_ref WHERE " + where);
  BOOST_TEST_REQUIRE(q.step());
  return q.column_int(0);
}

GateResult gradients_gate(TempStore& t) {
  return evaluate_gate(t.db(), *find_gate("gradients"), build::kCommit, false);
}

BOOST_AUTO_TEST_CASE(the_suite_passes_its_gate_and_a_planted_wrong_vjp_is_caught_not_counted) {
  TempStore t;
  const std::string db = quoted(t.path());
  const auto run = volta_audit("run gradients --db " + db);
  BOOST_TEST_REQUIRE(run.status == 0, run.output);  // 0: every case as expected
  BOOST_TEST_MESSAGE(run.output.substr(run.output.rfind("gradients:")));
  const GateResult clean = gradients_gate(t);
  BOOST_TEST(gate_status_name(clean.status) == "PASS", clean.reason);
  BOOST_TEST(clean.reason.find("1 negative control caught its planted defect") != std::string::npos,
             clean.reason);

  // Tanh's rule sign-flipped: its finite-difference cases fail (exit status 1), the engine
  // ones pass (the engine and the reference run the same wrong training graph).
  const std::string planted_run = "run gradients --family activation --plant-wrong-vjp Tanh --db ";
  const auto planted = volta_audit(planted_run + db);
  BOOST_TEST(planted.status == 1, planted.output);
  BOOST_TEST(count(t, "c.case_id LIKE 'vjp:Tanh(%' AND r.outcome = 'FAIL_NUMERIC'") >= 5);
  BOOST_TEST(count(t, "c.case_id LIKE 'engine:Tanh(%' AND r.outcome <> 'PASS'") == 0);
  // The planted run is a demonstration: the gate still judges the clean runs alone.
  const GateResult after = gradients_gate(t);
  BOOST_TEST(gate_status_name(after.status) == "PASS", after.reason);

  // Alone, a planted run is no evidence at all, and the gate says why.
  TempStore only_planted;
  BOOST_TEST(volta_audit(planted_run + quoted(only_planted.path())).status == 1);
  const GateResult refused = gradients_gate(only_planted);
  BOOST_TEST(gate_status_name(refused.status) == "NOT VERIFIED", refused.reason);
  BOOST_TEST(refused.reason.find("ran with --plant-wrong-vjp Tanh, a planted test-only defect") !=
                 std::string::npos,
             refused.reason);

  const auto bad = volta_audit("run gradients --plant-wrong-vjp ArgMax --db " + db);
  BOOST_TEST(bad.status != 0, bad.output);
  BOOST_TEST(
      bad.output.find("expected an op whose first input has a VJP rule") != std::string::npos,
      bad.output);
  const auto elsewhere = volta_audit("run parity --plant-wrong-vjp Tanh --db " + db);
  BOOST_TEST(elsewhere.output.find("--plant-wrong-vjp applies to the gradients suite") !=
                 std::string::npos,
             elsewhere.output);
}

}  // namespace
}  // namespace volta::audit
