#include "training_report.h"

#include <cstdio>

#include "loss_chart.h"
#include "report.h"
#include "volta/conformance/training_store.h"

namespace volta::audit {
namespace {

using conformance::Database;
using conformance::TrainingRunRecord;
using conformance::TrainingStepRow;

std::string loss_text(const std::optional<TrainingStepRow>& step) {
  if (!step) return "";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", step->loss);
  return buffer;
}

std::string commit_text(const TrainingRunRecord& run) {
  return run.info.commit.substr(0, 12) + (run.info.dirty ? " (dirty)" : "");
}

std::string steps_text(const TrainingRunRecord& run) {
  if (!run.first_step) return "none";
  return std::to_string(run.first_step->step) + ".." + std::to_string(run.last_step->step);
}

std::string data_text(const TrainingRunRecord& run) {
  return run.info.data_path + " (" + std::to_string(run.info.data_bytes) + " bytes, sha256 " +
         run.info.data_sha256.substr(0, 12) + ")";
}

int64_t training_run_count(const Database& db) {
  conformance::Statement count = db.prepare("SELECT count(*) FROM training_run");
  count.step();
  return count.column_int(0);
}

std::string caption(const TrainingRunRecord& run) {
  std::string text = "Training run " + std::to_string(run.id) + ": " + run.info.model +
                     " at commit " + commit_text(run) + ", " +
                     std::string(training_status_name(run.status));
  if (run.info.resumed_from) {
    text += ", resumed at step " + std::to_string(*run.info.resumed_from);
  }
  if (run.first_step) {
    text += "; steps " + steps_text(run) + ", loss " + loss_text(run.first_step) + " (first) to " +
            loss_text(run.last_step) + " (last)";
  } else {
    text += "; no step recorded";
  }
  if (run.steps > static_cast<int64_t>(kLossChartMaxPoints)) {
    text += " (drawn from the lowest and highest loss of each of " +
            std::to_string(kLossChartMaxPoints / 2) + " stretches of steps)";
  }
  text += "; seed " + std::to_string(run.info.seed) + ", " + std::to_string(run.info.threads) +
          " thread(s); optimizer " + run.info.optimizer + "; config " + run.info.config +
          "; data " + data_text(run) + ".";
  return text;
}

std::string figure(const Database& db, const TrainingRunRecord& run) {
  const std::vector<TrainingStepRow> steps = conformance::load_training_steps(db, run.id);
  return "<figure class=\"training\">" +
         loss_chart_svg("Loss per step of training run " + std::to_string(run.id), steps) +
         "<figcaption>" + html_text(caption(run)) + "</figcaption></figure>";
}

}  // namespace

TrainingSection training_section(const Database& db, bool html) {
  TrainingSection section;
  const std::vector<TrainingRunRecord> runs =
      conformance::load_training_runs(db, kTrainingRunsInReport);
  const int64_t total = training_run_count(db);
  section.note =
      (total > kTrainingRunsInReport ? "The " + std::to_string(runs.size()) + " newest of " +
                                           std::to_string(total) + " training runs, newest first."
                                     : "Every training run, newest first.") +
      " Steps are numbered over the whole training: a resumed run goes on from its "
      "checkpoint's step. A run whose process died shows 'running' until a writer "
      "opens the database again, then 'interrupted'.";
  section.table.columns = {"run",          "commit",     "status",    "model", "started",
                           "steps",        "first loss", "last loss", "seed",  "threads",
                           "resumed from", "optimizer",  "config",    "data"};
  for (const TrainingRunRecord& run : runs) {
    section.table.rows.push_back(
        {std::to_string(run.id), commit_text(run), std::string(training_status_name(run.status)),
         run.info.model, run.started_at, steps_text(run), loss_text(run.first_step),
         loss_text(run.last_step), std::to_string(run.info.seed), std::to_string(run.info.threads),
         run.info.resumed_from ? std::to_string(*run.info.resumed_from) : "", run.info.optimizer,
         run.info.config, data_text(run)});
    if (html) section.figures.push_back(figure(db, run));
  }
  return section;
}

}  // namespace volta::audit
