#pragma once
// Hand-built training evidence: every case of the training suite passing, with the params the
// suite records.

#include <string>
#include <vector>

#include "store_builder.h"
#include "volta/conformance/training_suite.h"

namespace volta::audit::testing {

inline std::vector<ResultRow> training_rows() {
  std::vector<ResultRow> rows;
  for (const conformance::SuiteCase& c : conformance::training_suite("cpu", {})) {
    rows.push_back(result(c.case_id, Outcome::Pass, Verdict::Expected, "",
                          Where{.suite = "training", .backend = "cpu", .family = c.family}));
    rows.back().params = c.params;
    rows.back().precondition = c.precondition;
  }
  return rows;
}

inline void add_passing_training_suite(TempStore& t, const std::string& commit = kCommit) {
  t.add_run(training_rows(), {.commit = commit, .suites = "training"});
}

}  // namespace volta::audit::testing
