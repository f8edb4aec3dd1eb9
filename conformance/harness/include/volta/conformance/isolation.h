#pragma once
// Runs one case in a child process, so a case that crashes or hangs is recorded (CRASH,
// TIMEOUT) and the run goes on.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "volta/conformance/outcome.h"
#include "volta/conformance/trace_store.h"

namespace volta::conformance {

// What a case reports about itself.
struct CaseOutcome {
  Outcome outcome = Outcome::Error;
  std::optional<double> max_abs = {}, max_rel = {}, max_ulp = {};
  std::string tolerance_key = {}, tolerance = {};
  std::string output_hash = {};
  std::string kernel = {};
  std::string message = {};
  double duration_ms = 0;  // filled in by run_case
  // "; "-joined non_bit_exact_steps(plan) of the case's plan; empty for Strict plans.
  std::string not_bit_exact = {};
  // Node traces the case took; run_suite records them into the run with the case's row.
  std::vector<NodeTraceRow> traces = {};
};

using CaseBody = std::function<CaseOutcome()>;

struct IsolationOptions {
  bool isolate = true;       // false: run in this process (for debuggers)
  double timeout_s = 120.0;  // wall clock, isolated cases only
};

// Runs `body`; exceptions become ERROR with their message. Isolated: a signal becomes CRASH
// naming it, running past the timeout TIMEOUT (the child is killed), a child that exits
// without reporting ERROR.
CaseOutcome run_case(const CaseBody& body, const IsolationOptions& options);

// Wire format between child and parent, exposed for tests.
std::string serialize(const CaseOutcome& outcome);
std::optional<CaseOutcome> deserialize(std::string_view text);

}  // namespace volta::conformance
