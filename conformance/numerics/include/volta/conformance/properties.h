#pragma once
// Property-based parity (RapidCheck): for every op of the op table, the CPU engine matches the
// reference engine within the tolerance table on random shapes, attributes and values
// (specials included), plus algebraic laws that hold exactly (Add commutes bitwise, Neg(Neg(x))
// is x, Softmax rows sum to 1, ...). Every property runs with a fixed seed, so a run and its
// replay are deterministic.

#include <cstdint>
#include <string>
#include <vector>

#include "volta/conformance/runner.h"

namespace volta::conformance {

struct PropertyOptions {
  int iterations =
      25;  // per property; CI default. VOLTA_PROPERTY_ITERATIONS overrides (nightly: 1000)
  uint64_t seed = 0;  // 0: a fixed default seed, so CI runs are reproducible
};

// One SuiteCase per (op, property): suite "numerics", family = the op's family, op = op name,
// case id "property:<Op>:<name>" (e.g. "property:Add:engine-matches-reference"). A failing
// case's message holds the seed, the iteration and the shrunk counterexample (shapes,
// attributes, the values that differ: index, both values, ULP distance), so it can be replayed.
std::vector<SuiteCase> property_cases(const PropertyOptions& options);

// Re-runs one property case from a stored failure: its case id and the "seed=... iterations=..."
// of its message. Returns the outcome of that replay (FAIL_NUMERIC when the counterexample is
// reproduced, PASS when it is not). Throws VoltaError(InvalidArgument) for an unknown case id
// or a message without a seed.
CaseOutcome replay_property(const std::string& case_id, const std::string& message);

}  // namespace volta::conformance
