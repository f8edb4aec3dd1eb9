#pragma once
// Internal to the gradients suite: what a case is, and the family files that declare them.
//
// Adding a family: write cases_<family>.cpp with a
// function that appends GradientCases (family name, op, id, one body per backend it runs on),
// declare it below and list it in kCaseSources (gradient_suite.cpp). The gate's expected-case
// list is the suite's own case list per backend, so the new cases are required at once.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "volta/conformance/isolation.h"
#include "volta/ir/graph.h"

namespace volta::conformance::gradients {

struct GradientCase {
  std::string family, op, id;
  std::vector<int> inputs = {};  // the op inputs differentiated (the coverage test reads them)
  // The check on each backend; an empty body: the case does not run on that backend.
  CaseBody on_cpu, on_reference;
  std::string cpu_params, reference_params;  // recorded with the row: what the check compared
};

// One forward op over fixed inputs, differentiated with respect to some of them.
struct OpGradientCase {
  std::string id;
  OpKind op;
  // Per node input (nullopt: an absent optional input). Float operands take the dtype of the
  // graph being built (f32 or f64); their values are f32-representable, so both see one input.
  std::vector<std::optional<TypeInfo>> operands;
  std::vector<std::optional<Tensor>> values;  // float operands in f64
  Attributes attrs;
  int num_outputs = 1;
  std::vector<int> trainable;  // node input positions the gradient is taken for
  // A non-smooth case (cases_subgradients.cpp): the gradient of each trainable that its rule
  // documents, from the f64 graph inputs and the loss weights (one per float output). The
  // reference is held to it instead of to finite differences.
  std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs,
                                    const std::vector<Tensor>& weights)>
      documented = {};
};

// The cpu and reference checks of an op case, as a GradientCase of `family`.
GradientCase gradient_case(std::string family, OpGradientCase c);

// What every cpu case records: it compares f32 and f64 at each of kGradientThreadCounts.
std::string engine_params();

// The case sources, one per file.
void op_family_cases(std::vector<GradientCase>& out);    // cases_ops.cpp
void subgradient_cases(std::vector<GradientCase>& out);  // cases_subgradients.cpp
void optimizer_cases(std::vector<GradientCase>& out);    // cases_optimizers.cpp

}  // namespace volta::conformance::gradients
