// Whole-plan benchmarks of the built-in models of engine/model (volta/model/builtin_models.h: the
// soak-size transformer block, the MLP and the CNN the determinism suite runs, with their own
// inputs) and one-node Conv plans at the shapes real CNNs use.
// Each compiles its graph once through the single truth path (passes on, Strict) and times
// runtime::execute on the CPU backend, so graph passes such as GEMM epilogue fusion count.
//
// Counters: GFLOP/s counts the multiply-adds of the GEMMs and convolutions only (2 per MAC;
// elementwise work is not counted), GB/s the bytes of the inputs and outputs of one run,
// peak_bytes the plan's arena; the label is the plan's kernel variants.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "perf_support.h"
#include "subjects.h"
#include "volta/model/builtin_models.h"
#include "volta/plan/execution_plan.h"
#include "volta/runtime/runtime.h"

namespace volta::perf {
namespace {

double io_bytes(const Graph& graph, std::span<const Tensor> inputs) {
  double bytes = 0;
  for (const Tensor& t : inputs) bytes += static_cast<double>(t.nbytes());
  for (ValueId v : graph.outputs()) {
    const Value& value = graph.value(v);
    bytes += static_cast<double>(value.shape.numel() * dtype_size(value.dtype));
  }
  return bytes;
}

// Times one compiled graph; `flops` is 0 when not counted.
void run_plan(benchmark::State& state, Graph graph, const std::vector<Tensor>& inputs, double flops,
              int threads) {
  const ExecutionPlan plan = compile(std::move(graph), cpu_backend(), DeterminismMode::Strict);
  const std::unique_ptr<ExecutionContext> ctx_context =
      cpu_backend().make_context({.threads = threads});
  ExecutionContext& ctx = *ctx_context;
  for (auto _ : state) {
    std::vector<Tensor> outputs = execute(plan, cpu_backend(), ctx, inputs);
    benchmark::DoNotOptimize(outputs.data());
    benchmark::ClobberMemory();
  }
  if (flops > 0) record_flops(state, flops);
  record_bytes(state, io_bytes(plan.graph, inputs));
  record_plan(state, plan, threads);
}

// ---- Transformer block -------------------------------------------------------------------

const BuiltInModel& built_in(std::string_view name) { return *find_built_in_model(name); }

// The model "transformer-block-large" (kTransformerBlockLarge) at the batch asked for.
void transformer_block(benchmark::State& state) {
  TransformerBlockConfig config = kTransformerBlockLarge;
  config.batch = state.range(0);
  const int threads = static_cast<int>(state.range(1));
  const BuiltInModel& model = built_in("transformer-block-large");
  run_plan(state, model.graph(config.batch), {model.input(config.batch)},
           transformer_block_flops(config), threads);
}

BENCHMARK(transformer_block)
    ->Name("plan/transformer_block_s128_d256")
    ->ArgNames({"batch", "threads"})
    ->ArgsProduct({{1, 4}, {1, 2}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// ---- The MLP and CNN, at the batch the determinism suite runs them -----------------------

void builtin_model(benchmark::State& state, const std::string& name) {
  const int threads = static_cast<int>(state.range(0));
  const BuiltInModel& model = built_in(name);
  run_plan(state, model.graph(model.default_batch), {model.input(model.default_batch)}, 0.0,
           threads);
}

BENCHMARK_CAPTURE(builtin_model, mlp, std::string("mlp"))
    ->Name("plan/mlp")
    ->Apply(at_one_and_two_threads)
    ->Unit(benchmark::kMicrosecond);

BENCHMARK_CAPTURE(builtin_model, cnn, std::string("cnn"))
    ->Name("plan/cnn")
    ->Apply(at_one_and_two_threads)
    ->Unit(benchmark::kMillisecond);

// ---- Per-step overhead ------------------------------------------------------------------

// A chain of 100 Neg steps on one f32 element, passes off: what the runtime spends per step
// (dispatch, views, the thread pool's decision) beside the kernel's one negation. time_per_step
// is the run's time over its 100 steps.
void step_overhead(benchmark::State& state) {
  constexpr int kSteps = 100;
  const int threads = static_cast<int>(state.range(0));
  Graph graph;
  ValueId v = graph.add_input("x", DType::F32, Shape{1});
  for (int i = 0; i < kSteps; ++i) {
    v = graph.add_node(OpKind::Neg, {v}, {}, "neg" + std::to_string(i)).front();
  }
  graph.set_outputs({v});
  const ExecutionPlan plan =
      compile(std::move(graph), cpu_backend(), DeterminismMode::Strict, {.optimize = false});
  const std::unique_ptr<ExecutionContext> context =
      cpu_backend().make_context({.threads = threads});
  const std::vector<Tensor> inputs = {Tensor(DType::F32, Shape{1})};
  for (auto _ : state) {
    std::vector<Tensor> outputs = execute(plan, cpu_backend(), *context, inputs);
    benchmark::DoNotOptimize(outputs.data());
    benchmark::ClobberMemory();
  }
  state.counters["time_per_step"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kSteps,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  record_plan(state, plan, threads);
}

BENCHMARK(step_overhead)
    ->Name("plan/step_overhead/100_steps")
    ->Apply(at_one_and_two_threads)
    ->Unit(benchmark::kMicrosecond);

// ---- Conv --------------------------------------------------------------------------------

struct ConvShape {
  Shape x = {};       // [N, C, H, W]
  Shape weight = {};  // [M, C / group, kH, kW]
  int64_t stride = 1;
  int64_t pad = 0;
  int64_t group = 1;
};

void conv(benchmark::State& state, const ConvShape& s) {
  const int threads = static_cast<int>(state.range(0));
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, s.x);
  const ValueId w = g.add_parameter("w", random_tensor(DType::F32, s.weight, 2));
  const ValueId b = g.add_parameter("b", random_tensor(DType::F32, Shape{s.weight[0]}, 3));
  const ValueId y = g.add(OpKind::Conv, {x, w, b},
                          {{"strides", std::vector<int64_t>{s.stride, s.stride}},
                           {"pads", std::vector<int64_t>{s.pad, s.pad, s.pad, s.pad}},
                           {"group", s.group}},
                          "conv");
  g.set_outputs({y});
  const Shape& out = g.value(y).shape;
  const double macs = static_cast<double>(out.numel()) *
                      static_cast<double>(s.weight[1] * s.weight[2] * s.weight[3]);
  run_plan(state, std::move(g), {random_tensor(DType::F32, s.x, 1)}, 2.0 * macs, threads);
}

void register_conv(const char* name, const ConvShape& shape) {
  benchmark::RegisterBenchmark(name, conv, shape)
      ->Apply(at_one_and_two_threads)
      ->Unit(benchmark::kMillisecond);
}

// ResNet's 3x3 body conv, its 7x7 stride-2 stem, a MobileNet depthwise 3x3 and a 1x1 expansion.
const bool kConvRegistered = [] {
  register_conv("conv/3x3_64to64_56x56",
                {.x = Shape{1, 64, 56, 56}, .weight = Shape{64, 64, 3, 3}, .pad = 1});
  register_conv("conv/7x7s2_3to64_224x224",
                {.x = Shape{1, 3, 224, 224}, .weight = Shape{64, 3, 7, 7}, .stride = 2, .pad = 3});
  register_conv("conv/depthwise3x3_64_56x56",
                {.x = Shape{1, 64, 56, 56}, .weight = Shape{64, 1, 3, 3}, .pad = 1, .group = 64});
  register_conv("conv/1x1_64to256_56x56",
                {.x = Shape{1, 64, 56, 56}, .weight = Shape{256, 64, 1, 1}});
  return true;
}();

}  // namespace
}  // namespace volta::perf
