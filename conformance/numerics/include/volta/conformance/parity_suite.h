#pragma once
// The `parity` suite: every parity case as a harness case. Backend "cpu" judges the engine's
// CPU backend against the reference engine; backend "cuda" judges CUDA against CPU.

#include <string_view>
#include <vector>

#include "volta/conformance/parity_cases.h"
#include "volta/conformance/runner.h"

namespace volta::conformance {

inline constexpr std::string_view kParityBackends = "cpu, cuda";

// One case: compile Strict, run twice (arena poisoned with 0xff on 1 thread, then with 0x00
// on `threads` threads; the outputs must be bit-identical, which catches unwritten elements
// and thread dependence), then compare with the reference under the tolerance table.
CaseOutcome run_cpu_parity_case(const ParityCase& c, int threads);

// Throws VoltaError(InvalidArgument) for a backend outside kParityBackends.
std::vector<SuiteCase> parity_suite(std::string_view backend, int threads);

}  // namespace volta::conformance
