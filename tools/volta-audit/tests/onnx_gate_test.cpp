// The onnx-conformance gates (onnx-current-conformance judges its own corpus by the same SQL):
// its four blockers (unexpected outcome, ERROR/CRASH/TIMEOUT,
// corpus below the floor on a backend, expired expectation), each with its own reason.
#define BOOST_TEST_MODULE onnx_gate
#include <boost/test/unit_test.hpp>
#include <cstdio>

#include "gates.h"
#include "onnx_evidence.h"
#include "store_builder.h"
#include "volta/conformance/onnx_corpus.h"

namespace volta::audit {
namespace {

using conformance::ExpectationRow;
using conformance::Outcome;
using conformance::ResultRow;
using conformance::Verdict;
using testing::kCommit;
using testing::kOtherCommit;
using testing::result;
using testing::TempStore;
using testing::Where;

std::string test_id(int64_t n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "node/test_%04lld", static_cast<long long>(n));
  return buf;
}

// Every test of a corpus at the floor on `backend`, passing, except the ones given.
std::vector<ResultRow> corpus(const std::string& backend,
                              const std::vector<ResultRow>& others = {}) {
  std::vector<ResultRow> rows;
  const Where where{.suite = "onnx", .backend = backend, .family = "elementwise"};
  for (int64_t n = 0; n < conformance::kOnnxCorpusFloor; ++n) {
    bool replaced = false;
    for (const ResultRow& o : others) replaced = replaced || o.case_id == test_id(n);
    if (!replaced) rows.push_back(result(test_id(n), Outcome::Pass, Verdict::Expected, "", where));
  }
  for (ResultRow o : others) {
    o.suite = "onnx";
    o.backend = backend;
    rows.push_back(std::move(o));
  }
  return rows;
}

GateResult onnx_gate(TempStore& t, bool release = false) {
  return evaluate_gate(t.db(), *find_gate("onnx-conformance"), kCommit, release);
}

void check(const GateResult& r, GateStatus status, std::string_view reason) {
  BOOST_TEST(gate_status_name(r.status) == gate_status_name(status));
  BOOST_TEST(r.reason == reason);
}

BOOST_AUTO_TEST_CASE(both_backends_at_the_floor_with_every_result_expected_pass) {
  TempStore t;
  t.add_run(corpus("cpu"));
  t.add_run(corpus("reference", {result(test_id(7), Outcome::Unsupported, Verdict::Expected,
                                        "[I-UNSUPPORTED] no STRING")}));
  check(onnx_gate(t), GateStatus::Pass,
        "cpu: 1072 of 1072 tests pass, reference: 1071 of 1072 tests pass; every other result "
        "as expected (corpus floor 1072)");
}

// Each ONNX corpus has its own gate, judging its own suite's rows against its own floor.
BOOST_AUTO_TEST_CASE(the_current_corpus_has_its_own_gate_suite_and_floor) {
  TempStore t;
  const Gate& current = *find_gate("onnx-current-conformance");
  GateResult r = evaluate_gate(t.db(), current, kCommit, false);
  BOOST_TEST(gate_status_name(r.status) == "NOT VERIFIED");
  BOOST_TEST(r.reason.find("no usable onnx-current results") != std::string::npos, r.reason);
  BOOST_TEST(r.reason.find("scripts/ci/onnx_current_data.sh") != std::string::npos, r.reason);
  // The 1.12 corpus is no evidence for it, nor it for the 1.12 gate.
  testing::add_passing_onnx_corpus(t, {}, conformance::kOnnxCorpus);
  BOOST_TEST(gate_status_name(evaluate_gate(t.db(), current, kCommit, false).status) ==
             "NOT VERIFIED");
  testing::add_passing_onnx_corpus(t, {}, conformance::kOnnxCurrentCorpus);
  check(evaluate_gate(t.db(), current, kCommit, false), GateStatus::Pass,
        "cpu: 2022 of 2022 tests pass, reference: 2022 of 2022 tests pass; every other result "
        "as expected (corpus floor 2022)");
  check(onnx_gate(t), GateStatus::Pass,
        "cpu: 1072 of 1072 tests pass, reference: 1072 of 1072 tests pass; every other result "
        "as expected (corpus floor 1072)");
}

BOOST_AUTO_TEST_CASE(an_unexpected_outcome_or_pass_fails_naming_the_first) {
  TempStore t;
  t.add_run(corpus("cpu", {result(test_id(9), Outcome::Pass, Verdict::UnexpectedPass),
                           result(test_id(3), Outcome::FailNumeric, Verdict::Unexpected,
                                  "data set 0, output 0: element 1 is 2, expected 3")}));
  t.add_run(corpus("reference"));
  check(onnx_gate(t), GateStatus::Fail,
        "2 unexpected result(s); first: cpu node/test_0003 FAIL_NUMERIC (unexpected): data set "
        "0, output 0: element 1 is 2, expected 3");
}

BOOST_AUTO_TEST_CASE(error_crash_and_timeout_are_their_own_blocker) {
  TempStore t;
  t.add_run(corpus("cpu", {result(test_id(5), Outcome::Crash, Verdict::Unexpected, "signal 11")}));
  // Even a row that claims to be expected: no expectation excuses an ERROR.
  t.add_run(corpus("reference", {result(test_id(2), Outcome::Error, Verdict::Expected, "threw")}));
  check(onnx_gate(t), GateStatus::Fail,
        "2 ERROR/CRASH/TIMEOUT result(s), which no expectation excuses; first: reference "
        "node/test_0002 ERROR: threw");
}

BOOST_AUTO_TEST_CASE(each_backend_must_reach_the_corpus_floor) {
  TempStore t;
  std::vector<ResultRow> cpu = corpus("cpu");
  cpu.pop_back();  // 1071 tests
  cpu.push_back(result("node/test_renamed", Outcome::Missing, Verdict::Expected, "stale",
                       {.suite = "onnx", .backend = "cpu", .family = ""}));
  t.add_run(cpu);
  check(onnx_gate(t), GateStatus::Fail,
        "backend cpu has results for 1071 tests, below the corpus floor of 1072; run `volta-audit "
        "run onnx --backend cpu`; backend reference has results for 0 tests, below the corpus "
        "floor of 1072; run `volta-audit run onnx --backend reference`");
  // A later run of the missing test completes the evidence.
  t.add_run(corpus("reference"));
  t.add_run({result(test_id(conformance::kOnnxCorpusFloor - 1), Outcome::Pass, Verdict::Expected,
                    "", {.suite = "onnx", .backend = "cpu", .family = "elementwise"})});
  BOOST_TEST(gate_status_name(onnx_gate(t).status) == "PASS");
}

BOOST_AUTO_TEST_CASE(an_expired_expectation_of_the_evidence_runs_fails) {
  TempStore t;
  const ExpectationRow expired{"onnx", "node/test_old*", "UNSUPPORTED", "not-yet-implemented: x",
                               "#4",   "2000-01-01"};
  const ExpectationRow valid{"onnx", "node/test_new", "UNSUPPORTED", "not-yet-implemented: y",
                             "#4",   "2999-12-31"};
  t.add_run(corpus("cpu"), {.expectations = {valid, expired}});
  t.add_run(corpus("reference"));
  // Expired lines recorded by another commit's run are not this commit's evidence.
  t.add_run({}, {.commit = kOtherCommit, .expectations = {expired}});
  check(onnx_gate(t), GateStatus::Fail,
        "1 expired expectation(s); first: node/test_old* (expired 2000-01-01); renew or remove "
        "them in conformance/onnx/expectations.tsv");
}

BOOST_AUTO_TEST_CASE(every_blocker_gives_its_reason_in_order) {
  TempStore t;
  t.add_run(corpus("cpu", {result(test_id(1), Outcome::Timeout, Verdict::Unexpected, "killed"),
                           result(test_id(4), Outcome::Pass, Verdict::UnexpectedPass)}),
            {.expectations = {{"onnx", "node/test_0004", "UNSUPPORTED", "x", "#4", "2001-01-01"}}});
  check(onnx_gate(t), GateStatus::Fail,
        "1 unexpected result(s); first: cpu node/test_0004 PASS (unexpected-pass): ; 1 "
        "ERROR/CRASH/TIMEOUT result(s), which no expectation excuses; first: cpu node/test_0001 "
        "TIMEOUT: killed; backend reference has results for 0 tests, below the corpus floor of "
        "1072; run `volta-audit run onnx --backend reference`; 1 expired expectation(s); first: "
        "node/test_0004 (expired 2001-01-01); renew or remove them in "
        "conformance/onnx/expectations.tsv");
}

BOOST_AUTO_TEST_CASE(no_rows_is_not_verified_and_release_wants_clean_runs) {
  TempStore t;
  check(onnx_gate(t), GateStatus::NotVerified,
        "no usable onnx results for commit 0123456789ab; run `volta-audit run onnx`");
  t.add_run(corpus("cpu"), {.dirty = true, .suites = "onnx"});
  t.add_run(corpus("reference"), {.dirty = true, .suites = "onnx"});
  BOOST_TEST(gate_status_name(onnx_gate(t).status) == "PASS");
  check(onnx_gate(t, true), GateStatus::NotVerified,
        "no usable onnx results for commit 0123456789ab (runs of a dirty tree are not release "
        "evidence); run `volta-audit run onnx`");
}

BOOST_AUTO_TEST_CASE(a_skip_without_a_reason_is_unexpected) {
  TempStore t;
  t.add_run(corpus("cpu", {result(test_id(6), Outcome::Skipped, Verdict::Expected, "later")}));
  t.add_run(corpus("reference"));
  check(onnx_gate(t), GateStatus::Fail,
        "1 unexpected result(s); first: cpu node/test_0006 SKIPPED (skipped without an "
        "expectation or a declared precondition): later");
}

BOOST_AUTO_TEST_CASE(a_run_that_read_edited_expectations_is_refused) {
  TempStore t;
  const conformance::RunInput edited{conformance::RunInput::Kind::File,
                                     "conformance/onnx/expectations.tsv", "/tmp/onnx.tsv",
                                     std::string(64, 'b'), std::string(64, 'a')};
  const int64_t run = t.add_run(corpus("cpu"), {.inputs = {edited}, .suites = "onnx"});
  t.add_run(corpus("reference"), {.suites = "onnx"});
  check(onnx_gate(t), GateStatus::Fail,
        "backend cpu has results for 0 tests, below the corpus floor of 1072; run `volta-audit "
        "run onnx --backend cpu`; 1 run(s) refused as evidence, first: run " +
            std::to_string(run) +
            " (onnx) read /tmp/onnx.tsv as conformance/onnx/expectations.tsv, which differs from "
            "the file committed at its commit (sha256 bbbbbbbbbbbb, committed aaaaaaaaaaaa)");
}

}  // namespace
}  // namespace volta::audit
