#include "volta/plan/memory_plan.h"

#include <algorithm>

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

// The value whose buffer `b` took, following chains of aliasing (x -> relu -> reshape).
ValueId buffer_root(const MemoryPlan& plan, ValueId v) {
  while (plan.allocations[static_cast<size_t>(v.index)]->shares_with.valid()) {
    v = plan.allocations[static_cast<size_t>(v.index)]->shares_with;
  }
  return v;
}

}  // namespace

MemoryPlan plan_memory(const Graph& graph, const Schedule& schedule, int64_t alignment) {
  MemoryPlan plan;
  plan.alignment = alignment;
  plan.allocations.resize(static_cast<size_t>(graph.num_values()));
  const int last = static_cast<int>(schedule.size()) - 1;

  // Lifetimes: written at the producing step, read until the last consuming step.
  for (int step = 0; step <= last; ++step) {
    const Node& node = graph.node(schedule[static_cast<size_t>(step)]);
    for (ValueId v : node.outputs) {
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
        node.outputs.size() != 1 || !node.inputs[0].valid()) {
      continue;
    }
    const ValueId in = node.inputs[0];
    const ValueId out = node.outputs[0];
    auto& ain = plan.allocations[static_cast<size_t>(in.index)];
    auto& aout = plan.allocations[static_cast<size_t>(out.index)];
    if (ain && ain->last_step == step && !is_output[static_cast<size_t>(in.index)] &&
        ain->size == aout->size && graph.value(in).dtype == graph.value(out).dtype &&
        graph.value(in).shape.numel() == graph.value(out).shape.numel() && ain->size > 0) {
      aout->shares_with = in;
    }
  }

  // Place buffers: largest first (ties: lower id), lowest offset free for their lifetime.
  // An aliasing chain is placed once, at its root, spanning the whole chain's lifetime.
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
  std::stable_sort(roots.begin(), roots.end(), [&](int x, int y) {
    return plan.allocations[static_cast<size_t>(x)]->size >
           plan.allocations[static_cast<size_t>(y)]->size;
  });
  std::vector<const Allocation*> placed;
  for (int r : roots) {
    Allocation& a = *plan.allocations[static_cast<size_t>(r)];
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
  // Aliases inherit their root's offset; a root's lifetime was widened above for placement,
  // restore each value's own lifetime for verification and reporting.
  for (int i = 0; i < graph.num_values(); ++i) {
    auto& a = plan.allocations[static_cast<size_t>(i)];
    if (a && a->shares_with.valid()) {
      a->offset = plan.allocations[static_cast<size_t>(buffer_root(plan, ValueId{i}).index)]->offset;
    }
  }

  for (int step = 0; step <= last; ++step) {
    int64_t live = 0;
    for (int r : roots) {
      const Allocation& a = *plan.allocations[static_cast<size_t>(r)];
      if (a.first_step <= step && step <= a.last_step) live += a.size;
    }
    plan.peak_live_bytes = std::max(plan.peak_live_bytes, live);
  }
  return plan;
}

void verify_allocation(const Graph& graph, const Schedule& schedule, const MemoryPlan& plan) {
  auto name = [&](int i) {
    return "%" + std::to_string(i) + " '" + graph.value(ValueId{i}).name + "'";
  };
  auto range = [](const Allocation& a) {
    return "bytes [" + std::to_string(a.offset) + ", " + std::to_string(a.offset + a.size) +
           ") steps [" + std::to_string(a.first_step) + ", " + std::to_string(a.last_step) + "]";
  };
  if (static_cast<int>(plan.allocations.size()) != graph.num_values()) {
    fail(ErrorCode::PlanAllocation, "memory plan covers " + std::to_string(plan.allocations.size()) +
                                        " values, the graph has " + std::to_string(graph.num_values()));
  }
  std::vector<char> produced(static_cast<size_t>(graph.num_values()), 0);
  for (int node : schedule) {
    for (ValueId v : graph.node(node).outputs) produced[static_cast<size_t>(v.index)] = 1;
  }
  for (int i = 0; i < graph.num_values(); ++i) {
    const auto& a = plan.allocations[static_cast<size_t>(i)];
    if (produced[static_cast<size_t>(i)] && !a) {
      fail(ErrorCode::PlanAllocation, "value " + name(i) + " is produced but has no buffer");
    }
    if (!a) continue;
    const int64_t need = value_bytes(graph.value(ValueId{i}));
    if (a->offset % plan.alignment != 0 || a->offset < 0) {
      fail(ErrorCode::PlanAllocation, "value " + name(i) + " at offset " + std::to_string(a->offset) +
                                          " is not aligned to " + std::to_string(plan.alignment));
    }
    if (a->size < need || a->offset + a->size > plan.arena_bytes) {
      fail(ErrorCode::PlanAllocation, "value " + name(i) + " needs " + std::to_string(need) +
                                          " bytes, has " + range(*a) + " in an arena of " +
                                          std::to_string(plan.arena_bytes));
    }
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
}

}  // namespace volta
