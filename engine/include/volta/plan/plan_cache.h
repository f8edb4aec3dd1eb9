#pragma once
// Plans keyed by their specialization (model, backend, mode, input dtypes, shapes and the
// values of shape-feeding inputs). Hits and misses are counted so reports can show them.

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "volta/plan/execution_plan.h"

namespace volta {

struct PlanCacheStats {
  int64_t hits = 0;
  int64_t misses = 0;
  int64_t entries = 0;
};

class PlanCache {
 public:
  // The cached plan for `key`, counting a hit, or nullptr, counting a miss.
  const ExecutionPlan* find(const std::string& key);
  bool contains(const std::string& key) const { return plans_.contains(key); }
  const ExecutionPlan& insert(const std::string& key, ExecutionPlan plan);
  PlanCacheStats stats() const;

 private:
  std::map<std::string, std::unique_ptr<ExecutionPlan>> plans_;
  int64_t hits_ = 0;
  int64_t misses_ = 0;
};

}  // namespace volta
