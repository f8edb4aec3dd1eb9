#include "volta/onnx/session.h"

#include <algorithm>
#include <set>

namespace volta::onnx {

Session::Session(const Model& model, const Backend& backend, DeterminismMode mode,
                 SessionOptions options)
    : model_(model),
      backend_(backend),
      mode_(mode),
      options_(options),
      ctx_(backend.make_context({.threads = options.threads})) {}

const ExecutionPlan& Session::plan_for(std::span<const Tensor> inputs) {
  const std::string shape_key = specialization_key(inputs, {});
  // Each earlier specialization of these shapes names the inputs it was keyed on by value.
  std::string key = shape_key;
  for (const std::vector<int>& value_inputs : value_inputs_by_shape_[shape_key]) {
    const std::string candidate = specialization_key(inputs, value_inputs);
    if (cache_.contains(candidate)) {
      key = candidate;
      break;
    }
  }
  if (const ExecutionPlan* plan = cache_.find(key)) return *plan;  // counts a hit or a miss
  ImportOptions options;
  options.evaluator = make_backend_evaluator(backend_, mode_);
  options.trainable = options_.trainable;
  ImportedGraph imported = model_.import_for(inputs, options);
  key = specialization_key(inputs, imported.value_inputs);
  value_inputs_by_shape_[shape_key].push_back(imported.value_inputs);
  // A state this session already holds keeps its (perhaps trained) value: the import's
  // initializer copy is dropped, so every plan binds the one storage.
  std::vector<std::string> names;
  for (size_t i = 0; i < imported.initial_states.size(); ++i) {
    const std::string& name = imported.graph.value(imported.graph.states()[i]).name;
    states_.try_emplace(name, std::move(imported.initial_states[i]));
    names.push_back(name);
  }
  const ExecutionPlan& plan =
      cache_.insert(key, compile(std::move(imported.graph), backend_, mode_));
  std::vector<Tensor*>& bound = bindings_[&plan];
  for (ValueId v : plan.graph.states()) {
    bound.push_back(&states_.find(plan.graph.value(v).name)->second);
  }
  return plan;
}

std::vector<Tensor> Session::run(std::span<const Tensor> inputs) {
  const ExecutionPlan& plan = plan_for(inputs);
  return execute(plan, backend_, *ctx_, inputs, bindings_.at(&plan));
}

Tensor& Session::state(std::string_view name) {
  const auto it = states_.find(name);
  if (it == states_.end()) {
    std::string names;
    for (const auto& [n, t] : states_) names += (names.empty() ? "" : ", ") + n;
    fail(ErrorCode::InvalidArgument,
         "the session has no state '" + std::string(name) + "' (" +
             (options_.trainable ? "states: " + (names.empty() ? "none yet" : names)
                                 : "it was not made trainable: its initializers are constants") +
             ")");
  }
  return it->second;
}

std::vector<std::string> Session::state_names() const {
  std::vector<std::string> names;
  for (const auto& [name, t] : states_) names.push_back(name);
  return names;
}

SessionMemory Session::memory() const {
  SessionMemory m;
  std::set<const Tensor*> counted;  // plans share the weights they did not fold
  for (const auto& [plan, bound] : bindings_) {
    ++m.plans;
    for (ValueId p : plan->graph.parameters()) {
      const Tensor* data = plan->graph.parameter_storage(p).get();
      if (counted.insert(data).second) m.parameter_bytes += static_cast<int64_t>(data->nbytes());
    }
    m.arena_bytes = std::max(m.arena_bytes, plan->memory.arena_bytes);
  }
  for (const auto& [name, t] : states_) m.state_bytes += static_cast<int64_t>(t.nbytes());
  return m;
}

}  // namespace volta::onnx
