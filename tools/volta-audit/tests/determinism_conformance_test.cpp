// The determinism lane: the whole `determinism` suite (100 runs per subject, 3 fresh processes,
// the configuration matrix, plan stability, negative controls) through the built volta-audit
// into a scratch database; then its gates, and `diff` on a planted divergence.
#define BOOST_TEST_MODULE determinism_conformance
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

GateResult gate(TempStore& t, std::string_view name) {
  return evaluate_gate(t.db(), *find_gate(name), build::kCommit, false);
}

BOOST_AUTO_TEST_CASE(the_suite_passes_its_gates_and_diff_names_a_planted_node) {
  TempStore t;  // the binary writes its rows into t.path()
  const std::string db = quoted(t.path());
  const auto run = volta_audit("run determinism --db " + db);
  BOOST_TEST_REQUIRE(run.status == 0, run.output);  // 0: every case as expected
  BOOST_TEST_MESSAGE(run.output.substr(run.output.rfind("determinism:")));

  for (std::string_view name : {"determinism-100", "thread-invariance"}) {
    const GateResult r = gate(t, name);
    BOOST_TEST(gate_status_name(r.status) == "PASS", name << ": " << r.reason);
    BOOST_TEST_MESSAGE(name << ": " << r.reason);
  }
  // One build type here: plan stability is verified by scripts/ci/audit.sh, which adds the
  // Debug build's plans. What this lane can check is that nothing disagrees.
  const GateResult plans = gate(t, "plan-stability");
  BOOST_TEST(gate_status_name(plans.status) != "FAIL", plans.reason);
  BOOST_TEST(plans.reason.find("plan fingerprints only from build type(s)") == 0, plans.reason);

  // Run 2 flips one bit of the transformer block's attention probabilities in every run.
  const auto planted = volta_audit(
      "run determinism --family replay-100 --filter 'replay:model:*' --plant-divergence "
      "attn.probs --db " +
      db);
  BOOST_TEST_REQUIRE(planted.status == 0, planted.output);
  const auto diff = volta_audit("diff 1 2 --subject model:transformer-block --db " + db);
  BOOST_TEST(diff.status == 1, diff.output);
  BOOST_TEST(diff.output.find("first divergence at step") != std::string::npos, diff.output);
  BOOST_TEST(diff.output.find("node 'attn.probs' (Softmax)") != std::string::npos, diff.output);
  BOOST_TEST(diff.output.find("diff: 1 subjects") != std::string::npos, diff.output);
  // The MLP and CNN never run the planted node: their traces agree.
  const auto mlp = volta_audit("diff 1 2 --subject model:mlp --db " + db);
  BOOST_TEST(mlp.status == 0, mlp.output);
}

}  // namespace
}  // namespace volta::audit
