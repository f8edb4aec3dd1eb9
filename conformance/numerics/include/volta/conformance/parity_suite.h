#pragma once
// The `parity` suite: every parity case as a harness case, the engine backend of that name
// (from the registry) judged against the reference engine. A backend this binary was not
// built with (cuda, until its backend lands) gives SKIPPED cases that declare it as their
// precondition.

#include <string_view>
#include <vector>

#include "volta/conformance/parity_cases.h"
#include "volta/conformance/runner.h"
#include "volta/runtime/backend.h"

namespace volta::conformance {

inline constexpr std::string_view kParityBackends = "cpu, cuda";

// One case: compile Strict, run twice (arena poisoned with 0xff on 1 thread, then with 0x00
// on `threads` threads; the outputs must be bit-identical, which catches unwritten elements
// and thread dependence), then compare with the reference under the tolerance table.
CaseOutcome run_parity_case(const ParityCase& c, const Backend& backend, int threads);

// Throws VoltaError(InvalidArgument) for a backend outside kParityBackends.
std::vector<SuiteCase> parity_suite(std::string_view backend, int threads);

}  // namespace volta::conformance
