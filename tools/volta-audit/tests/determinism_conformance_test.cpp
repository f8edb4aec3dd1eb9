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
  // The ONNX subjects are the tests the CPU engine passes: the gates read them from here.
  const auto onnx = volta_audit("run onnx --backend cpu --db " + db);
  BOOST_TEST_REQUIRE(onnx.status == 0, onnx.output);
  const auto run = volta_audit("run determinism --db " + db);
  BOOST_TEST_REQUIRE(run.status == 0, run.output);  // 0: every case as expected
  BOOST_TEST_MESSAGE(run.output.substr(run.output.rfind("determinism:")));

  for (std::string_view name : {"determinism-100", "thread-invariance", "batch-invariance"}) {
    const GateResult r = gate(t, name);
    BOOST_TEST(gate_status_name(r.status) == "PASS", name << ": " << r.reason);
    BOOST_TEST_MESSAGE(name << ": " << r.reason);
  }
  // One build type here: plan stability is verified by scripts/ci/audit.sh, which adds the
  // Debug build's plans. What this lane can check is that nothing disagrees.
  const GateResult plans = gate(t, "plan-stability");
  BOOST_TEST(gate_status_name(plans.status) != "FAIL", plans.reason);
  BOOST_TEST(plans.reason.find("plan fingerprints only from build type(s)") == 0, plans.reason);

  // Run 3 flips one bit of the transformer block's attention probabilities in every run.
  const auto planted = volta_audit(
      "run determinism --family replay-100 --filter 'replay:model:*' --plant-divergence "
      "attn.probs --db " +
      db);
  BOOST_TEST_REQUIRE(planted.status == 0, planted.output);
  const auto diff = volta_audit("diff 2 3 --subject model:transformer-block --db " + db);
  BOOST_TEST(diff.status == 1, diff.output);
  BOOST_TEST(diff.output.find("first divergence at step") != std::string::npos, diff.output);
  BOOST_TEST(diff.output.find("node 'attn.probs' (Softmax)") != std::string::npos, diff.output);
  BOOST_TEST(diff.output.find("diff: 1 subjects") != std::string::npos, diff.output);
  // The MLP and CNN never run the planted node: their traces agree.
  const auto mlp = volta_audit("diff 2 3 --subject model:mlp --db " + db);
  BOOST_TEST(mlp.status == 0, mlp.output);
  // The planted run is a demonstration: the gates refuse it, and judge the clean run.
  const GateResult replay = gate(t, "determinism-100");
  BOOST_TEST(gate_status_name(replay.status) == "PASS", replay.reason);
}

// `run determinism --runs 5 --processes 0` cannot pass a gate named determinism-100: fewer runs
// than its name, no fresh process, and the fresh-process control not caught.
BOOST_AUTO_TEST_CASE(a_short_run_without_fresh_processes_is_not_verified) {
  TempStore t;
  const std::string db = quoted(t.path());
  BOOST_TEST_REQUIRE(volta_audit("run onnx --backend cpu --db " + db).status == 0);
  const auto run =
      volta_audit("run determinism --family replay-100 --runs 5 --processes 0 --db " + db);
  BOOST_TEST(run.status == 1, run.output);  // the fresh-process control is not caught
  const GateResult r = gate(t, "determinism-100");
  BOOST_TEST(gate_status_name(r.status) == "NOT VERIFIED", r.reason);
  BOOST_TEST(r.reason.find("every replay needs at least 100 runs and 3 fresh processes") !=
                 std::string::npos,
             r.reason);
  BOOST_TEST(
      r.reason.find("control:replay:fresh-process-divergence did not catch") != std::string::npos,
      r.reason);
}

}  // namespace
}  // namespace volta::audit
