#include "loss_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <utility>
#include <vector>

#include "report.h"

namespace volta::audit {
namespace {

using conformance::TrainingStepRow;

// Geometry in SVG user units: loss labels on the left, rate labels on the right, step labels
// below the plot area.
constexpr double kWidth = 500;
constexpr double kHeight = 200;
constexpr double kLeft = 50;
constexpr double kRight = kWidth - 64;
constexpr double kTop = 14;
constexpr double kBottom = kHeight - 18;

constexpr std::string_view kAxisColor = "#999";
constexpr std::string_view kLossColor = "#1f6fb4";
constexpr std::string_view kRateColor = "#d9480f";

std::string label(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g", value);
  return buffer;
}

// A linear map from [low, high] onto [from, to]; a range of one value maps to the middle.
struct Scale {
  double low = 0;
  double high = 1;
  double from = 0;
  double to = 1;
  double operator()(double value) const {
    if (high == low) return (from + to) / 2;
    return from + (value - low) / (high - low) * (to - from);
  }
};

// Every step, or the lowest and the highest loss of each bucket of consecutive steps, in step
// order; a bucket whose losses are all equal gives its first and last step.
std::vector<size_t> drawn_steps(std::span<const TrainingStepRow> steps) {
  std::vector<size_t> drawn(loss_chart_points(steps.size()));
  if (drawn.size() == steps.size()) {
    std::iota(drawn.begin(), drawn.end(), size_t{0});
    return drawn;
  }
  const size_t buckets = drawn.size() / 2;
  for (size_t b = 0; b < buckets; ++b) {
    // At least two steps a bucket: there are more than kLossChartMaxPoints steps.
    const size_t begin = b * steps.size() / buckets;
    const size_t end = (b + 1) * steps.size() / buckets;
    size_t low = begin;
    size_t high = begin;
    for (size_t i = begin + 1; i < end; ++i) {
      if (steps[i].loss < steps[low].loss) low = i;
      if (steps[i].loss > steps[high].loss) high = i;
    }
    if (low == high) high = end - 1;
    drawn[2 * b] = std::min(low, high);
    drawn[2 * b + 1] = std::max(low, high);
  }
  return drawn;
}

Scale loss_scale(std::span<const TrainingStepRow> steps, const std::vector<size_t>& drawn) {
  double low = INFINITY;
  double high = -INFINITY;
  for (const size_t i : drawn) {
    if (!std::isfinite(steps[i].loss)) continue;
    low = std::min(low, steps[i].loss);
    high = std::max(high, steps[i].loss);
  }
  if (low > high) return {0, 1, kBottom, kTop};  // no finite loss: nothing to draw
  return {low, high, kBottom, kTop};
}

std::string polyline(std::string_view class_name, std::string_view color, const std::string& points,
                     std::string_view extra = "") {
  return "<polyline class=\"" + std::string(class_name) + "\" points=\"" + points +
         "\" fill=\"none\" stroke=\"" + std::string(color) + "\" stroke-width=\"1.5\"" +
         std::string(extra) + "/>";
}

std::string text(double x, double y, std::string_view anchor, std::string_view content,
                 std::string_view color = "#222") {
  return "<text x=\"" + svg_number(x) + "\" y=\"" + svg_number(y) + "\" text-anchor=\"" +
         std::string(anchor) + "\" fill=\"" + std::string(color) + "\">" + html_text(content) +
         "</text>";
}

}  // namespace

size_t loss_chart_points(size_t steps) { return std::min(steps, kLossChartMaxPoints); }

std::string loss_chart_svg(std::string_view title, std::span<const TrainingStepRow> steps) {
  std::string svg = "<svg class=\"loss-chart\" width=\"" + svg_number(kWidth) + "\" height=\"" +
                    svg_number(kHeight) + "\" viewBox=\"0 0 " + svg_number(kWidth) + " " +
                    svg_number(kHeight) + "\" role=\"img\" font-size=\"10\"><title>" +
                    html_text(title) + "</title>";
  svg += "<path d=\"M" + svg_number(kLeft) + " " + svg_number(kTop) + "V" + svg_number(kBottom) +
         "H" + svg_number(kRight) + "\" fill=\"none\" stroke=\"" + std::string(kAxisColor) + "\"/>";
  if (steps.empty()) return svg + text(kWidth / 2, kHeight / 2, "middle", "no steps") + "</svg>";

  const std::vector<size_t> drawn = drawn_steps(steps);
  const Scale x{static_cast<double>(steps.front().step), static_cast<double>(steps.back().step),
                kLeft, kRight};
  const Scale loss = loss_scale(steps, drawn);
  double max_rate = 0;
  for (const size_t i : drawn) max_rate = std::max(max_rate, steps[i].lr);
  const Scale rate{0, max_rate, kBottom, kTop};

  // A polyline per stretch of finite losses: an infinite one (divergence) breaks the line.
  std::string points;
  std::string rate_points;
  for (const size_t i : drawn) {
    const std::string at = svg_number(x(static_cast<double>(steps[i].step))) + ",";
    rate_points += (rate_points.empty() ? "" : " ") + at + svg_number(rate(steps[i].lr));
    if (std::isfinite(steps[i].loss)) {
      points += (points.empty() ? "" : " ") + at + svg_number(loss(steps[i].loss));
    } else if (!points.empty()) {
      svg += polyline("loss", kLossColor, std::exchange(points, {}));
    }
  }
  if (!points.empty()) svg += polyline("loss", kLossColor, points);
  if (max_rate > 0) {
    svg += polyline("lr", kRateColor, rate_points, " stroke-dasharray=\"4 3\" opacity=\"0.7\"");
    svg += text(kRight + 3, kTop + 3, "start", label(max_rate), kRateColor);
    svg += text(kRight + 3, kBottom, "start", "0", kRateColor);
    svg += text(kRight - 2, kTop - 4, "end", "learning rate (dashed)", kRateColor);
  }
  svg += text(kLeft + 2, kTop - 4, "start", "loss", kLossColor);
  svg += text(kLeft - 3, kTop + 3, "end", label(loss.high));
  svg += text(kLeft - 3, kBottom, "end", label(loss.low));
  const double step_y = kBottom + 13;
  svg += text(kLeft, step_y, "start", std::to_string(steps.front().step));
  svg += text(kRight, step_y, "end", std::to_string(steps.back().step));
  svg += text((kLeft + kRight) / 2, step_y, "middle", "step");
  return svg + "</svg>";
}

}  // namespace volta::audit
