// The numerics-matrix gate: judged against the cells of the committed numerics policy on the
// verified backends (cpu, reference) and every property on cpu. A cell or property without a
// result is MISSING (NOT VERIFIED), any unexpected result fails, an ERROR / CRASH / TIMEOUT
// fails whatever its expectation, a property drawn fewer times than CI draws it proves less
// than the gate claims, skipped CUDA cells (their precondition declared) do not fail.
#define BOOST_TEST_MODULE numerics_gate
#include <algorithm>
#include <boost/test/unit_test.hpp>

#include "gate_testing.h"
#include "numerics_evidence.h"

namespace volta::audit {
namespace {

using conformance::Outcome;
using conformance::ResultRow;
using testing::check;
using testing::TempStore;

std::vector<conformance::MatrixCell> cells() { return testing::policy_cells(); }

std::vector<ResultRow> rows(std::string_view backend, const std::string& failing = {}) {
  return testing::numerics_rows(backend, failing);
}

// The cpu run: every cell and every property.
std::vector<ResultRow> cpu_rows(const std::string& failing = {}) {
  std::vector<ResultRow> out = rows("cpu", failing);
  for (ResultRow& r : testing::property_rows()) out.push_back(std::move(r));
  return out;
}

GateResult evaluate(TempStore& t) { return testing::evaluate(t, "numerics-matrix"); }

const size_t kProperties = testing::property_rows().size();

BOOST_AUTO_TEST_CASE(every_cell_and_property_passing_passes) {
  TempStore t;
  t.add_run(cpu_rows());
  t.add_run(rows("reference"));
  t.add_run(rows("cuda"));  // skipped with their precondition: they never fail the gate
  const GateResult r = evaluate(t);
  BOOST_TEST(gate_status_name(r.status) == "PASS");
  const size_t n = cells().size();
  BOOST_TEST(r.reason == std::to_string(3 * n + kProperties) +
                             " cases: " + std::to_string(2 * n + kProperties) +
                             " pass, 0 expected non-pass, " + std::to_string(n) + " skipped");
}

BOOST_AUTO_TEST_CASE(a_cell_without_a_result_is_missing) {
  TempStore t;
  t.add_run(cpu_rows());  // nothing on the reference engine
  const GateResult r = evaluate(t);
  BOOST_TEST(gate_status_name(r.status) == "NOT VERIFIED");
  std::string first = cells().front().id;  // the reason names the first by case id
  for (const conformance::MatrixCell& cell : cells()) first = std::min(first, cell.id);
  BOOST_TEST(r.reason == std::to_string(cells().size()) +
                             " policy cell(s) and properties MISSING (no result); first: "
                             "reference " +
                             first + "; run `volta-audit run numerics`");
}

BOOST_AUTO_TEST_CASE(a_run_without_the_properties_is_missing_them) {
  TempStore t;
  t.add_run(rows("cpu"));
  t.add_run(rows("reference"));
  const GateResult r = evaluate(t);
  BOOST_TEST(gate_status_name(r.status) == "NOT VERIFIED");
  BOOST_TEST(r.reason.starts_with(std::to_string(kProperties) +
                                  " policy cell(s) and properties MISSING (no result); first: "
                                  "cpu property:"));
}

BOOST_AUTO_TEST_CASE(a_failing_cell_fails_with_its_message) {
  TempStore t;
  const std::string bad = cells().back().id;
  t.add_run(cpu_rows(bad));
  t.add_run(rows("reference"));
  const GateResult r = evaluate(t);
  BOOST_TEST(gate_status_name(r.status) == "FAIL");
  BOOST_TEST(r.reason == "1 unexpected result(s); first: cpu " + bad +
                             " FAIL_NUMERIC (unexpected): policy line 1: offset 0: got +0, "
                             "expected NaN");
}

BOOST_AUTO_TEST_CASE(an_expected_error_still_fails) {
  TempStore t;
  std::vector<ResultRow> cpu = cpu_rows();
  cpu.front().outcome = Outcome::Crash;
  cpu.front().expectation = cpu.front().case_id;
  cpu.front().message = "SIGSEGV";
  t.add_run(cpu);
  t.add_run(rows("reference"));
  check(evaluate(t), GateStatus::Fail,
        "1 ERROR/CRASH/TIMEOUT result(s), which no expectation excuses; first: cpu " +
            cpu.front().case_id + " CRASH: SIGSEGV");
}

BOOST_AUTO_TEST_CASE(a_skipped_cell_needs_a_reason) {
  TempStore t;
  std::vector<ResultRow> reference = rows("reference");
  reference.front().outcome = Outcome::Skipped;
  reference.front().message = "later";
  t.add_run(cpu_rows());
  t.add_run(reference);
  check(evaluate(t), GateStatus::Fail,
        "1 unexpected result(s); first: reference " + reference.front().case_id +
            " SKIPPED (skipped without an expectation or a declared precondition): later");
}

BOOST_AUTO_TEST_CASE(properties_drawn_less_than_ci_draws_them_prove_less) {
  TempStore t;
  std::vector<ResultRow> cpu = cpu_rows();
  for (ResultRow& r : cpu) {
    if (r.case_id.starts_with("property:")) r.params = "seed=1 iterations=3";
  }
  t.add_run(cpu);
  t.add_run(rows("reference"));
  const GateResult r = evaluate(t);
  BOOST_TEST(gate_status_name(r.status) == "NOT VERIFIED");
  BOOST_TEST(r.reason.starts_with(std::to_string(kProperties) +
                                  " propert(ies) drawn fewer than 25 times, CI's count; first: "
                                  "property:"));
}

BOOST_AUTO_TEST_CASE(no_results_is_not_verified) {
  TempStore t;
  check(evaluate(t), GateStatus::NotVerified,
        "no usable numerics results for commit 0123456789ab; run `volta-audit run numerics`");
}

}  // namespace
}  // namespace volta::audit
