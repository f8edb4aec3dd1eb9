#pragma once
// The runtime gateway: the single truth path from a graph to its outputs.
//   compile: build_execution_plan (volta/plan/build_execution_plan.h) with the backend itself
//            folding constants
//   execute: the backend's context holds the arena; inputs are imported into the backend's
//            memory, each step runs its kernel on views of the arena, outputs are exported
// The runtime never allocates, fills or copies data itself: the backend does.

#include <span>
#include <vector>

#include "volta/plan/build_execution_plan.h"
#include "volta/runtime/backend.h"

namespace volta {

struct CompileOptions {
  bool optimize = true;  // run constant folding, GEMM epilogue fusion, dead-code elimination
};

// `mode` has no default on purpose: the caller decides what determinism it needs.
// Throws VoltaError: verifier diagnostics, R-MISSING-KERNEL, R-STRICT-NONDETERMINISTIC.
ExecutionPlan compile(Graph graph, const Backend& backend, DeterminismMode mode,
                      const CompileOptions& options = {});

// Runs a plan on a context `backend` made. Inputs must match the graph inputs in order, dtype
// and shape (R-INPUT-MISMATCH otherwise); the backend must be the one the plan was compiled
// for, and refuses a context of another kind (R-BACKEND-MISMATCH). `states` binds the graph's
// states in order (R-INPUT-MISMATCH likewise): every node reads a state's value from before the
// run, and the run leaves each updated state holding its next value. The caller keeps the
// storage: every plan of a graph binds the same tensors, and no plan copies them.
std::vector<Tensor> execute(const ExecutionPlan& plan, const Backend& backend,
                            ExecutionContext& ctx, std::span<const Tensor> inputs,
                            std::span<Tensor* const> states = {});

// Compile + execute on the given backend, in the given mode, with passes off: the evaluator
// constant folding uses, so folded values come from the backend and kernels that run the graph.
ConstantEvaluator make_backend_evaluator(const Backend& backend, DeterminismMode mode);

}  // namespace volta
