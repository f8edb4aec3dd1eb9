#pragma once

#include <cstdint>
#include <optional>
#include <span>
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

// Intermediates, graph outputs and kernel workspace live in one arena; graph inputs,
// parameters and states are bound in place and take no arena space, nor does a state's next
// value: its node writes it into the state's storage.
struct MemoryPlan {
  std::vector<std::optional<Allocation>> allocations;  // indexed by ValueId
  // The scratch each step's kernel declared (KernelChoice::workspace_bytes), live during that
  // step only; indexed by step, nullopt for a kernel that needs none.
  std::vector<std::optional<Allocation>> workspaces;
  int64_t arena_bytes = 0;      // arena size the runtime allocates
  int64_t peak_live_bytes = 0;  // max over steps of the bytes live at once, workspace included
  int64_t alignment = 64;
};

// Liveness-based planning: values and workspaces are placed largest first (ties: values by
// id, then workspaces by step) at the lowest aligned offset that overlaps nothing whose
// lifetime intersects; an output whose op declares aliasing takes its input's buffer when that
// input dies at the same step. `workspace_bytes` holds each step's scratch (empty: none).
MemoryPlan plan_memory(const Graph& graph, const Schedule& schedule, int64_t alignment = 64,
                       std::span<const int64_t> workspace_bytes = {});

// No two values live at the same time overlap (except declared aliasing pairs), no workspace
// overlaps a value live at its step, every offset is aligned, every buffer fits the arena and
// is large enough for its value or the workspace its step declared. Throws L-ALLOCATION
// naming both buffers, their steps and byte ranges.
void verify_allocation(const Graph& graph, const Schedule& schedule, const MemoryPlan& plan,
                       std::span<const int64_t> workspace_bytes = {});

}  // namespace volta
