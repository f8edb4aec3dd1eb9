#include "volta/onnx/session.h"

namespace volta::onnx {

Session::Session(const Model& model, const Backend& backend, DeterminismMode mode, int num_threads)
    : model_(model),
      backend_(backend),
      mode_(mode),
      ctx_(backend.make_context({.threads = num_threads})) {}

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
  ImportedGraph imported = model_.import_for(inputs, options);
  key = specialization_key(inputs, imported.value_inputs);
  value_inputs_by_shape_[shape_key].push_back(imported.value_inputs);
  return cache_.insert(key, compile(std::move(imported.graph), backend_, mode_));
}

std::vector<Tensor> Session::run(std::span<const Tensor> inputs) {
  return execute(plan_for(inputs), backend_, *ctx_, inputs);
}

}  // namespace volta::onnx
