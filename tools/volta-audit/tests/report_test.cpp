#define BOOST_TEST_MODULE report
#include "report.h"

#include <boost/test/unit_test.hpp>

#include "store_builder.h"

namespace volta::audit {
namespace {

using conformance::Outcome;
using conformance::Verdict;
using testing::result;
using testing::RunEnd;
using testing::TempStore;
using testing::Where;

conformance::ResultRow measured(std::string case_id, Outcome outcome, Verdict verdict,
                                double max_ulp, double max_abs, std::string message = "") {
  conformance::ResultRow row = result(std::move(case_id), outcome, verdict, std::move(message));
  row.max_ulp = max_ulp;
  row.max_abs = max_abs;
  row.max_rel = max_abs / 2;
  return row;
}

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

// The newest complete run: two failures, an unexpected pass, a pass, a skip, and one
// message that is hostile to HTML and Markdown alike.
void build_store(TempStore& t) {
  t.add_run({result("Old(shape=[1])", Outcome::Crash, Verdict::Unexpected, "old crash")},
            {.started_at = "2030-01-01T00:00:00Z"});
  const Where reduction{.suite = "parity", .backend = "cpu", .family = "reduction"};
  const Where cuda{.suite = "parity", .backend = "cuda", .family = "elementwise"};
  std::vector<conformance::ResultRow> rows = {
      measured("Softmax(axis=-1,shape=[3,5],dtype=f32)", Outcome::FailNumeric, Verdict::Unexpected,
               40, 1e-3, "<script>alert('x')</script> & | *bold*"),
      measured("Add(shape=[2])", Outcome::Pass, Verdict::Expected, 0, 0),
      measured("Erf(shape=[2])", Outcome::Pass, Verdict::UnexpectedPass, 2, 5e-2,
               "expected FAIL_NUMERIC (#5)"),
      result("ReduceSum(axis=0)", Outcome::Error, Verdict::Unexpected, "threw", reduction),
      result("Add(shape=[2])", Outcome::Skipped, Verdict::Expected, "no CUDA device", cuda),
  };
  rows[1].not_bit_exact =
      "node 'sum' (ReduceSum, kernel f32_reduce_atomic, run-to-run); node 'mm' (Gemm, kernel "
      "f32_gemm_split_k, run-to-run)";
  t.add_run(rows, {.started_at = "2030-01-02T00:00:00Z"});
  conformance::ResultRow unfinished =
      result("Newer(shape=[1])", Outcome::Crash, Verdict::Unexpected, "unfinished");
  unfinished.not_bit_exact = "node 'incomplete' (Add, kernel k, run-to-run)";
  t.add_run({unfinished}, {.end = RunEnd::Incomplete, .started_at = "2030-01-03T00:00:00Z"});
  conformance::ResultRow other_commit = result("Other(shape=[1])", Outcome::Pass);
  other_commit.not_bit_exact = "node 'elsewhere' (Add, kernel k, run-to-run)";
  t.add_run({other_commit},
            {.commit = testing::kOtherCommit, .started_at = "2029-01-01T00:00:00Z"});
}

BOOST_AUTO_TEST_CASE(markdown_report_describes_the_newest_complete_run) {
  TempStore t;
  build_store(t);
  const std::string md = render_report(t.db(), ReportFormat::Markdown);
  BOOST_TEST_MESSAGE(md);
  BOOST_TEST(md.starts_with("# Volta conformance report: run 2, commit 0123456789ab\n"));
  BOOST_TEST(contains(md, "| commit | " + testing::kCommit + " |\n"));
  BOOST_TEST(contains(md, "| dirty | no |\n"));
  BOOST_TEST(contains(md, "| machine | ci-box / Test CPU |\n"));
  // Per suite and per family: cases, then one count per outcome in outcome order.
  BOOST_TEST(
      contains(md,
               "| suite | backend | cases | PASS | FAIL\\_NUMERIC | FAIL\\_SHAPE | "
               "FAIL\\_DTYPE | UNSUPPORTED | SKIPPED | ERROR | CRASH | TIMEOUT | MISSING |\n"));
  BOOST_TEST(contains(md, "| parity | cpu | 4 | 2 | 1 | 0 | 0 | 0 | 0 | 1 | 0 | 0 | 0 |\n"));
  BOOST_TEST(contains(md, "| parity | cuda | 1 | 0 | 0 | 0 | 0 | 0 | 1 | 0 | 0 | 0 | 0 |\n"));
  BOOST_TEST(
      contains(md, "| parity | elementwise | 4 | 2 | 1 | 0 | 0 | 0 | 1 | 0 | 0 | 0 | 0 |\n"));
  BOOST_TEST(contains(md, "| parity | reduction | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 1 | 0 | 0 | 0 |\n"));
  // Worst errors carry the case id and the tolerance it was judged by, worst first.
  BOOST_TEST(
      contains(md,
               "| parity | cpu | Softmax(axis=-1,shape=\\[3,5\\],dtype=f32) | FAIL\\_NUMERIC | "
               "40.0 | 0.001 | 0.0005 | abs=1e-05 rel=0.0001 ulp=16 |\n"));
  const size_t by_abs = md.find("## Worst errors by max abs");
  BOOST_TEST(md.find("Erf(shape=\\[2\\])", by_abs) < md.find("Softmax(", by_abs));
  // Every non-expected result, with outcome, verdict and message, escaped for Markdown.
  BOOST_TEST(
      contains(md,
               "| parity | cpu | Softmax(axis=-1,shape=\\[3,5\\],dtype=f32) | FAIL\\_NUMERIC | "
               "unexpected | &lt;script>alert('x')&lt;/script> &amp; \\| \\*bold\\* |\n"));
  BOOST_TEST(contains(md,
                      "| parity | cpu | Erf(shape=\\[2\\]) | PASS | unexpected-pass | expected "
                      "FAIL\\_NUMERIC (#5) |\n"));
  BOOST_TEST(contains(md, "| parity | cpu | ReduceSum(axis=0) | ERROR | unexpected | threw |\n"));
  // Cases of the run's commit whose plans are not bit-exact, with their nodes; not those of
  // an incomplete run or another commit.
  BOOST_TEST(contains(md,
                      "## Not bit-exact\n\nCases of commit 0123456789ab whose plans (Relaxed "
                      "mode) run nodes on kernels without a bit-exact guarantee, with those "
                      "nodes.\n\n| suite | backend | case\\_id | nodes |\n|---|---|---|---|\n"
                      "| parity | cpu | Add(shape=\\[2\\]) | node 'sum' (ReduceSum, kernel "
                      "f32\\_reduce\\_atomic, run-to-run); node 'mm' (Gemm, kernel "
                      "f32\\_gemm\\_split\\_k, run-to-run) |\n\n## Gates"),
             md);
  BOOST_TEST(!contains(md, "node 'incomplete'"));
  BOOST_TEST(!contains(md, "node 'elsewhere'"));
  // The run's own sections leave out an older run and an incomplete one.
  const std::string run_sections = md.substr(0, md.find("## Gates"));
  BOOST_TEST(!contains(run_sections, "Old(shape"));  // an older run
  BOOST_TEST(!contains(md, "Newer(shape"));          // an incomplete run
  // The gate table for the run's commit, pull-request blockers. The gate's evidence is every
  // case's newest result across the commit's runs, so the older run's crash counts there; and
  // this binary (of another commit) says its expected cases are not that commit's.
  BOOST_TEST(contains(md, "## Gates\n"));
  BOOST_TEST(contains(md, "| gate | status | blocker | reason |\n"));
  BOOST_TEST(contains(md,
                      "| parity-cpu-reference | FAIL | yes | this volta-audit knows the "
                      "expected cases of its own commit "));
  BOOST_TEST(contains(md,
                      "2 unexpected result(s); first: Erf(shape=\\[2\\]) PASS (unexpected-pass): "
                      "expected FAIL\\_NUMERIC (#5); 2 ERROR/CRASH/TIMEOUT result(s), which no "
                      "expectation excuses; first: Old(shape=\\[1\\]) CRASH: old crash; "));
  BOOST_TEST(contains(md, "| parity-cuda-cpu | FAIL | no | "));
  BOOST_TEST(contains(md,
                      "first: Add(shape=\\[2\\]) SKIPPED (skipped without an expectation or a "
                      "declared precondition): no CUDA device; all 1 parity (backend cuda) "
                      "cases skipped: no CUDA device; "));
}

BOOST_AUTO_TEST_CASE(html_report_is_standalone_and_escapes_every_text) {
  TempStore t;
  build_store(t);
  const std::string html = render_report(t.db(), ReportFormat::Html);
  BOOST_TEST(
      html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"));
  BOOST_TEST(html.ends_with("</body>\n</html>\n"));
  BOOST_TEST(!contains(html, "<script>"));
  BOOST_TEST(
      contains(html, "<td>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; | *bold*</td>"));
  BOOST_TEST(contains(html, "<td>Softmax(axis=-1,shape=[3,5],dtype=f32)</td>"));
  BOOST_TEST(contains(html, "<td>ReduceSum(axis=0)</td><td>ERROR</td><td>unexpected</td>"));
  BOOST_TEST(contains(html, "<h2>Not bit-exact</h2>"));
  BOOST_TEST(contains(html,
                      "<td>node &#39;sum&#39; (ReduceSum, kernel f32_reduce_atomic, "
                      "run-to-run); node &#39;mm&#39; (Gemm, kernel f32_gemm_split_k, "
                      "run-to-run)</td>"));
  BOOST_TEST(contains(html, "<h2>Gates</h2>"));
  BOOST_TEST(contains(html, "<tr><td>parity-cpu-reference</td><td>FAIL</td><td>yes</td>"));
  BOOST_TEST(contains(html, "<tr><td>docs-contract</td><td>NOT VERIFIED</td><td>yes</td>"));
}

BOOST_AUTO_TEST_CASE(a_store_without_a_complete_run_has_nothing_to_report) {
  TempStore t;
  t.add_run({result("Add(shape=[2])", Outcome::Pass)}, {.end = RunEnd::Incomplete});
  try {
    render_report(t.db(), ReportFormat::Markdown);
    BOOST_FAIL("rendered a report without a complete run");
  } catch (const conformance::StoreError& e) {
    BOOST_TEST(std::string(e.what()) ==
               "results database '" + t.path() +
                   "' holds no complete run with results: run `volta-audit run` first");
  }
}

BOOST_AUTO_TEST_CASE(a_clean_run_says_so_instead_of_printing_empty_tables) {
  TempStore t;
  t.add_run({result("Add(shape=[2])", Outcome::Pass)});
  const std::string md = render_report(t.db(), ReportFormat::Markdown);
  BOOST_TEST(contains(md, "None: every result matches its expectation.\n"));
  BOOST_TEST(contains(md, "No result carries a ULP distance.\n"));
  BOOST_TEST(contains(md,
                      "## Not bit-exact\n\nCases of commit 0123456789ab whose plans (Relaxed "
                      "mode) run nodes on kernels without a bit-exact guarantee, with those "
                      "nodes.\n\nNone: every plan of this commit's complete runs is bit-exact.\n"),
             md);
  BOOST_TEST(contains(md,
                      "| docs-contract | NOT VERIFIED | yes | docs check has not run for "
                      "commit 0123456789ab; run \\`volta-audit docs check\\` |\n"),
             md);
}

}  // namespace
}  // namespace volta::audit
