#include "perf_stats.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

namespace volta::audit {
namespace {

std::vector<double> sorted(std::span<const double> values) {
  std::vector<double> v(values.begin(), values.end());
  std::ranges::sort(v);
  return v;
}

// P(Bin(n, 1/2) <= k), summed in doubles: n stays in the hundreds.
double binomial_half_cdf(size_t n, size_t k) {
  double term = std::pow(0.5, static_cast<double>(n));  // C(n, 0) / 2^n
  double sum = term;
  for (size_t i = 1; i <= k && i <= n; ++i) {
    term *= static_cast<double>(n - i + 1) / static_cast<double>(i);
    sum += term;
  }
  return std::min(sum, 1.0);
}

// P(U <= u) under the null hypothesis, without ties: the number of orderings of n1 + n2
// distinct values with U = u follows f(i, j, u) = f(i - 1, j, u - j) + f(i, j - 1, u) (the
// largest value is from a, beating all j values of b, or from b). Kept as probabilities.
double exact_u_cdf(size_t n1, size_t n2, double u) {
  const size_t cells = n1 * n2;
  // prob[j][v]: P(U = v) for i values of a and j of b, for the current i.
  std::vector<std::vector<double>> prob(n2 + 1, std::vector<double>(cells + 1, 0.0));
  for (size_t j = 0; j <= n2; ++j) prob[j][0] = 1.0;  // i = 0: U = 0
  for (size_t i = 1; i <= n1; ++i) {
    std::vector<std::vector<double>> next(n2 + 1, std::vector<double>(cells + 1, 0.0));
    next[0][0] = 1.0;
    for (size_t j = 1; j <= n2; ++j) {
      const double from_a = static_cast<double>(i) / static_cast<double>(i + j);
      const double from_b = static_cast<double>(j) / static_cast<double>(i + j);
      for (size_t v = 0; v <= i * j; ++v) {
        const double a_last = v >= j ? prob[j][v - j] : 0.0;
        next[j][v] = from_a * a_last + from_b * next[j - 1][v];
      }
    }
    prob = std::move(next);
  }
  double cdf = 0;
  for (size_t v = 0; v <= cells && static_cast<double>(v) <= u; ++v) cdf += prob[n2][v];
  return std::min(cdf, 1.0);
}

}  // namespace

double median(std::span<const double> values) {
  if (values.empty()) return 0;
  const std::vector<double> v = sorted(values);
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

MedianInterval median_interval(std::span<const double> values, double confidence) {
  if (values.empty()) return {};
  const std::vector<double> v = sorted(values);
  const size_t n = v.size();
  size_t best = 1;  // k = 1: (min, max)
  for (size_t k = 2; 2 * k <= n + 1; ++k) {
    if (1 - 2 * binomial_half_cdf(n, k - 1) < confidence) break;
    best = k;
  }
  const double coverage = n == 1 ? 0.0 : 1 - 2 * binomial_half_cdf(n, best - 1);
  return {.low = v[best - 1], .high = v[n - best], .coverage = std::max(coverage, 0.0)};
}

MannWhitney mann_whitney(std::span<const double> a, std::span<const double> b,
                         MannWhitneyMethod method) {
  MannWhitney result;
  if (a.empty() || b.empty()) return result;
  const size_t n1 = a.size();
  const size_t n2 = b.size();
  const size_t n = n1 + n2;
  // Midranks over the pooled samples; `ties` sums t^3 - t over groups of equal values.
  std::vector<std::pair<double, bool>> pooled;  // value, from a
  pooled.reserve(n);
  for (double x : a) pooled.emplace_back(x, true);
  for (double y : b) pooled.emplace_back(y, false);
  std::ranges::sort(pooled, {}, &std::pair<double, bool>::first);
  double rank_sum_a = 0;
  double ties = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && pooled[j].first == pooled[i].first) ++j;
    const double midrank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t k = i; k < j; ++k) {
      if (pooled[k].second) rank_sum_a += midrank;
    }
    const auto t = static_cast<double>(j - i);
    ties += t * t * t - t;
    i = j;
  }
  const double d1 = static_cast<double>(n1);
  const double d2 = static_cast<double>(n2);
  result.u = rank_sum_a - d1 * (d1 + 1) / 2;
  const double mean = d1 * d2 / 2;
  if (method == MannWhitneyMethod::Auto && ties == 0 && n1 * n2 <= kExactMannWhitneyCells) {
    // Two-sided: twice the smaller tail, the distribution of U being symmetric about its mean.
    const double low_tail = exact_u_cdf(n1, n2, std::min(result.u, d1 * d2 - result.u));
    result.p = std::min(1.0, 2 * low_tail);
    result.exact = true;
    return result;
  }
  const double dn = static_cast<double>(n);
  const double variance = d1 * d2 / 12 * ((dn + 1) - ties / (dn * (dn - 1)));
  if (variance <= 0) return result;  // every value tied: no evidence of a difference
  const double z = std::max(0.0, std::abs(result.u - mean) - 0.5) / std::sqrt(variance);
  result.p = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return result;
}

}  // namespace volta::audit
