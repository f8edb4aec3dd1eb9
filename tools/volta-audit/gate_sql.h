#pragma once
// How the gates' SQL is put together (internal to gates.cpp and the per-gate files). Every
// gate reads the runs of conformance::usable_run_cte() and binds :commit (the full SHA),
// :release (1: runs of dirty trees are not evidence) and :lists_commit (the commit whose code
// and committed files gave this binary its expected-case lists and policies).

#include <string>
#include <string_view>
#include <vector>

#include "volta/conformance/onnx_corpus.h"

namespace volta::audit {

std::string sql_literal(std::string_view text);
// "VALUES ('a'), ('b')", or a SELECT of no rows for no values: a table of one text column.
std::string values_list(const std::vector<std::string>& values);
void replace_all(std::string& text, std::string_view placeholder, std::string_view replacement);

// The cases a suite gate judges: one suite, optionally narrowed to a backend or to families.
struct Selection {
  std::string_view suite;
  std::string_view backend = {};                // empty: every backend
  std::vector<std::string_view> families = {};  // empty: every family
};
std::string selection_filter(const Selection& s);  // over test_case c
// "parity (backend cuda)", "determinism (families replay-100, strict-mode)".
std::string selection_label(const Selection& s);
// The command that records the selection's evidence; for a suite `volta-audit run` does not
// have, what to say instead.
std::string selection_command(const Selection& s);
bool suite_exists(std::string_view suite);

// A negative control: a case that must catch its planted defect for the gate's checks to count.
struct ControlSpec {
  std::string case_id;
};

// A suite gate: the newest usable result per case of the selection, judged for unexpected and
// broken results, completeness against `expected` and controls. {placeholders} below are SQL.
struct SuiteGateSpec {
  Selection selection;
  // SELECT of one column, case_id: every case the gate needs. Empty: no list is known, so the
  // gate cannot be verified (`no_list_reason` says why).
  std::string expected = {};
  std::string no_list_reason = {};
  bool lists_from_binary = true;  // `expected` comes from this binary: judges :lists_commit only
  std::vector<std::string> controls = {};  // must be PASS
  bool no_expected_failures = false;       // every case must PASS (determinism)
  std::string params_rule = {};            // SQL boolean over a case's case_id and params
  std::string params_words = {};           // what the rule asks, for the reason
  std::string gate_input_problem = {};     // a file the gate read that is not committed
  std::string extra_ctes = {};             // CTEs (each followed by a comma) before `ranked`
  std::string late_ctes = {};      // CTEs (each followed by a comma) after `evidence` and `weak`
  std::string extra_reasons = {};  // "UNION ALL SELECT k, status, reason ..." rows
  std::string pass_detail = "''";  // SQL text appended to the PASS reason
};
std::string suite_gate_sql(const SuiteGateSpec& spec);

// A CTE `flaky_case(case_id, backend, outcomes)` of the cases `filter` (SQL over test_case c)
// selects that are FLAKY: an outcome differing between usable runs of one machine and build
// type, of clean trees (a dirty tree's code may change between runs). `outcomes` gives each
// outcome with the first run that had it ("PASS in run 3, FAIL_NUMERIC in run 5"). Needs
// usable_run before it in the same WITH.
std::string flaky_case_cte(std::string_view filter);
// The blocker every suite's gate reports for flaky_case, as SQL text.
inline constexpr std::string_view kFlakyReason =
    "(SELECT count(*) FROM flaky_case) || ' FLAKY case(s), whose outcome differs between runs "
    "of this commit on one machine; first: ' || (SELECT backend || ' ' || case_id || ' (' || "
    "outcomes || ')' FROM flaky_case ORDER BY case_id, backend LIMIT 1)";

std::string onnx_gate_sql(const conformance::OnnxCorpus& corpus);
std::string numerics_gate_sql();
std::string perf_gate_sql();
std::string gradients_gate_sql();
std::string docs_gate_sql();
// The determinism gates, by the family they judge (batch-invariance, plan-stability, ...).
std::string determinism_gate_sql(std::string_view family);
// The determinism families on the cuda backend (gate determinism-cuda).
std::string determinism_cuda_gate_sql();

}  // namespace volta::audit
