// The memory guard: the reference config's training and inference plans hold to the peak bytes
// governance/memory-budget.tsv gives them. Moving a budget is an edit of that file with a reason.

#include <map>
#include <sstream>

#include "training_cases.h"
#include "volta/model/language_model.h"
#include "volta/runtime/registry.h"

namespace volta::conformance::training {
namespace {

struct Budget {
  int64_t bytes = 0;
  std::string reason;
};

// Rows "PLAN<TAB>BYTES<TAB>REASON"; '#' starts a comment line. A row without a reason, or a
// budget that is not a positive integer, is an error naming the line.
std::map<std::string, Budget> read_budgets(const std::filesystem::path& file) {
  std::map<std::string, Budget> budgets;
  std::istringstream lines(read_file(file));
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (line.empty() || line.starts_with('#')) continue;
    std::istringstream fields(line);
    std::string plan, bytes, reason;
    std::getline(fields, plan, '\t');
    std::getline(fields, bytes, '\t');
    std::getline(fields, reason);
    size_t used = 0;
    int64_t value = 0;
    try {
      value = std::stoll(bytes, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (plan.empty() || used != bytes.size() || value <= 0 || reason.empty()) {
      fail(ErrorCode::InvalidArgument,
           file.string() + ":" + std::to_string(number) +
               ": expected PLAN<TAB>BYTES<TAB>REASON with a positive byte count and a reason");
    }
    budgets[plan] = {value, reason};
  }
  return budgets;
}

}  // namespace

std::map<std::string, int64_t> reference_plan_peaks() {
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  std::map<std::string, int64_t> peaks;
  const train::LanguageModelRun run = train::default_run(1);
  const std::string text(static_cast<size_t>(run.model.seq) + 1, 'a');
  const train::LanguageModelTrainer trainer(run, {text.begin(), text.end()}, 1, *cpu);
  peaks["training-step"] = trainer.plan().memory.peak_live_bytes;
  const model::TrainedModel trained{run.model, model::initial_parameters(run.model)};
  for (const int64_t batch : {int64_t{1}, run.model.batch}) {
    const model::LanguageModel lm(trained, batch, 1, *cpu);
    peaks["inference-batch" + std::to_string(batch)] = lm.plan().memory.peak_live_bytes;
  }
  return peaks;
}

CaseOutcome memory_budget(const TrainingSuiteOptions& options) {
  const std::map<std::string, Budget> budgets = read_budgets(options.memory_budget);
  std::string message;
  std::string over;
  for (const auto& [plan, peak] : reference_plan_peaks()) {
    const auto it = budgets.find(plan);
    if (it == budgets.end()) {
      return failed("plan '" + plan + "' (peak " + std::to_string(peak) + " bytes) has no row in " +
                    options.memory_budget.string());
    }
    message += (message.empty() ? "" : "; ") + plan + " " + std::to_string(peak) + " of " +
               std::to_string(it->second.bytes) + " bytes";
    if (peak > it->second.bytes) over += (over.empty() ? "" : ", ") + plan;
  }
  return over.empty() ? pass("peak live bytes within budget: " + message)
                      : failed(over + " grew past its budget (" + message +
                               "); move a budget only by editing the file with a reason");
}

}  // namespace volta::conformance::training
