#include "volta/plan/memory_plan.h"

#include <algorithm>
#include <string>

#include "volta/error.h"

namespace volta {
namespace {

int64_t align_up(int64_t bytes, int64_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

int64_t value_bytes(const Value& v) {
  return v.shape.numel() * static_cast<int64_t>(dtype_size(v.dtype));
}

bool lifetimes_overlap(const Allocation& a, const Allocation& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

bool bytes_overlap(const Allocation& a, const Allocation& b) {
  return a.size > 0 && b.size > 0 && a.offset < b.offset + b.size && b.offset < a.offset + a.size;
}

struct Lifetime {
  int first = -1;  // the step that writes the value; -1 when no step does
  int last = -1;   // the last step that reads it (the final step for graph outputs)
};

// Lifetimes recomputed from the graph and schedule alone: the verifier does not trust the
// ones the planner recorded, so misrecorded lifetimes cannot hide an overlap.
std::vector<Lifetime> schedule_lifetimes(const Graph& graph, const Schedule& schedule) {
  std::vector<Lifetime> life(static_cast<size_t>(graph.num_values()));
  const int final_step = static_cast<int>(schedule.size()) - 1;
  for (int step = 0; step <= final_step; ++step) {
    const Node& node = graph.node(schedule[static_cast<size_t>(step)]);
    for (ValueId v : node.inputs) {
      if (v.valid() && life[static_cast<size_t>(v.index)].first >= 0) {
        life[static_cast<size_t>(v.index)].last = step;
      }
    }
    for (ValueId v : node.outputs) life[static_cast<size_t>(v.index)] = {step, step};
  }
  for (ValueId v : graph.outputs()) {
    if (life[static_cast<size_t>(v.index)].first >= 0) {
      life[static_cast<size_t>(v.index)].last = final_step;
    }
  }
  return life;
}

// The value whose buffer `b` took, following chains of aliasing (x -> relu -> reshape).
ValueId buffer_root(const MemoryPlan& plan, ValueId v) {
  while (plan.allocations[static_cast<size_t>(v.index)]->shares_with.valid()) {
    v = plan.allocations[static_cast<size_t>(v.index)]->shares_with;
  }
  return v;
}

// Declared aliasing takes input 0's buffer only where the kernel may write over it.
bool may_write_over_input0(const Node& node) {
  return !node.inputs.empty() && may_write_over_operand(node, node.inputs[0]);
}

// A value may take another's buffer only as its op declares: the op's input 0, dying at the
// step that writes the value.
void verify_aliasing(const Graph& graph, const Schedule& schedule, const MemoryPlan& plan,
                     const std::vector<Lifetime>& life, ValueId v) {
  const Allocation& a = *plan.allocations[static_cast<size_t>(v.index)];
  const ValueId shared = a.shares_with;
  const std::string claim = "value %" + std::to_string(v.index) + " '" + graph.value(v).name +
                            "' claims the buffer of %" + std::to_string(shared.index);
  if (!graph.has_value(shared) || !plan.allocations[static_cast<size_t>(shared.index)]) {
    fail(ErrorCode::PlanAllocation, claim + ", which has no buffer in the arena");
  }
  const std::string claim_named = claim + " '" + graph.value(shared).name + "'";
  const Node& node = graph.node(schedule[static_cast<size_t>(a.first_step)]);
  if (op_schema(node.op).aliasing == Aliasing::None) {
    fail(ErrorCode::PlanAllocation,
         claim_named + ", but " + std::string(op_name(node.op)) + " declares no aliasing");
  }
  if (node.inputs.empty() || node.inputs[0] != shared) {
    fail(ErrorCode::PlanAllocation, claim_named + ", which is not input 0 of its node '" +
                                        node.name + "' (" + std::string(op_name(node.op)) + ")");
  }
  if (!may_write_over_input0(node)) {
    fail(ErrorCode::PlanAllocation, claim_named + ", which node '" + node.name + "' (" +
                                        std::string(op_name(node.op)) +
                                        ") also reads as another input");
  }
  if (life[static_cast<size_t>(shared.index)].last != a.first_step) {
    fail(ErrorCode::PlanAllocation,
         claim_named + ", which is still read at step " +
             std::to_string(life[static_cast<size_t>(shared.index)].last) +
             " after it is written at step " + std::to_string(a.first_step));
  }
}

std::string byte_range(const Allocation& a) {
  return "bytes [" + std::to_string(a.offset) + ", " + std::to_string(a.offset + a.size) +
         ") steps [" + std::to_string(a.first_step) + ", " + std::to_string(a.last_step) + "]";
}

// Every step that declared scratch has a workspace of at least that size, live at that step
// alone, aligned, inside the arena, and overlapping no value live at that step.
void verify_workspaces(const Graph& graph, const Schedule& schedule, const MemoryPlan& plan,
                       std::span<const int64_t> workspace_bytes) {
  if (plan.workspaces.size() != schedule.size() && !plan.workspaces.empty()) {
    fail(ErrorCode::PlanAllocation,
         "memory plan covers the workspaces of " + std::to_string(plan.workspaces.size()) +
             " steps, the schedule has " + std::to_string(schedule.size()));
  }
  for (size_t step = 0; step < plan.workspaces.size(); ++step) {
    const auto& w = plan.workspaces[step];
    const int64_t need = step < workspace_bytes.size() ? workspace_bytes[step] : 0;
    const std::string what = "the workspace of step " + std::to_string(step);
    if (!w) {
      if (need > 0) {
        fail(ErrorCode::PlanAllocation,
             what + " (" + std::to_string(need) + " bytes declared) has no buffer");
      }
      continue;
    }
    const int s = static_cast<int>(step);
    if (w->first_step != s || w->last_step != s) {
      fail(ErrorCode::PlanAllocation, what + " is recorded live over " + byte_range(*w));
    }
    if (w->offset % plan.alignment != 0 || w->offset < 0 || w->size < need ||
        w->offset + w->size > plan.arena_bytes) {
      fail(ErrorCode::PlanAllocation, what + " needs " + std::to_string(need) + " bytes, has " +
                                          byte_range(*w) + " in an arena of " +
                                          std::to_string(plan.arena_bytes) + " aligned to " +
                                          std::to_string(plan.alignment));
    }
    for (int i = 0; i < graph.num_values(); ++i) {
      const auto& a = plan.allocations[static_cast<size_t>(i)];
      if (a && lifetimes_overlap(*a, *w) && bytes_overlap(*a, *w)) {
        fail(ErrorCode::PlanAllocation,
             what + " (" + byte_range(*w) + ") overlaps value %" + std::to_string(i) + " '" +
                 graph.value(ValueId{i}).name + "' (" + byte_range(*a) + "), live at that step");
      }
    }
  }
}

void check_workspace_sizes(const Schedule& schedule, std::span<const int64_t> workspace_bytes) {
  if (!workspace_bytes.empty() && workspace_bytes.size() != schedule.size()) {
    fail(ErrorCode::PlanAllocation,
         "workspace sizes cover " + std::to_string(workspace_bytes.size()) +
             " steps, the schedule has " + std::to_string(schedule.size()));
  }
  for (size_t step = 0; step < workspace_bytes.size(); ++step) {
    if (workspace_bytes[step] < 0) {
      fail(ErrorCode::PlanAllocation, "step " + std::to_string(step) + " declares a workspace of " +
                                          std::to_string(workspace_bytes[step]) + " bytes");
    }
  }
}

}  // namespace

MemoryPlan plan_memory(const Graph& graph, const Schedule& schedule, int64_t alignment,
                       std::span<const int64_t> workspace_bytes) {
  MemoryPlan plan;
  plan.alignment = alignment;
  plan.allocations.resize(static_cast<size_t>(graph.num_values()));
  const int last = static_cast<int>(schedule.size()) - 1;
  check_workspace_sizes(schedule, workspace_bytes);
  plan.workspaces.resize(schedule.size());
  for (size_t step = 0; step < workspace_bytes.size(); ++step) {
    if (workspace_bytes[step] > 0) {
      const int s = static_cast<int>(step);
      plan.workspaces[step] =
          Allocation{0, align_up(workspace_bytes[step], alignment), s, s, kNoValue};
    }
  }

  // Lifetimes: written at the producing step, read until the last consuming step. A state's
  // next value is written into the state's own storage and takes no arena space.
  std::vector<char> updates_state(static_cast<size_t>(graph.num_values()), 0);
  for (const StateUpdate& u : graph.state_updates()) {
    updates_state[static_cast<size_t>(u.value.index)] = 1;
  }
  for (int step = 0; step <= last; ++step) {
    const Node& node = graph.node(schedule[static_cast<size_t>(step)]);
    for (ValueId v : node.outputs) {
      if (updates_state[static_cast<size_t>(v.index)]) continue;
      const int64_t size = align_up(value_bytes(graph.value(v)), alignment);
      plan.allocations[static_cast<size_t>(v.index)] = Allocation{0, size, step, step, kNoValue};
    }
    for (ValueId v : node.inputs) {
      if (!v.valid()) continue;
      auto& a = plan.allocations[static_cast<size_t>(v.index)];
      if (a) a->last_step = std::max(a->last_step, step);
    }
  }
  for (ValueId v : graph.outputs()) {
    auto& a = plan.allocations[static_cast<size_t>(v.index)];
    if (a) a->last_step = last;
  }

  // Declared aliasing: the output takes input 0's buffer when input 0 dies at this step.
  std::vector<char> is_output(static_cast<size_t>(graph.num_values()), 0);
  for (ValueId v : graph.outputs()) is_output[static_cast<size_t>(v.index)] = 1;
  for (int step = 0; step <= last; ++step) {
    const Node& node = graph.node(schedule[static_cast<size_t>(step)]);
    if (op_schema(node.op).aliasing == Aliasing::None || node.inputs.empty() ||
        node.outputs.size() != 1 || !node.inputs[0].valid() || !may_write_over_input0(node)) {
      continue;
    }
    const ValueId in = node.inputs[0];
    const ValueId out = node.outputs[0];
    auto& ain = plan.allocations[static_cast<size_t>(in.index)];
    auto& aout = plan.allocations[static_cast<size_t>(out.index)];
    if (ain && aout && ain->last_step == step && !is_output[static_cast<size_t>(in.index)] &&
        ain->size == aout->size && graph.value(in).dtype == graph.value(out).dtype &&
        graph.value(in).shape.numel() == graph.value(out).shape.numel() && ain->size > 0) {
      aout->shares_with = in;
    }
  }

  // Place buffers: largest first (ties: lower id), lowest offset free for their lifetime.
  // An aliasing chain is placed once, at its root, spanning the whole chain's lifetime.
  std::vector<int> own_last_step(static_cast<size_t>(graph.num_values()), -1);
  for (int i = 0; i < graph.num_values(); ++i) {
    if (const auto& a = plan.allocations[static_cast<size_t>(i)]) {
      own_last_step[static_cast<size_t>(i)] = a->last_step;
    }
  }
  std::vector<int> roots;
  for (int i = 0; i < graph.num_values(); ++i) {
    const auto& a = plan.allocations[static_cast<size_t>(i)];
    if (!a) continue;
    if (!a->shares_with.valid()) {
      roots.push_back(i);
    } else {
      auto& root = plan.allocations[static_cast<size_t>(buffer_root(plan, ValueId{i}).index)];
      root->last_step = std::max(root->last_step, a->last_step);
    }
  }
  // Buffers to place: the roots (value ids) and then the workspaces (by step), largest first.
  std::vector<Allocation*> buffers;
  buffers.reserve(roots.size() + plan.workspaces.size());
  for (int r : roots) buffers.push_back(&*plan.allocations[static_cast<size_t>(r)]);
  for (auto& w : plan.workspaces) {
    if (w) buffers.push_back(&*w);
  }
  std::stable_sort(buffers.begin(), buffers.end(),
                   [](const Allocation* x, const Allocation* y) { return x->size > y->size; });
  std::vector<const Allocation*> placed;
  for (Allocation* buffer : buffers) {
    Allocation& a = *buffer;
    std::vector<const Allocation*> conflicts;
    for (const Allocation* p : placed) {
      if (lifetimes_overlap(a, *p) && p->size > 0) conflicts.push_back(p);
    }
    std::sort(conflicts.begin(), conflicts.end(),
              [](const Allocation* x, const Allocation* y) { return x->offset < y->offset; });
    int64_t offset = 0;
    for (const Allocation* p : conflicts) {
      if (offset + a.size <= p->offset) break;
      offset = std::max(offset, p->offset + p->size);
    }
    a.offset = offset;
    placed.push_back(&a);
    plan.arena_bytes = std::max(plan.arena_bytes, offset + a.size);
  }
  // Aliases inherit their root's offset.
  for (int i = 0; i < graph.num_values(); ++i) {
    auto& a = plan.allocations[static_cast<size_t>(i)];
    if (a && a->shares_with.valid()) {
      a->offset =
          plan.allocations[static_cast<size_t>(buffer_root(plan, ValueId{i}).index)]->offset;
    }
  }

  // A root's lifetime still spans its whole chain here: one buffer, counted once.
  for (int step = 0; step <= last; ++step) {
    int64_t live = 0;
    for (const Allocation* a : buffers) {
      if (a->first_step <= step && step <= a->last_step) live += a->size;
    }
    plan.peak_live_bytes = std::max(plan.peak_live_bytes, live);
  }
  // Each value reports its own lifetime again, as verify_allocation and the runtime expect.
  for (int r : roots) {
    plan.allocations[static_cast<size_t>(r)]->last_step = own_last_step[static_cast<size_t>(r)];
  }
  return plan;
}

void verify_allocation(const Graph& graph, const Schedule& schedule, const MemoryPlan& plan,
                       std::span<const int64_t> workspace_bytes) {
  auto name = [&](int i) {
    return "%" + std::to_string(i) + " '" + graph.value(ValueId{i}).name + "'";
  };
  const auto range = byte_range;
  if (static_cast<int>(plan.allocations.size()) != graph.num_values()) {
    fail(ErrorCode::PlanAllocation,
         "memory plan covers " + std::to_string(plan.allocations.size()) +
             " values, the graph has " + std::to_string(graph.num_values()));
  }
  const std::vector<Lifetime> life = schedule_lifetimes(graph, schedule);
  std::vector<char> updates_state(static_cast<size_t>(graph.num_values()), 0);
  for (const StateUpdate& u : graph.state_updates()) {
    if (graph.has_value(u.value)) updates_state[static_cast<size_t>(u.value.index)] = 1;
  }
  for (int i = 0; i < graph.num_values(); ++i) {
    const auto& a = plan.allocations[static_cast<size_t>(i)];
    const Lifetime& l = life[static_cast<size_t>(i)];
    if (updates_state[static_cast<size_t>(i)]) {
      if (a) {
        fail(ErrorCode::PlanAllocation,
             "value " + name(i) +
                 " is a state's next value, written into the state's storage, but has a buffer");
      }
      continue;
    }
    if (l.first >= 0 && !a) {
      fail(ErrorCode::PlanAllocation, "value " + name(i) + " is produced but has no buffer");
    }
    if (!a) continue;
    if (l.first < 0) {
      fail(ErrorCode::PlanAllocation,
           "value " + name(i) +
               " is written by no step (inputs and parameters are bound in place), but has a "
               "buffer");
    }
    if (a->first_step != l.first || a->last_step != l.last) {
      fail(ErrorCode::PlanAllocation,
           "value " + name(i) + " is recorded live over steps [" + std::to_string(a->first_step) +
               ", " + std::to_string(a->last_step) + "], but the schedule writes it at step " +
               std::to_string(l.first) + " and reads it until step " + std::to_string(l.last));
    }
    const int64_t need = value_bytes(graph.value(ValueId{i}));
    if (a->offset % plan.alignment != 0 || a->offset < 0) {
      fail(ErrorCode::PlanAllocation, "value " + name(i) + " at offset " +
                                          std::to_string(a->offset) + " is not aligned to " +
                                          std::to_string(plan.alignment));
    }
    if (a->size < need || a->offset + a->size > plan.arena_bytes) {
      fail(ErrorCode::PlanAllocation, "value " + name(i) + " needs " + std::to_string(need) +
                                          " bytes, has " + range(*a) + " in an arena of " +
                                          std::to_string(plan.arena_bytes));
    }
  }
  for (int i = 0; i < graph.num_values(); ++i) {
    const auto& a = plan.allocations[static_cast<size_t>(i)];
    if (a && a->shares_with.valid()) verify_aliasing(graph, schedule, plan, life, ValueId{i});
  }
  for (int i = 0; i < graph.num_values(); ++i) {
    const auto& a = plan.allocations[static_cast<size_t>(i)];
    if (!a) continue;
    for (int j = i + 1; j < graph.num_values(); ++j) {
      const auto& b = plan.allocations[static_cast<size_t>(j)];
      if (!b || !lifetimes_overlap(*a, *b) || !bytes_overlap(*a, *b)) continue;
      // Declared aliasing: an output may take the buffer of the input that dies as it is born.
      const bool alias = (b->shares_with.index == i && a->last_step == b->first_step) ||
                         (a->shares_with.index == j && b->last_step == a->first_step);
      if (alias) continue;
      fail(ErrorCode::PlanAllocation, "values " + name(i) + " (" + range(*a) + ") and " + name(j) +
                                          " (" + range(*b) + ") are live together and overlap");
    }
  }
  verify_workspaces(graph, schedule, plan, workspace_bytes);
}

}  // namespace volta
