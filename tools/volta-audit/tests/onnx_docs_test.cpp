// The docs sections generated from the onnx suite's results: the coverage matrix
// (governance/onnx-coverage.md) and the totals (README.md), rendered from a commit's evidence,
// synced and checked against the database like the sections generated from the code.
#define BOOST_TEST_MODULE onnx_docs
#include <boost/test/unit_test.hpp>
#include <fstream>
#include <sstream>

#include "docs_contract.h"
#include "store_builder.h"

namespace volta::audit {
namespace {

namespace fs = std::filesystem;
using conformance::Outcome;
using conformance::ResultRow;
using conformance::Verdict;
using testing::kCommit;
using testing::kOtherCommit;
using testing::result;
using testing::TempStore;
using testing::Where;

ResultRow onnx(std::string id, std::string backend, Outcome outcome, std::string family,
               std::string op) {
  ResultRow r =
      result(std::move(id), outcome, Verdict::Expected, "",
             Where{.suite = "onnx", .backend = std::move(backend), .family = std::move(family)});
  r.op = std::move(op);
  return r;
}

// Four tests: Relu passes twice, Abs is refused by the CPU backend only, a Loop is refused
// by both, and a stale expectation is MISSING (not a test).
void record(TempStore& t) {
  for (std::string backend : {"cpu", "reference"}) {
    const bool cpu = backend == "cpu";
    t.add_run({onnx("node/test_relu", backend, Outcome::Pass, "activation", "Relu"),
               onnx("node/test_relu_expanded", backend, Outcome::Pass, "activation", "Relu"),
               onnx("node/test_abs", backend, cpu ? Outcome::Unsupported : Outcome::Pass,
                    "elementwise", "Abs"),
               onnx("node/test_loop11", backend, Outcome::Unsupported, "other", "Loop"),
               onnx("node/test_gone", backend, Outcome::Missing, "", "")});
  }
  // A newer run fails one test on the CPU backend: it supersedes the older pass.
  t.add_run({onnx("node/test_relu_expanded", "cpu", Outcome::FailNumeric, "activation", "Relu")});
}

constexpr std::string_view kTotals =
    "| ONNX backend tests | tests | pass | unsupported | fail |\n"
    "|--------------------|-------|------|-------------|------|\n"
    "| cpu                | 4     | 1    | 2           | 1    |\n"
    "| reference          | 4     | 3    | 1           | 0    |\n";

BOOST_AUTO_TEST_CASE(totals_count_each_backend_from_the_newest_results) {
  TempStore t;
  record(t);
  BOOST_TEST(render_onnx_totals(t.db(), kCommit) == kTotals);
}

BOOST_AUTO_TEST_CASE(coverage_has_a_family_table_with_a_total_and_an_op_table) {
  TempStore t;
  record(t);
  const std::string text = render_onnx_coverage(t.db(), kCommit);
  BOOST_TEST_MESSAGE(text);
  BOOST_TEST(text.starts_with(
      "By family:\n\n"
      "| family      | ops | tests | cpu pass | cpu unsupported | cpu fail | reference pass | "
      "reference unsupported | reference fail |\n"));
  auto has = [&](std::string_view line) { BOOST_TEST(text.find(line) != std::string::npos, line); };
  has("| activation  | 1   | 2     | 1        | 0               | 1        | 2              | 0   "
      "                  | 0              |\n");
  has("| other       | 1   | 1     | 0        | 1               | 0        | 0              | 1   "
      "                  | 0              |\n");
  has("| **total**   | 3   | 4     | 1        | 2               | 1        | 3              | 1   "
      "                  | 0              |\n");
  has("\nBy op:\n\n| op   | family      | tests |");
  has("| Abs  | elementwise | 1     | 0        | 1               | 0        | 1              | 0 ");
  BOOST_TEST(text.find("test_gone") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_commit_without_onnx_results_has_no_sections) {
  TempStore t;
  record(t);
  BOOST_CHECK_EXCEPTION(render_onnx_totals(t.db(), kOtherCommit), SectionUnavailable,
                        [](const SectionUnavailable& e) {
                          return std::string_view(e.what()) ==
                                 "no onnx results for commit fedcba987654; run `volta-audit run "
                                 "onnx` first";
                        });
  BOOST_CHECK_THROW(render_onnx_coverage(t.db(), kOtherCommit), SectionUnavailable);
}

std::string read(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

constexpr std::string_view kBegin =
    "<!-- BEGIN GENERATED: onnx-totals (volta-audit docs sync; do not edit) -->\n";
constexpr std::string_view kEnd = "<!-- END GENERATED: onnx-totals -->\n";

const DocFinding& totals_finding(const std::vector<DocFinding>& findings) {
  const auto it = std::find_if(findings.begin(), findings.end(), [](const DocFinding& f) {
    return f.claim == "section:onnx-totals";
  });
  BOOST_REQUIRE(it != findings.end());
  return *it;
}

BOOST_AUTO_TEST_CASE(sync_and_check_compare_the_committed_text_with_the_database) {
  TempStore t;
  record(t);
  const fs::path root = t.dir() / "docs";
  fs::create_directories(root);
  std::ofstream(root / "README.md") << "# P\n\n" << kBegin << kEnd;
  const ResultsSource results{&t.db(), kCommit};

  // Without a database the section is left as it is, and said so.
  std::vector<std::string> left;
  BOOST_TEST(sync_docs(root, nullptr, &left).empty());
  BOOST_REQUIRE_EQUAL(left.size(), 1u);
  BOOST_TEST(
      left[0].starts_with("README.md:3: section onnx-totals left as it is: generated from "
                          "the results database"));
  const std::vector<DocFinding> unchecked = check_docs(root, nullptr);
  BOOST_TEST(gate_status_name(totals_finding(unchecked).status) == "NOT VERIFIED");
  BOOST_TEST(docs_ok(unchecked, false));
  BOOST_TEST(!docs_ok(unchecked, true));

  // From the database: written, then in sync.
  BOOST_TEST(sync_docs(root, &results, &left) == std::vector<std::string>{"README.md"},
             boost::test_tools::per_element());
  BOOST_TEST(left.empty());
  BOOST_TEST(read(root / "README.md") ==
             "# P\n\n" + std::string(kBegin) + std::string(kTotals) + std::string(kEnd));
  const DocFinding& synced = totals_finding(check_docs(root, nullptr, &results));
  BOOST_TEST(gate_status_name(synced.status) == "PASS");

  // New results for the commit: the committed text no longer matches.
  t.add_run({onnx("node/test_abs", "cpu", Outcome::Pass, "elementwise", "Abs")});
  const DocFinding stale = totals_finding(check_docs(root, nullptr, &results));
  BOOST_TEST(gate_status_name(stale.status) == "FAIL");
  BOOST_TEST(stale.detail.find("expected \"| cpu                | 4     | 2    | 1  ") !=
             std::string::npos);

  // Another commit without onnx results: not verified, and the text is left alone.
  const ResultsSource other{&t.db(), kOtherCommit};
  const DocFinding none = totals_finding(check_docs(root, nullptr, &other));
  BOOST_TEST(gate_status_name(none.status) == "NOT VERIFIED");
  BOOST_TEST(none.detail ==
             "no onnx results for commit fedcba987654; run `volta-audit run onnx` first");
  BOOST_TEST(sync_docs(root, &other, &left).empty());
  BOOST_TEST(left.size() == 1u);
}

}  // namespace
}  // namespace volta::audit
