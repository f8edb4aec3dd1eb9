#pragma once
// Runs an ONNX model on one backend. Each distinct specialization (input dtypes and shapes,
// plus the values of inputs that feed shape arguments) is imported and compiled once; later
// runs with the same key reuse the cached plan. A trainable session keeps the model's
// floating-point initializers as states, stored once and bound to every cached plan.

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "volta/onnx/model.h"
#include "volta/plan/plan_cache.h"
#include "volta/runtime/runtime.h"

namespace volta::onnx {

struct SessionOptions {
  int threads = 1;
  // ImportOptions::trainable: initializers become states the session holds once.
  bool trainable = false;
};

// What a session holds, in bytes.
struct SessionMemory {
  int64_t plans = 0;
  // Constants of the cached plans, each stored once: the plans share the initializers they keep
  // (Graph::parameter_storage); only what a plan's constant folding made is its own.
  int64_t parameter_bytes = 0;
  int64_t state_bytes = 0;  // states, held once by the session for every plan
  int64_t arena_bytes = 0;  // the largest plan's arena (one context serves them all)
};

class Session {
 public:
  // The model must outlive the session.
  Session(const Model& model, const Backend& backend, DeterminismMode mode, SessionOptions options);
  Session(const Model& model, const Backend& backend, DeterminismMode mode, int num_threads = 1)
      : Session(model, backend, mode, SessionOptions{.threads = num_threads}) {}

  std::vector<Tensor> run(std::span<const Tensor> inputs);
  // The plan these inputs run with (imported and compiled on a cache miss).
  const ExecutionPlan& plan_for(std::span<const Tensor> inputs);
  PlanCacheStats cache_stats() const { return cache_.stats(); }
  ExecutionContext& context() { return *ctx_; }

  // A trainable session's states by initializer name (created from the initializer when a
  // plan first binds it). Throws E-INVALID-ARGUMENT naming the states it has otherwise.
  Tensor& state(std::string_view name);
  std::vector<std::string> state_names() const;
  SessionMemory memory() const;

 private:
  const Model& model_;
  const Backend& backend_;
  DeterminismMode mode_;
  SessionOptions options_;
  std::unique_ptr<ExecutionContext> ctx_;  // made by backend_
  PlanCache cache_;
  // Shape key -> the input indices each cached specialization of that shape was keyed on.
  std::map<std::string, std::vector<std::vector<int>>> value_inputs_by_shape_;
  std::map<std::string, Tensor, std::less<>> states_;
  // Each cached plan's states, in its graph's state order.
  std::map<const ExecutionPlan*, std::vector<Tensor*>> bindings_;
};

}  // namespace volta::onnx
