// The training suite's cases: every guarantee of issue #17 has its case in its family, the
// interop ones declare their precondition; the memory guard passes on the committed budgets
// and fails, naming the plan, on budgets below the plans' peaks or a budget file without a row.

#define BOOST_TEST_MODULE training_suite_test
#include "volta/conformance/training_suite.h"

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "training_cases.h"

namespace volta::conformance {
namespace {

BOOST_AUTO_TEST_CASE(every_guarantee_has_its_case) {
  std::set<std::string> reload, checkpoint;
  for (const SuiteCase& c : training_suite("cpu", {})) {
    BOOST_TEST(c.backend == "cpu");
    BOOST_TEST(!c.params.empty());
    if (c.case_id.starts_with("interop:")) BOOST_TEST(!c.precondition.empty(), c.case_id);
    (c.family == kTrainReloadFamily ? reload : checkpoint).insert(c.case_id);
  }
  for (const char* id :
       {"loss-falls:default-run", "reload:fresh-process", "threads:1,2,3,4,8", "processes:2",
        "resume:7+9", "resume:kill-9", "interop:onnxruntime", "memory-budget"}) {
    BOOST_TEST(reload.contains(id), id);
  }
  for (const char* id : {"round-trip:save-load-save", "interop:safetensors-python",
                         "refuse:truncated", "refuse:corrupted", "refuse:foreign",
                         "refuse:newer-major", "refuse:wrong-shape", "atomic-save:interrupted"}) {
    BOOST_TEST(checkpoint.contains(id), id);
  }
  BOOST_CHECK_THROW(training_suite("cuda", {}), VoltaError);
}

TrainingSuiteOptions with_budget(const std::string& text) {
  TrainingSuiteOptions o;
  o.memory_budget = std::filesystem::temp_directory_path() / "volta_memory_budget_test.tsv";
  std::ofstream(o.memory_budget) << text;
  return o;
}

BOOST_AUTO_TEST_CASE(the_memory_guard_holds_the_committed_budgets_and_catches_growth) {
  TrainingSuiteOptions committed;
  committed.memory_budget = VOLTA_MEMORY_BUDGET;
  const CaseOutcome ok = training::memory_budget(committed);
  BOOST_TEST_MESSAGE(ok.message);
  BOOST_TEST((ok.outcome == Outcome::Pass), ok.message);

  std::string tight;
  for (const auto& [plan, peak] : training::reference_plan_peaks()) {
    tight += plan + "\t" + std::to_string(peak - 1) + "\tone byte short\n";
  }
  const CaseOutcome grown = training::memory_budget(with_budget(tight));
  BOOST_TEST((grown.outcome == Outcome::FailNumeric));
  BOOST_TEST(grown.message.find("training-step") != std::string::npos, grown.message);

  const CaseOutcome missing = training::memory_budget(with_budget("training-step\t1\tx\n"));
  BOOST_TEST((missing.outcome == Outcome::FailNumeric));
  BOOST_TEST(missing.message.find("has no row") != std::string::npos, missing.message);
  BOOST_CHECK_THROW(training::memory_budget(with_budget("training-step\t100\n")), VoltaError);
}

}  // namespace
}  // namespace volta::conformance
