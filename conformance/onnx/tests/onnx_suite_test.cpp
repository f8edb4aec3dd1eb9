// The onnx suite end to end on a tiny corpus: a test's outcome on each backend through the real
// importer, verdicts against per-backend expectations (unexpected pass, MISSING), the coverage
// the docs are generated from, and drafting the expectations file from a run.
#define BOOST_TEST_MODULE onnx_suite
#include "volta/conformance/onnx_suite.h"

#include <stdlib.h>

#include <boost/test/unit_test.hpp>
#include <optional>
#include <tuple>

#include "fake_corpus.h"
#include "volta/conformance/onnx_coverage.h"
#include "volta/conformance/onnx_draft.h"
#include "volta/conformance/store.h"
#include "volta/error.h"
#include "volta/onnx/model.h"

namespace volta::conformance {
namespace {

namespace fs = std::filesystem;
namespace pb = ::onnx;
using testing::FakeCorpus;
using testing::PbTensor;

const PbTensor kX{pb::TensorProto::FLOAT, {2, 3}, {1, -2, 3, -4, 5, -6}};

// A results database in its own directory, removed with it.
class TempStore {
 public:
  TempStore() {
    std::string pattern = (fs::temp_directory_path() / "volta-onnx-store-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
    store_.emplace((dir_ / "results.db").string());
  }
  ~TempStore() {
    store_.reset();
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  TempStore(const TempStore&) = delete;
  TempStore& operator=(const TempStore&) = delete;

  ResultStore& store() { return *store_; }
  int64_t begin(std::string_view backend, std::string_view commit = "c0ffee") {
    RunInfo info;
    info.commit = std::string(commit);
    info.build_type = "Release";
    info.compiler = "g++";
    info.cpu_model = "test";
    info.backend = std::string(backend);
    info.suites = "onnx";
    info.command = "test";
    const int64_t run = store_->begin_run(info);
    // The committed expectations: coverage reads only runs whose inputs were committed.
    const std::string committed(64, 'e');
    store_->record_inputs(
        run, std::vector{RunInput{RunInput::Kind::File, "conformance/onnx/expectations.tsv",
                                  "expectations.tsv", committed, committed}});
    return run;
  }

 private:
  fs::path dir_;
  std::optional<ResultStore> store_;
};

// --- one test on one backend, through the importer -----------------------------------------

OnnxTest discover_one(const FakeCorpus& c, std::string_view id) {
  for (OnnxTest& t : discover_onnx_corpus(c.root(), onnx::onnx_op_family, 0)) {
    if (t.id == id) return t;
  }
  BOOST_FAIL("no test " << id);
  return {};
}

BOOST_AUTO_TEST_CASE(a_test_passes_on_both_backends_with_every_data_set) {
  FakeCorpus c;
  const fs::path dir = c.add_unary("node", "test_identity", "Identity");
  c.add_data_set(dir, 0, {kX}, {kX});
  c.add_data_set(dir, 1, {kX}, {kX});
  const OnnxTest test = discover_one(c, "node/test_identity");
  BOOST_TEST(test.family == "movement");
  for (std::string_view backend : kOnnxBackends) {
    BOOST_TEST_CONTEXT(backend) {
      const CaseOutcome o = run_onnx_test(test, backend, 2, OnnxTolerance{});
      BOOST_TEST(outcome_name(o.outcome) == "PASS", o.message);
      BOOST_TEST(*o.max_abs == 0.0);
      BOOST_TEST(o.tolerance == "rtol=0.001 atol=1e-07");
      BOOST_TEST(o.output_hash.size() == 16u);
      BOOST_TEST(!o.kernel.empty());
    }
  }
  BOOST_TEST(run_onnx_test(test, "reference", 1, {}).kernel == "reference");
}

BOOST_AUTO_TEST_CASE(wrong_expected_numbers_fail_naming_the_data_set_and_element) {
  FakeCorpus c;
  const fs::path dir = c.add_unary("node", "test_identity", "Identity");
  c.add_data_set(dir, 0, {kX}, {kX});
  PbTensor wrong = kX;
  wrong.floats[4] = 5.5f;
  c.add_data_set(dir, 1, {kX}, {wrong});
  const OnnxTest test = discover_one(c, "node/test_identity");
  for (std::string_view backend : kOnnxBackends) {
    const CaseOutcome o = run_onnx_test(test, backend, 1, {});
    BOOST_TEST(outcome_name(o.outcome) == "FAIL_NUMERIC");
    BOOST_TEST(o.message.starts_with("data set 1, output 0: element 4 is 5, expected 5.5"),
               o.message);
    BOOST_TEST(*o.max_abs == 0.5);
  }
}

BOOST_AUTO_TEST_CASE(refusals_are_unsupported_with_the_diagnostic) {
  FakeCorpus c;
  c.add_data_set(c.add_unary("node", "test_c64", "Identity", pb::TensorProto::COMPLEX64), 0, {},
                 {});
  c.add_data_set(c.add_unary("node", "test_bernoulli", "Bernoulli", pb::TensorProto::FLOAT, 15), 0,
                 {kX}, {kX});
  for (std::string_view backend : kOnnxBackends) {
    const CaseOutcome c64 = run_onnx_test(discover_one(c, "node/test_c64"), backend, 1, {});
    BOOST_TEST(outcome_name(c64.outcome) == "UNSUPPORTED");
    BOOST_TEST(c64.message.find("has type COMPLEX64") != std::string::npos, c64.message);
    const CaseOutcome random =
        run_onnx_test(discover_one(c, "node/test_bernoulli"), backend, 1, {});
    BOOST_TEST(outcome_name(random.outcome) == "UNSUPPORTED");
    BOOST_TEST(random.message.find("[I-UNSUPPORTED]") != std::string::npos, random.message);
  }
}

BOOST_AUTO_TEST_CASE(a_broken_directory_or_model_is_an_error) {
  FakeCorpus c;
  fs::create_directories(c.root() / "node" / "test_no_model");
  FakeCorpus::write_file(c.root() / "node" / "test_garbage" / "model.onnx", "garbage");
  fs::create_directories(c.root() / "node" / "test_garbage" / "test_data_set_0");
  const CaseOutcome none = run_onnx_test(discover_one(c, "node/test_no_model"), "cpu", 1, {});
  BOOST_TEST(outcome_name(none.outcome) == "ERROR");
  BOOST_TEST(none.message.starts_with("no model.onnx in "));
  const CaseOutcome garbage = run_onnx_test(discover_one(c, "node/test_garbage"), "cpu", 1, {});
  BOOST_TEST(outcome_name(garbage.outcome) == "ERROR");
  BOOST_TEST(garbage.message.find("not a readable ONNX model") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(cases_name_op_family_params_and_refuse_other_backends) {
  FakeCorpus c;
  const fs::path dir = c.add_unary("node", "test_identity", "Identity");
  c.add_data_set(dir, 0, {kX}, {kX});
  const std::vector<OnnxTest> corpus = discover_onnx_corpus(c.root(), onnx::onnx_op_family, 0);
  const std::vector<SuiteCase> cases = onnx_suite_cases(corpus, "reference", 1);
  BOOST_REQUIRE_EQUAL(cases.size(), 1u);
  BOOST_TEST(cases[0].case_id == "node/test_identity");
  BOOST_TEST(cases[0].op == "Identity");
  BOOST_TEST(cases[0].family == "movement");
  BOOST_TEST(cases[0].backend == "reference");
  BOOST_TEST(cases[0].params == "opset=13 dtype=FLOAT ops=Identity");
  // The body runs isolated in a child process as the runner does it.
  const CaseOutcome o = run_case(cases[0].body, IsolationOptions{});
  BOOST_TEST(outcome_name(o.outcome) == "PASS", o.message);
  BOOST_CHECK_EXCEPTION(onnx_suite_cases(corpus, "tpu", 1), VoltaError, [](const VoltaError& e) {
    return std::string_view(e.what()).find("no backend 'tpu' (supported: cpu, reference, cuda)") !=
           std::string_view::npos;
  });
  // CUDA only where this machine can run it; elsewhere every case says why it is skipped.
  const std::vector<SuiteCase> cuda = onnx_suite_cases(corpus, "cuda", 1);
  BOOST_REQUIRE_EQUAL(cuda.size(), 1u);
  BOOST_TEST(cuda[0].precondition == std::string(kCudaPrecondition));
  if (const std::optional<std::string> why = backend_unavailable("cuda")) {
    const CaseOutcome skipped = cuda[0].body();
    BOOST_TEST(outcome_name(skipped.outcome) == "SKIPPED");
    BOOST_TEST(skipped.message.starts_with(*why), skipped.message);
  }
}

// --- verdicts against per-backend expectations ------------------------------------------------

SuiteCase fixed(std::string id, Outcome outcome, std::string_view backend = "cpu") {
  SuiteCase c;
  c.family = "movement";
  c.op = "Identity";
  c.backend = std::string(backend);
  c.case_id = std::move(id);
  c.body = [outcome] {
    CaseOutcome o;
    o.outcome = outcome;
    o.message = "as told";
    return o;
  };
  return c;
}

constexpr std::string_view kExpectations =
    "node/test_b\t*\tUNSUPPORTED\tunsupported-by-design\tstrings\t#4\t2999-12-31\n"
    "node/test_c\treference\tFAIL_NUMERIC\tfailing\trounding\t#4\t2999-12-31\n"
    "node/test_d\tcpu\tUNSUPPORTED\tnot-yet-implemented\tan op\t#4\t2999-12-31\n"
    "node/test_gone\t*\tUNSUPPORTED\tnot-yet-implemented\trenamed\t#4\t2999-12-31\n";

std::map<std::string, std::pair<std::string, std::string>> verdicts(ResultStore& store,
                                                                    int64_t run) {
  std::map<std::string, std::pair<std::string, std::string>> out;
  Statement q = store.db().prepare(
      "SELECT c.case_id, r.outcome, r.verdict FROM result r JOIN test_case c ON c.id = r.case_ref "
      "WHERE r.run_id = ?");
  q.bind(1, run);
  while (q.step()) out[q.column_text(0)] = {q.column_text(1), q.column_text(2)};
  return out;
}

BOOST_AUTO_TEST_CASE(results_are_judged_by_the_lines_of_their_backend) {
  TempStore t;
  const std::vector<OnnxExpectation> expectations = parse_onnx_expectations(kExpectations, "e.tsv");
  const std::vector<SuiteCase> cases = {
      fixed("node/test_a", Outcome::Pass), fixed("node/test_b", Outcome::Unsupported),
      fixed("node/test_c", Outcome::FailNumeric), fixed("node/test_d", Outcome::Pass)};
  RunOptions options;
  options.isolation.isolate = false;
  const int64_t run = t.begin("cpu");
  const SuiteSummary s = run_onnx_suite(t.store(), run, "cpu", cases, expectations, options);
  t.store().finish_run(run);
  BOOST_TEST(s.cases == 5);  // four tests and the MISSING line
  BOOST_TEST(s.unexpected == 3);
  auto v = verdicts(t.store(), run);
  BOOST_TEST(v["node/test_a"].second == "expected");
  BOOST_TEST(v["node/test_b"].second == "expected");
  BOOST_TEST(v["node/test_c"].second == "unexpected");  // its line is for the reference only
  BOOST_TEST(v["node/test_d"].second == "unexpected-pass");
  BOOST_TEST(v["node/test_gone"].first == "MISSING");
  BOOST_TEST(v["node/test_gone"].second == "unexpected");

  // The run records the lines that apply to its backend, the category leading the reason.
  Statement rows = t.store().db().prepare(
      "SELECT pattern, reason FROM expectation WHERE run_id = ? ORDER BY id");
  rows.bind(1, run);
  std::vector<std::string> recorded;
  while (rows.step()) recorded.push_back(rows.column_text(0) + " | " + rows.column_text(1));
  const std::vector<std::string> expected = {"node/test_b | unsupported-by-design: strings",
                                             "node/test_d | not-yet-implemented: an op",
                                             "node/test_gone | not-yet-implemented: renamed"};
  BOOST_TEST(recorded == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_filtered_run_records_no_missing_lines) {
  TempStore t;
  const std::vector<OnnxExpectation> expectations = parse_onnx_expectations(kExpectations, "e.tsv");
  const std::vector<SuiteCase> cases = {fixed("node/test_c", Outcome::FailNumeric, "reference"),
                                        fixed("node/test_a", Outcome::Pass, "reference")};
  RunOptions options;
  options.isolation.isolate = false;
  options.filter = "node/test_c";
  const int64_t run = t.begin("reference");
  const SuiteSummary s = run_onnx_suite(t.store(), run, "reference", cases, expectations, options);
  BOOST_TEST(s.cases == 1);
  BOOST_TEST(s.unexpected == 0);
  BOOST_TEST(verdicts(t.store(), run)["node/test_c"].second == "expected");
}

// --- coverage and drafting from recorded rows ----------------------------------------------------

ResultRow row(std::string id, std::string backend, Outcome outcome, std::string message = "",
              std::string family = "movement", std::string op = "Identity",
              const std::string& ops = "Identity") {
  ResultRow r;
  r.suite = "onnx";
  r.family = std::move(family);
  r.op = std::move(op);
  r.backend = std::move(backend);
  r.case_id = std::move(id);
  r.params = "opset=13 dtype=FLOAT ops=" + ops;
  r.outcome = outcome;
  r.verdict = outcome == Outcome::Pass ? Verdict::Expected : Verdict::Unexpected;
  r.message = std::move(message);
  return r;
}

// Six tests on both backends (one run each) for commit c0ffee.
void record_corpus(TempStore& t) {
  const std::string str = "graph input 'x' has type STRING; Volta's tensor types: FLOAT";
  const std::string u8 = "graph input 'x' has type UINT8; Volta's tensor types: FLOAT";
  for (std::string backend : {"cpu", "reference"}) {
    std::vector<ResultRow> rows = {
        row("node/test_a", backend, Outcome::Pass),
        row("node/test_str", backend, Outcome::Unsupported, str, "other", "Cast", "Cast"),
        row("node/test_u8", backend, Outcome::Unsupported, u8),
        row("node/test_fail", backend, backend == "cpu" ? Outcome::FailNumeric : Outcome::Pass,
            "element 0 is 2"),
        row("node/test_err", backend, backend == "cpu" ? Outcome::Error : Outcome::Pass, "threw"),
        row("simple/test_sequence_model1", backend, Outcome::Unsupported, "op not supported",
            "other", "SequenceEmpty", "SequenceEmpty,SequenceAt"),
        row("node/test_gone", backend, Outcome::Missing, "stale line", ""),
    };
    const int64_t run = t.begin(backend);
    t.store().record(run, rows);
    t.store().finish_run(run);
  }
}

BOOST_AUTO_TEST_CASE(coverage_counts_each_op_per_backend_and_skips_missing_lines) {
  TempStore t;
  record_corpus(t);
  // A newer run of one test supersedes its older result.
  const int64_t rerun = t.begin("cpu");
  t.store().record(rerun, std::vector<ResultRow>{row("node/test_fail", "cpu", Outcome::Pass)});
  t.store().finish_run(rerun);
  std::vector<std::string> got;
  for (const OnnxCoverageRow& r : onnx_coverage(t.store().db(), "c0ffee")) {
    got.push_back(r.family + " " + r.op + " " + r.backend + " " + std::to_string(r.tests) + " " +
                  std::to_string(r.passed) + "/" + std::to_string(r.unsupported) + "/" +
                  std::to_string(r.failed));
  }
  const std::vector<std::string> expected = {
      "movement Identity cpu 4 2/1/1",   "movement Identity reference 4 3/1/0",
      "other Cast cpu 1 0/1/0",          "other Cast reference 1 0/1/0",
      "other SequenceEmpty cpu 1 0/1/0", "other SequenceEmpty reference 1 0/1/0"};
  BOOST_TEST(got == expected, boost::test_tools::per_element());
  BOOST_TEST(onnx_coverage(t.store().db(), "another").empty());
  BOOST_TEST(newest_onnx_commit(t.store().db()) == "c0ffee");
  // Another corpus's suite is counted apart.
  BOOST_TEST(onnx_coverage(t.store().db(), "c0ffee", kOnnxCurrentSuite).empty());
  BOOST_TEST(newest_onnx_commit(t.store().db(), kOnnxCurrentSuite).empty());
}

BOOST_AUTO_TEST_CASE(coverage_by_opset_and_by_dtype) {
  TempStore t;
  const int64_t run = t.begin("cpu");
  std::vector<ResultRow> rows;
  for (const auto& [id, opset, outcome] : std::vector<std::tuple<std::string, int, Outcome>>{
           {"node/test_a", 9, Outcome::Pass},
           {"node/test_b", 18, Outcome::Unsupported},
           {"node/test_c", 18, Outcome::Pass},
           {"node/test_d", 23, Outcome::FailNumeric}}) {
    ResultRow r = row(id, "cpu", outcome);
    r.suite = std::string(kOnnxCurrentSuite);
    r.params = "opset=" + std::to_string(opset) +
               (opset == 23 ? " dtype=FLOAT16" : " dtype=FLOAT") + " ops=Identity";
    rows.push_back(r);
  }
  t.store().record(run, rows);
  t.store().finish_run(run);
  std::vector<std::string> got;
  for (const OnnxCoverageRow& r :
       onnx_coverage_by_opset(t.store().db(), "c0ffee", kOnnxCurrentSuite)) {
    got.push_back(r.op + " " + r.backend + " " + std::to_string(r.tests) + " " +
                  std::to_string(r.passed) + "/" + std::to_string(r.unsupported) + "/" +
                  std::to_string(r.failed));
  }
  const std::vector<std::string> expected = {"9 cpu 1 1/0/0", "18 cpu 2 1/1/0", "23 cpu 1 0/0/1"};
  BOOST_TEST(got == expected, boost::test_tools::per_element());
  BOOST_TEST(onnx_coverage_by_opset(t.store().db(), "c0ffee").empty());  // no onnx rows
  got.clear();
  for (const OnnxCoverageRow& r :
       onnx_coverage_by_dtype(t.store().db(), "c0ffee", kOnnxCurrentSuite)) {
    got.push_back(r.op + " " + std::to_string(r.tests) + " " + std::to_string(r.passed));
  }
  BOOST_TEST(got == (std::vector<std::string>{"FLOAT 3 2", "FLOAT16 1 0"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(classification_follows_the_by_design_list_then_dtypes) {
  using V = std::vector<std::string>;
  auto topic = [](std::string_view id, V ops, Outcome o, std::string_view message) {
    const OnnxClassification c = classify_onnx_failure(id, ops, o, message);
    return std::string(onnx_category_name(c.category)) + " " + c.topic;
  };
  const Outcome u = Outcome::Unsupported;
  BOOST_TEST(topic("node/test_adam", V{"Adam"}, u, "") ==
             "unsupported-by-design training preview ops (ai.onnx.preview.training)");
  BOOST_TEST(topic("node/test_loop11", V{"Loop"}, u, "") == "unsupported-by-design control flow");
  BOOST_TEST(topic("node/test_bernoulli_expanded", V{"RandomUniformLike", "Cast"}, u, "") ==
             "unsupported-by-design random ops");
  BOOST_TEST(topic("node/test_training_dropout", V{"Dropout"}, u, "") ==
             "unsupported-by-design random ops");
  BOOST_TEST(topic("node/test_dequantizelinear", V{"DequantizeLinear"}, u, "type UINT8") ==
             "unsupported-by-design quantization");
  BOOST_TEST(topic("node/test_optional_get_element", V{"OptionalGetElement"}, u, "") ==
             "unsupported-by-design optional");
  BOOST_TEST(topic("node/test_x", V{"Identity"}, u, "has type seq(FLOAT)") ==
             "unsupported-by-design sequences");
  BOOST_TEST(topic("node/test_x", V{"Cast"}, u, "output has type STRING") ==
             "unsupported-by-design strings");
  BOOST_TEST(topic("node/test_x", V{"Cast"}, u, "has type FLOAT16") == "not-yet-implemented dtype");
  BOOST_TEST(topic("node/test_x", V{"Cast"}, u, "has type INT8") == "not-yet-implemented dtype");
  BOOST_TEST(topic("node/test_x", V{"Cast"}, u, "UINT8S") == "not-yet-implemented op");
  BOOST_TEST(topic("node/test_dropout_default", V{"Dropout"}, u, "") == "not-yet-implemented op");
  BOOST_TEST(topic("node/test_x", V{"Abs"}, Outcome::FailShape, "") == "failing ");
}

BOOST_AUTO_TEST_CASE(a_draft_lists_every_non_pass_keeps_human_fields_and_round_trips) {
  TempStore t;
  record_corpus(t);
  const std::vector<OnnxExpectation> existing = parse_onnx_expectations(
      "node/test_u8\t*\tUNSUPPORTED\tnot-yet-implemented\tuint8 lands with #9\t#9\t2030-01-01\n"
      "node/test_a\t*\tUNSUPPORTED\tnot-yet-implemented\tnot yet\t#4\t2030-01-01\n"
      "node/test_s*\t*\tUNSUPPORTED\tnot-yet-implemented\tstuff\t#4\t2030-01-01\n",
      "old.tsv");
  OnnxCorpus six_tests = kOnnxCorpus;
  six_tests.floor = 6;
  const OnnxDraft draft =
      draft_onnx_expectations(t.store().db(), "c0ffee", existing, "2026-01-01", six_tests);
  BOOST_TEST_MESSAGE(draft.text);
  BOOST_TEST(draft.lines == 4);
  BOOST_TEST(draft.kept == 1);
  BOOST_TEST(draft.bugs == 1);
  BOOST_REQUIRE_EQUAL(draft.dropped.size(), 2u);
  BOOST_TEST(
      draft.dropped[0].starts_with("line 2 (node/test_a, *, UNSUPPORTED): the test no longer"));
  BOOST_TEST(draft.dropped[1].find("wildcard lines are not carried over") != std::string::npos);

  const std::string text = draft.text;
  auto has = [&](std::string_view line) { BOOST_TEST(text.find(line) != std::string::npos, line); };
  has("\n# unsupported-by-design: 2 line(s)\n"
      "node/test_str\t*\tUNSUPPORTED\tunsupported-by-design\tstrings: graph input 'x' has type "
      "STRING; Volta's tensor types: FLOAT\t#4\t2027-01-01\n"
      "simple/test_sequence_model1\t*\tUNSUPPORTED\tunsupported-by-design\tsequences: op not "
      "supported\t#4\t2027-01-01\n");
  has("\n# not-yet-implemented: 1 line(s)\n"
      "node/test_u8\t*\tUNSUPPORTED\tnot-yet-implemented\tuint8 lands with #9\t#9\t2030-01-01\n");
  has("\n# failing: 1 line(s)\n"
      "node/test_fail\tcpu\tFAIL_NUMERIC\tfailing\telement 0 is 2\t#4\t2026-04-01\n");
  has("# ERROR\tcpu\tnode/test_err\tthrew\n");

  // Judged against the draft, every result but the ERROR is as expected.
  const std::vector<OnnxExpectation> drafted = parse_onnx_expectations(text, "draft.tsv");
  for (std::string_view backend : kOnnxBackends) {
    const std::vector<Expectation> mine = onnx_expectations_for(drafted, backend);
    Statement q = t.store().db().prepare(
        "SELECT c.case_id, r.outcome FROM result r JOIN test_case c ON c.id = r.case_ref "
        "WHERE c.backend = ? AND r.outcome <> 'MISSING'");
    q.bind(1, backend);
    while (q.step()) {
      const Outcome o = *parse_outcome(q.column_text(1));
      const Verdict v = verdict_for(o, match_expectation(mine, q.column_text(0)), "2026-01-01");
      const bool bug = o == Outcome::Error;
      BOOST_TEST((v == Verdict::Expected) != bug, backend << " " << q.column_text(0));
    }
  }
}

BOOST_AUTO_TEST_CASE(a_draft_from_a_partial_run_is_refused) {
  TempStore t;
  record_corpus(t);
  BOOST_CHECK_EXCEPTION(
      draft_onnx_expectations(t.store().db(), "c0ffee", {}, "2026-01-01"), VoltaError,
      [](const VoltaError& e) {
        return std::string_view(e.what()).find(
                   "has onnx results for 6 tests on backend cpu, fewer than the corpus floor of "
                   "1072") != std::string_view::npos;
      });
}

}  // namespace
}  // namespace volta::conformance
