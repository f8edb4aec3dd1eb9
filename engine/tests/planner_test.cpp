// The planner: schedule_graph / verify_schedule and plan_memory / verify_allocation, checked
// as properties over random valid DAGs, by hand-made broken plans, and for plan-hash
// stability across two processes (this binary re-runs itself with kPrintHashesFlag).

#define BOOST_TEST_MODULE planner_test
#define BOOST_TEST_NO_MAIN
#include <rapidcheck.h>

#include <algorithm>
#include <array>
#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <numeric>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "expect_error.h"
#include "volta/ir/printer.h"
#include "volta/ir/random.h"
#include "volta/ir/verify.h"
#include "volta/model/builtin_models.h"
#include "volta/plan/execution_plan.h"
#include "volta/plan/memory_plan.h"
#include "volta/plan/schedule.h"
#include "volta/runtime/forwarding_backend.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta {
namespace {

using test::expect_error;

constexpr std::string_view kPrintHashesFlag = "--print-plan-hashes";
constexpr int64_t kAlignment = 64;

// ---------------------------------------------------------------------------------------
// Random DAGs. A recipe is plain data (so RapidCheck can shrink it); build_dag turns it into
// a valid graph through the checked builder. Operand picks count back from the newest value,
// so small numbers (what shrinking moves toward) make chains and large ones fan-out.

struct DagStep {
  int kind = 0;     // the op family, see DagBuilder::apply
  int operand = 0;  // the first operand
  int other = 0;    // the second operand of binary ops
  int variant = 0;  // the op within the family, or the new parameter's shape
};

struct DagRecipe {
  std::vector<int> input_shapes;  // indices into kShapes
  std::vector<DagStep> steps;
  std::vector<int> outputs;  // picks among node outputs
};

std::ostream& operator<<(std::ostream& os, const DagStep& s) {
  return os << "{" << s.kind << "," << s.operand << "," << s.other << "," << s.variant << "}";
}

// Shapes that broadcast with each other in various ways, an empty one and a scalar.
const std::array<Shape, 5> kShapes = {Shape{4, 8}, Shape{1, 8}, Shape{8}, Shape{0, 8}, Shape{}};
constexpr int kStepKinds = 6;

class DagBuilder {
 public:
  explicit DagBuilder(const DagRecipe& recipe) {
    for (size_t i = 0; i < recipe.input_shapes.size(); ++i) {
      pool_.push_back(
          graph_.add_input("x" + std::to_string(i), DType::F32, shape_at(recipe.input_shapes[i])));
    }
    for (const DagStep& step : recipe.steps) apply(step);
    if (node_outputs_.empty()) {
      graph_.set_outputs({pool_.front()});
      return;
    }
    for (int pick : recipe.outputs) graph_.add_output(newest(node_outputs_, pick));
  }

  Graph take() { return std::move(graph_); }

 private:
  static const Shape& shape_at(int index) {
    return kShapes[static_cast<size_t>(index) % kShapes.size()];
  }
  static ValueId newest(const std::vector<ValueId>& values, int pick) {
    return values[values.size() - 1 - static_cast<size_t>(pick) % values.size()];
  }

  void apply(const DagStep& step) {
    const ValueId x = newest(pool_, step.operand);
    const int rank = graph_.value(x).shape.rank();
    switch (step.kind % kStepKinds) {
      case 0: {  // elementwise unary: may run in place
        constexpr std::array kOps = {OpKind::Relu, OpKind::Neg,  OpKind::Exp,
                                     OpKind::Abs,  OpKind::Tanh, OpKind::Sigmoid};
        add({kOps[static_cast<size_t>(step.variant) % kOps.size()], {}, {x}, {}, {}});
        break;
      }
      case 1: {  // broadcasting binary: may run in place when input 0 has the output's shape
        constexpr std::array kOps = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Max};
        add({kOps[static_cast<size_t>(step.variant) % kOps.size()],
             {},
             {x, broadcast_partner(x, step.other)},
             {},
             {}});
        break;
      }
      case 2: {  // views: may share input 0's buffer (allowzero: a 0 in shape means 0 elements)
        const int64_t n = graph_.value(x).shape.numel();
        const std::array<Node, 4> views = {
            Node{OpKind::Reshape,
                 {},
                 {x},
                 {},
                 {{"shape", std::vector<int64_t>{n}}, {"allowzero", int64_t{1}}}},
            Node{OpKind::Identity, {}, {x}, {}, {}},
            Node{OpKind::Unsqueeze, {}, {x}, {}, {{"axes", std::vector<int64_t>{0}}}},
            Node{OpKind::Flatten, {}, {x}, {}, {{"axis", int64_t{0}}}}};
        add(views[static_cast<size_t>(step.variant) % views.size()]);
        break;
      }
      case 3: {  // ops that need a fresh buffer
        if (step.variant % 3 == 0) {
          add({OpKind::Transpose, {}, {x}, {}, {}});
        } else if (step.variant % 3 == 1 && rank >= 1) {
          add({OpKind::Softmax, {}, {x}, {}, {}});
        } else {
          add({OpKind::ReduceSum, {}, {x}, {}, {{"keepdims", int64_t{step.variant % 2}}}});
        }
        break;
      }
      case 4: {  // two outputs (Split) or two inputs (Concat)
        if (rank == 0) {
          add({OpKind::Unsqueeze, {}, {x}, {}, {{"axes", std::vector<int64_t>{0}}}});
        } else if (graph_.value(x).shape[0] % 2 == 0) {
          add({OpKind::Split, {}, {x}, {}, {}}, 2);
        } else {
          add({OpKind::Concat, {}, {x, x}, {}, {{"axis", int64_t{0}}}});
        }
        break;
      }
      default: {  // a parameter, read by later steps or dead
        const Shape& shape = shape_at(step.variant);
        pool_.push_back(graph_.add_parameter(
            "p" + std::to_string(graph_.num_values()),
            random_tensor(DType::F32, shape, 7, -1.0, 1.0, static_cast<uint64_t>(pool_.size()))));
        break;
      }
    }
  }

  // The value `pick` steps back from the newest whose shape broadcasts with x's (x itself
  // when there is none).
  ValueId broadcast_partner(ValueId x, int pick) const {
    const size_t n = pool_.size();
    for (size_t tried = 0; tried < n; ++tried) {
      const ValueId y = newest(pool_, pick + static_cast<int>(tried));
      if (broadcast_shapes(graph_.value(x).shape, graph_.value(y).shape)) return y;
    }
    return x;
  }

  void add(const Node& node, int num_outputs = 1) {
    for (ValueId v : graph_.add_node(node.op, node.inputs, node.attrs, {}, num_outputs)) {
      pool_.push_back(v);
      node_outputs_.push_back(v);
    }
  }

  Graph graph_;
  std::vector<ValueId> pool_;  // every value a step may read, oldest first
  std::vector<ValueId> node_outputs_;
};

Graph build_dag(const DagRecipe& recipe) { return DagBuilder(recipe).take(); }

rc::Gen<DagStep> dag_steps() {
  return rc::gen::build<DagStep>(rc::gen::set(&DagStep::kind, rc::gen::inRange(0, kStepKinds)),
                                 rc::gen::set(&DagStep::operand, rc::gen::inRange(0, 8)),
                                 rc::gen::set(&DagStep::other, rc::gen::inRange(0, 8)),
                                 rc::gen::set(&DagStep::variant, rc::gen::inRange(0, 12)));
}

DagRecipe generate_recipe() {
  DagRecipe r;
  const auto num_inputs = static_cast<size_t>(*rc::gen::inRange(1, 4));
  r.input_shapes = *rc::gen::container<std::vector<int>>(
      num_inputs, rc::gen::inRange(0, static_cast<int>(kShapes.size())));
  r.steps = *rc::gen::container<std::vector<DagStep>>(dag_steps());
  const auto num_outputs = static_cast<size_t>(*rc::gen::inRange(1, 4));
  r.outputs = *rc::gen::container<std::vector<int>>(num_outputs, rc::gen::inRange(0, 16));
  return r;
}

// A recipe drawn from a counter-based generator: the same in every process.
DagRecipe fixed_recipe(uint64_t seed, int num_steps) {
  uint64_t counter = 0;
  const auto draw = [&](int bound) {
    return static_cast<int>(counter_random_u64(seed, 0, counter++) % static_cast<uint64_t>(bound));
  };
  DagRecipe r;
  r.input_shapes = {0, draw(static_cast<int>(kShapes.size()))};
  for (int i = 0; i < num_steps; ++i) {
    r.steps.push_back({draw(kStepKinds), draw(8), draw(8), draw(12)});
  }
  r.outputs = {0, draw(16), draw(16)};
  return r;
}

// ---------------------------------------------------------------------------------------
// Independent expectations: lifetimes and aliasing rules recomputed here from the graph and
// schedule, not read back from the planner.

struct Lifetime {
  int first = 0;  // step that writes the value
  int last = 0;   // last step that reads it, or the final step for graph outputs
};

std::vector<std::optional<Lifetime>> lifetimes(const Graph& g, const Schedule& schedule) {
  std::vector<std::optional<Lifetime>> life(static_cast<size_t>(g.num_values()));
  const int final_step = static_cast<int>(schedule.size()) - 1;
  for (int step = 0; step <= final_step; ++step) {
    const Node& node = g.node(schedule[static_cast<size_t>(step)]);
    for (ValueId v : node.inputs) {
      if (v.valid() && life[static_cast<size_t>(v.index)]) {
        life[static_cast<size_t>(v.index)]->last = step;
      }
    }
    for (ValueId v : node.outputs) life[static_cast<size_t>(v.index)] = Lifetime{step, step};
  }
  for (ValueId v : g.outputs()) {
    if (life[static_cast<size_t>(v.index)]) life[static_cast<size_t>(v.index)]->last = final_step;
  }
  return life;
}

int64_t value_bytes(const Value& v) {
  return v.shape.numel() * static_cast<int64_t>(dtype_size(v.dtype));
}

// Every property a memory plan must have, checked without trusting the planner's records.
void check_memory_plan(const Graph& g, const Schedule& schedule, const MemoryPlan& plan) {
  const auto life = lifetimes(g, schedule);
  RC_ASSERT(plan.allocations.size() == static_cast<size_t>(g.num_values()));
  RC_ASSERT(plan.peak_live_bytes <= plan.arena_bytes);
  for (int i = 0; i < g.num_values(); ++i) {
    const auto& a = plan.allocations[static_cast<size_t>(i)];
    const auto& l = life[static_cast<size_t>(i)];
    // Exactly the values written by a step live in the arena; inputs and parameters do not.
    RC_ASSERT(a.has_value() == l.has_value());
    if (!a) continue;
    RC_ASSERT(a->first_step == l->first);
    RC_ASSERT(a->last_step == l->last);
    RC_ASSERT(a->offset % kAlignment == 0);
    RC_ASSERT(a->size >= value_bytes(g.value(ValueId{i})));
    RC_ASSERT(a->offset + a->size <= plan.arena_bytes);
    if (a->shares_with.valid()) {
      // Aliasing only along a declared Aliasing op, onto its input 0, which dies right there.
      const Node& producer = g.node(schedule[static_cast<size_t>(a->first_step)]);
      RC_ASSERT(op_schema(producer.op).aliasing != Aliasing::None);
      RC_ASSERT(producer.inputs.at(0) == a->shares_with);
      const auto& shared = life[static_cast<size_t>(a->shares_with.index)];
      RC_ASSERT(shared.has_value());
      RC_ASSERT(shared->last == a->first_step);
      RC_ASSERT(plan.allocations[static_cast<size_t>(a->shares_with.index)]->offset == a->offset);
    }
  }
  for (int i = 0; i < g.num_values(); ++i) {
    const auto& a = plan.allocations[static_cast<size_t>(i)];
    if (!a || a->size == 0) continue;
    for (int j = i + 1; j < g.num_values(); ++j) {
      const auto& b = plan.allocations[static_cast<size_t>(j)];
      if (!b || b->size == 0) continue;
      const bool live_together = a->first_step <= b->last_step && b->first_step <= a->last_step;
      const bool bytes_overlap = a->offset < b->offset + b->size && b->offset < a->offset + a->size;
      const bool alias = b->shares_with.index == i || a->shares_with.index == j;
      RC_ASSERT(!(live_together && bytes_overlap) || alias);
    }
  }
}

struct PlanHashes {
  uint64_t schedule = 0;
  uint64_t allocation = 0;
  friend bool operator==(const PlanHashes&, const PlanHashes&) = default;
};

PlanHashes plan_hashes(const Graph& g) {
  const Schedule schedule = schedule_graph(g);
  return {hash_schedule(schedule), hash_memory_plan(plan_memory(g, schedule, kAlignment))};
}

BOOST_AUTO_TEST_CASE(random_dags_plan_and_verify) {
  const bool ok = rc::check("schedule and memory plan of random DAGs verify", [] {
    const DagRecipe recipe = generate_recipe();
    const Graph g = build_dag(recipe);
    RC_ASSERT(verify_graph(g).empty());

    const Schedule schedule = schedule_graph(g);
    verify_schedule(g, schedule);
    // Graphs in program order schedule in node order: ties go to the lower index.
    Schedule in_order(static_cast<size_t>(g.num_nodes()));
    std::iota(in_order.begin(), in_order.end(), 0);
    RC_ASSERT(schedule == in_order);

    const MemoryPlan plan = plan_memory(g, schedule, kAlignment);
    verify_allocation(g, schedule, plan);
    check_memory_plan(g, schedule, plan);
    RC_CLASSIFY(std::any_of(plan.allocations.begin(), plan.allocations.end(),
                            [](const auto& a) { return a && a->shares_with.valid(); }),
                "with aliased buffers");

    // Planning is a pure function of the graph: again, and on a copy, the same hashes.
    RC_ASSERT(plan_hashes(g) == plan_hashes(g));
    // Planning a copy is the point here, so the copy is deliberate.
    const Graph copy = g;  // NOLINT(performance-unnecessary-copy-initialization)
    RC_ASSERT(plan_hashes(copy) == plan_hashes(g));
  });
  BOOST_CHECK(ok);
}

// x -> a = Transpose(x) -> b = Transpose(a) -> c = Transpose(b), all f32[4,4] (64 bytes),
// returning c. Transpose declares no aliasing, so every value needs its own buffer.
struct TransposeChain {
  Graph graph;
  ValueId a, b, c;
  Schedule schedule;
  MemoryPlan plan;

  TransposeChain() {
    const ValueId x = graph.add_input("x", DType::F32, Shape{4, 4});
    a = graph.add(OpKind::Transpose, {x}, {}, "a");
    b = graph.add(OpKind::Transpose, {a}, {}, "b");
    c = graph.add(OpKind::Transpose, {b}, {}, "c");
    graph.set_outputs({c});
    schedule = schedule_graph(graph);
    plan = plan_memory(graph, schedule, kAlignment);
  }
  Allocation& at(ValueId v) { return *plan.allocations[static_cast<size_t>(v.index)]; }
};

BOOST_AUTO_TEST_CASE(transpose_chain_plan_by_hand) {
  TransposeChain t;
  BOOST_CHECK(t.schedule == (Schedule{0, 1, 2}));
  // a lives over steps [0,1], b over [1,2], c over [2,2]: c can reuse a's bytes.
  BOOST_CHECK_EQUAL(t.at(t.a).offset, 0);
  BOOST_CHECK_EQUAL(t.at(t.b).offset, 64);
  BOOST_CHECK_EQUAL(t.at(t.c).offset, 0);
  BOOST_CHECK_EQUAL(t.at(t.a).last_step, 1);
  BOOST_CHECK_EQUAL(t.at(t.c).last_step, 2);
  BOOST_CHECK_EQUAL(t.plan.arena_bytes, 128);
  BOOST_CHECK_EQUAL(t.plan.peak_live_bytes, 128);
  BOOST_CHECK_NO_THROW(verify_allocation(t.graph, t.schedule, t.plan));
}

BOOST_AUTO_TEST_CASE(bad_schedules_are_rejected) {
  const TransposeChain t;
  const auto rejected = [&](Schedule s, const std::string& message) {
    expect_error([&] { verify_schedule(t.graph, s); }, ErrorCode::PlanSchedule, message);
  };
  rejected({1, 0, 2}, "step 0 runs node 'b' (Transpose) before its input %1 'a' is defined");
  rejected({0, 2, 1}, "step 1 runs node 'c' (Transpose) before its input %2 'b' is defined");
  rejected({0, 1}, "schedule has 2 steps for 3 nodes");
  rejected({0, 1, 1}, "step 2 runs node 1 'b' a second time");
  rejected({0, 1, 5}, "step 2 names node 5, but the graph has 3 nodes");
  BOOST_CHECK_NO_THROW(verify_schedule(t.graph, t.schedule));
}

BOOST_AUTO_TEST_CASE(overlapping_allocations_are_rejected) {
  const auto rejected = [](TransposeChain& t, const std::string& message) {
    expect_error([&] { verify_allocation(t.graph, t.schedule, t.plan); }, ErrorCode::PlanAllocation,
                 message);
  };
  {
    TransposeChain t;
    t.at(t.b).offset = 0;
    rejected(t,
             "values %1 'a' (bytes [0, 64) steps [0, 1]) and %2 'b' (bytes [0, 64) steps [1, 2]) "
             "are live together and overlap");
  }
  {  // Claiming aliasing that Transpose does not declare does not excuse the overlap.
    TransposeChain t;
    t.at(t.b).offset = 0;
    t.at(t.b).shares_with = t.a;
    rejected(t, "value %2 'b' claims the buffer of %1 'a', but Transpose declares no aliasing");
  }
  {  // Lifetimes misrecorded to hide the overlap are recomputed from the schedule.
    TransposeChain t;
    t.at(t.b).offset = 0;
    t.at(t.a).last_step = 0;
    rejected(t,
             "value %1 'a' is recorded live over steps [0, 0], but the schedule writes it at step "
             "0 and reads it until step 1");
  }
  {
    TransposeChain t;
    t.at(t.b).offset = 32;
    rejected(t, "value %2 'b' at offset 32 is not aligned to 64");
  }
  {
    TransposeChain t;
    t.at(t.b).size = 32;
    rejected(t, "value %2 'b' needs 64 bytes, has bytes [64, 96) steps [1, 2] in an arena of 128");
  }
  {
    TransposeChain t;
    t.plan.arena_bytes = 64;
    rejected(t, "value %2 'b' needs 64 bytes, has bytes [64, 128) steps [1, 2] in an arena of 64");
  }
  {
    TransposeChain t;
    t.plan.allocations[static_cast<size_t>(t.b.index)].reset();
    rejected(t, "value %2 'b' is produced but has no buffer");
  }
  {  // Graph inputs are bound in place: an arena buffer for one would hide the caller's data.
    TransposeChain t;
    t.plan.allocations[0] = Allocation{128, 64, 0, 0, kNoValue};
    t.plan.arena_bytes = 192;
    rejected(t,
             "value %0 'x' is written by no step (inputs and parameters are bound in place), but "
             "has a buffer");
  }
}

// Kernel workspace is planned like a value live at its step alone: placed apart from every
// value live then, counted in the peak, checked by the verifier.
BOOST_AUTO_TEST_CASE(workspaces_are_placed_counted_and_verified) {
  TransposeChain t;  // a [0,1], b [1,2], c [2,2], 64 bytes each
  const std::vector<int64_t> workspace = {0, 100, 0};
  const MemoryPlan plan = plan_memory(t.graph, t.schedule, kAlignment, workspace);
  BOOST_CHECK_NO_THROW(verify_allocation(t.graph, t.schedule, plan, workspace));
  BOOST_REQUIRE_EQUAL(plan.workspaces.size(), 3u);
  BOOST_CHECK(!plan.workspaces[0] && !plan.workspaces[2]);
  const Allocation& w = *plan.workspaces[1];
  BOOST_CHECK_EQUAL(w.size, 128);  // 100 bytes, aligned
  BOOST_CHECK_EQUAL(w.first_step, 1);
  BOOST_CHECK_EQUAL(w.last_step, 1);
  // Placed first (the largest), so a and b move after it: 128 + 64 + 64 live at step 1.
  BOOST_CHECK_EQUAL(plan.peak_live_bytes, 256);
  BOOST_CHECK_EQUAL(plan.arena_bytes, 256);

  const auto rejected = [&](MemoryPlan broken, std::span<const int64_t> sizes,
                            const std::string& message) {
    expect_error([&] { verify_allocation(t.graph, t.schedule, broken, sizes); },
                 ErrorCode::PlanAllocation, message);
  };
  MemoryPlan overlapping = plan;
  overlapping.workspaces[1]->offset = overlapping.allocations[t.a.index]->offset;
  rejected(overlapping, workspace,
           "the workspace of step 1 (bytes [128, 256) steps [1, 1]) overlaps value %1 'a' (bytes "
           "[128, 192) steps [0, 1]), live at that step");
  MemoryPlan small = plan;
  small.workspaces[1]->size = 64;
  const std::vector<int64_t> more = {0, 100, 0};
  rejected(small, more,
           "the workspace of step 1 needs 100 bytes, has bytes [0, 64) steps [1, 1] in an arena "
           "of 256 aligned to 64");
  MemoryPlan missing = plan;
  missing.workspaces[1].reset();
  rejected(missing, workspace, "the workspace of step 1 (100 bytes declared) has no buffer");
  // A plan without scratch is planned and hashed exactly as before workspaces existed.
  const MemoryPlan none = plan_memory(t.graph, t.schedule, kAlignment);
  const MemoryPlan zeros = plan_memory(t.graph, t.schedule, kAlignment, std::vector<int64_t>(3, 0));
  BOOST_CHECK_EQUAL(hash_memory_plan(none), hash_memory_plan(zeros));
  BOOST_CHECK_EQUAL(none.arena_bytes, 128);
  expect_error([&] { plan_memory(t.graph, t.schedule, kAlignment, std::vector<int64_t>{1}); },
               ErrorCode::PlanAllocation, "workspace sizes cover 1 steps, the schedule has 3");
}

// A chain of `length` ops of one kind on f32[32,32] (4096 bytes per value).
Graph unary_chain(OpKind op, int length) {
  Graph g;
  ValueId v = g.add_input("x", DType::F32, Shape{32, 32});
  for (int i = 0; i < length; ++i) v = g.add(op, {v}, {}, "step" + std::to_string(i));
  g.set_outputs({v});
  return g;
}

BOOST_AUTO_TEST_CASE(buffers_are_reused_along_a_chain) {
  constexpr int64_t kValueBytes = 32 * 32 * 4;
  {  // No aliasing: two buffers ping-pong, instead of ten.
    const Graph g = unary_chain(OpKind::Transpose, 10);
    const Schedule s = schedule_graph(g);
    const MemoryPlan plan = plan_memory(g, s, kAlignment);
    verify_allocation(g, s, plan);
    BOOST_CHECK_EQUAL(plan.arena_bytes, 2 * kValueBytes);
    BOOST_CHECK_EQUAL(plan.peak_live_bytes, 2 * kValueBytes);
  }
  {  // In place: after the first op reads the (bound) input, one buffer serves them all.
    const Graph g = unary_chain(OpKind::Relu, 10);
    const Schedule s = schedule_graph(g);
    const MemoryPlan plan = plan_memory(g, s, kAlignment);
    verify_allocation(g, s, plan);
    BOOST_CHECK_EQUAL(plan.arena_bytes, kValueBytes);
    BOOST_CHECK_EQUAL(plan.peak_live_bytes, kValueBytes);
    for (int i = 1; i < 10; ++i) {
      const Allocation& a = *plan.allocations[static_cast<size_t>(g.node(i).outputs[0].index)];
      BOOST_CHECK(a.shares_with == g.node(i - 1).outputs[0]);
      BOOST_CHECK_EQUAL(a.first_step, i);
      BOOST_CHECK_EQUAL(a.last_step, i == 9 ? 9 : i + 1);
    }
    const Allocation& root = *plan.allocations[static_cast<size_t>(g.node(0).outputs[0].index)];
    BOOST_CHECK(!root.shares_with.valid());
    BOOST_CHECK_EQUAL(root.last_step, 1);
  }
}

BOOST_AUTO_TEST_CASE(aliasing_never_takes_a_buffer_still_needed) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{16});
  const ValueId a = g.add(OpKind::Relu, {x}, {}, "a");
  const ValueId b = g.add(OpKind::Relu, {a}, {}, "b");    // a is read again below: no alias
  const ValueId c = g.add(OpKind::Add, {a, b}, {}, "c");  // a dies here: c may take it
  const ValueId d = g.add(OpKind::Neg, {c}, {}, "d");     // c is a graph output: no alias
  g.set_outputs({c, d});
  const Schedule s = schedule_graph(g);
  const MemoryPlan plan = plan_memory(g, s, kAlignment);
  verify_allocation(g, s, plan);
  const auto shares = [&](ValueId v) {
    return plan.allocations[static_cast<size_t>(v.index)]->shares_with;
  };
  BOOST_CHECK(!shares(b).valid());
  BOOST_CHECK(shares(c) == a);
  BOOST_CHECK(!shares(d).valid());
}

// ---------------------------------------------------------------------------------------
// Plan-hash stability across processes.

// Chooses a plan-only kernel for every node and runs none: compile() then builds complete
// plans, plan hash included, whichever CPU kernels exist.
class PlanOnlyBackend final : public ForwardingBackend {
 public:
  PlanOnlyBackend() : ForwardingBackend(make_backend("cpu"), "plan-only") {}
  Capabilities capabilities() const override { return {}; }
  KernelSelection select_kernel(const Graph&, const Node& node) const override {
    return KernelChoice{"noop_" + std::string(op_name(node.op)), KernelDeterminism::BitExact,
                        nullptr};
  }
  void run_kernel(const KernelChoice&, const Node& node, std::span<const ConstTensorView>,
                  std::span<const TensorView>, MemoryRegion, ExecutionContext&) const override {
    fail(ErrorCode::KernelFailure, "the plan-only backend cannot run " + node.name);
  }
};

// One line per fixed graph: its IR, schedule, allocation and plan hashes.
std::string plan_hash_report() {
  const PlanOnlyBackend backend;
  std::string report;
  const auto add = [&](std::string_view name, const Graph& g) {
    const ExecutionPlan plan = compile(g, backend, DeterminismMode::Strict, {.optimize = false});
    report += std::string(name) + " ir=" + hash_hex(plan.ir_hash) +
              " schedule=" + hash_hex(plan.schedule_hash) +
              " allocation=" + hash_hex(plan.allocation_hash) +
              " plan=" + hash_hex(plan.plan_hash) + "\n";
  };
  add("transformer_block", transformer_block_graph({}));
  add("random_dag", build_dag(fixed_recipe(20240611, 60)));
  return report;
}

// Runs this test binary again with kPrintHashesFlag and returns what it printed.
std::string report_from_another_process() {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  BOOST_REQUIRE(self.find('\'') == std::string::npos);
  const std::string command = "'" + self + "' " + std::string(kPrintHashesFlag);
  FILE* pipe = popen(command.c_str(), "r");
  BOOST_REQUIRE(pipe != nullptr);
  std::string out;
  std::array<char, 256> buf{};
  while (const size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  BOOST_REQUIRE_EQUAL(pclose(pipe), 0);
  return out;
}

BOOST_AUTO_TEST_CASE(plan_hashes_are_stable_across_processes) {
  const std::string here = plan_hash_report();
  BOOST_CHECK_EQUAL(here, plan_hash_report());
  BOOST_CHECK_EQUAL(report_from_another_process(), here);
  // The fixed random DAG is not trivial: the comparison covers real planning work.
  const Graph dag = build_dag(fixed_recipe(20240611, 60));
  BOOST_CHECK_GE(dag.num_nodes(), 30);
  BOOST_TEST_MESSAGE("plan hashes:\n" << here);
}

}  // namespace
}  // namespace volta

int main(int argc, char* argv[]) {
  if (argc == 2 && std::string_view(argv[1]) == volta::kPrintHashesFlag) {
    std::cout << volta::plan_hash_report();
    return 0;
  }
  return boost::unit_test::unit_test_main(&init_unit_test, argc, argv);
}
