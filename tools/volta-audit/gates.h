#pragma once
// The release gates. Each gate is ONE SQL query over the rows of a commit that returns a
// single row (status, reason): PASS, FAIL or NOT VERIFIED, with one line saying why. A gate
// whose evidence needs absent hardware (a CUDA device) is NOT VERIFIED, never PASS. Every gate
// declares what complete evidence is (Gate::evidence) and passes only on it: results of usable
// runs (conformance::usable_run_cte: complete, of the commit, read only committed inputs),
// every case its list needs, every negative control caught, no ERROR/CRASH/TIMEOUT.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "build_info.h"
#include "volta/conformance/sqlite.h"

namespace volta::audit {

enum class GateStatus { Pass, Fail, NotVerified };
std::string_view gate_status_name(GateStatus status);  // "PASS", "FAIL", "NOT VERIFIED"

struct Gate {
  std::string_view name;         // stable id, cited by doc claims: "parity-cpu-reference"
  std::string_view description;  // what the gate proves, in one line
  std::string_view evidence;     // what complete evidence is, in one line
  bool blocks_pr;                // a blocker for `gate`; every gate blocks `gate --release`
  // Binds :commit (the full SHA), :release (1 drops runs of dirty trees) and :lists_commit
  // (the commit this binary's expected-case lists and policies come from); returns exactly
  // one row (status, reason). Generated once from the gate's evidence selection.
  std::string sql;
};

// Every gate, in the order the table prints them.
std::span<const Gate> gates();
const Gate* find_gate(std::string_view name);

struct GateResult {
  std::string gate;
  GateStatus status = GateStatus::NotVerified;
  std::string reason;
  bool blocker = false;
};

// Evaluates every gate for `commit`; release makes every gate a blocker. `lists_commit` is the
// commit whose code and committed files gave this binary its expected-case lists and policies:
// a gate that needs them cannot verify another commit (tests pass their own).
std::vector<GateResult> evaluate_gates(const conformance::Database& db, std::string_view commit,
                                       bool release,
                                       std::string_view lists_commit = build::kCommit);
GateResult evaluate_gate(const conformance::Database& db, const Gate& gate, std::string_view commit,
                         bool release, std::string_view lists_commit = build::kCommit);
// Appends the results to gate_result (one transaction).
void record_gate_results(conformance::Database& db, std::string_view commit,
                         std::span<const GateResult> results);
// The gate table as printed by `volta-audit gate`: gate / status / blocker / reason.
std::string format_gate_table(std::span<const GateResult> results);
// Exit status of `gate`: 0 only when every blocker passes.
bool all_blockers_pass(std::span<const GateResult> results);
// The last line `gate` prints: "gate: PASS (all 2 blockers pass)" or
// "gate: FAIL (1 of 2 blockers do not pass)".
std::string gate_verdict_line(std::span<const GateResult> results);

}  // namespace volta::audit
