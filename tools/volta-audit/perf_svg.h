#pragma once
// The perf report's strip plot: one small inline SVG per benchmark with a baseline, drawn
// without scripts, fonts or links so the HTML page stays self-contained.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace volta::audit {

// One row of dots: the samples of the baseline run, of pass 1 or of pass 2 (seconds).
struct StripRow {
  std::string label = {};
  std::vector<double> samples = {};
  std::optional<double> median = {};
  std::optional<double> ci_low = {};  // confidence interval of the median
  std::optional<double> ci_high = {};
};

struct StripPlot {
  std::string title = {};  // the benchmark, shown as the plot's tooltip
  double baseline_median = 0;
  double threshold = 0;  // relative: the band is baseline_median * (1 -/+ threshold)
  std::vector<StripRow> rows = {};
};

// Rows share one time axis (seconds per iteration, labelled at both ends): dots per sample,
// a tick per median, a bar per confidence interval, and the threshold band around the baseline
// median behind them. Text is escaped; the output holds no external reference.
std::string strip_plot_svg(const StripPlot& plot);

// A time unit for display: ns, µs, ms or s.
struct TimeScale {
  double per_second = 1;  // units in one second
  std::string_view name = "s";
};

// The unit that shows `seconds` with one to three digits before the point.
TimeScale time_scale(double seconds);
// "12.35 ms": four significant digits in `scale` (by default the one that suits `seconds`).
std::string format_seconds(double seconds, std::optional<TimeScale> scale = std::nullopt);

}  // namespace volta::audit
