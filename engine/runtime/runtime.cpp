#include "volta/runtime/runtime.h"

#include "volta/ir/verify.h"

namespace volta {

std::string node_ref(const Node& node, std::string_view backend) {
  return "node '" + node.name + "' (" + std::string(op_name(node.op)) + ") on backend '" +
         std::string(backend) + "'";
}

namespace {

// The context's kind the backend checks itself when it uses it (a CPU context for the CPU).
void check_backend(const ExecutionPlan& plan, const Backend& backend) {
  if (backend.name() != plan.backend) {
    fail(ErrorCode::BackendMismatch, "plan was compiled for backend '" + plan.backend + "', not '" +
                                         std::string(backend.name()) + "'");
  }
}

}  // namespace

ExecutionPlan compile(Graph graph, const Backend& backend, DeterminismMode mode,
                      const CompileOptions& options) {
  PlanOptions plan_options;
  plan_options.optimize = options.optimize;
  if (options.optimize) plan_options.evaluate_constants = make_backend_evaluator(backend, mode);
  return build_execution_plan(std::move(graph), backend, mode, plan_options);
}

std::vector<Tensor> execute(const ExecutionPlan& plan, const Backend& backend,
                            ExecutionContext& ctx, std::span<const Tensor> inputs,
                            std::span<Tensor* const> states) {
  const Graph& g = plan.graph;
  check_backend(plan, backend);
  check_graph_inputs(g, inputs);
  check_graph_states(g, states);
  // Values that live outside the arena: inputs and parameters, in the backend's memory; states
  // and their next values, in the storage the backend bound for each state.
  std::vector<ConstTensorView> bound(static_cast<size_t>(g.num_values()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    bound[static_cast<size_t>(g.inputs()[i].index)] = backend.import_tensor(ctx, inputs[i]);
  }
  for (ValueId p : g.parameters()) {
    bound[static_cast<size_t>(p.index)] = backend.import_parameter(ctx, g.parameter_storage(p));
  }
  std::vector<TensorView> bound_states;
  bound_states.reserve(states.size());
  const std::vector<ValueId> next_values = state_update_values(g);
  for (size_t i = 0; i < states.size(); ++i) {
    bound_states.push_back(backend.bind_state(ctx, *states[i]));
    bound[static_cast<size_t>(g.states()[i].index)] = bound_states.back();
    if (next_values[i].valid())
      bound[static_cast<size_t>(next_values[i].index)] = bound_states.back();
  }
  const MemoryRegion arena = backend.arena(ctx, plan.memory.arena_bytes);
  backend.reserve_worker_scratch(ctx, plan.worker_scratch_bytes);
  auto view = [&](ValueId v) -> TensorView {
    const Value& value = g.value(v);
    if (const auto& a = plan.memory.allocations[static_cast<size_t>(v.index)]) {
      return {value.dtype, value.shape, arena.data + a->offset, arena.space};
    }
    const ConstTensorView& b = bound[static_cast<size_t>(v.index)];
    // Graph inputs and parameters are read-only to kernels: they take them as inputs only. A
    // state is written only as its next value, by the node that computes it.
    return {value.dtype, value.shape, const_cast<void*>(b.data), b.space};
  };

  std::vector<ConstTensorView> in_views;
  std::vector<TensorView> out_views;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const PlannedStep& step = plan.steps[s];
    const Node& node = g.node(step.node);
    in_views.clear();
    out_views.clear();
    for (ValueId v : node.inputs) {
      in_views.push_back(v.valid() ? ConstTensorView(view(v)) : ConstTensorView());
    }
    for (ValueId v : node.outputs) out_views.push_back(view(v));
    MemoryRegion workspace{nullptr, 0, arena.space};
    if (s < plan.memory.workspaces.size() && plan.memory.workspaces[s]) {
      workspace = {arena.data + plan.memory.workspaces[s]->offset, step.kernel.workspace_bytes,
                   arena.space};
    }
    try {
      backend.run_kernel(step.kernel, node, in_views, out_views, workspace, ctx);
    } catch (const VoltaError& e) {
      if (e.code() != ErrorCode::KernelFailure) throw;
      fail(ErrorCode::KernelFailure, node_ref(node, backend.name()) + ": " + e.message());
    }
    if (ctx.step_observer()) {
      ctx.step_observer()(static_cast<int>(s), node, step.kernel, out_views);
    }
  }
  backend.synchronize(ctx);
  for (size_t i = 0; i < states.size(); ++i) backend.store_state(ctx, bound_states[i], *states[i]);

  std::vector<Tensor> outputs;
  outputs.reserve(g.outputs().size());
  for (ValueId v : g.outputs()) outputs.push_back(backend.export_tensor(ctx, view(v)));
  return outputs;
}

ConstantEvaluator make_backend_evaluator(const Backend& backend, DeterminismMode mode) {
  return [&backend, mode](const Graph& graph) {
    const ExecutionPlan plan = compile(graph, backend, mode, {.optimize = false});
    const std::unique_ptr<ExecutionContext> ctx = backend.make_context({.threads = 1});
    return execute(plan, backend, *ctx, {}, {});
  };
}

}  // namespace volta
