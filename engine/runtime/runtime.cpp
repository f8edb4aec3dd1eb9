#include "volta/runtime/runtime.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "volta/ir/printer.h"
#include "volta/ir/verify.h"

namespace volta {
namespace {

std::string node_ref(const Node& node, const Backend& backend) {
  return "node '" + node.name + "' (" + std::string(op_name(node.op)) + ") on backend '" +
         std::string(backend.name()) + "'";
}

uint64_t hash_plan(const ExecutionPlan& plan) {
  StableHasher h;
  h.u64(plan.ir_hash);
  h.u64(plan.schedule_hash);
  h.u64(plan.allocation_hash);
  h.text(plan.backend);
  h.text(determinism_mode_name(plan.mode));
  for (const PlannedStep& s : plan.steps) h.text(s.kernel.variant);
  return h.digest();
}

}  // namespace

ExecutionPlan compile(Graph graph, const Backend& backend, DeterminismMode mode,
                      const CompileOptions& options) {
  verify_graph_or_throw(graph);
  ExecutionPlan plan;
  plan.mode = mode;
  plan.backend = std::string(backend.name());
  if (options.optimize) {
    PassManager passes;
    passes.add(make_constant_folding(make_backend_evaluator(backend, mode)));
    // Only for a backend that runs the fused op: no backend silently loses a kernel to a pass.
    if (backend.capabilities()[static_cast<size_t>(op_index(OpKind::FusedMatMul))].supported) {
      passes.add(make_gemm_epilogue_fusion());
    }
    passes.add(make_dead_code_elimination());
    plan.passes = passes.run(graph);
  }
  plan.graph = std::move(graph);
  const Graph& g = plan.graph;

  plan.schedule = schedule_graph(g);
  verify_schedule(g, plan.schedule);
  plan.memory = plan_memory(g, plan.schedule, static_cast<int64_t>(kTensorAlignment));
  verify_allocation(g, plan.schedule, plan.memory);

  for (int node_index : plan.schedule) {
    const Node& node = g.node(node_index);
    KernelSelection selection = backend.select_kernel(g, node);
    if (auto* missing = std::get_if<KernelUnsupported>(&selection)) {
      fail(ErrorCode::MissingKernel, node_ref(node, backend) +
                                         " has no kernel: " + missing->reason +
                                         ". Volta never falls back to another backend.");
    }
    KernelChoice& kernel = std::get<KernelChoice>(selection);
    if (mode == DeterminismMode::Strict && kernel.determinism != KernelDeterminism::BitExact) {
      fail(ErrorCode::NonDeterministicKernel,
           node_ref(node, backend) + ": kernel '" + kernel.variant + "' is " +
               std::string(kernel_determinism_name(kernel.determinism)) +
               ", but DeterminismMode::Strict requires bit-exact kernels (compile with "
               "DeterminismMode::Relaxed to accept it)");
    }
    plan.steps.push_back({node_index, std::move(kernel)});
  }
  plan.ir_hash = ir_hash(g);
  plan.schedule_hash = hash_schedule(plan.schedule);
  plan.allocation_hash = hash_memory_plan(plan.memory);
  plan.plan_hash = hash_plan(plan);
  return plan;
}

void ExecutionContext::Free::operator()(std::byte* p) const { std::free(p); }

ExecutionContext::ExecutionContext(int num_threads, ScheduleOptions schedule)
    : pool_(num_threads, schedule) {}

std::byte* ExecutionContext::arena(int64_t bytes) {
  if (bytes > arena_bytes_) {
    const size_t rounded =
        (static_cast<size_t>(bytes) + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
    void* p = std::aligned_alloc(kTensorAlignment, rounded);
    if (p == nullptr) throw std::bad_alloc();
    arena_.reset(static_cast<std::byte*>(p));
    arena_bytes_ = bytes;
  }
  return arena_.get();
}

std::vector<Tensor> execute(const ExecutionPlan& plan, const Backend& backend,
                            ExecutionContext& ctx, std::span<const Tensor> inputs) {
  const Graph& g = plan.graph;
  if (backend.name() != plan.backend) {
    fail(ErrorCode::BackendMismatch, "plan was compiled for backend '" + plan.backend + "', not '" +
                                         std::string(backend.name()) + "'");
  }
  check_graph_inputs(g, inputs);
  std::vector<const void*> bound(static_cast<size_t>(g.num_values()), nullptr);
  for (size_t i = 0; i < inputs.size(); ++i) {
    bound[static_cast<size_t>(g.inputs()[i].index)] = inputs[i].data();
  }
  for (ValueId p : g.parameters()) bound[static_cast<size_t>(p.index)] = g.parameter_data(p).data();

  std::byte* arena = ctx.arena(plan.memory.arena_bytes);
  const std::optional<std::byte> poison = ctx.poison();
  if (poison && plan.memory.arena_bytes > 0) {  // an empty arena may be null
    std::memset(arena, static_cast<int>(*poison), static_cast<size_t>(plan.memory.arena_bytes));
  }
  auto address = [&](ValueId v) -> void* {
    if (const auto& a = plan.memory.allocations[static_cast<size_t>(v.index)]) {
      return arena + a->offset;
    }
    return const_cast<void*>(bound[static_cast<size_t>(v.index)]);
  };

  std::vector<ConstTensorView> in_views;
  std::vector<TensorView> out_views;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const PlannedStep& step = plan.steps[s];
    const Node& node = g.node(step.node);
    in_views.clear();
    out_views.clear();
    for (ValueId v : node.inputs) {
      if (!v.valid()) {
        in_views.emplace_back();
        continue;
      }
      const Value& value = g.value(v);
      in_views.emplace_back(value.dtype, value.shape, address(v));
    }
    for (ValueId v : node.outputs) {
      const Value& value = g.value(v);
      out_views.push_back(TensorView{value.dtype, value.shape, address(v)});
    }
    try {
      backend.run_kernel(step.kernel, node, in_views, out_views, ctx);
    } catch (const VoltaError& e) {
      if (e.code() != ErrorCode::KernelFailure) throw;
      fail(ErrorCode::KernelFailure, node_ref(node, backend) + ": " + e.message());
    }
    if (ctx.step_observer()) ctx.step_observer()(static_cast<int>(s), step, out_views);
  }

  std::vector<Tensor> outputs;
  for (ValueId v : g.outputs()) {
    const Value& value = g.value(v);
    Tensor t(value.dtype, value.shape);
    if (t.nbytes() != 0) std::memcpy(t.data(), address(v), t.nbytes());
    outputs.push_back(std::move(t));
  }
  return outputs;
}

ConstantEvaluator make_backend_evaluator(const Backend& backend, DeterminismMode mode) {
  return [&backend, mode](const Graph& graph) {
    ExecutionPlan plan = compile(graph, backend, mode, {.optimize = false});
    ExecutionContext ctx(1);
    return execute(plan, backend, ctx, {});
  };
}

}  // namespace volta
