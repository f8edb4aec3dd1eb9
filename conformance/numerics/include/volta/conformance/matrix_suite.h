#pragma once
// The NaN/Inf matrix: one case per rule x op x dtype x backend of the numerics policy
// (governance/numerics-policy.md). Each case builds inputs with the rule's values placed at
// the offsets the policy names, runs the op and checks the rule's result at every one of them.

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "volta/conformance/numerics_policy.h"
#include "volta/conformance/runner.h"

namespace volta {
class Backend;
}

namespace volta::conformance {

inline constexpr std::string_view kNumericsSuite = "numerics";
inline constexpr std::string_view kMatrixBackends = "cpu, reference, cuda";

// Element offsets a special value is placed at (elementwise inputs; `last` is added).
inline constexpr int64_t kMatrixOffsets[] = {0,  1,  7,  8,    15,   16,    17,
                                             31, 32, 33, 4095, 4096, 16383, 16384};
inline constexpr int64_t kMatrixElements = 3 * 16384 + 5;
inline constexpr int64_t kMatrixRowLengths[] = {7, 4095, 4096, 4097};

// One cell without its backend: the rule applied to one op at one dtype.
struct MatrixCell {
  std::string id;  // "Relu[f32] If x is NaN, the result is NaN."
  RuleOp op;
  DType dtype;
  Rule rule;
};

// Every cell of the policy, in rule order. A rule an op cannot take (no dtype of the op fits
// the condition) yields no cell: matrix_problems() names it.
std::vector<MatrixCell> matrix_cells(const Policy& policy);

// Rules x ops that give no cell, as "line N: Op: why".
std::vector<std::string> matrix_problems(const Policy& policy);

// Runs a graph on some backend: the engine CPU backend, the reference engine, or a test double.
using Evaluate = std::function<std::vector<Tensor>(const Graph&, std::span<const Tensor>)>;
Evaluate backend_evaluator(const Backend& backend, int threads);  // compile Strict + execute
Evaluate reference_evaluator();

// Builds the cell's inputs, evaluates and checks the rule; the message of a failure names the
// rule's line, the shape and the first offset that does not hold with the value it got.
CaseOutcome run_matrix_cell(const MatrixCell& cell, const Evaluate& evaluate);

// The suite's cases on one backend ("cpu", "reference" or "cuda": skipped, no CUDA backend).
// Throws VoltaError(InvalidArgument) for another backend.
std::vector<SuiteCase> matrix_suite(const Policy& policy, std::string_view backend, int threads);

}  // namespace volta::conformance
