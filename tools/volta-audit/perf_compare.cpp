#include "perf_compare.h"

#include <cmath>
#include <cstdio>

namespace volta::audit {
namespace {

std::string percent(double fraction) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%+.1f%%", fraction * 100);
  return buffer;
}

std::string p_value(double p) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "p=%.2g", p);
  return buffer;
}

std::string figures(const PassFigures& pass) {
  return percent(pass.change.value_or(0)) + " (" + p_value(pass.p.value_or(1)) + ")";
}

}  // namespace

std::string_view perf_verdict_name(PerfVerdict verdict) {
  switch (verdict) {
    case PerfVerdict::Unchanged:
      return "unchanged";
    case PerfVerdict::Regression:
      return "regression";
    case PerfVerdict::Improvement:
      return "improvement";
    case PerfVerdict::Noise:
      return "noise";
    case PerfVerdict::New:
      return "new";
    case PerfVerdict::Error:
      return "error";
  }
  return "error";
}

PassFigures pass_figures(std::span<const double> samples, std::span<const double> baseline) {
  PassFigures f;
  f.samples = static_cast<int>(samples.size());
  if (samples.empty()) return f;
  f.median = median(samples);
  f.interval = median_interval(samples);
  if (baseline.empty()) return f;
  const double base = median(baseline);
  if (base > 0) f.change = f.median / base - 1;
  f.p = mann_whitney(samples, baseline).p;
  return f;
}

bool is_suspect(const PassFigures& pass, double threshold, double alpha) {
  return pass.change && pass.p && *pass.p < alpha && std::abs(*pass.change) > threshold;
}

Judgement judge(const PassFigures& pass1, const std::optional<PassFigures>& pass2, double threshold,
                double alpha, bool has_baseline) {
  if (!has_baseline) return {PerfVerdict::New, "no baseline on this machine"};
  if (!is_suspect(pass1, threshold, alpha)) {
    return {PerfVerdict::Unchanged, "pass 1 " + figures(pass1) + " is not beyond " +
                                        percent(threshold).substr(1) + " with p < " +
                                        p_value(alpha).substr(2)};
  }
  if (!pass2 || pass2->samples == 0) {
    return {PerfVerdict::Error,
            "suspect in pass 1 (" + figures(pass1) + ") but pass 2 measured nothing"};
  }
  const bool same_direction =
      pass1.change && pass2->change && (*pass1.change > 0) == (*pass2->change > 0);
  if (is_suspect(*pass2, threshold, alpha) && same_direction) {
    const bool slower = *pass1.change > 0;
    return {slower ? PerfVerdict::Regression : PerfVerdict::Improvement,
            std::string(slower ? "slower" : "faster") + " in both passes: pass 1 " +
                figures(pass1) + ", pass 2 " + figures(*pass2)};
  }
  return {PerfVerdict::Noise,
          "suspect in pass 1 " + figures(pass1) + " not repeated in pass 2 " + figures(*pass2)};
}

}  // namespace volta::audit
