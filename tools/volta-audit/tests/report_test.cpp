#define BOOST_TEST_MODULE report
#include "report.h"

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>

#include "loss_chart.h"
#include "store_builder.h"
#include "training_report.h"
#include "volta/conformance/training_store.h"

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

// ---- training runs ----------------------------------------------------------------------------

using conformance::TrainingStepRow;

conformance::TrainingRunInfo training_info(uint64_t seed = 7) {
  conformance::TrainingRunInfo info;
  info.commit = testing::kCommit;
  info.cpu_model = "Test CPU";
  info.threads = 2;
  info.model = "tiny-transformer";
  info.config = R"({"d_model":64,"name":"<script>alert('x')</script> & co"})";
  info.optimizer = R"({"lr":0.01,"name":"adamw"})";
  info.data_path = "/usr/share/common-licenses/GPL-3";
  info.data_sha256 = "8ceb4b9ee5adedde47b31e975c1d90c73ad27b6b165a1dcd80c7c545eb65b903";
  info.data_bytes = 35149;
  info.seed = seed;
  return info;
}

// `count` steps whose loss falls from 5.5 by 0.125 a step, at a learning rate warming up.
std::vector<TrainingStepRow> falling_losses(int64_t count, int64_t first_step = 1) {
  std::vector<TrainingStepRow> steps;
  for (int64_t i = 0; i < count; ++i) {
    steps.push_back({.step = first_step + i,
                     .loss = 5.5 - 0.125 * static_cast<double>(i),
                     .grad_norm = 1,
                     .lr = 0.001 * static_cast<double>(std::min<int64_t>(i + 1, 10))});
  }
  return steps;
}

int64_t add_training_run(TempStore& t, const std::vector<TrainingStepRow>& steps,
                         uint64_t seed = 7) {
  const int64_t run = conformance::begin_training_run(t.store(), training_info(seed));
  conformance::record_training_steps(t.store(), run, steps);
  conformance::finish_training_run(t.store(), run, conformance::TrainingStatus::Complete);
  return run;
}

// The points of every polyline of `svg` with class `name`, stretch by stretch.
std::vector<size_t> polyline_points(std::string_view svg, std::string_view name) {
  std::vector<size_t> counts;
  const std::string start = "<polyline class=\"" + std::string(name) + "\" points=\"";
  for (size_t at = svg.find(start); at != std::string_view::npos; at = svg.find(start, at)) {
    at += start.size();
    const std::string_view points = svg.substr(at, svg.find('"', at) - at);
    counts.push_back(static_cast<size_t>(std::ranges::count(points, ' ')) + 1);
  }
  return counts;
}

size_t occurrences(std::string_view text, std::string_view part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string_view::npos; at = text.find(part, at + 1)) {
    ++n;
  }
  return n;
}

BOOST_AUTO_TEST_CASE(html_report_draws_a_loss_curve_per_training_run) {
  TempStore t;
  t.add_run({result("Add(shape=[2])", Outcome::Pass)});
  const int64_t run = add_training_run(t, falling_losses(40));
  const std::string html = render_report(t.db(), ReportFormat::Html);
  const size_t section = html.find("<h2>Training</h2>");
  BOOST_REQUIRE(section != std::string::npos);
  BOOST_TEST(section > html.find("<h2>Gates</h2>"));
  const std::string training = html.substr(section);
  // One chart: 40 points of loss and of learning rate, axis ends labelled.
  BOOST_TEST(occurrences(training, "<figure class=\"training\"><svg class=\"loss-chart\"") == 1u);
  BOOST_TEST(polyline_points(training, "loss") == std::vector<size_t>{40},
             boost::test_tools::per_element());
  BOOST_TEST(polyline_points(training, "lr") == std::vector<size_t>{40},
             boost::test_tools::per_element());
  BOOST_TEST(contains(training, "<title>Loss per step of training run " + std::to_string(run)));
  BOOST_TEST(contains(training, ">5.5</text>"));    // highest loss
  BOOST_TEST(contains(training, ">0.625</text>"));  // lowest: 5.5 - 39 * 0.125
  BOOST_TEST(contains(training, ">40</text>"));     // last step
  // The caption: first and last loss, seed, threads, config and optimizer, escaped.
  BOOST_TEST(
      contains(training, "<figcaption>Training run " + std::to_string(run) +
                             ": tiny-transformer at commit 0123456789ab, complete; steps 1..40, "
                             "loss 5.5 (first) to 0.625 (last); seed 7, 2 thread(s); optimizer "
                             "{&quot;lr&quot;:0.01,&quot;name&quot;:&quot;adamw&quot;}; config "
                             "{&quot;d_model&quot;:64,&quot;name&quot;:&quot;&lt;script&gt;alert("
                             "&#39;x&#39;)&lt;/script&gt; &amp; co&quot;}; data "
                             "/usr/share/common-licenses/GPL-3 (35149 bytes, sha256 8ceb4b9ee5ad)."
                             "</figcaption></figure>"),
      training);
  BOOST_TEST(!contains(html, "<script>"));
  BOOST_TEST(contains(training, "<td>5.5</td><td>0.625</td><td>7</td><td>2</td><td></td>"));
}

BOOST_AUTO_TEST_CASE(markdown_report_lists_training_runs_newest_first) {
  TempStore t;
  t.add_run({result("Add(shape=[2])", Outcome::Pass)});
  for (uint64_t seed = 1; seed <= kTrainingRunsInReport + 1; ++seed) {
    add_training_run(t, falling_losses(3), seed);
  }
  const std::string md = render_report(t.db(), ReportFormat::Markdown);
  const std::string training = md.substr(md.find("## Training\n"));
  BOOST_TEST(training.starts_with("## Training\n\nThe 5 newest of 6 training runs, newest "
                                  "first. Steps are numbered over the whole training"),
             training);
  BOOST_TEST(contains(training,
                      "| run | commit | status | model | started | steps | first loss | last loss "
                      "| seed | threads | resumed from | optimizer | config | data |\n"));
  // Newest first (started in the same second: by id); the oldest run is left out.
  BOOST_TEST(training.find("| 6 | 0123456789ab | complete | tiny-transformer |") <
             training.find("| 2 | 0123456789ab | complete | tiny-transformer |"));
  BOOST_TEST(!contains(training, "| 1 | 0123456789ab |"));
  BOOST_TEST(contains(training, " | 1..3 | 5.5 | 5.25 | 6 | 2 |  | {\"lr\":0.01,"), training);
  BOOST_TEST(!contains(md, "<svg"));
}

BOOST_AUTO_TEST_CASE(without_training_runs_the_section_says_so) {
  TempStore t;
  t.add_run({result("Add(shape=[2])", Outcome::Pass)});
  const std::string md = render_report(t.db(), ReportFormat::Markdown);
  BOOST_TEST(md.ends_with("## Training\n\nEvery training run, newest first. Steps are numbered "
                          "over the whole training: a resumed run goes on from its checkpoint's "
                          "step. A run whose process died shows 'running' until a writer opens "
                          "the database again, then 'interrupted'.\n\nNo training run is "
                          "recorded: \\`volta train --db PATH\\` records each run and its loss "
                          "per step.\n"),
             md);
  const std::string html = render_report(t.db(), ReportFormat::Html);
  BOOST_TEST(contains(html,
                      "<p>No training run is recorded: `volta train --db PATH` records each "
                      "run and its loss per step.</p>\n</body>"));
  BOOST_TEST(!contains(html, "<figure"));
}

BOOST_AUTO_TEST_CASE(a_database_with_training_runs_only_reports_them) {
  TempStore t;
  const int64_t run = conformance::begin_training_run(t.store(), training_info());
  conformance::record_training_steps(t.store(), run, falling_losses(5, /*first_step=*/11));
  const std::string html = render_report(t.db(), ReportFormat::Html);
  BOOST_TEST(contains(html,
                      "<h1>Volta report: training runs</h1>\n<h2>Training</h2>\n<p>The "
                      "database holds no complete conformance run with results"));
  BOOST_TEST(!contains(html, "<h2>Gates</h2>"));
  BOOST_TEST(polyline_points(html, "loss") == std::vector<size_t>{5},
             boost::test_tools::per_element());
  BOOST_TEST(contains(html, ", running; steps 11..15, loss 5.5 (first) to 5 (last)"));
}

BOOST_AUTO_TEST_CASE(a_long_run_is_drawn_from_each_stretch_lowest_and_highest_loss) {
  std::vector<TrainingStepRow> steps = falling_losses(2500);
  steps[1234].loss = 100;  // a spike survives the thinning
  const std::string svg = loss_chart_svg("t", steps);
  BOOST_TEST(polyline_points(svg, "loss") == std::vector<size_t>{kLossChartMaxPoints},
             boost::test_tools::per_element());
  BOOST_TEST(loss_chart_points(steps.size()) == kLossChartMaxPoints);
  BOOST_TEST(contains(svg, ">100</text>"));
  BOOST_TEST(contains(svg, ">2500</text>"));
}

BOOST_AUTO_TEST_CASE(an_infinite_loss_breaks_the_curve) {
  std::vector<TrainingStepRow> steps = falling_losses(10);
  steps[4].loss = std::numeric_limits<double>::infinity();
  const std::string svg = loss_chart_svg("diverged <run>", steps);
  BOOST_TEST(polyline_points(svg, "loss") == (std::vector<size_t>{4, 5}),
             boost::test_tools::per_element());
  BOOST_TEST(polyline_points(svg, "lr") == std::vector<size_t>{10},
             boost::test_tools::per_element());
  BOOST_TEST(contains(svg, "<title>diverged &lt;run&gt;</title>"));
  BOOST_TEST(contains(loss_chart_svg("empty", {}), ">no steps</text>"));
}

}  // namespace
}  // namespace volta::audit
