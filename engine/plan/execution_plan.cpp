#include "volta/plan/execution_plan.h"

#include <set>

#include "volta/ir/printer.h"

namespace volta {

uint64_t hash_schedule(const Schedule& schedule) {
  StableHasher h;
  h.u64(schedule.size());
  for (int node : schedule) h.u64(static_cast<uint64_t>(node));
  return h.digest();
}

uint64_t hash_memory_plan(const MemoryPlan& memory) {
  StableHasher h;
  h.u64(static_cast<uint64_t>(memory.arena_bytes));
  h.u64(static_cast<uint64_t>(memory.alignment));
  for (const auto& a : memory.allocations) {
    if (!a) {
      h.u64(~0ull);
      continue;
    }
    h.u64(static_cast<uint64_t>(a->offset));
    h.u64(static_cast<uint64_t>(a->size));
    h.u64(static_cast<uint64_t>(a->first_step));
    h.u64(static_cast<uint64_t>(a->last_step));
    h.u64(static_cast<uint64_t>(a->shares_with.index));
  }
  // Workspaces enter only where a step has one, so a plan without scratch hashes as before.
  for (size_t step = 0; step < memory.workspaces.size(); ++step) {
    if (const auto& w = memory.workspaces[step]) {
      h.u64(step);
      h.u64(static_cast<uint64_t>(w->offset));
      h.u64(static_cast<uint64_t>(w->size));
    }
  }
  return h.digest();
}

std::string kernel_variants(const ExecutionPlan& plan) {
  std::string out;
  std::set<std::string> seen;
  for (const PlannedStep& step : plan.steps) {
    if (seen.insert(step.kernel.variant).second) {
      out += (out.empty() ? "" : ",") + step.kernel.variant;
    }
  }
  return out;
}

std::vector<std::string> non_bit_exact_steps(const ExecutionPlan& plan) {
  std::vector<std::string> lines;
  for (const PlannedStep& step : plan.steps) {
    if (step.kernel.determinism == KernelDeterminism::BitExact) continue;
    const Node& node = plan.graph.node(step.node);
    lines.push_back("node '" + node.name + "' (" + std::string(op_name(node.op)) + ", kernel " +
                    step.kernel.variant + ", " +
                    std::string(kernel_determinism_name(step.kernel.determinism)) + ")");
  }
  return lines;
}

std::string describe_plan(const ExecutionPlan& plan) {
  const Graph& g = plan.graph;
  std::string out = "plan: backend=" + plan.backend +
                    " mode=" + std::string(determinism_mode_name(plan.mode)) +
                    " steps=" + std::to_string(plan.steps.size()) +
                    " arena_bytes=" + std::to_string(plan.memory.arena_bytes) +
                    " peak_live_bytes=" + std::to_string(plan.memory.peak_live_bytes) +
                    " worker_scratch_bytes=" + std::to_string(plan.worker_scratch_bytes) + "\n";
  out += "hashes: ir=" + hash_hex(plan.ir_hash) + " schedule=" + hash_hex(plan.schedule_hash) +
         " allocation=" + hash_hex(plan.allocation_hash) + " plan=" + hash_hex(plan.plan_hash) +
         "\n";
  for (const PassRecord& p : plan.passes) {
    out += "pass " + p.pass + (p.changed ? " changed" : " unchanged") +
           " nodes=" + std::to_string(p.nodes_after) + " ir=" + hash_hex(p.ir_hash) + "\n";
  }
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const PlannedStep& step = plan.steps[s];
    const Node& node = g.node(step.node);
    out += "step " + std::to_string(s) + ": " + std::string(op_name(node.op)) + " '" + node.name +
           "' kernel=" + step.kernel.variant + " (" +
           std::string(kernel_determinism_name(step.kernel.determinism)) + ")";
    if (!node.origin.empty()) out += " from pass " + node.origin;
    for (ValueId v : node.outputs) {
      const Value& value = g.value(v);
      out += " -> %" + std::to_string(v.index) + ":" + std::string(dtype_name(value.dtype)) +
             value.shape.str();
      if (const auto& a = plan.memory.allocations[static_cast<size_t>(v.index)]) {
        out += "@" + std::to_string(a->offset);
        if (a->shares_with.valid()) out += "(shares %" + std::to_string(a->shares_with.index) + ")";
      }
    }
    if (s < plan.memory.workspaces.size()) {
      if (const auto& w = plan.memory.workspaces[s]) {
        out += " workspace=" + std::to_string(step.kernel.workspace_bytes) + "@" +
               std::to_string(w->offset);
      }
    }
    if (step.kernel.worker_scratch_bytes > 0) {
      out += " worker_scratch=" + std::to_string(step.kernel.worker_scratch_bytes);
    }
    out += "\n";
  }
  const std::vector<std::string> relaxed = non_bit_exact_steps(plan);
  out += "not bit-exact: " + std::to_string(relaxed.size()) + " step(s)";
  for (const std::string& line : relaxed) out += "\n  " + line;
  return out + "\n";
}

}  // namespace volta
