// The gradients suite's own tests: every op input with a VJP rule has a gradient case, the
// negative control catches its planted wrong VJP, a run planting a wrong VJP fails that op's
// cases (and only on the finite-difference check), and the subgradient family passes on both
// backends.
#define BOOST_TEST_MODULE gradient_suite_test
#include "volta/conformance/gradient_suite.h"

#include <boost/test/unit_test.hpp>
#include <set>
#include <string>

#include "gradient_cases.h"
#include "volta/autograd/autograd.h"

namespace volta::conformance {
namespace {

std::vector<gradients::GradientCase> op_cases() {
  std::vector<gradients::GradientCase> cases;
  gradients::op_family_cases(cases);
  return cases;
}

BOOST_AUTO_TEST_CASE(every_input_with_a_rule_has_a_gradient_case) {
  std::set<std::pair<OpKind, int>> covered;
  for (const gradients::GradientCase& c : op_cases()) {
    const OpKind op = *parse_op(c.op);
    const int last = static_cast<int>(op_schema(op).inputs.size()) - 1;
    for (const int i : c.inputs) covered.insert({op, std::min(i, last)});
  }
  int rules = 0;
  for (int k = 0; k < kOpCount; ++k) {
    const OpSchema& s = op_schema(static_cast<OpKind>(k));
    for (size_t i = 0; i < s.inputs.size(); ++i) {
      if (!has_vjp_rule(s.kind, static_cast<int>(i))) continue;
      ++rules;
      BOOST_TEST(covered.contains({s.kind, static_cast<int>(i)}),
                 s.name << " input " << i << " (" << s.inputs[i].name
                        << ") has a VJP rule but no gradient case: give the op a float parity case "
                           "(conformance/numerics/cases_<family>.cpp)");
    }
  }
  BOOST_TEST_MESSAGE(rules << " op inputs with a rule, " << op_cases().size() << " op cases");
}

BOOST_AUTO_TEST_CASE(case_ids_are_unique_per_backend) {
  for (std::string_view backend : {"cpu", "reference"}) {
    std::set<std::string> ids;
    for (const SuiteCase& c : gradient_suite(backend, {})) {
      BOOST_TEST(ids.insert(c.case_id).second, backend << ": " << c.case_id << " twice");
    }
  }
}

const SuiteCase& find_case(const std::vector<SuiteCase>& cases, std::string_view id) {
  for (const SuiteCase& c : cases) {
    if (c.case_id == id) return c;
  }
  BOOST_FAIL("no case " << id);
  return cases.front();
}

BOOST_AUTO_TEST_CASE(the_negative_control_catches_a_sign_flipped_rule) {
  const std::vector<SuiteCase> cases = gradient_suite("reference", {});
  const CaseOutcome o = find_case(cases, kWrongVjpControl).body();
  BOOST_TEST(outcome_name(o.outcome) == "PASS", o.message);
  BOOST_TEST(o.message.find("caught: Tanh's VJP sign-flipped") == 0, o.message);
}

// A wrong rule passes the engine-vs-reference check (both run the same training graph) and fails
// finite differences: the reference row is what catches it.
BOOST_AUTO_TEST_CASE(a_planted_wrong_vjp_fails_its_ops_reference_cases) {
  const GradientRunOptions planted{.plant = parse_planted_wrong_vjp("Tanh")};
  int failed = 0;
  for (const SuiteCase& c : gradient_suite("reference", planted)) {
    if (c.op != "Tanh" || c.family == kGradientControlsFamily) continue;
    const CaseOutcome o = c.body();
    // An empty input has no gradient to get wrong.
    if (c.case_id.find("[0]") != std::string::npos) {
      BOOST_TEST(outcome_name(o.outcome) == "PASS", c.case_id << ": " << o.message);
      continue;
    }
    BOOST_TEST(outcome_name(o.outcome) == "FAIL_NUMERIC", c.case_id << ": " << o.message);
    ++failed;
  }
  BOOST_TEST(failed >= 5);
  const std::vector<SuiteCase> on_cpu = gradient_suite("cpu", planted);
  const CaseOutcome o = find_case(on_cpu, "engine:Tanh(shape=[3,5])").body();
  BOOST_TEST(outcome_name(o.outcome) == "PASS", o.message);
  BOOST_CHECK_THROW(parse_planted_wrong_vjp("ArgMax"), VoltaError);
  BOOST_CHECK_THROW(parse_planted_wrong_vjp("NoSuchOp"), VoltaError);
}

BOOST_AUTO_TEST_CASE(the_subgradient_family_passes_on_both_backends) {
  for (std::string_view backend : {"cpu", "reference"}) {
    int run = 0;
    for (const SuiteCase& c : gradient_suite(backend, {})) {
      if (c.family != "subgradients") continue;
      const CaseOutcome o = c.body();
      BOOST_TEST(outcome_name(o.outcome) == "PASS",
                 backend << " " << c.case_id << ": " << o.message);
      ++run;
    }
    BOOST_TEST(run == 8);
  }
}

BOOST_AUTO_TEST_CASE(an_unknown_backend_is_refused) {
  BOOST_CHECK_THROW(gradient_suite("cuda", {}), VoltaError);
}

}  // namespace
}  // namespace volta::conformance
