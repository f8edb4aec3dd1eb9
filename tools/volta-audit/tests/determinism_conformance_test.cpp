// The determinism lane: the whole `determinism` suite (100 runs per subject, 3 fresh processes,
// the configuration matrix, plan stability, negative controls) through the built volta-audit
// into a scratch database; then its gates, and `diff` on a planted divergence.
#define BOOST_TEST_MODULE determinism_conformance
#include <stdlib.h>
#include <sys/wait.h>

#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <filesystem>
#include <string>

#include "build_info.h"
#include "gates.h"
#include "volta/conformance/store.h"

namespace volta::audit {
namespace {

namespace fs = std::filesystem;

struct Result {
  int status = -1;
  std::string output;
};

// Runs the built volta-audit: the suite starts fresh copies of it for its processes.
Result volta_audit(const std::string& arguments) {
  const std::string command = std::string("'") + VOLTA_AUDIT_BINARY + "' " + arguments + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  BOOST_REQUIRE(pipe != nullptr);
  Result r;
  char buf[4096];
  while (const size_t n = fread(buf, 1, sizeof buf, pipe)) r.output.append(buf, n);
  const int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

struct Scratch {
  fs::path dir;
  Scratch() {
    std::string pattern = (fs::temp_directory_path() / "volta-determinism-lane-XXXXXX").string();
    BOOST_REQUIRE(mkdtemp(pattern.data()) != nullptr);
    dir = pattern;
  }
  ~Scratch() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
  std::string db() const { return (dir / "results.db").string(); }
};

GateResult gate(const std::string& db, std::string_view name) {
  const conformance::ResultStore store(db, conformance::Database::Mode::ReadOnly);
  return evaluate_gate(store.db(), *find_gate(name), build::kCommit, false);
}

BOOST_AUTO_TEST_CASE(the_suite_passes_its_gates_and_diff_names_a_planted_node) {
  const Scratch scratch;
  const Result run = volta_audit("run determinism --db '" + scratch.db() + "'");
  BOOST_TEST_REQUIRE(run.status == 0, run.output);  // 0: every case as expected
  BOOST_TEST_MESSAGE(run.output.substr(run.output.rfind("determinism:")));

  for (std::string_view name : {"determinism-100", "thread-invariance"}) {
    const GateResult r = gate(scratch.db(), name);
    BOOST_TEST(gate_status_name(r.status) == "PASS", name << ": " << r.reason);
    BOOST_TEST_MESSAGE(name << ": " << r.reason);
  }
  // One build type here: plan stability is verified by scripts/ci/audit.sh, which adds the
  // Debug build's plans. What this lane can check is that nothing disagrees.
  const GateResult plans = gate(scratch.db(), "plan-stability");
  BOOST_TEST(gate_status_name(plans.status) != "FAIL", plans.reason);
  BOOST_TEST(plans.reason.find("plan fingerprints only from build type(s)") == 0, plans.reason);

  // Run 2 flips one bit of the transformer block's attention probabilities in every run.
  const Result planted = volta_audit(
      "run determinism --family replay-100 --filter "
      "'replay:model:*' --plant-divergence attn.probs --db '" +
      scratch.db() + "'");
  BOOST_TEST_REQUIRE(planted.status == 0, planted.output);
  const Result diff =
      volta_audit("diff 1 2 --subject model:transformer-block --db '" + scratch.db() + "'");
  BOOST_TEST(diff.status == 1, diff.output);
  BOOST_TEST(diff.output.find("first divergence at step") != std::string::npos, diff.output);
  BOOST_TEST(diff.output.find("node 'attn.probs' (Softmax)") != std::string::npos, diff.output);
  BOOST_TEST(diff.output.find("diff: 1 subjects") != std::string::npos, diff.output);
  // The MLP and CNN never run the planted node: their traces agree.
  const Result mlp = volta_audit("diff 1 2 --subject model:mlp --db '" + scratch.db() + "'");
  BOOST_TEST(mlp.status == 0, mlp.output);
}

}  // namespace
}  // namespace volta::audit
