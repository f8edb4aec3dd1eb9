// Conv's backward on the CPU at a ResNet body shape, [8, 64, 56, 56] with a 3x3 kernel, plain
// and depthwise (group 64): the forward alone, forward plus backward (the training graph of
// sum(Conv(X, W) * R) with gradients for X and W), and the filter gradient alone, both as the
// backward-only ConvGradFilter that the Conv VJP rule emits and as the forward-op composition
// the rule used before it (Reshape and Transpose around one grouped Conv with strides and
// dilations swapped), so the two read as a ratio taken in one run.
//
// Counters: GFLOP/s counts the convolution multiply-adds (forward: one Conv's; forward plus
// backward: three, the forward and the two gradients); peak_bytes is the plan's arena.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "perf_support.h"
#include "volta/autograd/autograd.h"
#include "volta/plan/execution_plan.h"
#include "volta/runtime/runtime.h"

namespace volta::perf {
namespace {

using Ints = std::vector<int64_t>;

// A 3x3 Conv with pads 1 and unit strides: its output has the input's spatial dims.
struct ConvCase {
  Shape x;
  int64_t channels_out;
  int64_t group;
  Shape weight() const { return Shape{channels_out, x[1] / group, 3, 3}; }
  Shape y() const { return Shape{x[0], channels_out, x[2], x[3]}; }
  double flops() const {
    const int64_t macs_per_output = x[1] / group * 9;
    return 2.0 * static_cast<double>(y().numel()) * static_cast<double>(macs_per_output);
  }
};

const ConvCase kPlain{.x = Shape{8, 64, 56, 56}, .channels_out = 64, .group = 1};
const ConvCase kDepthwise{.x = Shape{8, 64, 56, 56}, .channels_out = 64, .group = 64};

Attributes window(const ConvCase& c) { return {{"pads", Ints{1, 1, 1, 1}}, {"group", c.group}}; }

void run_plan(benchmark::State& state, Graph graph, const std::vector<Tensor>& inputs,
              double flops) {
  const int threads = static_cast<int>(state.range(0));
  const ExecutionPlan plan = compile(std::move(graph), cpu_backend(), DeterminismMode::Strict);
  const std::unique_ptr<ExecutionContext> ctx = cpu_backend().make_context({.threads = threads});
  for (auto _ : state) {
    std::vector<Tensor> outputs = execute(plan, cpu_backend(), *ctx, inputs);
    benchmark::DoNotOptimize(outputs.data());
    benchmark::ClobberMemory();
  }
  record_flops(state, flops);
  record_plan(state, plan, threads);
}

void forward(benchmark::State& state, const ConvCase& c) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, c.x);
  const ValueId w = g.add_input("w", DType::F32, c.weight());
  g.set_outputs({g.add(OpKind::Conv, {x, w}, window(c), "conv")});
  run_plan(state, std::move(g),
           {random_tensor(DType::F32, c.x, 1), random_tensor(DType::F32, c.weight(), 2)},
           c.flops());
}

void forward_backward(benchmark::State& state, const ConvCase& c) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, c.x);
  const ValueId w = g.add_input("w", DType::F32, c.weight());
  const ValueId y = g.add(OpKind::Conv, {x, w}, window(c), "conv");
  const ValueId r = g.add_parameter("r", random_tensor(DType::F32, c.y(), 3));
  const ValueId loss = g.add(OpKind::ReduceSum, {g.add(OpKind::Mul, {y, r}, {}, "weighted")},
                             {{"keepdims", int64_t{0}}}, "loss");
  g.set_outputs({loss});
  const std::vector<ValueId> trainables = {x, w};
  TrainingGraph training = build_training_graph(g, loss, trainables);
  run_plan(state, std::move(training.graph),
           {random_tensor(DType::F32, c.x, 1), random_tensor(DType::F32, c.weight(), 2)},
           3 * c.flops());
}

// dW from X and dY as one ConvGradFilter node.
void filter_gradient(benchmark::State& state, const ConvCase& c) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, c.x);
  const ValueId dy = g.add_input("dy", DType::F32, c.y());
  Attributes attrs = window(c);
  attrs["kernel_shape"] = Ints{3, 3};
  g.set_outputs({g.add(OpKind::ConvGradFilter, {x, dy}, attrs, "dw")});
  run_plan(state, std::move(g),
           {random_tensor(DType::F32, c.x, 1), random_tensor(DType::F32, c.y(), 3)}, c.flops());
}

// dW from X and dY as the Conv VJP rule composed it before ConvGradFilter: X's channels within a
// group become the batch, (group, image) pairs the input channels, dY's planes the weights;
// windows step by the dilation, taps by the stride, and the end pad makes the output the kernel
// (these shapes read all of X, so nothing is sliced off).
void filter_gradient_composed(benchmark::State& state, const ConvCase& c) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, c.x);
  const ValueId dy = g.add_input("dy", DType::F32, c.y());
  const int64_t n = c.x[0], per_group = c.x[1] / c.group, h = c.x[2], w = c.x[3];
  const ValueId split = g.add(OpKind::Reshape, {x}, {{"shape", Ints{n, c.group, per_group, h, w}}});
  const ValueId grouped = g.add(OpKind::Transpose, {split}, {{"perm", Ints{2, 1, 0, 3, 4}}});
  const ValueId batched =
      g.add(OpKind::Reshape, {grouped}, {{"shape", Ints{per_group, c.group * n, h, w}}});
  const ValueId weights = g.add(OpKind::Transpose, {dy}, {{"perm", Ints{1, 0, 2, 3}}});
  const ValueId dw_t =
      g.add(OpKind::Conv, {batched, weights}, {{"pads", Ints{1, 1, 1, 1}}, {"group", c.group}});
  g.set_outputs({g.add(OpKind::Transpose, {dw_t}, {{"perm", Ints{1, 0, 2, 3}}}, "dw")});
  run_plan(state, std::move(g),
           {random_tensor(DType::F32, c.x, 1), random_tensor(DType::F32, c.y(), 3)}, c.flops());
}

void register_case(const char* name, void (*fn)(benchmark::State&, const ConvCase&),
                   const ConvCase& c) {
  benchmark::RegisterBenchmark(name, fn, c)
      ->Apply(at_one_and_two_threads)
      ->Unit(benchmark::kMillisecond);
}

const bool kRegistered = [] {
  register_case("conv_backward/3x3_64to64_8x56x56/forward", forward, kPlain);
  register_case("conv_backward/3x3_64to64_8x56x56/forward_backward", forward_backward, kPlain);
  register_case("conv_backward/3x3_64to64_8x56x56/filter_gradient", filter_gradient, kPlain);
  register_case("conv_backward/3x3_64to64_8x56x56/filter_gradient_composed",
                filter_gradient_composed, kPlain);
  register_case("conv_backward/depthwise3x3_64_8x56x56/forward", forward, kDepthwise);
  register_case("conv_backward/depthwise3x3_64_8x56x56/forward_backward", forward_backward,
                kDepthwise);
  register_case("conv_backward/depthwise3x3_64_8x56x56/filter_gradient", filter_gradient,
                kDepthwise);
  register_case("conv_backward/depthwise3x3_64_8x56x56/filter_gradient_composed",
                filter_gradient_composed, kDepthwise);
  return true;
}();

}  // namespace
}  // namespace volta::perf
