// The training gates (transformer-train-reload, checkpoint-round-trip) on hand-built evidence:
// complete evidence passes; a failure fails; a missing case, or an interop case skipped for its
// missing venv, leaves the guarantee NOT VERIFIED; each gate reads its own family only.
#define BOOST_TEST_MODULE training_gate_test
#include <boost/test/unit_test.hpp>
#include <string>

#include "gates.h"
#include "training_evidence.h"

namespace volta::audit {
namespace {

using conformance::Outcome;
using conformance::Verdict;
using testing::kCommit;
using testing::TempStore;
using testing::training_rows;

GateResult gate(TempStore& t, std::string_view name) {
  return evaluate_gate(t.db(), *find_gate(name), kCommit, false, kCommit);
}

const testing::RunSpec kTraining{.suites = "training"};

void replace(std::vector<conformance::ResultRow>& rows, const std::string& id, Outcome outcome,
             Verdict verdict, const std::string& message) {
  for (conformance::ResultRow& row : rows) {
    if (row.case_id != id) continue;
    row.outcome = outcome;
    row.verdict = verdict;
    row.message = message;
  }
}

BOOST_AUTO_TEST_CASE(complete_evidence_passes_both_gates) {
  TempStore t;
  testing::add_passing_training_suite(t);
  for (const char* name : {"transformer-train-reload", "checkpoint-round-trip"}) {
    const GateResult r = gate(t, name);
    BOOST_TEST(gate_status_name(r.status) == "PASS", name << ": " << r.reason);
    BOOST_TEST(r.blocker, name);
  }
  BOOST_TEST(gate(t, "checkpoint-round-trip").reason ==
             "8 cases: 8 pass, 0 expected non-pass, 0 skipped");
}

BOOST_AUTO_TEST_CASE(a_failed_guarantee_fails_its_gate_only) {
  TempStore t;
  std::vector<conformance::ResultRow> rows = training_rows();
  replace(rows, "resume:kill-9", Outcome::FailNumeric, Verdict::Unexpected,
          "the checkpoints differ");
  t.add_run(rows, kTraining);
  const GateResult r = gate(t, "transformer-train-reload");
  BOOST_TEST(gate_status_name(r.status) == "FAIL", r.reason);
  BOOST_TEST(r.reason.find("resume:kill-9 FAIL_NUMERIC (unexpected): the checkpoints differ") !=
                 std::string::npos,
             r.reason);
  BOOST_TEST(gate_status_name(gate(t, "checkpoint-round-trip").status) == "PASS");
}

BOOST_AUTO_TEST_CASE(a_skipped_interop_case_leaves_the_gate_not_verified) {
  TempStore t;
  std::vector<conformance::ResultRow> rows = training_rows();
  replace(rows, "interop:safetensors-python", Outcome::Skipped, Verdict::Expected,
          "no interop venv at build/interop-venv");
  t.add_run(rows, kTraining);
  const GateResult r = gate(t, "checkpoint-round-trip");
  BOOST_TEST(gate_status_name(r.status) == "NOT VERIFIED", r.reason);
  BOOST_TEST(r.reason.find("1 case(s) skipped for a missing precondition; first: "
                           "interop:safetensors-python: no interop venv") != std::string::npos,
             r.reason);
  BOOST_TEST(gate_status_name(gate(t, "transformer-train-reload").status) == "PASS");
}

BOOST_AUTO_TEST_CASE(a_missing_case_is_not_verified_and_says_what_to_run) {
  TempStore t;
  t.add_run(testing::without(training_rows(), "memory-budget"), kTraining);
  const GateResult r = gate(t, "transformer-train-reload");
  BOOST_TEST(gate_status_name(r.status) == "NOT VERIFIED", r.reason);
  BOOST_TEST(r.reason.find("first: memory-budget; run `volta-audit run training --family "
                           "transformer-train-reload`") != std::string::npos,
             r.reason);
}

}  // namespace
}  // namespace volta::audit
