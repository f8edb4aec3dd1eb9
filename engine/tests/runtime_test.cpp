// The runtime gateway: compile() and execute() errors (R-INPUT-MISMATCH, R-BACKEND-MISMATCH,
// R-MISSING-KERNEL, R-KERNEL-FAILURE), the Strict / Relaxed determinism contract, and
// end-to-end execution on the CPU backend.

#define BOOST_TEST_MODULE runtime_test
#include "volta/runtime/runtime.h"

#include <algorithm>
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "expect_error.h"
#include "test_util.h"
#include "volta/backends/cpu.h"
#include "volta/ir/host_memory.h"
#include "volta/ir/random.h"
#include "volta/runtime/forwarding_backend.h"
#include "volta/runtime/registry.h"

namespace volta {
namespace {

using test::expect_error;

// Picks a plan-only kernel for every node; running one fails like a kernel that rejects
// its data. Plans compile on it whichever CPU kernels exist; its contexts and memory are the
// CPU backend's.
class PlanOnlyBackend final : public ForwardingBackend {
 public:
  explicit PlanOnlyBackend(std::string name)
      : ForwardingBackend(make_backend("cpu"), std::move(name)) {}
  Capabilities capabilities() const override { return {}; }
  KernelSelection select_kernel(const Graph&, const Node& node) const override {
    return KernelChoice{"plan_only_" + std::string(op_name(node.op)), KernelDeterminism::BitExact,
                        nullptr};
  }
  void run_kernel(const KernelChoice&, const Node&, std::span<const ConstTensorView>,
                  std::span<const TensorView>, MemoryRegion, ExecutionContext&) const override {
    fail(ErrorCode::KernelFailure, "plan-only kernels reject every input");
  }
};

// Implements no op at all.
class EmptyBackend final : public ForwardingBackend {
 public:
  EmptyBackend() : ForwardingBackend(make_backend("cpu"), "empty") {}
  Capabilities capabilities() const override { return {}; }
  KernelSelection select_kernel(const Graph&, const Node&) const override {
    return KernelUnsupported{"the empty backend implements no ops"};
  }
  void run_kernel(const KernelChoice& kernel, const Node&, std::span<const ConstTensorView>,
                  std::span<const TensorView>, MemoryRegion, ExecutionContext&) const override {
    fail(ErrorCode::InvalidArgument, "the empty backend was asked to run " + kernel.variant);
  }
};

// The CPU backend, except that a full f32 ReduceSum runs "f32_reduce_sum_atomic": chunks
// of the input are summed on the pool's threads and added into the output with relaxed
// atomic float adds, in whatever order the threads finish. The rounding therefore depends
// on scheduling, and the kernel says so: KernelDeterminism::NonDeterministic.
class AtomicReduceSumBackend final : public ForwardingBackend {
 public:
  AtomicReduceSumBackend() : ForwardingBackend(make_backend("cpu"), "cpu-atomic-reduce") {}

  Capabilities capabilities() const override {
    Capabilities caps = inner().capabilities();
    caps[static_cast<size_t>(op_index(OpKind::ReduceSum))].determinism =
        KernelDeterminism::NonDeterministic;
    return caps;
  }

  KernelSelection select_kernel(const Graph& graph, const Node& node) const override {
    if (node.op == OpKind::ReduceSum && graph.value(node.inputs[0]).dtype == DType::F32 &&
        graph.value(node.outputs[0]).shape.numel() == 1) {
      return KernelChoice{"f32_reduce_sum_atomic", KernelDeterminism::NonDeterministic, this};
    }
    return inner().select_kernel(graph, node);
  }

  void run_kernel(const KernelChoice& kernel, const Node& node,
                  std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs,
                  MemoryRegion workspace, ExecutionContext& ctx) const override {
    if (kernel.impl != this) {
      inner().run_kernel(kernel, node, inputs, outputs, workspace, ctx);
      return;
    }
    const float* x = inputs[0].as<float>();
    float& total = *outputs[0].as<float>();
    total = 0.0f;
    std::atomic_ref<float> sum(total);
    constexpr int64_t kChunk = 256;
    cpu_context(ctx).pool().parallel_chunks(inputs[0].numel(), kChunk,
                                            [&](int64_t begin, int64_t end) {
                                              float partial = 0.0f;
                                              for (int64_t i = begin; i < end; ++i) partial += x[i];
                                              sum.fetch_add(partial, std::memory_order_relaxed);
                                            });
  }
};

// x[2,3] -> Relu, named "relu".
Graph relu_graph() {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{2, 3});
  g.set_outputs({g.add(OpKind::Relu, {x}, {}, "relu")});
  return g;
}

BOOST_AUTO_TEST_CASE(inputs_must_match_the_graph) {
  const PlanOnlyBackend backend("plan-only");
  const ExecutionPlan plan = compile(relu_graph(), backend, DeterminismMode::Strict);
  const std::unique_ptr<ExecutionContext> context = backend.make_context({});
  ExecutionContext& ctx = *context;
  const auto rejected = [&](std::vector<Tensor> inputs, const std::string& message) {
    expect_error([&] { execute(plan, backend, ctx, inputs); }, ErrorCode::InputMismatch, message);
  };
  rejected({}, "the graph takes 1 input, 0 given");
  rejected({Tensor(DType::F32, Shape{2, 3}), Tensor(DType::F32, Shape{2, 3})},
           "the graph takes 1 input, 2 given");
  rejected({Tensor(DType::F64, Shape{2, 3})}, "input 0 'x' expects f32[2,3], got f64[2,3]");
  rejected({Tensor(DType::F32, Shape{3, 2})}, "input 0 'x' expects f32[2,3], got f32[3,2]");
  rejected({Tensor(DType::F32, Shape{6})}, "input 0 'x' expects f32[2,3], got f32[6]");
}

BOOST_AUTO_TEST_CASE(plan_runs_only_on_its_backend) {
  const PlanOnlyBackend backend("plan-only");
  const PlanOnlyBackend other("other");
  const ExecutionPlan plan = compile(relu_graph(), backend, DeterminismMode::Strict);
  BOOST_CHECK_EQUAL(plan.backend, "plan-only");
  const std::unique_ptr<ExecutionContext> context = backend.make_context({});
  ExecutionContext& ctx = *context;
  const std::vector<Tensor> inputs = {Tensor(DType::F32, Shape{2, 3})};
  expect_error([&] { execute(plan, other, ctx, inputs); }, ErrorCode::BackendMismatch,
               "plan was compiled for backend 'plan-only', not 'other'");
}

BOOST_AUTO_TEST_CASE(kernel_failures_name_the_node) {
  const PlanOnlyBackend backend("plan-only");
  const ExecutionPlan plan = compile(relu_graph(), backend, DeterminismMode::Strict);
  const std::unique_ptr<ExecutionContext> context = backend.make_context({});
  ExecutionContext& ctx = *context;
  const std::vector<Tensor> inputs = {Tensor(DType::F32, Shape{2, 3})};
  expect_error([&] { execute(plan, backend, ctx, inputs); }, ErrorCode::KernelFailure,
               "node 'relu' (Relu) on backend 'plan-only': plan-only kernels reject every "
               "input");
}

// Lowers the host allocation limit for one test.
class HostLimit {
 public:
  explicit HostLimit(int64_t bytes) : saved_(host_allocation_limit()) {
    set_host_allocation_limit(bytes);
  }
  ~HostLimit() { set_host_allocation_limit(saved_); }
  HostLimit(const HostLimit&) = delete;
  HostLimit& operator=(const HostLimit&) = delete;

 private:
  int64_t saved_;
};

// Memory a model asks for beyond the limit (by default the machine's physical memory) is refused
// as R-OUT-OF-MEMORY naming what it was for, before anything is allocated; so is a request the
// system refuses. Never an abort or a std::bad_alloc.
BOOST_AUTO_TEST_CASE(allocations_over_the_host_limit_are_refused_with_what_they_were_for) {
  BOOST_TEST(host_allocation_limit() == physical_memory_bytes());
  BOOST_TEST(physical_memory_bytes() > 0);
  const Tensor input(DType::F32, Shape{512, 1024});  // 2 MiB, made under the default limit
  const HostLimit limit(int64_t{1} << 20);
  expect_error(
      [] {
        Tensor(DType::F32, Shape{1024, 1024});
      },
      ErrorCode::OutOfMemory,
      "a [1024,1024] f32 tensor needs 4194304 bytes (4.0 MiB), over the host allocation "
      "limit of 1048576 bytes (1.0 MiB; by default the machine's physical memory)");
  // Relu(Relu(x)): the intermediate lives in the plan's arena, which is allocated first.
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{512, 1024});
  g.set_outputs({g.add(OpKind::Relu, {g.add(OpKind::Relu, {x}, {}, "first")}, {}, "second")});
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  const ExecutionPlan plan = compile(g, *cpu, DeterminismMode::Strict);
  const std::unique_ptr<ExecutionContext> context = cpu->make_context({});
  test::expect_error_containing(
      [&] {
        execute(plan, *cpu, *context, {&input, 1});
      },
      ErrorCode::OutOfMemory, {"the plan's arena needs ", "over the host allocation limit"});
  expect_error([] { set_host_allocation_limit(0); }, ErrorCode::InvalidArgument,
               "host allocation limit must be positive, not 0");
}

#if !defined(__SANITIZE_ADDRESS__)  // ASan aborts on an impossible request instead of failing it
BOOST_AUTO_TEST_CASE(an_allocation_the_system_refuses_is_out_of_memory_too) {
  const HostLimit limit(INT64_MAX);
  expect_error(
      [] {
        Tensor(DType::U8, Shape{int64_t{1} << 47, 2});
      },
      ErrorCode::OutOfMemory,
      "a [140737488355328,2] u8 tensor needs 281474976710656 bytes (256.0 TiB); the "
      "system could not provide them");
}
#endif

BOOST_AUTO_TEST_CASE(missing_kernel_is_an_error_never_a_fallback) {
  const EmptyBackend empty;
  expect_error([&] { compile(relu_graph(), empty, DeterminismMode::Relaxed); },
               ErrorCode::MissingKernel,
               "node 'relu' (Relu) on backend 'empty' has no kernel: the empty backend "
               "implements no ops. Volta never falls back to another backend.");
  // Constant folding evaluates on the same backend, so it fails the same way.
  Graph g;
  const ValueId w = g.add_parameter("w", Tensor(DType::F32, Shape{3}));
  g.set_outputs({g.add(OpKind::Neg, {w}, {}, "folded")});
  expect_error([&] { compile(g, empty, DeterminismMode::Relaxed); }, ErrorCode::MissingKernel,
               "node 'folded' (Neg) on backend 'empty' has no kernel: the empty backend "
               "implements no ops. Volta never falls back to another backend.");
}

// x[n] -> Relu "relu" -> ReduceSum "total" (to a scalar).
Graph relu_sum_graph(int64_t n) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{n});
  const ValueId r = g.add(OpKind::Relu, {x}, {}, "relu");
  g.set_outputs({g.add(OpKind::ReduceSum, {r}, {{"keepdims", int64_t{0}}}, "total")});
  return g;
}

BOOST_AUTO_TEST_CASE(strict_mode_rejects_a_non_deterministic_kernel) {
  const AtomicReduceSumBackend backend;
  BOOST_CHECK(
      backend.capabilities()[static_cast<size_t>(op_index(OpKind::ReduceSum))].determinism ==
      KernelDeterminism::NonDeterministic);
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{8});
  g.set_outputs({g.add(OpKind::ReduceSum, {x}, {}, "total")});
  expect_error([&] { compile(g, backend, DeterminismMode::Strict); },
               ErrorCode::NonDeterministicKernel,
               "node 'total' (ReduceSum) on backend 'cpu-atomic-reduce': kernel "
               "'f32_reduce_sum_atomic' is non-deterministic, but DeterminismMode::Strict "
               "requires bit-exact kernels (compile with DeterminismMode::Relaxed to accept it)");
}

BOOST_AUTO_TEST_CASE(relaxed_mode_runs_it_and_records_the_variant) {
  constexpr int64_t n = 10000;
  const AtomicReduceSumBackend backend;
  const ExecutionPlan plan = compile(relu_sum_graph(n), backend, DeterminismMode::Relaxed);
  BOOST_CHECK(plan.mode == DeterminismMode::Relaxed);
  BOOST_REQUIRE_EQUAL(plan.steps.size(), 2u);
  const KernelChoice& reduce = plan.steps[1].kernel;
  BOOST_CHECK_EQUAL(reduce.variant, "f32_reduce_sum_atomic");
  BOOST_CHECK(reduce.determinism == KernelDeterminism::NonDeterministic);
  BOOST_CHECK(describe_plan(plan).find("kernel=f32_reduce_sum_atomic (non-deterministic)") !=
              std::string::npos);

  const Tensor x = random_tensor(DType::F32, Shape{n}, 3, -1.0, 1.0);
  double want = 0;
  for (int64_t i = 0; i < n; ++i) want += std::max(x.get_double(i), 0.0);
  const std::unique_ptr<ExecutionContext> ctx_context = backend.make_context({.threads = 4});
  ExecutionContext& ctx = *ctx_context;
  const std::vector<Tensor> out = execute(plan, backend, ctx, std::vector<Tensor>{x});
  BOOST_REQUIRE_EQUAL(out.size(), 1u);
  BOOST_CHECK_EQUAL(out[0].shape().str(), "[]");
  test::check_close(out[0], Tensor::from<float>(Shape{}, {static_cast<float>(want)}), 1e-2, 1e-4);
  const std::vector<std::string> relaxed = non_bit_exact_steps(plan);
  BOOST_REQUIRE_EQUAL(relaxed.size(), 1u);
  BOOST_CHECK_EQUAL(relaxed[0],
                    "node 'total' (ReduceSum, kernel f32_reduce_sum_atomic, non-deterministic)");
  BOOST_CHECK(describe_plan(plan).find("not bit-exact: 1 step(s)\n  node 'total'") !=
              std::string::npos);
}

// The outputs of `plan` for `inputs`, run with `threads` threads.
std::vector<Tensor> run_plan(const ExecutionPlan& plan, const Backend& backend,
                             const std::vector<Tensor>& inputs, int threads) {
  const std::unique_ptr<ExecutionContext> ctx_context = backend.make_context({.threads = threads});
  ExecutionContext& ctx = *ctx_context;
  return execute(plan, backend, ctx, inputs);
}

BOOST_AUTO_TEST_CASE(cpu_add_relu_sum_executes_bit_identically) {
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{2, 3});
  const ValueId b = g.add_parameter("b", Tensor::from<float>(Shape{3}, {0.5f, -1.0f, 2.0f}));
  const ValueId r = g.add(OpKind::Relu, {g.add(OpKind::Add, {x, b}, {}, "add")}, {}, "relu");
  g.set_outputs({r, g.add(OpKind::ReduceSum, {r}, {{"axes", std::vector<int64_t>{1}}}, "sum")});
  const ExecutionPlan plan = compile(g, *cpu, DeterminismMode::Strict);
  for (const PlannedStep& step : plan.steps) {
    BOOST_CHECK(step.kernel.determinism == KernelDeterminism::BitExact);
  }

  const std::vector<Tensor> inputs = {
      Tensor::from<float>(Shape{2, 3}, {1.0f, 2.0f, -3.0f, -1.0f, 0.5f, 0.25f})};
  const std::vector<Tensor> out = run_plan(plan, *cpu, inputs, 1);
  BOOST_REQUIRE_EQUAL(out.size(), 2u);
  // x + b = [[1.5, 1, -1], [-0.5, -0.5, 2.25]]; Relu; row sums 2.5 and 2.25 (keepdims).
  test::check_close(out[0], Tensor::from<float>(Shape{2, 3}, {1.5f, 1.0f, 0.0f, 0.0f, 0.0f, 2.25f}),
                    0, 0);
  test::check_close(out[1], Tensor::from<float>(Shape{2, 1}, {2.5f, 2.25f}), 0, 0);

  // Same plan, again and on other thread counts, one arena reused: the same bits.
  const std::unique_ptr<ExecutionContext> reused_context = cpu->make_context({.threads = 3});
  ExecutionContext& reused = *reused_context;
  for (int threads : {1, 2, 3, 4, 8}) {
    const std::vector<Tensor> again = run_plan(plan, *cpu, inputs, threads);
    const std::vector<Tensor> reused_out = execute(plan, *cpu, reused, inputs);
    for (size_t i = 0; i < out.size(); ++i) {
      BOOST_CHECK(again[i].bit_equal(out[i]));
      BOOST_CHECK(reused_out[i].bit_equal(out[i]));
    }
  }
}

BOOST_AUTO_TEST_CASE(cpu_in_place_chain_computes_through_one_buffer) {
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  constexpr int64_t n = 40000;  // several elementwise chunks
  Graph g;
  ValueId v = g.add_input("x", DType::F32, Shape{n});
  for (int i = 0; i < 6; ++i) {
    v = g.add(i % 2 == 0 ? OpKind::Neg : OpKind::Relu, {v}, {}, "step" + std::to_string(i));
  }
  g.set_outputs({v});
  const ExecutionPlan plan = compile(g, *cpu, DeterminismMode::Strict);
  BOOST_CHECK_EQUAL(plan.memory.arena_bytes, n * 4);  // every step after the first in place

  const Tensor x = random_tensor(DType::F32, Shape{n}, 11, -1.0, 1.0);
  Tensor want(DType::F32, Shape{n});
  for (int64_t i = 0; i < n; ++i) {
    double e = x.get_double(i);
    for (int s = 0; s < 6; ++s) e = s % 2 == 0 ? -e : std::max(e, 0.0);
    want.set_double(i, e);
  }
  const std::vector<Tensor> out = run_plan(plan, *cpu, {x}, 4);
  test::check_close(out[0], want, 0, 0);
}

BOOST_AUTO_TEST_CASE(cpu_outputs_may_be_inputs_folded_parameters_or_empty) {
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{0, 3});
  const ValueId p = g.add_parameter("p", Tensor::from<float>(Shape{3}, {1.0f, -2.0f, 3.0f}));
  const ValueId folded = g.add(OpKind::Neg, {p}, {}, "folded");
  g.set_outputs({x, folded, g.add(OpKind::Add, {x, folded}, {}, "empty_sum")});
  const ExecutionPlan plan = compile(g, *cpu, DeterminismMode::Strict);
  BOOST_REQUIRE_EQUAL(plan.passes.size(), 4u);  // folding, two GEMM fusions, dead code
  BOOST_CHECK(plan.passes[0].changed);          // Neg(p) folded into a parameter
  BOOST_CHECK_EQUAL(plan.steps.size(), 1u);     // only the Add runs

  const std::vector<Tensor> out = run_plan(plan, *cpu, {Tensor(DType::F32, Shape{0, 3})}, 2);
  BOOST_REQUIRE_EQUAL(out.size(), 3u);
  BOOST_CHECK_EQUAL(out[0].shape().str(), "[0,3]");
  test::check_close(out[1], Tensor::from<float>(Shape{3}, {-1.0f, 2.0f, -3.0f}), 0, 0);
  BOOST_CHECK_EQUAL(out[2].shape().str(), "[0,3]");
}

// The determinism suite's schedule variations: what they change and what they must not.
BOOST_AUTO_TEST_CASE(reverse_task_order_claims_the_last_task_first_and_reports_the_lowest_failure) {
  ThreadPool pool(1, {.reverse_task_order = true});
  std::vector<int64_t> order;
  pool.parallel_for(4, [&](int64_t i) { order.push_back(i); });
  BOOST_CHECK((order == std::vector<int64_t>{3, 2, 1, 0}));
  ThreadPool pool3(3, {.reverse_task_order = true});
  try {
    pool3.parallel_for(64, [](int64_t i) {
      if (i == 5 || i == 40) throw std::runtime_error("task " + std::to_string(i));
    });
    BOOST_ERROR("no exception");
  } catch (const std::runtime_error& e) {
    BOOST_CHECK_EQUAL(std::string(e.what()), "task 5");
  }
  try {
    pool.parallel_for(8, [](int64_t i) {
      if (i == 2 || i == 6) throw std::runtime_error("task " + std::to_string(i));
    });
    BOOST_ERROR("no exception");
  } catch (const std::runtime_error& e) {
    BOOST_CHECK_EQUAL(std::string(e.what()), "task 2");
  }
}

// Locality: a thread takes its own share from the front, then the others' from the back.
BOOST_AUTO_TEST_CASE(task_shares_hand_each_thread_its_own_range_first_then_steal_from_the_back) {
  TaskShares shares;
  shares.reset(10, 3);  // shares [0, 3), [3, 6), [6, 10)
  std::vector<int64_t> claims;
  for (int64_t c = shares.claim(1); c >= 0; c = shares.claim(1)) claims.push_back(c);
  BOOST_CHECK((claims == std::vector<int64_t>{3, 4, 5, 9, 8, 7, 6, 2, 1, 0}));

  shares.reset(10, 3);
  BOOST_CHECK_EQUAL(shares.claim(2), 6);
  BOOST_CHECK_EQUAL(shares.claim(0), 0);
  BOOST_CHECK_EQUAL(shares.claim(1), 3);
  BOOST_CHECK_EQUAL(shares.claim(2), 7);

  // Fewer tasks than threads: empty shares steal at once; every task is claimed once.
  shares.reset(2, 4);
  BOOST_CHECK_EQUAL(shares.claim(0), 0);
  BOOST_CHECK_EQUAL(shares.claim(0), 1);
  BOOST_CHECK_EQUAL(shares.claim(3), -1);

  // Any interleaving claims every task exactly once.
  std::mt19937 rng(7);
  for (int64_t n : {0, 1, 5, 64, 97}) {
    shares.reset(n, 5);
    std::vector<int> seen(static_cast<size_t>(n), 0);
    int64_t claimed = 0;
    for (int misses = 0; misses < 50;) {
      const int64_t c = shares.claim(static_cast<int>(rng() % 5));
      if (c < 0) {
        ++misses;
        continue;
      }
      BOOST_REQUIRE(c < n);
      ++seen[static_cast<size_t>(c)];
      ++claimed;
    }
    BOOST_CHECK_EQUAL(claimed, n);
    BOOST_CHECK(std::all_of(seen.begin(), seen.end(), [](int k) { return k == 1; }));
  }
}

BOOST_AUTO_TEST_CASE(chunk_scale_rescales_element_chunks_only) {
  ThreadPool pool(2, {.chunk_scale = 0.25});
  std::atomic<int> chunks{0};
  std::atomic<int64_t> covered{0};
  pool.parallel_chunks(1000, 100, [&](int64_t b, int64_t e) {
    ++chunks;
    covered += e - b;
  });
  BOOST_CHECK_EQUAL(chunks.load(), 40);  // chunks of 25
  BOOST_CHECK_EQUAL(covered.load(), 1000);
  std::atomic<int> tasks{0};
  pool.parallel_for(7, [&](int64_t) { ++tasks; });
  BOOST_CHECK_EQUAL(tasks.load(), 7);  // parallel_for tasks are never rescaled
  expect_error([] { ThreadPool bad(2, {.chunk_scale = 0}); }, ErrorCode::InvalidArgument,
               "chunk scale must be positive and finite, got 0.000000");
}

BOOST_AUTO_TEST_CASE(the_step_observer_sees_every_step_output_before_it_is_reused) {
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  const ExecutionPlan plan = compile(relu_sum_graph(100), *cpu, DeterminismMode::Strict);
  const Tensor x = random_tensor(DType::F32, Shape{100}, 3, -1.0, 1.0);
  const std::unique_ptr<ExecutionContext> ctx_context = cpu->make_context({.threads = 2});
  ExecutionContext& ctx = *ctx_context;
  std::vector<std::string> seen;
  ctx.set_step_observer([&](int index, const Node& node, const KernelChoice& kernel,
                            std::span<const TensorView> outs) {
    BOOST_REQUIRE_EQUAL(outs.size(), 1u);
    BOOST_CHECK_EQUAL(kernel.variant, plan.steps[static_cast<size_t>(index)].kernel.variant);
    seen.push_back(std::to_string(index) + ":" + node.name + ":" + outs[0].shape.str());
    if (index == 0) {  // Relu's output: negatives are 0 here, whatever later steps do
      for (int64_t i = 0; i < 100; ++i) BOOST_CHECK(outs[0].as<float>()[i] >= 0.0f);
    }
  });
  execute(plan, *cpu, ctx, std::vector<Tensor>{x});
  BOOST_REQUIRE_EQUAL(seen.size(), plan.steps.size());
  BOOST_CHECK_EQUAL(seen.back().substr(0, 2), std::to_string(plan.steps.size() - 1) + ":");
  ctx.set_step_observer({});
  execute(plan, *cpu, ctx, std::vector<Tensor>{x});
  BOOST_CHECK_EQUAL(seen.size(), plan.steps.size());  // no observer, no calls
}

}  // namespace
}  // namespace volta
