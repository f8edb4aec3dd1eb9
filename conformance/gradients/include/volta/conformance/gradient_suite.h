#pragma once
// The `gradients` suite: every VJP rule checked on two backends, one row per case on each.
//   reference  the reference engine's float64 gradients against central finite differences of
//              its own forward (eps 1e-6; |g - fd| <= 1e-5 + 1e-3 |fd|): every element for small
//              inputs, products with seeded random directions for large ones; an explicit
//              subgradient case against the gradient its rule documents instead.
//   cpu        the CPU engine's f32 and f64 gradients against the reference's float64 ones
//              under the tolerance table's gradient rows, and bit-identical at 1, 2, 3, 4 and
//              8 threads.
// Case ids name the check: "vjp:ID" on reference, "engine:ID" on cpu, ID naming the op, its
// attributes and shapes ("Softmax(axis=0,shape=[3,5])"), so an expectation can name one check.
// The loss is sum(y * r) over the op's float outputs y with fixed random weights r, so every
// output element weighs in. Case families and where their cases come from (gradient_cases.h):
// one family per op family (the parity grids of every op with a VJP rule, redrawn where the
// op is smooth), `subgradients` (non-smooth points), and `controls` (the negative control:
// a planted wrong VJP that the finite-difference check must catch).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "volta/autograd/planted_wrong_vjp.h"
#include "volta/conformance/runner.h"

namespace volta::conformance {

inline constexpr std::string_view kGradientsSuite = "gradients";
inline constexpr std::string_view kGradientBackends = "cpu, reference";
inline constexpr std::string_view kGradientControlsFamily = "controls";
inline constexpr std::string_view kVjpCheckPrefix = "vjp:";        // reference rows
inline constexpr std::string_view kEngineCheckPrefix = "engine:";  // cpu rows
inline constexpr std::string_view kWrongVjpControl = "control:gradients:wrong-vjp";
// What check (c) compares: the 1-thread gradients against these thread counts.
inline constexpr int kGradientThreadCounts[] = {1, 2, 3, 4, 8};

struct GradientRunOptions {
  // --plant-wrong-vjp OP: that op's VJP rule sign-flipped in every case of the run.
  std::optional<autograd::WrongVjp> plant = {};
};

// The cases on `backend` ("cpu" or "reference"; anything else: VoltaError(InvalidArgument)).
std::vector<SuiteCase> gradient_suite(std::string_view backend, const GradientRunOptions& options);

// `OP` of --plant-wrong-vjp OP: an op with a VJP rule (VoltaError(InvalidArgument) otherwise),
// sign-flipped.
autograd::WrongVjp parse_planted_wrong_vjp(std::string_view op);

}  // namespace volta::conformance
