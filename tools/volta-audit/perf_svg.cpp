#include "perf_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "report.h"

namespace volta::audit {
namespace {

// Geometry in SVG user units: a label column, then the plot area; one row per pass and an
// axis line of text below. Small on purpose: a report may hold hundreds of these.
constexpr double kWidth = 320;
constexpr double kPlotLeft = 34;
constexpr double kPlotRight = kWidth - 6;
constexpr double kTop = 3;
constexpr double kRowHeight = 14;
constexpr double kAxisHeight = 11;

constexpr std::string_view kBandColor = "#fde6c4";
constexpr std::string_view kBaselineColor = "#777";
constexpr std::string_view kPassColors[] = {"#777", "#1f6fb4", "#d9480f"};

// The value range every row shares: samples, medians, intervals and the threshold band.
struct Axis {
  double low = 0;
  double high = 1;
  double x(double seconds) const {
    return kPlotLeft + (seconds - low) / (high - low) * (kPlotRight - kPlotLeft);
  }
};

Axis shared_axis(const StripPlot& plot) {
  std::vector<double> values = {plot.baseline_median * (1 - plot.threshold),
                                plot.baseline_median * (1 + plot.threshold)};
  for (const StripRow& row : plot.rows) {
    values.insert(values.end(), row.samples.begin(), row.samples.end());
    for (const std::optional<double>& v : {row.median, row.ci_low, row.ci_high}) {
      if (v) values.push_back(*v);
    }
  }
  std::erase_if(values, [](double v) { return !std::isfinite(v); });
  if (values.empty()) return {};
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  double span = *high - *low;
  if (span <= 0) span = *low != 0 ? std::abs(*low) * 0.1 : 1;
  return {*low - span * 0.04, *high + span * 0.04};
}

}  // namespace

TimeScale time_scale(double seconds) {
  const double magnitude = std::abs(seconds);
  if (magnitude == 0 || magnitude >= 1) return {1, "s"};
  if (magnitude >= 1e-3) return {1e3, "ms"};
  if (magnitude >= 1e-6) return {1e6, "µs"};
  return {1e9, "ns"};
}

std::string format_seconds(double seconds, std::optional<TimeScale> scale) {
  const TimeScale s = scale.value_or(time_scale(seconds));
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.4g %s", seconds * s.per_second,
                std::string(s.name).c_str());
  return buffer;
}

std::string strip_plot_svg(const StripPlot& plot) {
  const Axis axis = shared_axis(plot);
  const double rows_bottom = kTop + kRowHeight * static_cast<double>(plot.rows.size());
  const double height = rows_bottom + kAxisHeight;
  std::string svg = "<svg class=\"strip\" width=\"" + svg_number(kWidth) + "\" height=\"" +
                    svg_number(height) + "\" viewBox=\"0 0 " + svg_number(kWidth) + " " +
                    svg_number(height) + "\" role=\"img\" font-size=\"9\"><title>" +
                    html_text(plot.title) + "</title>";
  // The threshold band and the baseline median, behind every row.
  const double band_left = axis.x(plot.baseline_median * (1 - plot.threshold));
  const double band_right = axis.x(plot.baseline_median * (1 + plot.threshold));
  svg += "<rect x=\"" + svg_number(band_left) + "\" y=\"" + svg_number(kTop) + "\" width=\"" +
         svg_number(band_right - band_left) + "\" height=\"" + svg_number(rows_bottom - kTop) +
         "\" fill=\"" + std::string(kBandColor) + "\"/>";
  svg += "<path d=\"M" + svg_number(axis.x(plot.baseline_median)) + " " + svg_number(kTop) + "V" +
         svg_number(rows_bottom) + "\" stroke=\"" + std::string(kBaselineColor) +
         "\" stroke-dasharray=\"2 2\"/>";
  for (size_t r = 0; r < plot.rows.size(); ++r) {
    const StripRow& row = plot.rows[r];
    const std::string color(kPassColors[std::min<size_t>(r, std::size(kPassColors) - 1)]);
    const double mid = kTop + kRowHeight * (static_cast<double>(r) + 0.5);
    svg += "<text x=\"2\" y=\"" + svg_number(mid + 3) + "\">" + html_text(row.label) + "</text>";
    if (row.ci_low && row.ci_high) {
      svg += "<rect x=\"" + svg_number(axis.x(*row.ci_low)) + "\" y=\"" + svg_number(mid - 1.5) +
             "\" width=\"" + svg_number(std::max(axis.x(*row.ci_high) - axis.x(*row.ci_low), 1.0)) +
             "\" height=\"3\" fill=\"" + color + "\" opacity=\"0.35\"/>";
    }
    if (!row.samples.empty()) {
      // A dot per sample: zero-length segments with round caps keep each dot a few bytes.
      std::string dots;
      for (double s : row.samples)
        dots += "M" + svg_number(axis.x(s)) + " " + svg_number(mid) + "h0";
      svg.append("<path d=\"")
          .append(dots)
          .append("\" stroke=\"")
          .append(color)
          .append("\" stroke-width=\"4\" stroke-linecap=\"round\" opacity=\"0.6\"/>");
    }
    if (row.median) {
      svg += "<path d=\"M" + svg_number(axis.x(*row.median)) + " " + svg_number(mid - 5) +
             "v10\" stroke=\"#000\" stroke-width=\"1.5\"/>";
    }
  }
  const double text_y = rows_bottom + kAxisHeight - 2;
  const TimeScale scale = time_scale(axis.high);
  svg += "<text x=\"" + svg_number(kPlotLeft) + "\" y=\"" + svg_number(text_y) + "\">" +
         html_text(format_seconds(axis.low, scale)) + "</text>";
  svg += "<text x=\"" + svg_number(kPlotRight) + "\" y=\"" + svg_number(text_y) +
         "\" text-anchor=\"end\">" + html_text(format_seconds(axis.high, scale)) + "</text>";
  return svg + "</svg>";
}

}  // namespace volta::audit
