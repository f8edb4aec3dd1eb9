#pragma once
// The runtime gateway: the single truth path from a graph to its outputs.
//   Graph -> verify_graph -> passes (verify + hash after each)
//         -> schedule + memory plan (verify_schedule, verify_allocation)
//         -> one kernel per node from the backend (Strict: bit-exact only) -> execute

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "volta/plan/execution_plan.h"
#include "volta/runtime/backend.h"
#include "volta/runtime/thread_pool.h"

namespace volta {

struct CompileOptions {
  bool optimize = true;  // run constant folding, GEMM epilogue fusion, dead-code elimination
};

// `mode` has no default on purpose: the caller decides what determinism it needs.
// Throws VoltaError: verifier diagnostics, R-MISSING-KERNEL, R-STRICT-NONDETERMINISTIC.
ExecutionPlan compile(Graph graph, const Backend& backend, DeterminismMode mode,
                      const CompileOptions& options = {});

// Sees every step's outputs right after its kernel ran (before later steps may reuse their
// memory): how the determinism suite traces a hash per node output.
using StepObserver = std::function<void(int step_index, const PlannedStep& step,
                                        std::span<const TensorView> outputs)>;

// Per-caller execution state: the thread pool and the arena buffers come from.
class ExecutionContext {
 public:
  explicit ExecutionContext(int num_threads = 1, ScheduleOptions schedule = {});
  ThreadPool& pool() { return pool_; }
  int num_threads() const { return pool_.num_threads(); }
  // An aligned arena of at least `bytes`, reused across runs.
  std::byte* arena(int64_t bytes);
  // Fill the arena with `pattern` before every run, so an element a kernel never writes
  // shows up in its output (the conformance harness runs each case with two patterns).
  void set_poison(std::optional<std::byte> pattern) { poison_ = pattern; }
  std::optional<std::byte> poison() const { return poison_; }
  // Called after every step of every run on this context; empty: none (the default).
  void set_step_observer(StepObserver observer) { observer_ = std::move(observer); }
  const StepObserver& step_observer() const { return observer_; }

 private:
  ThreadPool pool_;
  struct Free {
    void operator()(std::byte* p) const;
  };
  std::unique_ptr<std::byte[], Free> arena_;
  int64_t arena_bytes_ = 0;
  std::optional<std::byte> poison_;
  StepObserver observer_;
};

// Runs a plan. Inputs must match the graph inputs in order, dtype and shape
// (R-INPUT-MISMATCH otherwise); the backend must be the one the plan was compiled for.
std::vector<Tensor> execute(const ExecutionPlan& plan, const Backend& backend,
                            ExecutionContext& ctx, std::span<const Tensor> inputs);

// Compile + execute on the given backend, in the given mode, with passes off: the evaluator
// constant folding uses, so folded values come from the backend and kernels that run the graph.
ConstantEvaluator make_backend_evaluator(const Backend& backend, DeterminismMode mode);

}  // namespace volta
