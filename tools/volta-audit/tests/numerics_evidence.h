#pragma once
// Hand-built numerics matrix evidence: one row per cell of the checked-in numerics policy, as
// `volta-audit run numerics` records them, for the gate tests.

#include <string>
#include <string_view>
#include <vector>

#include "build_info.h"
#include "store_builder.h"
#include "volta/conformance/matrix_suite.h"

namespace volta::audit::testing {

inline std::vector<conformance::MatrixCell> policy_cells() {
  return conformance::matrix_cells(conformance::load_policy(build::kSourceDir));
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
    if (backend == "cuda") out.back().outcome = Outcome::Skipped;
  }
  return out;
}

// Complete evidence for the numerics-matrix gate: every cell passing on cpu and reference.
inline void add_passing_numerics_matrix(TempStore& t) {
  t.add_run(numerics_rows("cpu"));
  t.add_run(numerics_rows("reference"));
}

}  // namespace volta::audit::testing
