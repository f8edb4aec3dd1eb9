#pragma once
// Internal to the gradients suite: the forward a case differentiates and the three checks.

#include <vector>

#include "gradient_cases.h"
#include "volta/autograd/autograd.h"

namespace volta::conformance::gradients {

// Finite differences: step, and the bound |g - fd| <= kFdAbs + kFdRel |fd|. Inputs with at most
// kFullJacobianElements elements are differenced element by element; larger ones along
// kDirections seeded random directions.
inline constexpr double kFdStep = 1e-6;
inline constexpr double kFdAbs = 1e-5;
inline constexpr double kFdRel = 1e-3;
inline constexpr int64_t kFullJacobianElements = 64;
inline constexpr int kDirections = 3;

// y = op(inputs); loss = sum over float outputs k of sum(y_k * r_k), r_k fixed random in
// [-1, 1] (f32-representable) seeded by the case id; a non-finite element of y_k weighs 0.
struct Forward {
  Graph graph;
  ValueId loss;
  std::vector<ValueId> trainables;
  std::vector<Tensor> inputs;         // the graph inputs, in order
  std::vector<Tensor> weights;        // r_k
  std::vector<int> trainable_inputs;  // graph input index of each trainable
};
Forward build_forward(const OpGradientCase& c, DType float_type);

// reference: float64 gradients against finite differences (or the documented subgradient).
CaseOutcome check_reference(const OpGradientCase& c);
// cpu: f32 and f64 engine gradients against the reference's, and across thread counts.
CaseOutcome check_engine(const OpGradientCase& c);

}  // namespace volta::conformance::gradients
