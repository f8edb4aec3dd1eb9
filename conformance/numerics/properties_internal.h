#pragma once
// Internal to the property suite: how properties are declared and run (properties*.cpp and the
// property tests).

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "volta/conformance/isolation.h"
#include "volta/ir/graph.h"

namespace volta::conformance::props {

// A RapidCheck property: `body` draws with `*gen` and fails with RC_FAIL / RC_ASSERT.
struct Property {
  OpKind op;
  std::string name;  // "engine-matches-reference", "commutes-bitwise", ...
  std::function<void()> body;
  std::string case_id() const;  // "property:<Op>:<name>"
};

// Engine outputs pass through `tamper` before they are judged: a test plants a policy
// violation there (e.g. flushing NaN to 0) to show the suite catches it.
using Tamper = std::function<void(std::vector<Tensor>&)>;

// Whether engine-matches-reference draws a case of `op` with `arity` operands on random shapes
// as well as on its grid's: from the op's traits (OpSchema::traits), never from a list of ops.
// UnaryElementwise and AxisAttribute ops with one operand (axis attributes redrawn for the
// rank), BroadcastingBinary ops with two (broadcast partners).
bool redraws_shapes(OpKind op, size_t arity);

// Every property, in op-table order: engine-matches-reference for each op, then the
// algebraic laws.
std::vector<Property> all_properties();
Property engine_matches_reference(OpKind op, Tamper tamper = {});
// The laws the Commutative and Idempotent traits state, for every op that has them, then the
// laws of single ops (Neg(Neg(x)) is x, Softmax rows sum to 1, ...): properties_algebra.cpp.
std::vector<Property> algebraic_properties();

// Runs `p` for `iterations` cases from `seed`; a failure shrinks and reports
// "seed=S iterations=N failed at iteration K: <counterexample>".
CaseOutcome run_property(const Property& p, uint64_t seed, int iterations);
// Runs `p` again with the seed and iteration count named in a failure message.
CaseOutcome replay(const Property& p, const std::string& message);

// Shared helpers for property bodies. fail_case / discard_case end the current RapidCheck
// case with just `message` (RC_FAIL would prefix the source location and macro text).
[[noreturn]] void fail_case(const std::string& message);
[[noreturn]] void discard_case(const std::string& message);
std::vector<Tensor> run_engine(const Graph& graph, const std::vector<Tensor>& inputs);
std::vector<Tensor> run_reference(const Graph& graph, const std::vector<Tensor>& inputs);
// The first element where two tensors differ bitwise (NaNs of any payload count as equal),
// as "index I: A vs B", or "" when they agree.
std::string bitwise_difference(const Tensor& a, const Tensor& b);
// Uniform values from the operand domain (as the parity grids draw them), seeded.
Tensor domain_values(DType dtype, const Shape& shape, InputDomain domain, uint64_t seed,
                     uint64_t stream);

}  // namespace volta::conformance::props
