#define BOOST_TEST_MODULE perf_stats
// The statistics and the judgement of the perf double pass. Reference p-values come from a
// brute-force enumeration of every split of the pooled samples (exact) and the textbook
// normal approximation with tie and continuity corrections; the 5-vs-4 example is scipy's
// documented mannwhitneyu example (exact 0.1111, asymptotic 0.11134688653314041).

#include "perf_stats.h"

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <numeric>
#include <vector>

#include "perf_compare.h"

namespace volta::audit {
namespace {

namespace tt = boost::test_tools;

std::vector<double> range(double first, int count) {
  std::vector<double> v(static_cast<size_t>(count));
  std::iota(v.begin(), v.end(), first);
  return v;
}

BOOST_AUTO_TEST_CASE(median_of_odd_and_even_counts) {
  BOOST_TEST(median(std::vector<double>{3, 1, 2}) == 2.0);
  BOOST_TEST(median(std::vector<double>{111, 140, 113, 100}) == 112.0);
  BOOST_TEST(median(std::vector<double>{}) == 0.0);
}

BOOST_AUTO_TEST_CASE(median_interval_uses_binomial_order_statistics) {
  // n = 9: P(Bin(9, 1/2) <= 1) = 10/512, so [x(2), x(8)] covers 1 - 20/512.
  const MedianInterval nine = median_interval(std::vector<double>{9, 1, 8, 2, 7, 3, 6, 4, 5});
  BOOST_TEST(nine.low == 2.0);
  BOOST_TEST(nine.high == 8.0);
  BOOST_TEST(nine.coverage == 1 - 20.0 / 512, tt::tolerance(1e-12));
  // n = 15: P(Bin(15, 1/2) <= 3) = 576/32768 keeps 95 %, <= 4 does not: [x(4), x(12)].
  const MedianInterval fifteen = median_interval(range(1, 15));
  BOOST_TEST(fifteen.low == 4.0);
  BOOST_TEST(fifteen.high == 12.0);
  BOOST_TEST(fifteen.coverage == 1 - 2 * 576.0 / 32768, tt::tolerance(1e-12));
  // n = 6: only (min, max) reaches 95 % (1 - 2/64).
  const MedianInterval six = median_interval(range(1, 6));
  BOOST_TEST(six.low == 1.0);
  BOOST_TEST(six.high == 6.0);
  BOOST_TEST(six.coverage == 1 - 2.0 / 64, tt::tolerance(1e-12));
  // n = 5: no interval reaches 95 %; (min, max) with its actual coverage 1 - 2/32.
  const MedianInterval five = median_interval(range(1, 5));
  BOOST_TEST(five.low == 1.0);
  BOOST_TEST(five.high == 5.0);
  BOOST_TEST(five.coverage == 1 - 2.0 / 32, tt::tolerance(1e-12));
  const MedianInterval one = median_interval(std::vector<double>{7});
  BOOST_TEST(one.low == 7.0);
  BOOST_TEST(one.high == 7.0);
  BOOST_TEST(one.coverage == 0.0);
}

BOOST_AUTO_TEST_CASE(mann_whitney_exact_for_disjoint_samples) {
  // Two disjoint samples of 9: only 2 of the C(18, 9) = 48620 splits are that extreme.
  const MannWhitney slower = mann_whitney(range(120, 9), range(100, 9));
  BOOST_TEST(slower.exact);
  BOOST_TEST(slower.u == 81.0);
  BOOST_TEST(slower.p == 2.0 / 48620, tt::tolerance(1e-9));
  const MannWhitney faster = mann_whitney(range(100, 9), range(120, 9));
  BOOST_TEST(faster.u == 0.0);
  BOOST_TEST(faster.p == 2.0 / 48620, tt::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(mann_whitney_matches_known_values) {
  const std::vector<double> males = {19, 22, 16, 29, 24};
  const std::vector<double> females = {20, 11, 17, 12};
  const MannWhitney exact = mann_whitney(males, females);
  BOOST_TEST(exact.exact);
  BOOST_TEST(exact.u == 17.0);
  BOOST_TEST(exact.p == 28.0 / 252, tt::tolerance(1e-12));
  const MannWhitney normal = mann_whitney(males, females, MannWhitneyMethod::Normal);
  BOOST_TEST(!normal.exact);
  BOOST_TEST(normal.p == 0.11134688653314041, tt::tolerance(1e-12));
  // U = 4 of 6 for 3 against 2: P(U >= 4) = 4/10 by enumeration, two-sided 0.8.
  BOOST_TEST(mann_whitney(std::vector<double>{1, 4, 5}, std::vector<double>{2, 3}).p == 0.8,
             tt::tolerance(1e-12));
  // A large spread that moves the median by 11 % is not significant: exact p = 0.258083...
  const MannWhitney spread =
      mann_whitney(std::vector<double>{50, 60, 70, 150, 160, 170, 115, 116, 117}, range(100, 9));
  BOOST_TEST(spread.p == 0.258083093377211, tt::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(mann_whitney_with_ties_uses_the_corrected_normal_approximation) {
  // Midranks; tie groups of sizes 3, 4, 3, 2, 2, 2, 1, 1, 1 shrink the variance.
  const std::vector<double> a = {1, 2, 2, 3, 3, 3, 4, 5, 6};
  const std::vector<double> b = {3, 4, 4, 5, 6, 7, 7, 8, 9};
  const MannWhitney r = mann_whitney(a, b);
  BOOST_TEST(!r.exact);
  BOOST_TEST(r.u == 11.5);
  BOOST_TEST(r.p == 0.011075224198456983, tt::tolerance(1e-12));
  // Every value tied: no evidence of any difference.
  BOOST_TEST(mann_whitney(std::vector<double>{5, 5, 5}, std::vector<double>{5, 5}).p == 1.0);
  BOOST_TEST(mann_whitney(std::vector<double>{}, std::vector<double>{1, 2}).p == 1.0);
}

BOOST_AUTO_TEST_CASE(mann_whitney_falls_back_to_normal_for_large_samples) {
  // 30 x 30 = 900 cells: over the exact limit. Disjoint: z = (450 - 0.5) / sqrt(4575).
  const MannWhitney r = mann_whitney(range(200, 30), range(100, 30));
  BOOST_TEST(!r.exact);
  BOOST_TEST(r.p == std::erfc(449.5 / std::sqrt(4575.0) / std::sqrt(2.0)), tt::tolerance(1e-9));
}

// --- the judgement ---

constexpr double kAlpha = 0.01;
const std::vector<double> kBaseline = range(100, 9);  // median 104

PassFigures figures(const std::vector<double>& samples) { return pass_figures(samples, kBaseline); }

BOOST_AUTO_TEST_CASE(pass_figures_compare_the_medians_and_distributions) {
  const PassFigures f = figures(range(120, 9));
  BOOST_TEST(f.samples == 9);
  BOOST_TEST(f.median == 124.0);
  BOOST_TEST(f.interval.low == 121.0);
  BOOST_TEST(f.interval.high == 127.0);
  BOOST_TEST(*f.change == 124.0 / 104 - 1, tt::tolerance(1e-12));
  BOOST_TEST(*f.p == 2.0 / 48620, tt::tolerance(1e-9));
  const PassFigures alone = pass_figures(range(120, 9), {});
  BOOST_TEST(!alone.change.has_value());
  BOOST_TEST(!alone.p.has_value());
}

BOOST_AUTO_TEST_CASE(slower_in_both_passes_is_a_regression) {
  const Judgement j = judge(figures(range(120, 9)), figures(range(119, 15)), 0.05, kAlpha, true);
  BOOST_TEST(perf_verdict_name(j.verdict) == "regression");
  BOOST_TEST(j.detail ==
             "slower in both passes: pass 1 +19.2% (p=4.1e-05), pass 2 +21.2% (p=1.5e-06)");
}

BOOST_AUTO_TEST_CASE(faster_in_both_passes_is_an_improvement) {
  const Judgement j = judge(figures(range(80, 9)), figures(range(78, 15)), 0.05, kAlpha, true);
  BOOST_TEST(perf_verdict_name(j.verdict) == "improvement");
}

BOOST_AUTO_TEST_CASE(a_suspect_that_pass_2_does_not_repeat_is_noise) {
  const Judgement j = judge(figures(range(120, 9)), figures(range(98, 15)), 0.05, kAlpha, true);
  BOOST_TEST(perf_verdict_name(j.verdict) == "noise");
  BOOST_TEST(j.detail.starts_with("suspect in pass 1 +19.2% (p=4.1e-05) not repeated in pass 2"));
  // Suspect in both passes but in opposite directions: noise too.
  BOOST_TEST(
      perf_verdict_name(
          judge(figures(range(120, 9)), figures(range(80, 15)), 0.05, kAlpha, true).verdict) ==
      "noise");
}

BOOST_AUTO_TEST_CASE(significant_but_below_the_threshold_is_unchanged) {
  // Median +5.8 %, p = 0.0017: significant, but under a 10 % threshold.
  const PassFigures f = figures(range(106, 9));
  BOOST_TEST(*f.p < kAlpha);
  BOOST_TEST(!is_suspect(f, 0.10, kAlpha));
  BOOST_TEST(perf_verdict_name(judge(f, std::nullopt, 0.10, kAlpha, true).verdict) == "unchanged");
  BOOST_TEST(is_suspect(f, 0.05, kAlpha));  // the same samples under 5 % are a suspect
}

BOOST_AUTO_TEST_CASE(beyond_the_threshold_but_not_significant_is_unchanged) {
  const PassFigures f = figures({50, 60, 70, 150, 160, 170, 115, 116, 117});
  BOOST_TEST(*f.change > 0.10);
  BOOST_TEST(!is_suspect(f, 0.05, kAlpha));
  BOOST_TEST(perf_verdict_name(judge(f, std::nullopt, 0.05, kAlpha, true).verdict) == "unchanged");
}

BOOST_AUTO_TEST_CASE(without_a_baseline_a_benchmark_is_new) {
  BOOST_TEST(perf_verdict_name(
                 judge(pass_figures(range(1, 9), {}), std::nullopt, 0.05, kAlpha, false).verdict) ==
             "new");
}

BOOST_AUTO_TEST_CASE(a_suspect_without_pass_2_samples_is_an_error) {
  BOOST_TEST(
      perf_verdict_name(judge(figures(range(120, 9)), PassFigures{}, 0.05, kAlpha, true).verdict) ==
      "error");
}

}  // namespace
}  // namespace volta::audit
