#pragma once
// Hand-built numerics matrix evidence: one row per cell of the checked-in numerics policy, as
// `volta-audit run numerics` records them, for the gate tests.

#include <string>
#include <string_view>
#include <vector>

#include "committed_texts.h"
#include "store_builder.h"
#include "volta/conformance/matrix_suite.h"
#include "volta/conformance/properties.h"

namespace volta::audit::testing {

// The cells of the committed policy, which the gate judges by.
inline std::vector<conformance::MatrixCell> policy_cells() {
  return conformance::matrix_cells(conformance::parse_policy(build::kCommittedNumericsPolicy));
}

// Every policy cell on one backend, passing unless `failing` names it; cuda cells are skipped.
inline std::vector<ResultRow> numerics_rows(std::string_view backend,
                                            const std::string& failing = {}) {
  std::vector<ResultRow> out;
  for (const conformance::MatrixCell& cell : policy_cells()) {
    const bool fails = cell.id == failing;
    out.push_back(result(cell.id, fails ? Outcome::FailNumeric : Outcome::Pass,
                         fails ? Verdict::Unexpected : Verdict::Expected,
                         fails ? "policy line 1: offset 0: got +0, expected NaN" : "",
                         Where{"numerics", std::string(backend), "elementwise"}));
    if (backend == "cuda") {
      out.back().outcome = Outcome::Skipped;
      out.back().precondition = std::string(conformance::kCudaPrecondition);
    }
  }
  return out;
}

// Every property case, passing at CI's iteration count (the cpu run records them).
inline std::vector<ResultRow> property_rows() {
  std::vector<ResultRow> out;
  for (const conformance::SuiteCase& c : conformance::property_cases({})) {
    out.push_back(result(c.case_id, Outcome::Pass, Verdict::Expected, "",
                         Where{"numerics", "cpu", c.family}));
    out.back().params = "seed=1 iterations=25";
  }
  return out;
}

// Complete evidence for the numerics-matrix gate: every cell passing on cpu and reference,
// every property passing on cpu.
inline void add_passing_numerics_matrix(TempStore& t, const RunSpec& spec = {}) {
  std::vector<ResultRow> cpu = numerics_rows("cpu");
  for (ResultRow& r : property_rows()) cpu.push_back(std::move(r));
  RunSpec s = spec;
  s.suites = "numerics";
  t.add_run(cpu, s);
  t.add_run(numerics_rows("reference"), s);
}

}  // namespace volta::audit::testing
