#pragma once
// Hand-built gradients evidence: every case of the gradients suite passing on the backend it
// runs on, with the params the suite records, and the negative control caught.

#include <string>
#include <vector>

#include "store_builder.h"
#include "volta/conformance/gradient_suite.h"

namespace volta::audit::testing {

inline std::vector<ResultRow> gradients_rows(const std::string& backend) {
  std::vector<ResultRow> rows;
  for (const conformance::SuiteCase& c : conformance::gradient_suite(backend, {})) {
    rows.push_back(result(c.case_id, Outcome::Pass, Verdict::Expected, "",
                          Where{.suite = "gradients", .backend = backend, .family = c.family}));
    rows.back().params = c.params;
  }
  return rows;
}

inline void add_passing_gradients_suite(TempStore& t, const std::string& commit = kCommit) {
  t.add_run(gradients_rows("cpu"), {.commit = commit, .suites = "gradients"});
  t.add_run(gradients_rows("reference"), {.commit = commit, .suites = "gradients"});
}

}  // namespace volta::audit::testing
