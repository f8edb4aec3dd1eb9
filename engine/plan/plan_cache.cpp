#include "volta/plan/plan_cache.h"

namespace volta {

const ExecutionPlan* PlanCache::find(const std::string& key) {
  const auto it = plans_.find(key);
  if (it == plans_.end()) {
    ++misses_;
    return nullptr;
  }
  ++hits_;
  return it->second.get();
}

const ExecutionPlan& PlanCache::insert(const std::string& key, ExecutionPlan plan) {
  auto& slot = plans_[key];
  slot = std::make_unique<ExecutionPlan>(std::move(plan));
  return *slot;
}

PlanCacheStats PlanCache::stats() const {
  return {hits_, misses_, static_cast<int64_t>(plans_.size())};
}

}  // namespace volta
