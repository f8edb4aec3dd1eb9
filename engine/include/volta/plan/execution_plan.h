#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "volta/ir/graph.h"
#include "volta/passes/pass_manager.h"
#include "volta/plan/memory_plan.h"
#include "volta/plan/schedule.h"
#include "volta/runtime/backend.h"

namespace volta {

struct PlannedStep {
  int node = 0;
  KernelChoice kernel;
};

// Everything needed to run a graph: the verified, optimized graph, the schedule, the
// memory plan (values and kernel workspace) and one chosen kernel per step. Built only by
// build_execution_plan (volta/plan/build_execution_plan.h).
struct ExecutionPlan {
  Graph graph;
  DeterminismMode mode = DeterminismMode::Strict;
  std::string backend;
  std::vector<PassRecord> passes;
  Schedule schedule;
  std::vector<PlannedStep> steps;
  MemoryPlan memory;
  int64_t worker_scratch_bytes = 0;  // the most any step's kernel asks of each worker
  uint64_t ir_hash = 0;
  uint64_t schedule_hash = 0;
  uint64_t allocation_hash = 0;
  uint64_t plan_hash = 0;  // over all of the above plus the kernel variants and mode
};

uint64_t hash_schedule(const Schedule& schedule);
uint64_t hash_memory_plan(const MemoryPlan& memory);

// The steps whose kernel is not bit-exact (only a Relaxed plan has any), one line each:
// "node 'attn.sum' (ReduceSum, kernel f32_x, run-to-run)". Plans, run rows and reports list them.
std::vector<std::string> non_bit_exact_steps(const ExecutionPlan& plan);

// The kernel variants a plan runs, each once, in step order, comma-separated: what result
// rows record as their kernel.
std::string kernel_variants(const ExecutionPlan& plan);

// Human summary: steps with op, kernel variant, output shapes and buffer offsets.
std::string describe_plan(const ExecutionPlan& plan);

}  // namespace volta
