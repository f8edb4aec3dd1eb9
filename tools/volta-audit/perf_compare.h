#pragma once
// The double pass's judgement of one benchmark. Samples are seconds per iteration, so a
// positive change is a slowdown. A pass makes a benchmark a suspect when its samples differ
// from the baseline's by the Mann-Whitney test (p < alpha) *and* its median moved by more
// than the benchmark's threshold; only a suspect in both passes, in the same direction, is a
// regression or an improvement. A suspect that pass 2 does not confirm is noise.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "perf_stats.h"

namespace volta::audit {

enum class PerfVerdict { Unchanged, Regression, Improvement, Noise, New, Error };
std::string_view perf_verdict_name(PerfVerdict verdict);  // the perf_verdict.verdict values

struct PassFigures {
  int samples = 0;
  double median = 0;
  MedianInterval interval = {};
  std::optional<double> change = {};  // median / baseline median - 1; none without a baseline
  std::optional<double> p = {};       // two-sided Mann-Whitney p against the baseline's samples
};

// `baseline` empty: no change and no p.
PassFigures pass_figures(std::span<const double> samples, std::span<const double> baseline);
bool is_suspect(const PassFigures& pass, double threshold, double alpha);

struct Judgement {
  PerfVerdict verdict = PerfVerdict::Unchanged;
  std::string detail = {};  // why, in words, for the verdict row
};

// pass2: the re-measurement of a pass-1 suspect (nullopt when pass 2 did not measure it).
Judgement judge(const PassFigures& pass1, const std::optional<PassFigures>& pass2, double threshold,
                double alpha, bool has_baseline);

}  // namespace volta::audit
