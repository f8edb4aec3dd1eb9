#pragma once
// The report's Training section: what `volta train` recorded (training_store.h), a row per
// training run and, in HTML, its loss curve with a caption.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "queries.h"
#include "volta/conformance/sqlite.h"

namespace volta::audit {

// Training runs are not tied to the report's conformance run (another process, often another
// work tree): the section shows the newest ones of any commit, each naming its commit.
inline constexpr int64_t kTrainingRunsInReport = 5;

struct TrainingSection {
  std::string note;
  QueryResult table;                 // no rows: no training run recorded
  std::vector<std::string> figures;  // HTML only: a <figure> per row, chart and caption
};

// The kTrainingRunsInReport newest training runs, newest first. Figures only when `html`.
TrainingSection training_section(const conformance::Database& db, bool html);

inline constexpr std::string_view kTrainingEmpty =
    "No training run is recorded: `volta train --db PATH` records each run and its loss per "
    "step.";

inline constexpr std::string_view kTrainingStyle = R"css(
figure.training { margin: 0 0 1.5rem 0; }
figure.training figcaption { font-size: 0.9rem; max-width: 60rem; overflow-wrap: anywhere; }
svg.loss-chart { display: block; }
)css";

}  // namespace volta::audit
