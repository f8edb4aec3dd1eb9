// State values: tensors the caller keeps across runs and plans, bound at execute time, never
// folded, and written in place by the node that computes a state's next value. The verifier,
// scheduler, passes, memory planner and runtime each get the rule they enforce tested here.

#define BOOST_TEST_MODULE state_test
#include <array>
#include <boost/test/unit_test.hpp>
#include <memory>
#include <string>
#include <vector>

#include "expect_error.h"
#include "test_util.h"
#include "volta/ir/printer.h"
#include "volta/ir/verify.h"
#include "volta/plan/memory_plan.h"
#include "volta/plan/schedule.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta {
namespace {

using test::expect_error;
using test::filled;

const Shape kVec{4};

// y = w * x; w <- w + lr * x (Add written first in program order, so the scheduler must move
// the Mul that reads the old w ahead of it).
struct Sgd {
  Graph graph;
  ValueId w, x, lr, y, next;
  int writer = -1, reader = -1;
};

Sgd sgd_graph() {
  Sgd s;
  Graph& g = s.graph;
  s.x = g.add_input("x", DType::F32, kVec);
  s.w = g.add_state("w", DType::F32, kVec);
  s.lr = g.add_parameter("lr", filled(DType::F32, {}, {0.5}));
  const ValueId step = g.add_node(OpKind::Mul, {s.lr, s.x}, {}, "step")[0];
  s.next = g.add_node(OpKind::Add, {s.w, step}, {}, "w_next")[0];
  s.writer = g.num_nodes() - 1;
  s.y = g.add_node(OpKind::Mul, {s.w, s.x}, {}, "y")[0];
  s.reader = g.num_nodes() - 1;
  g.set_outputs({s.y});
  g.set_state_update(s.w, s.next);
  return s;
}

std::vector<std::string> messages(const Graph& g, ErrorCode code) {
  std::vector<std::string> out;
  for (const Diagnostic& d : verify_graph(g)) {
    if (d.code == code) out.push_back(d.message);
  }
  return out;
}

std::array<Tensor*, 1> one(Tensor& state) { return {&state}; }

const Backend& cpu() {
  static const std::unique_ptr<Backend> backend = make_backend("cpu");
  return *backend;
}

BOOST_AUTO_TEST_SUITE(verifier)

BOOST_AUTO_TEST_CASE(a_well_formed_update_verifies) {
  BOOST_CHECK(verify_graph(sgd_graph().graph).empty());
}

BOOST_AUTO_TEST_CASE(each_broken_update_is_named) {
  {
    Sgd s = sgd_graph();
    s.graph.set_state_update(s.x, s.next);
    BOOST_CHECK_EQUAL(messages(s.graph, ErrorCode::VerifyStateUpdate).at(0),
                      "the update of state %0: %0 is not a state of the graph");
  }
  {
    Sgd s = sgd_graph();
    s.graph.set_state_update(s.w, s.y);
    BOOST_CHECK_EQUAL(messages(s.graph, ErrorCode::VerifyStateUpdate).at(0),
                      "the update of state %1 'w': the state is updated more than once");
  }
  {
    Sgd s = sgd_graph();
    const ValueId w2 = s.graph.add_state("w2", DType::F32, kVec);
    s.graph.set_state_update(w2, s.x);
    BOOST_CHECK_EQUAL(messages(s.graph, ErrorCode::VerifyStateUpdate).at(0),
                      "the update of state %6 'w2': its next value %0 is not a node output (a "
                      "state is updated by the node that computes it)");
  }
  {
    Sgd s = sgd_graph();
    const ValueId w2 = s.graph.add_state("w2", DType::F32, Shape{2, 2});
    s.graph.set_state_update(w2, s.y);
    BOOST_CHECK_EQUAL(messages(s.graph, ErrorCode::VerifyStateUpdate).at(0),
                      "the update of state %6 'w2' is f32[2,2], its next value %5 'y' is f32[4]");
  }
  {
    Sgd s = sgd_graph();
    s.graph.set_outputs({s.y, s.w});
    BOOST_CHECK_EQUAL(messages(s.graph, ErrorCode::VerifyStateUpdate).at(0),
                      "the update of state %1 'w': the state is also a graph output, which would "
                      "be read after the update; output its next value instead");
  }
}

BOOST_AUTO_TEST_CASE(no_read_of_a_state_may_depend_on_its_next_value) {
  Sgd s = sgd_graph();
  // z = w - w_next reads the state after it is overwritten, whatever the schedule.
  s.graph.add_node(OpKind::Sub, {s.w, s.next}, {}, "late_read");
  BOOST_CHECK_EQUAL(messages(s.graph, ErrorCode::VerifyStateUpdate).at(0),
                    "the update of state %1 'w': node 'late_read' (Sub) reads the state but "
                    "depends on its next value 'w_next', so it would read the state after it is "
                    "overwritten");
}

BOOST_AUTO_TEST_CASE(only_a_kernel_that_reads_before_it_writes_may_write_over_its_state) {
  Graph g;
  const ValueId w = g.add_state("w", DType::F32, Shape{2, 2});
  const ValueId next = g.add_node(OpKind::MatMul, {w, w}, {}, "square")[0];
  g.set_state_update(w, next);
  g.set_outputs({next});
  BOOST_CHECK_EQUAL(messages(g, ErrorCode::VerifyStateUpdate).at(0),
                    "the update of state %0 'w': node 'square' (MatMul) writes the next value "
                    "over the state it reads, which only an elementwise op or one aliasing its "
                    "input 0 may do; compute it into an intermediate and update the state with "
                    "an Identity of that");
  // The recipe the message gives verifies.
  Graph fixed;
  const ValueId w2 = fixed.add_state("w", DType::F32, Shape{2, 2});
  const ValueId square = fixed.add_node(OpKind::MatMul, {w2, w2}, {}, "square")[0];
  const ValueId copy = fixed.add_node(OpKind::Identity, {square}, {}, "copy")[0];
  fixed.set_state_update(w2, copy);
  fixed.set_outputs({copy});
  BOOST_CHECK(verify_graph(fixed).empty());
}

BOOST_AUTO_TEST_CASE(a_state_and_its_update_enter_the_text_and_the_hash) {
  const Sgd s = sgd_graph();
  const std::string text = to_text(s.graph);
  BOOST_CHECK(text.find("state %1 \"w\": f32[4]\n") != std::string::npos);
  BOOST_CHECK(text.find("update %1 <- %4\n") != std::string::npos);
  // The same nodes without the update hash differently; the same graph built again does not.
  Graph no_update;
  {
    const ValueId x = no_update.add_input("x", DType::F32, kVec);
    const ValueId w = no_update.add_state("w", DType::F32, kVec);
    const ValueId lr = no_update.add_parameter("lr", filled(DType::F32, {}, {0.5}));
    const ValueId step = no_update.add_node(OpKind::Mul, {lr, x}, {}, "step")[0];
    no_update.add_node(OpKind::Add, {w, step}, {}, "w_next");
    no_update.set_outputs({no_update.add_node(OpKind::Mul, {w, x}, {}, "y")[0]});
  }
  BOOST_CHECK_NE(ir_hash(s.graph), ir_hash(no_update));
  BOOST_CHECK_EQUAL(ir_hash(s.graph), ir_hash(sgd_graph().graph));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(schedule_and_memory)

BOOST_AUTO_TEST_CASE(every_read_of_a_state_runs_before_its_writer) {
  const Sgd s = sgd_graph();
  // Program order: step (0), w_next (1), y (2); y reads the old w, so it must run before 1.
  const Schedule schedule = schedule_graph(s.graph);
  const Schedule want{0, 2, 1};
  BOOST_CHECK_EQUAL_COLLECTIONS(schedule.begin(), schedule.end(), want.begin(), want.end());
  verify_schedule(s.graph, schedule);
  expect_error(
      [&] {
        verify_schedule(s.graph, {0, 1, 2});
      },
      ErrorCode::PlanSchedule,
      "step 2 runs node 'y', which reads a state that step 1 (node 'w_next') has "
      "already overwritten with its next value");
}

BOOST_AUTO_TEST_CASE(a_next_value_lives_in_its_state_and_takes_no_arena_space) {
  const Sgd s = sgd_graph();
  const Schedule schedule = schedule_graph(s.graph);
  MemoryPlan plan = plan_memory(s.graph, schedule);
  BOOST_CHECK(!plan.allocations[static_cast<size_t>(s.w.index)]);
  BOOST_CHECK(!plan.allocations[static_cast<size_t>(s.next.index)]);
  BOOST_CHECK(plan.allocations[static_cast<size_t>(s.y.index)]);
  verify_allocation(s.graph, schedule, plan);
  // A buffer for it would be a second copy the state never sees.
  plan.allocations[static_cast<size_t>(s.next.index)] = Allocation{0, 64, 2, 2, kNoValue};
  expect_error([&] { verify_allocation(s.graph, schedule, plan); }, ErrorCode::PlanAllocation,
               "value %4 'w_next' is a state's next value, written into the state's storage, "
               "but has a buffer");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(passes)

BOOST_AUTO_TEST_CASE(an_update_computed_from_constants_is_neither_folded_nor_dropped) {
  // w <- lr * 2 reads constants only and feeds no output: folding would freeze it and
  // dead-code elimination would drop it; both must leave it to run every time.
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, kVec);
  const ValueId w = g.add_state("w", DType::F32, kVec);
  const ValueId c = g.add_parameter("c", filled(DType::F32, kVec, {1, 2, 3, 4}));
  const ValueId two = g.add_parameter("two", filled(DType::F32, {}, {2}));
  const ValueId next = g.add_node(OpKind::Mul, {c, two}, {}, "w_next")[0];
  g.set_state_update(w, next);
  g.set_outputs({g.add_node(OpKind::Add, {w, x}, {}, "y")[0]});
  const ExecutionPlan plan = compile(g, cpu(), DeterminismMode::Strict);
  BOOST_REQUIRE_EQUAL(plan.graph.num_nodes(), 2);
  BOOST_REQUIRE_EQUAL(plan.graph.state_updates().size(), 1u);

  Tensor state = filled(DType::F32, kVec, {10, 10, 10, 10});
  const std::unique_ptr<ExecutionContext> ctx = cpu().make_context({});
  const std::vector<Tensor> in{filled(DType::F32, kVec, {1, 1, 1, 1})};
  const std::vector<Tensor> y = execute(plan, cpu(), *ctx, in, one(state));
  BOOST_CHECK_EQUAL(y[0].get_double(3), 11.0);  // the old state
  BOOST_CHECK_EQUAL(state.get_double(3), 8.0);  // the next one, written in place
}

BOOST_AUTO_TEST_CASE(gemm_fusion_leaves_a_next_state_to_the_node_that_writes_it) {
  // w <- w @ a + b would fuse into a GEMM writing over the w it reads.
  Graph g;
  const ValueId w = g.add_state("w", DType::F32, Shape{2, 2});
  const ValueId a = g.add_input("a", DType::F32, Shape{2, 2});
  const ValueId b = g.add_input("b", DType::F32, Shape{2});
  const ValueId product = g.add_node(OpKind::MatMul, {w, a}, {}, "product")[0];
  const ValueId next = g.add_node(OpKind::Add, {product, b}, {}, "w_next")[0];
  g.set_state_update(w, next);
  g.set_outputs({next});
  const ExecutionPlan plan = compile(g, cpu(), DeterminismMode::Strict);
  BOOST_CHECK_EQUAL(plan.graph.num_nodes(), 2);
  BOOST_CHECK(plan.graph.node(0).op == OpKind::MatMul);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(runtime)

BOOST_AUTO_TEST_CASE(a_run_reads_the_state_and_leaves_its_next_value_in_place) {
  const Sgd s = sgd_graph();
  const ExecutionPlan plan = compile(s.graph, cpu(), DeterminismMode::Strict);
  Tensor w = filled(DType::F32, kVec, {1, 2, 3, 4});
  const void* storage = w.data();
  const std::unique_ptr<ExecutionContext> ctx = cpu().make_context({.threads = 2});
  const std::vector<Tensor> x{filled(DType::F32, kVec, {2, 2, 2, 2})};
  for (int run = 0; run < 3; ++run) {
    const std::vector<Tensor> y = execute(plan, cpu(), *ctx, x, one(w));
    // y = w * x with this run's w; then w += 0.5 * x.
    for (int64_t i = 0; i < 4; ++i) {
      BOOST_CHECK_EQUAL(y[0].get_double(i), (static_cast<double>(i) + 1 + run) * 2);
    }
  }
  BOOST_CHECK(w.data() == storage);
  test::check_close(w, filled(DType::F32, kVec, {4, 5, 6, 7}), 0, 0);
}

BOOST_AUTO_TEST_CASE(plans_of_one_graph_share_the_state_storage) {
  // Two plans (threads and schedule differ, the storage does not): a run of either advances
  // the one state the other sees next.
  const Sgd s = sgd_graph();
  const ExecutionPlan a = compile(s.graph, cpu(), DeterminismMode::Strict);
  const ExecutionPlan b = compile(s.graph, cpu(), DeterminismMode::Strict, {.optimize = false});
  Tensor w = filled(DType::F32, kVec, {0, 0, 0, 0});
  const std::unique_ptr<ExecutionContext> ctx = cpu().make_context({});
  const std::vector<Tensor> x{filled(DType::F32, kVec, {1, 1, 1, 1})};
  execute(a, cpu(), *ctx, x, one(w));
  const std::vector<Tensor> y = execute(b, cpu(), *ctx, x, one(w));
  BOOST_CHECK_EQUAL(y[0].get_double(0), 0.5);
  BOOST_CHECK_EQUAL(w.get_double(0), 1.0);
}

BOOST_AUTO_TEST_CASE(bound_states_must_match_the_graph) {
  const Sgd s = sgd_graph();
  const ExecutionPlan plan = compile(s.graph, cpu(), DeterminismMode::Strict);
  const std::unique_ptr<ExecutionContext> ctx = cpu().make_context({});
  const std::vector<Tensor> x{filled(DType::F32, kVec, {1, 1, 1, 1})};
  expect_error([&] { execute(plan, cpu(), *ctx, x); }, ErrorCode::InputMismatch,
               "the graph has 1 state, 0 bound");
  Tensor wrong(DType::F32, Shape{2, 2});
  expect_error([&] { execute(plan, cpu(), *ctx, x, one(wrong)); }, ErrorCode::InputMismatch,
               "state 0 'w' is f32[4], bound to f32[2,2]");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace volta
