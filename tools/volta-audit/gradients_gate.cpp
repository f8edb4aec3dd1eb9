// The gradients gate: the suite gate over the gradients suite. Every case the suite defines must
// have a result: "vjp:ID" on reference (finite differences or the documented subgradient) and
// "engine:ID" on cpu (f32 and f64 at every thread count of check (c)); the planted wrong-VJP
// control must be caught. A run with --plant-wrong-vjp records that option as a planted defect,
// so usable_run refuses it.

#include <string>
#include <vector>

#include "gate_sql.h"
#include "volta/conformance/gradient_suite.h"

namespace volta::audit {

std::string gradients_gate_sql() {
  std::vector<std::string> ids;
  std::string cpu_params;
  for (std::string_view backend : {"cpu", "reference"}) {
    for (const conformance::SuiteCase& c : conformance::gradient_suite(backend, {})) {
      if (c.case_id.starts_with("control:")) continue;
      ids.push_back(c.case_id);
      if (backend == "cpu") cpu_params = c.params;
    }
  }
  SuiteGateSpec spec;
  spec.selection = {.suite = conformance::kGradientsSuite};
  spec.expected = values_list(ids);
  spec.controls = {std::string(conformance::kWrongVjpControl)};
  spec.params_rule =
      "substr(case_id, 1, " + std::to_string(conformance::kEngineCheckPrefix.size()) + ") <> " +
      sql_literal(conformance::kEngineCheckPrefix) + " OR params = " + sql_literal(cpu_params);
  spec.params_words = "every engine case compares " + cpu_params;
  return suite_gate_sql(spec);
}

}  // namespace volta::audit
