#pragma once
// The planner: the one path from a graph to a plan. verify_graph -> passes (verified and
// hashed after each) -> schedule -> one kernel per node from the backend (Strict: bit-exact
// only; each with the workspace it needs) -> memory plan of values and workspace ->
// verify_schedule, verify_allocation -> hashes.

#include "volta/passes/pass_manager.h"
#include "volta/plan/execution_plan.h"
#include "volta/runtime/backend.h"

namespace volta {

struct PlanOptions {
  bool optimize = true;  // run constant folding, GEMM epilogue fusion, dead-code elimination
  // Runs the single-node graphs constant folding replaces by their values; required when
  // optimizing. The runtime gateway (runtime::compile) passes the backend's own, so folded
  // values have the bits the backend's kernels would give.
  ConstantEvaluator evaluate_constants = {};
};

// `mode` has no default on purpose: the caller decides what determinism it needs.
// Throws VoltaError: verifier diagnostics, R-MISSING-KERNEL, R-STRICT-NONDETERMINISTIC,
// L-SCHEDULE / L-ALLOCATION from the plan verifiers, and InvalidArgument for an optimizing
// plan without a constant evaluator.
ExecutionPlan build_execution_plan(Graph graph, const Backend& backend, DeterminismMode mode,
                                   const PlanOptions& options);

}  // namespace volta
