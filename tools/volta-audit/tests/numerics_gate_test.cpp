// The numerics-matrix gate: judged against the cells of the checked-in numerics policy on the
// verified backends (cpu, reference). A policy cell without a result is MISSING and fails,
// any unexpected result fails, skipped CUDA cells do not.
#define BOOST_TEST_MODULE numerics_gate
#include <algorithm>
#include <boost/test/unit_test.hpp>

#include "gates.h"
#include "numerics_evidence.h"

namespace volta::audit {
namespace {

using conformance::ResultRow;
using testing::TempStore;

std::vector<conformance::MatrixCell> cells() { return testing::policy_cells(); }

std::vector<ResultRow> rows(std::string_view backend, const std::string& failing = {}) {
  return testing::numerics_rows(backend, failing);
}

GateResult evaluate(TempStore& t) {
  return evaluate_gate(t.db(), *find_gate("numerics-matrix"), testing::kCommit, false);
}

BOOST_AUTO_TEST_CASE(every_cell_passing_on_cpu_and_reference_passes) {
  TempStore t;
  t.add_run(rows("cpu"));
  t.add_run(rows("reference"));
  t.add_run(rows("cuda"));  // skipped: NOT VERIFIED cells never fail the gate
  const GateResult r = evaluate(t);
  BOOST_TEST(gate_status_name(r.status) == "PASS");
  const size_t n = cells().size();
  BOOST_TEST(r.reason == std::to_string(3 * n) + " cases: " + std::to_string(2 * n) +
                             " pass, 0 expected non-pass, " + std::to_string(n) + " skipped");
}

BOOST_AUTO_TEST_CASE(a_cell_without_a_result_is_missing) {
  TempStore t;
  t.add_run(rows("cpu"));  // nothing on the reference engine
  const GateResult r = evaluate(t);
  BOOST_TEST(gate_status_name(r.status) == "FAIL");
  std::string first = cells().front().id;  // the reason names the first by case id
  for (const conformance::MatrixCell& cell : cells()) first = std::min(first, cell.id);
  BOOST_TEST(r.reason ==
             std::to_string(cells().size()) +
                 " policy cell(s) MISSING (a rule without a result); first: reference " + first);
}

BOOST_AUTO_TEST_CASE(a_failing_cell_fails_with_its_message) {
  TempStore t;
  const std::string bad = cells().back().id;
  t.add_run(rows("cpu", bad));
  t.add_run(rows("reference"));
  const GateResult r = evaluate(t);
  BOOST_TEST(gate_status_name(r.status) == "FAIL");
  BOOST_TEST(r.reason == "1 unexpected result(s); first: cpu " + bad +
                             " FAIL_NUMERIC (unexpected): policy line 1: offset 0: got +0, "
                             "expected NaN");
}

BOOST_AUTO_TEST_CASE(no_results_is_not_verified) {
  TempStore t;
  BOOST_TEST(gate_status_name(evaluate(t).status) == "NOT VERIFIED");
}

}  // namespace
}  // namespace volta::audit
