#pragma once
// The report's loss curve: one inline SVG per training run, drawn without scripts, fonts or
// links so the HTML page stays self-contained (like perf_svg.h's strip plots).

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "volta/conformance/training_store.h"

namespace volta::audit {

// Above this many steps a curve is drawn from the lowest and the highest loss of each of
// kLossChartMaxPoints / 2 buckets of consecutive steps: the report stays small, spikes stay.
inline constexpr size_t kLossChartMaxPoints = 1000;

// How many of `steps` points loss_chart_svg draws.
size_t loss_chart_points(size_t steps);

// x = step, y = loss (class "loss", a polyline per stretch of finite losses) with the
// learning rate on its own scale from 0 (class "lr", dashed; left out when every rate is 0).
// Axis ends are labelled: first and last step, lowest and highest loss, highest rate. `steps`
// ordered by step; `title` is escaped.
std::string loss_chart_svg(std::string_view title,
                           std::span<const conformance::TrainingStepRow> steps);

}  // namespace volta::audit
