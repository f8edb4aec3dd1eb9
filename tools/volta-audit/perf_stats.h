#pragma once
// The statistics of the perf double pass: the median of a benchmark's samples, a
// distribution-free confidence interval for it, and the two-sided Mann-Whitney U test that
// says whether a run's samples and the baseline's come from one distribution. Nothing here
// assumes timings are normal: they are skewed and heavy-tailed.

#include <span>

namespace volta::audit {

double median(std::span<const double> values);  // mean of the middle two for an even count

// [low, high] = [x(k), x(n-k+1)] of the sorted samples, with the largest k whose binomial
// coverage 1 - 2 P(Bin(n, 1/2) <= k - 1) is at least `confidence`. Below six samples no
// interval reaches 95 %: the widest one (min, max) is returned with the coverage it has.
struct MedianInterval {
  double low = 0;
  double high = 0;
  double coverage = 0;  // the interval's actual coverage probability
};
MedianInterval median_interval(std::span<const double> values, double confidence = 0.95);

// Two-sided p-value of the Mann-Whitney U test of `a` against `b`: exact (the permutation
// distribution of U) when there are no ties and |a| * |b| <= kExactMannWhitneyCells, else the
// normal approximation with the tie correction of the variance and a continuity correction.
// 1 when either side is empty. Normal forces the approximation (to test it).
inline constexpr int kExactMannWhitneyCells = 400;
enum class MannWhitneyMethod { Auto, Normal };
struct MannWhitney {
  double u = 0;  // U of `a`: the pairs (x in a, y in b) with x > y, ties counting 1/2
  double p = 1;
  bool exact = false;
};
MannWhitney mann_whitney(std::span<const double> a, std::span<const double> b,
                         MannWhitneyMethod method = MannWhitneyMethod::Auto);

}  // namespace volta::audit
