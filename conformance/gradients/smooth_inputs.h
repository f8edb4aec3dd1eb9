#pragma once
// Internal to the gradients suite: input values at which finite differences of an op are valid.
// Each (op, input) draws from an interval inside the op's domain (Log's positive reals, Acos's
// (-1, 1), divisors away from 0), keeps kKinkMargin away from the op's kinks (Abs and Relu at
// 0, Clip at its bounds, HardSwish at +-3, ...), and ops that route the gradient to one
// element (Max, ReduceMin, ...) get pairwise-distinct values, so no tie sits within a step.

#include <vector>

#include "volta/ir/graph.h"

namespace volta::conformance::gradients {

// 1e-3 is a thousand finite-difference steps: no probe crosses a kink.
inline constexpr double kKinkMargin = 1e-3;

// Values for the differentiated inputs `trainable` of `node` (types from `graph`), in f64 and
// f32-representable, seeded; one tensor per entry of `trainable`.
std::vector<Tensor> smooth_values(const Graph& graph, const Node& node,
                                  const std::vector<int>& trainable, uint64_t seed);

}  // namespace volta::conformance::gradients
