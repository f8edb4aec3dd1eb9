#define BOOST_TEST_MODULE perf_report
#include "perf_report.h"

#include <boost/test/unit_test.hpp>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <span>
#include <sstream>
#include <vector>

#include "commands.h"
#include "perf_run_data.h"
#include "perf_svg.h"
#include "store_builder.h"

namespace volta::audit {
namespace {

using testing::kCommit;
using testing::kMachine;
using testing::kOtherCommit;
using testing::RunEnd;
using testing::TempStore;

const std::string kCandidateCommit = "abcdef0123456789abcdef0123456789abcdef01";

const std::string kRegression = "f32_gemm/avx512/size:1024/threads:1/real_time";
const std::string kNoise = "mem_copy/bytes:1048576/real_time";
const std::string kImprovement = "f32_gemm/avx512/size:64/threads:2/real_time";
const std::string kHostile = "onnx/<script>alert('x')</script>|*m*.onnx/threads:1";
const std::string kNew = "new_bench/threads:1";
const std::string kError = "broken/threads:1";

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

size_t count(const std::string& text, std::string_view part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

struct Counters {
  std::optional<double> gflops = {};
  std::optional<double> gbytes_per_s = {};
  std::optional<int64_t> peak_bytes = {};
  std::string context = {};
  std::string variant = "f32_gemm_avx512_14x32";
  int threads = 1;
};

void add_samples(TempStore& t, int64_t run, const std::string& benchmark, int pass,
                 std::initializer_list<double> seconds, const Counters& c = {}) {
  int repetition = 0;
  for (double value : seconds) {
    conformance::Statement insert = t.db().prepare(
        "INSERT INTO perf_sample (run_id, benchmark, pass, repetition, value, unit, variant, "
        "threads, gflops, gbytes_per_s, peak_bytes, context) "
        "VALUES (?, ?, ?, ?, ?, 's', ?, ?, ?, ?, ?, ?)");
    insert.bind(1, run)
        .bind(2, benchmark)
        .bind(3, pass)
        .bind(4, repetition++)
        .bind(5, value)
        .bind(6, c.variant)
        .bind(7, c.threads)
        .bind(8, c.gflops)
        .bind(9, c.gbytes_per_s);
    if (c.peak_bytes) {
      insert.bind(10, *c.peak_bytes);
    } else {
      insert.bind(10, std::nullopt);
    }
    insert.bind(11, c.context).run();
  }
}

struct PassRow {
  int64_t samples = 0;
  double median = 0;
  double low = 0;
  double high = 0;
  std::optional<double> change = {};
  std::optional<double> p = {};
};

struct VerdictRow {
  std::string benchmark = {};
  std::string verdict = {};
  std::string baseline_commit = {};
  std::string baseline_kind = {};
  std::optional<double> baseline_median = {};
  PassRow pass1 = {};
  std::optional<PassRow> pass2 = {};
  std::string detail = {};
  std::string variant = "f32_gemm_avx512_14x32";
  int threads = 1;
};

void add_verdict(TempStore& t, int64_t run, const VerdictRow& v) {
  conformance::Statement insert = t.db().prepare(
      "INSERT INTO perf_verdict (run_id, benchmark, unit, variant, threads, baseline_commit, "
      "baseline_kind, baseline_median, threshold, alpha, pass1_samples, pass1_median, "
      "pass1_low, pass1_high, pass1_change, pass1_p, pass2_samples, pass2_median, pass2_low, "
      "pass2_high, pass2_change, pass2_p, verdict, detail) "
      "VALUES (?, ?, 's', ?, ?, ?, ?, ?, 0.05, 0.01, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  insert.bind(1, run)
      .bind(2, v.benchmark)
      .bind(3, v.variant)
      .bind(4, v.threads)
      .bind(5, v.baseline_commit)
      .bind(6, v.baseline_kind)
      .bind(7, v.baseline_median)
      .bind(8, v.pass1.samples)
      .bind(9, v.pass1.median)
      .bind(10, v.pass1.low)
      .bind(11, v.pass1.high)
      .bind(12, v.pass1.change)
      .bind(13, v.pass1.p);
  const PassRow none;
  const PassRow& p2 = v.pass2 ? *v.pass2 : none;
  insert.bind(14, p2.samples);
  const auto maybe = [&](double value) { return v.pass2 ? std::optional(value) : std::nullopt; };
  insert.bind(15, maybe(p2.median))
      .bind(16, maybe(p2.low))
      .bind(17, maybe(p2.high))
      .bind(18, v.pass2 ? p2.change : std::nullopt)
      .bind(19, v.pass2 ? p2.p : std::nullopt)
      .bind(20, v.verdict)
      .bind(21, v.detail)
      .run();
}

void add_baseline(TempStore& t, const std::string& benchmark, double value,
                  const std::string& commit, const std::string& kind, int64_t run) {
  t.db()
      .prepare(
          "INSERT INTO perf_baseline (machine, benchmark, value, unit, commit_sha, reason, "
          "created_at, run_id, kind) VALUES (?, ?, ?, 's', ?, 'first perf run on this machine', "
          "'2030-01-01T00:00:00Z', ?, ?)")
      .bind(1, kMachine)
      .bind(2, benchmark)
      .bind(3, value)
      .bind(4, commit)
      .bind(5, run)
      .bind(6, kind)
      .run();
}

int64_t add_perf_run(TempStore& t, const std::string& commit, const std::string& started,
                     RunEnd end = RunEnd::Complete) {
  return t.add_run({}, {.commit = commit, .end = end, .started_at = started});
}

const std::initializer_list<double> kNineAt10ms = {0.0100, 0.0099, 0.0101, 0.0100, 0.0102,
                                                   0.0098, 0.0100, 0.0101, 0.0099};
const std::initializer_list<double> kNineAt12ms = {0.0120, 0.0119, 0.0121, 0.0120, 0.0122,
                                                   0.0118, 0.0120, 0.0121, 0.0119};

// A baseline run (commit kOtherCommit) and the reported run (kCommit) with one benchmark of
// every verdict, peer samples for two of them, and a newer incomplete perf run that the report
// must not pick.
struct PerfStore {
  TempStore t;
  int64_t baseline_run = 0;
  int64_t candidate_run = 0;
  int64_t run = 0;

  PerfStore() {
    baseline_run = add_perf_run(t, kOtherCommit, "2030-01-01T00:00:00Z");
    add_samples(t, baseline_run, kRegression, 1, kNineAt10ms, {.gflops = 214.7});
    add_samples(t, baseline_run, kNoise, 1, {0.001, 0.001, 0.001});
    add_samples(t, baseline_run, kImprovement, 1, {2e-5, 2e-5, 2e-5}, {.threads = 2});
    candidate_run = add_perf_run(t, kCandidateCommit, "2030-01-01T12:00:00Z");
    add_samples(t, candidate_run, kHostile, 1, {0.5, 0.5, 0.5});
    add_baseline(t, kRegression, 0.01, kOtherCommit, "accepted", baseline_run);
    add_baseline(t, kNoise, 0.001, kOtherCommit, "accepted", baseline_run);
    add_baseline(t, kImprovement, 2e-5, kOtherCommit, "accepted", baseline_run);
    add_baseline(t, kHostile, 0.5, kCandidateCommit, "candidate", candidate_run);

    run = add_perf_run(t, kCommit, "2030-01-02T00:00:00Z");
    add_samples(t, run, kRegression, 1, kNineAt12ms, {.gflops = 178.9});
    add_samples(t, run, kRegression, 2,
                {0.0121, 0.0121, 0.0121, 0.0121, 0.0121, 0.0121, 0.0121, 0.0121, 0.0121, 0.0121,
                 0.0121, 0.0121, 0.0121, 0.0121, 0.0121},
                {.gflops = 177.5});
    add_samples(t, run, kNoise, 1, {0.00106, 0.00106, 0.00106},
                {.gbytes_per_s = 35.5, .variant = "memcpy"});
    add_samples(t, run, kNoise, 2, {0.001005, 0.001005, 0.001005},
                {.gbytes_per_s = 35.4, .variant = "memcpy"});
    add_samples(t, run, kImprovement, 1, {1.5e-5, 1.5e-5, 1.5e-5}, {.threads = 2});
    add_samples(t, run, kHostile, 1, {0.5, 0.5, 0.5},
                {.peak_bytes = 1572864,
                 .context = "plan_cache_hits=99;plan_cache_misses=1",
                 .variant = "f32_gemm_avx512_14x32,f32_softmax"});
    add_samples(t, run, kNew, 1, {0.002, 0.002, 0.002});
    add_samples(t, run, "peer:torch:f32_gemm/size:1024/threads:1", 1, {0.008, 0.007, 0.009},
                {.variant = "torch 2.1.0 mm"});
    add_samples(t, run, "peer:torch:f32_gemm/size:64/threads:2", 1, {1e-5, 1e-5},
                {.variant = "torch 2.1.0 mm", .threads = 2});
    add_samples(t, run, "peer:torch:f32_gemm/size:4096/threads:1", 1, {1.0},
                {.variant = "torch 2.1.0 mm"});

    add_verdict(t, run,
                {.benchmark = kRegression,
                 .verdict = "regression",
                 .baseline_commit = kOtherCommit,
                 .baseline_kind = "accepted",
                 .baseline_median = 0.01,
                 .pass1 = {9, 0.012, 0.0119, 0.0121, 0.2, 4.1e-5},
                 .pass2 = PassRow{15, 0.0121, 0.012, 0.0122, 0.21, 1.2e-6},
                 .detail = "slower in both passes"});
    add_verdict(t, run,
                {.benchmark = kNoise,
                 .verdict = "noise",
                 .baseline_commit = kOtherCommit,
                 .baseline_kind = "accepted",
                 .baseline_median = 0.001,
                 .pass1 = {3, 0.00106, 0.00105, 0.00107, 0.06, 0.03},
                 .pass2 = PassRow{3, 0.001005, 0.001, 0.00101, 0.005, 0.6},
                 .detail = "suspect in pass 1, not seen in pass 2",
                 .variant = "memcpy"});
    add_verdict(t, run,
                {.benchmark = kImprovement,
                 .verdict = "improvement",
                 .baseline_commit = kOtherCommit,
                 .baseline_kind = "accepted",
                 .baseline_median = 2e-5,
                 .pass1 = {3, 1.5e-5, 1.49e-5, 1.51e-5, -0.25, 1e-4},
                 .pass2 = PassRow{3, 1.5e-5, 1.49e-5, 1.51e-5, -0.25, 2e-4},
                 .threads = 2});
    add_verdict(t, run,
                {.benchmark = kHostile,
                 .verdict = "unchanged",
                 .baseline_commit = kCandidateCommit,
                 .baseline_kind = "candidate",
                 .baseline_median = 0.5,
                 .pass1 = {3, 0.5, 0.5, 0.5, 0.0, 1.0},
                 .variant = "f32_gemm_avx512_14x32,f32_softmax"});
    add_verdict(t, run, {.benchmark = kNew, .verdict = "new", .pass1 = {3, 0.002, 0.002, 0.002}});
    add_verdict(t, run,
                {.benchmark = kError, .verdict = "error", .detail = "volta-perf: out of memory"});

    // Newer, but incomplete: never the default.
    const int64_t unfinished = add_perf_run(t, kCommit, "2030-01-03T00:00:00Z", RunEnd::Incomplete);
    add_samples(t, unfinished, kRegression, 1, {9.0});
    // Newer and complete, but a conformance run: not a perf run.
    t.add_run({testing::result("Add(shape=[2])", conformance::Outcome::Pass)},
              {.started_at = "2030-01-04T00:00:00Z"});
  }
};

// The Markdown table row of `benchmark`, split into (escaped) cells.
std::vector<std::string> table_row(const std::string& report, const std::string& benchmark) {
  std::istringstream lines(report);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("| " + markdown_text(benchmark) + " |")) continue;
    std::vector<std::string> cells;
    size_t start = 2;
    for (size_t bar = line.find(" | ", start); bar != std::string::npos;
         bar = line.find(" | ", start)) {
      cells.push_back(line.substr(start, bar - start));
      start = bar + 3;
    }
    cells.push_back(line.substr(start, line.size() - 2 - start));
    return cells;
  }
  BOOST_FAIL("no table row for " + benchmark + " in\n" + report);
  return {};
}

BOOST_AUTO_TEST_CASE(markdown_header_names_the_run_machine_build_and_baseline_range) {
  PerfStore s;
  const std::string md = render_perf_report(s.t.db(), ReportFormat::Markdown);
  BOOST_TEST(contains(
      md, "# Volta perf report: run " + std::to_string(s.run) + ", commit 0123456789ab\n"));
  BOOST_TEST(contains(md, "- Commit: " + kCommit + "\n"));
  BOOST_TEST(contains(md, "- Machine: " + kMachine + "\n"));
  BOOST_TEST(contains(md, "- Build: RelWithDebInfo, GNU 12.2.0\n"));
  BOOST_TEST(contains(md, "- Date: 2030-01-02T00:00:00Z .. "));
  BOOST_TEST(contains(md,
                      "- Baselines: baseline abcdef0 (candidate, 1 benchmark), baseline fedcba9 "
                      "(accepted, 3 benchmarks) .. 0123456; 2 benchmarks without a baseline\n"));
  BOOST_TEST(contains(md,
                      "- Verdicts: 1 regression, 1 noise, 1 improvement, 1 error, 1 new, "
                      "1 unchanged (6 benchmarks)\n"));
  BOOST_TEST(contains(md,
                      "- Plan cache: 297 hits, 3 misses over 3 samples of 1 benchmark (hit "
                      "rate 99.0 %)\n"));
  BOOST_TEST(!contains(md, "- Status:"));
}

BOOST_AUTO_TEST_CASE(markdown_rows_carry_both_passes_throughput_and_peer_ratio) {
  PerfStore s;
  const std::string md = render_perf_report(s.t.db(), ReportFormat::Markdown);
  BOOST_TEST(contains(md,
                      "| benchmark | variant | threads | baseline | pass 1 median \\[CI\\] | "
                      "change | p | pass 2 median \\[CI\\] | change | p | verdict | throughput | "
                      "peak memory | torch median | torch ratio |\n"));
  const std::vector<std::string> regression = table_row(md, kRegression);
  const std::vector<std::string> expected = {markdown_text(kRegression),
                                             "f32\\_gemm\\_avx512\\_14x32",
                                             "1",
                                             "10 ms",
                                             "12 ms \\[11.9, 12.1\\]",
                                             "+20.0 %",
                                             "4.1e-05",
                                             "12.1 ms \\[12, 12.2\\]",
                                             "+21.0 %",
                                             "1.2e-06",
                                             "regression",
                                             "178.9 GFLOP/s",
                                             "—",
                                             "8 ms",
                                             "1.50"};
  BOOST_TEST(regression == expected, boost::test_tools::per_element());

  const std::vector<std::string> noise = table_row(md, kNoise);
  BOOST_TEST(noise.at(3) == "1 ms");
  BOOST_TEST(noise.at(4) == "1.06 ms \\[1.05, 1.07\\]");
  BOOST_TEST(noise.at(5) == "+6.0 %");
  BOOST_TEST(noise.at(6) == "0.03");
  BOOST_TEST(noise.at(8) == "+0.5 %");
  BOOST_TEST(noise.at(10) == "noise");
  BOOST_TEST(noise.at(11) == "35.50 GB/s");
  BOOST_TEST(noise.at(13) == "—");  // no peer mirrors it
  BOOST_TEST(noise.at(14) == "—");

  const std::vector<std::string> improvement = table_row(md, kImprovement);
  BOOST_TEST(improvement.at(2) == "2");
  BOOST_TEST(improvement.at(3) == "20 µs");
  BOOST_TEST(improvement.at(4) == "15 µs \\[14.9, 15.1\\]");
  BOOST_TEST(improvement.at(5) == "-25.0 %");
  BOOST_TEST(improvement.at(6) == "0.0001");
  BOOST_TEST(improvement.at(13) == "10 µs");
  BOOST_TEST(improvement.at(14) == "1.50");

  // Not a suspect: no pass 2; peak bytes from the samples.
  const std::vector<std::string> hostile = table_row(md, kHostile);
  BOOST_TEST(hostile.at(7) == "—");
  BOOST_TEST(hostile.at(8) == "—");
  BOOST_TEST(hostile.at(9) == "—");
  BOOST_TEST(hostile.at(12) == "1.5 MiB");

  const std::vector<std::string> fresh = table_row(md, kNew);
  BOOST_TEST(fresh.at(3) == "—");
  BOOST_TEST(fresh.at(4) == "2 ms \\[2, 2\\]");
  BOOST_TEST(fresh.at(5) == "—");
  BOOST_TEST(fresh.at(10) == "new");

  const std::vector<std::string> error = table_row(md, kError);
  BOOST_TEST(error.at(4) == "—");
  BOOST_TEST(error.at(10) == "error");
}

BOOST_AUTO_TEST_CASE(regressions_and_noise_come_first_then_improvements_then_the_rest) {
  PerfStore s;
  const std::string md = render_perf_report(s.t.db(), ReportFormat::Markdown);
  const size_t table = md.find("## Benchmarks");
  const std::vector<size_t> order = {md.find("| " + markdown_text(kRegression), table),
                                     md.find("| mem\\_copy", table),
                                     md.find("| " + markdown_text(kImprovement), table),
                                     md.find("| broken", table),
                                     md.find("| new\\_bench", table),
                                     md.find("| onnx/", table)};
  for (size_t i = 0; i < order.size(); ++i) {
    BOOST_TEST_CONTEXT("row " << i) {
      BOOST_TEST(order[i] != std::string::npos);
      if (i > 0) BOOST_TEST(order[i - 1] < order[i]);
    }
  }
  // Details of flagged benchmarks, and the peer that mirrors nothing.
  BOOST_TEST(contains(md,
                      "| mem\\_copy/bytes:1048576/real\\_time | noise | suspect in pass 1, "
                      "not seen in pass 2 |\n"));
  BOOST_TEST(contains(md, "| broken/threads:1 | error | volta-perf: out of memory |\n"));
  BOOST_TEST(contains(md,
                      "| peer:torch:f32\\_gemm/size:4096/threads:1 | 1 | 1 | 1 s | no Volta "
                      "benchmark |\n"));
  BOOST_TEST(contains(md, "| peer:torch:f32\\_gemm/size:1024/threads:1 | 1 | 3 | 8 ms | yes |\n"));
  BOOST_TEST(contains(md, "The ONNX conformance models (onnx/) have no peer."));
  BOOST_TEST(contains(md,
                      "| onnx/&lt;script>alert('x')&lt;/script>\\|\\*m\\*.onnx/threads:1 | 3 "
                      "| 1 | 99 |\n"));
}

// Tags balance, void elements aside: enough to catch a broken table or an unclosed SVG.
void check_tags_balance(const std::string& html) {
  std::vector<std::string> open;
  for (size_t at = html.find('<'); at != std::string::npos; at = html.find('<', at + 1)) {
    const size_t end = html.find('>', at);
    BOOST_REQUIRE(end != std::string::npos);
    const std::string tag = html.substr(at + 1, end - at - 1);
    if (tag.starts_with("!DOCTYPE") || tag.ends_with("/")) continue;
    const bool closing = tag.starts_with("/");
    const std::string name =
        tag.substr(closing ? 1 : 0, tag.find_first_of(" \n", closing ? 1 : 0) - (closing ? 1 : 0));
    if (name == "meta") continue;
    if (!closing) {
      open.push_back(name);
      continue;
    }
    BOOST_REQUIRE_MESSAGE(
        !open.empty() && open.back() == name,
        "</" << name << "> closes <" << (open.empty() ? "" : open.back()) << "> at offset " << at);
    open.pop_back();
  }
  BOOST_TEST(open.empty());
}

BOOST_AUTO_TEST_CASE(html_is_self_contained_escaped_and_plots_each_benchmark_with_a_baseline) {
  PerfStore s;
  const std::string html = render_perf_report(s.t.db(), ReportFormat::Html);
  BOOST_TEST(html.starts_with("<!DOCTYPE html>\n"));
  BOOST_TEST(html.ends_with("</html>\n"));
  check_tags_balance(html);
  // Four benchmarks have a baseline: regression, noise, improvement, unchanged.
  BOOST_TEST(count(html, "<svg") == 4U);
  BOOST_TEST(count(html, "</svg>") == 4U);
  BOOST_TEST(!contains(html, "http"));
  BOOST_TEST(!contains(html, "src="));
  BOOST_TEST(!contains(html, "href"));
  BOOST_TEST(!contains(html, "<script"));
  BOOST_TEST(contains(html, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;|*m*.onnx"));
  BOOST_TEST(contains(html, "<tr class=\"v-regression\">"));
  BOOST_TEST(contains(html, "baseline abcdef0 (candidate, 1 benchmark)"));
  // The regression's plot: 9 baseline, 9 pass 1 and 15 pass 2 dots, three medians, two CIs.
  const size_t title = html.find("<title>" + kRegression + "</title>");
  BOOST_REQUIRE(title != std::string::npos);
  const std::string plot = html.substr(title, html.find("</svg>", title) - title);
  BOOST_TEST(count(plot, "h0") == 33U);
  BOOST_TEST(count(plot, "v10") == 3U);
  BOOST_TEST(count(plot, "opacity=\"0.35\"") == 2U);
  BOOST_TEST(contains(plot, ">pass 2</text>"));
  // The 'new' benchmark has no baseline, so no plot.
  BOOST_TEST(!contains(html, "<title>new_bench"));
}

BOOST_AUTO_TEST_CASE(a_single_baseline_reads_as_one_commit_range) {
  TempStore t;
  const int64_t base = add_perf_run(t, kOtherCommit, "2030-01-01T00:00:00Z");
  add_samples(t, base, kRegression, 1, kNineAt10ms);
  add_baseline(t, kRegression, 0.01, kOtherCommit, "accepted", base);
  const int64_t run = add_perf_run(t, kCommit, "2030-01-02T00:00:00Z");
  add_samples(t, run, kRegression, 1, kNineAt10ms);
  add_verdict(t, run,
              {.benchmark = kRegression,
               .verdict = "unchanged",
               .baseline_commit = kOtherCommit,
               .baseline_kind = "accepted",
               .baseline_median = 0.01,
               .pass1 = {9, 0.01, 0.0099, 0.0101, 0.0, 1.0}});
  const std::string md = render_perf_report(t.db(), ReportFormat::Markdown);
  BOOST_TEST(contains(md, "- Baselines: baseline fedcba9 (accepted) .. 0123456\n"));
  BOOST_TEST(contains(md, "- Verdicts: 1 unchanged (1 benchmark)\n"));
  BOOST_TEST(!contains(md, "torch ratio"));
  BOOST_TEST(contains(md, "This run has no peer samples"));
  BOOST_TEST(!contains(md, "Plan cache"));
  // --run picks the baseline run itself: samples without verdicts are listed, not judged.
  const std::string old = render_perf_report(t.db(), ReportFormat::Markdown, base);
  BOOST_TEST(contains(old, "- Baselines: no baseline on this machine .. fedcba9\n"));
  BOOST_TEST(contains(old, "- Verdicts: 1 not judged (1 benchmark)\n"));
  BOOST_TEST(table_row(old, kRegression).at(4) == "10 ms");
}

BOOST_AUTO_TEST_CASE(a_first_run_has_candidates_only) {
  TempStore t;
  const int64_t run = add_perf_run(t, kCommit, "2030-01-02T00:00:00Z");
  add_samples(t, run, kRegression, 1, kNineAt10ms);
  add_baseline(t, kRegression, 0.01, kCommit, "candidate", run);
  add_verdict(t, run,
              {.benchmark = kRegression, .verdict = "new", .pass1 = {9, 0.01, 0.0099, 0.0101}});
  const std::string html = render_perf_report(t.db(), ReportFormat::Html);
  BOOST_TEST(contains(html, "Baselines: no baseline on this machine .. 0123456"));
  BOOST_TEST(count(html, "<svg") == 0U);
}

BOOST_AUTO_TEST_CASE(the_run_is_chosen_or_refused_with_a_reason) {
  TempStore empty;
  empty.add_run({testing::result("Add(shape=[2])", conformance::Outcome::Pass)});
  BOOST_CHECK_EXCEPTION(render_perf_report(empty.db(), ReportFormat::Markdown),
                        conformance::StoreError, [](const conformance::StoreError& e) {
                          return contains(e.what(),
                                          "holds no complete perf run: run "
                                          "`volta-audit perf` first");
                        });
  BOOST_CHECK_EXCEPTION(render_perf_report(empty.db(), ReportFormat::Markdown, 1),
                        conformance::StoreError, [](const conformance::StoreError& e) {
                          return contains(e.what(),
                                          "run 1 (suites 'parity') recorded no perf "
                                          "samples or verdicts: it is not a perf run");
                        });
  BOOST_CHECK_EXCEPTION(
      render_perf_report(empty.db(), ReportFormat::Markdown, 42), conformance::StoreError,
      [](const conformance::StoreError& e) { return contains(e.what(), "has no run 42"); });
  PerfStore s;
  // An incomplete run is reported when asked for, and says so.
  const std::string unfinished = render_perf_report(s.t.db(), ReportFormat::Markdown, s.run + 1);
  BOOST_TEST(contains(unfinished, "- Status: incomplete\n"));
}

BOOST_AUTO_TEST_CASE(peer_keys_drop_the_prefix_isa_and_real_time) {
  BOOST_TEST(perf_peer_key("peer:torch:f32_gemm/size:64/threads:2") ==
             "f32_gemm/size:64/threads:2");
  BOOST_TEST(perf_peer_key("f32_gemm/avx512/size:64/threads:2/real_time") ==
             "f32_gemm/size:64/threads:2");
  BOOST_TEST(perf_peer_key("f32_gemm/avx2fma/size:64/threads:2/real_time") ==
             "f32_gemm/size:64/threads:2");
  BOOST_TEST(perf_peer_key("f32_gemm/generic/size:64/threads:2") == "f32_gemm/size:64/threads:2");
  BOOST_TEST(perf_peer_key("peer:torch:f32_gemm/avx512/size:64/threads:2/real_time") ==
             "f32_gemm/size:64/threads:2");
  // Only whole segments: a name that merely contains an ISA stays as it is.
  BOOST_TEST(perf_peer_key("f32_gemm_avx512_14x32/size:8") == "f32_gemm_avx512_14x32/size:8");
  BOOST_TEST(perf_peer_key("real_time_clock/n:1") == "real_time_clock/n:1");
  // The language model's lanes name the Volta benchmark without /real_time.
  BOOST_TEST(perf_peer_key("peer:onnxruntime:lm/infer/threads:2") ==
             perf_peer_key("lm/infer/threads:2/real_time"));
  BOOST_TEST(perf_peer_key("peer:torch:lm/train_step/threads:1") == "lm/train_step/threads:1");
}

// The language model's lanes (perf/peers/lm_peer.py): torch mirrors the training step and the
// inference, ONNX Runtime the inference only; each library gets its own ratio column.
BOOST_AUTO_TEST_CASE(language_model_rows_carry_a_ratio_to_each_peer_that_mirrors_them) {
  TempStore t;
  const int64_t run = add_perf_run(t, kCommit, "2030-01-02T00:00:00Z");
  const std::string train = "lm/train_step/threads:1/real_time";
  const std::string infer = "lm/infer/threads:2/real_time";
  add_samples(t, run, train, 1, {0.009, 0.008, 0.010}, {.gflops = 40, .variant = "plan"});
  add_samples(t, run, infer, 1, {0.002, 0.002, 0.002},
              {.gflops = 50, .variant = "plan", .threads = 2});
  add_samples(t, run, "peer:torch:lm/train_step/threads:1", 1, {0.018, 0.018},
              {.variant = "torch 2.6.0 eager"});
  add_samples(t, run, "peer:torch:lm/infer/threads:2", 1, {0.004},
              {.variant = "torch 2.6.0 eager", .threads = 2});
  add_samples(t, run, "peer:onnxruntime:lm/infer/threads:2", 1, {0.001, 0.001},
              {.variant = "onnxruntime 1.32.0 CPU", .threads = 2});
  const std::string md = render_perf_report(t.db(), ReportFormat::Markdown);
  BOOST_TEST(contains(md,
                      "| throughput | peak memory | onnxruntime median | onnxruntime ratio | "
                      "torch median | torch ratio |\n"));
  const std::vector<std::string> train_row = table_row(md, train);
  BOOST_TEST(train_row.at(13) == "—");  // ONNX Runtime does not train
  BOOST_TEST(train_row.at(14) == "—");
  BOOST_TEST(train_row.at(15) == "18 ms");
  BOOST_TEST(train_row.at(16) == "0.50");
  const std::vector<std::string> infer_row = table_row(md, infer);
  BOOST_TEST(infer_row.at(13) == "1 ms");
  BOOST_TEST(infer_row.at(14) == "2.00");
  BOOST_TEST(infer_row.at(15) == "4 ms");
  BOOST_TEST(infer_row.at(16) == "0.50");
  BOOST_TEST(contains(md, "| peer:onnxruntime:lm/infer/threads:2 | 2 | 2 | 1 ms | yes |\n"));
  BOOST_TEST(contains(md, "| peer:torch:lm/train\\_step/threads:1 | 1 | 2 | 18 ms | yes |\n"));
}

BOOST_AUTO_TEST_CASE(times_read_in_a_unit_that_suits_them) {
  BOOST_TEST(format_seconds(0.0123456) == "12.35 ms");
  BOOST_TEST(format_seconds(2.5e-8) == "25 ns");
  BOOST_TEST(format_seconds(3.0) == "3 s");
  BOOST_TEST(format_seconds(1.5e-5) == "15 µs");
  BOOST_TEST(format_seconds(0.5, time_scale(1e-3)) == "500 ms");
}

BOOST_AUTO_TEST_CASE(a_strip_plot_with_equal_samples_still_has_a_finite_axis) {
  const std::string svg = strip_plot_svg({.title = "a<b",
                                          .baseline_median = 1.0,
                                          .threshold = 0.0,
                                          .rows = {{.label = "base", .samples = {1.0, 1.0}}}});
  BOOST_TEST(contains(svg, "<title>a&lt;b</title>"));
  BOOST_TEST(!contains(svg, "nan"));
  BOOST_TEST(!contains(svg, "inf"));
  BOOST_TEST(count(svg, "h0") == 2U);
}

// The command line: --perf selects this report, --run needs it, -o writes the file.
int report(std::initializer_list<std::string_view> arguments) {
  const std::vector<std::string_view> list(arguments);
  Args args{std::span(list)};
  return report_command(args);
}

BOOST_AUTO_TEST_CASE(the_report_command_takes_perf_and_run) {
  PerfStore s;
  const std::string out = (s.t.dir() / "perf.html").string();
  BOOST_TEST(report({"--perf", "--format", "html", "--db", s.t.path(), "-o", out}) == 0);
  std::ifstream file(out);
  const std::string html((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  BOOST_TEST(contains(html, "<h1>Volta perf report: run " + std::to_string(s.run)));
  const std::string run = std::to_string(s.baseline_run);
  BOOST_TEST(report({"--perf", "--run", run, "--db", s.t.path(), "-o", out}) == 0);
  BOOST_CHECK_EXCEPTION(
      report({"--run", run, "--db", s.t.path()}), UsageError,
      [](const UsageError& e) { return contains(e.what(), "--run ID selects a perf run"); });
  BOOST_CHECK_THROW(report({"--perf", "--run", "x1", "--db", s.t.path()}), UsageError);
}

}  // namespace
}  // namespace volta::audit
