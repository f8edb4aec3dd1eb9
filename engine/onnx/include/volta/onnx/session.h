#pragma once
// Runs an ONNX model on one backend. Each distinct specialization (input dtypes and shapes,
// plus the values of inputs that feed shape arguments) is imported and compiled once; later
// runs with the same key reuse the cached plan.

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "volta/onnx/model.h"
#include "volta/plan/plan_cache.h"
#include "volta/runtime/runtime.h"

namespace volta::onnx {

class Session {
 public:
  // The model must outlive the session.
  Session(const Model& model, const Backend& backend, DeterminismMode mode, int num_threads = 1);

  std::vector<Tensor> run(std::span<const Tensor> inputs);
  // The plan these inputs run with (imported and compiled on a cache miss).
  const ExecutionPlan& plan_for(std::span<const Tensor> inputs);
  PlanCacheStats cache_stats() const { return cache_.stats(); }
  ExecutionContext& context() { return *ctx_; }

 private:
  const Model& model_;
  const Backend& backend_;
  DeterminismMode mode_;
  std::unique_ptr<ExecutionContext> ctx_;  // made by backend_
  PlanCache cache_;
  // Shape key -> the input indices each cached specialization of that shape was keyed on.
  std::map<std::string, std::vector<std::vector<int>>> value_inputs_by_shape_;
};

}  // namespace volta::onnx
