#include "volta/plan/build_execution_plan.h"

#include <algorithm>

#include "volta/ir/printer.h"
#include "volta/ir/verify.h"

namespace volta {
namespace {

uint64_t hash_plan(const ExecutionPlan& plan) {
  StableHasher h;
  h.u64(plan.ir_hash);
  h.u64(plan.schedule_hash);
  h.u64(plan.allocation_hash);
  h.text(plan.backend);
  h.text(determinism_mode_name(plan.mode));
  for (const PlannedStep& s : plan.steps) h.text(s.kernel.variant);
  // Enters only when a step needs worker scratch, so such plans hash as before.
  if (plan.worker_scratch_bytes > 0) h.u64(static_cast<uint64_t>(plan.worker_scratch_bytes));
  return h.digest();
}

// The pass pipeline: constant folding, GEMM epilogue fusion and MatMul transpose folding where
// the backend runs the fused op (no backend silently loses a kernel to a pass), dead-code
// elimination.
std::vector<PassRecord> run_passes(Graph& graph, const Backend& backend,
                                   const PlanOptions& options) {
  if (!options.evaluate_constants) {
    fail(ErrorCode::InvalidArgument,
         "an optimizing plan needs a constant evaluator (PlanOptions::evaluate_constants); "
         "runtime::compile passes the backend's");
  }
  PassManager passes;
  passes.add(make_constant_folding(options.evaluate_constants));
  const FusedNodeFilter runs = [&backend](const Graph& g, const Node& fused) {
    return std::holds_alternative<KernelChoice>(backend.select_kernel(g, fused));
  };
  const auto supports = [&backend](OpKind op) {
    return backend.capabilities()[static_cast<size_t>(op_index(op))].supported;
  };
  if (supports(OpKind::FusedMatMul)) passes.add(make_gemm_epilogue_fusion(runs));
  if (supports(OpKind::PermutedMatMul)) passes.add(make_matmul_transpose_folding(runs));
  passes.add(make_dead_code_elimination());
  return passes.run(graph);
}

KernelChoice select(const Graph& g, const Node& node, const Backend& backend,
                    DeterminismMode mode) {
  KernelSelection selection = backend.select_kernel(g, node);
  if (auto* missing = std::get_if<KernelUnsupported>(&selection)) {
    fail(ErrorCode::MissingKernel, node_ref(node, backend.name()) +
                                       " has no kernel: " + missing->reason +
                                       ". Volta never falls back to another backend.");
  }
  KernelChoice& kernel = std::get<KernelChoice>(selection);
  if (mode == DeterminismMode::Strict && kernel.determinism != KernelDeterminism::BitExact) {
    fail(ErrorCode::NonDeterministicKernel,
         node_ref(node, backend.name()) + ": kernel '" + kernel.variant + "' is " +
             std::string(kernel_determinism_name(kernel.determinism)) +
             ", but DeterminismMode::Strict requires bit-exact kernels (compile with "
             "DeterminismMode::Relaxed to accept it)");
  }
  if (kernel.workspace_bytes < 0 || kernel.worker_scratch_bytes < 0) {
    fail(ErrorCode::PlanAllocation, node_ref(node, backend.name()) + ": kernel '" + kernel.variant +
                                        "' declares a workspace of " +
                                        std::to_string(kernel.workspace_bytes) +
                                        " bytes and a worker scratch of " +
                                        std::to_string(kernel.worker_scratch_bytes) + " bytes");
  }
  return std::move(kernel);
}

}  // namespace

ExecutionPlan build_execution_plan(Graph graph, const Backend& backend, DeterminismMode mode,
                                   const PlanOptions& options) {
  verify_graph_or_throw(graph);
  ExecutionPlan plan;
  plan.mode = mode;
  plan.backend = std::string(backend.name());
  if (options.optimize) plan.passes = run_passes(graph, backend, options);
  plan.graph = std::move(graph);
  const Graph& g = plan.graph;

  plan.schedule = schedule_graph(g);
  verify_schedule(g, plan.schedule);
  std::vector<int64_t> workspace;
  for (int node_index : plan.schedule) {
    KernelChoice kernel = select(g, g.node(node_index), backend, mode);
    workspace.push_back(kernel.workspace_bytes);
    plan.worker_scratch_bytes = std::max(plan.worker_scratch_bytes, kernel.worker_scratch_bytes);
    plan.steps.push_back({node_index, std::move(kernel)});
  }
  plan.memory = plan_memory(g, plan.schedule, static_cast<int64_t>(kTensorAlignment), workspace);
  verify_allocation(g, plan.schedule, plan.memory, workspace);

  plan.ir_hash = ir_hash(g);
  plan.schedule_hash = hash_schedule(plan.schedule);
  plan.allocation_hash = hash_memory_plan(plan.memory);
  plan.plan_hash = hash_plan(plan);
  return plan;
}

}  // namespace volta
