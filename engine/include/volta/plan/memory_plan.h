#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "volta/ir/graph.h"
#include "volta/plan/schedule.h"

namespace volta {

// Where a value lives in the plan's arena and during which steps it must stay intact.
struct Allocation {
  int64_t offset = 0;
  int64_t size = 0;                // bytes, rounded up to the alignment
  int first_step = 0;              // step that writes it
  int last_step = 0;               // last step that reads it (the final step for graph outputs)
  ValueId shares_with = kNoValue;  // the input whose buffer it took (declared aliasing)
};

// Intermediates and graph outputs live in one arena; graph inputs and parameters are
// bound in place and take no arena space.
struct MemoryPlan {
  std::vector<std::optional<Allocation>> allocations;  // indexed by ValueId
  int64_t arena_bytes = 0;                             // arena size the runtime allocates
  int64_t peak_live_bytes = 0;  // max over steps of the bytes live at once (lower bound)
  int64_t alignment = 64;
};

// Liveness-based planning: values are placed largest first (ties: lower id) at the lowest
// aligned offset that overlaps no value whose lifetime intersects; an output whose op
// declares aliasing takes its input's buffer when that input dies at the same step.
MemoryPlan plan_memory(const Graph& graph, const Schedule& schedule, int64_t alignment = 64);

// No two values live at the same time overlap (except declared aliasing pairs), every
// offset is aligned, every buffer fits the arena and is large enough for its value.
// Throws L-ALLOCATION naming both values, their steps and byte ranges.
void verify_allocation(const Graph& graph, const Schedule& schedule, const MemoryPlan& plan);

}  // namespace volta
