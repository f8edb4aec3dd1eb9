// Memory-bound CPU kernels: softmax, LayerNormalization, elementwise ops and reductions, on
// f32 tensors from L2-resident (256 KiB) to DRAM (64 MiB) sizes, 1 and 2 threads.
//
// Each benchmark is one ONNX node compiled for the CPU backend like any model (Strict, no
// passes, so the node itself runs) and timed through the backend's run_kernel with the kernel
// the plan chose, on inputs and outputs allocated once: the time is the kernel's alone, not
// execute()'s copy of the outputs into fresh tensors. The label is the plan's kernel variant.
// GB/s counts the bytes the kernel must read and write once (every input and output), so it
// can be set against stream_copy / stream_triad (memory_benchmark.cpp).

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "perf_support.h"
#include "volta/ir/graph.h"
#include "volta/runtime/runtime.h"

namespace volta::perf {
namespace {

// One node: its op, attributes and f32 input shapes.
struct NodeCase {
  std::string name;  // stable: it keys the baselines
  OpKind op = OpKind::Add;
  std::vector<Shape> inputs;
  Attributes attrs;
  std::optional<double> second_value = {};  // the second input filled with it (Pow's exponent)
  bool causal = false;  // the first input as masked attention scores (causal_scores)
};

// Random inputs are shared between benchmarks of the same shape: building 64 MiB of them
// costs more than the kernel does.
const Tensor& cached_input(const Shape& shape, uint32_t seed) {
  static std::map<std::pair<std::string, uint32_t>, Tensor> cache;
  const auto key = std::make_pair(shape.str(), seed);
  auto it = cache.find(key);
  if (it == cache.end()) {
    it = cache.emplace(key, random_tensor(DType::F32, shape, seed)).first;
  }
  return it->second;
}

// The compiled node with its buffers bound once.
class PlannedNode {
 public:
  PlannedNode(const NodeCase& c, int threads)
      : context_(cpu_backend().make_context({.threads = threads})) {
    Graph graph;
    std::vector<ValueId> ids;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      ids.push_back(graph.add_input("in" + std::to_string(i), DType::F32, c.inputs[i]));
    }
    graph.set_outputs(graph.add_node(c.op, ids, c.attrs, "op"));
    plan_ = compile(std::move(graph), cpu_backend(), DeterminismMode::Strict, {.optimize = false});
    if (plan_.steps.size() != 1) {
      fail(ErrorCode::InvalidArgument,
           c.name + ": expected one step, the plan has " + std::to_string(plan_.steps.size()));
    }
    const Node& node = plan_.graph.node(plan_.steps[0].node);
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      const Tensor& random = cached_input(c.inputs[i], static_cast<uint32_t>(i + 1));
      const Tensor& t =
          i == 1 && c.second_value
              ? filled_.emplace_back(filled(c.inputs[i], *c.second_value))
              : (i == 0 && c.causal ? filled_.emplace_back(causal_scores(random)) : random);
      inputs_.emplace_back(t.dtype(), t.shape(), t.data());
      bytes_ += static_cast<double>(t.nbytes());
    }
    for (ValueId v : node.outputs) {
      const Value& value = plan_.graph.value(v);
      Tensor& t = outputs_.emplace_back(value.dtype, value.shape);
      if (t.nbytes() != 0) std::memset(t.data(), 0, t.nbytes());  // fault the pages in now
      output_views_.push_back(TensorView{t.dtype(), t.shape(), t.data()});
      bytes_ += static_cast<double>(t.nbytes());
    }
  }

  void run() {
    const PlannedStep& step = plan_.steps[0];
    cpu_backend().run_kernel(step.kernel, plan_.graph.node(step.node), inputs_, output_views_,
                             workspace(), *context_);
  }
  std::string variant() const { return kernel_variants(plan_); }
  double bytes() const { return bytes_; }
  const void* output() const { return outputs_[0].data(); }

 private:
  // The step's planned scratch, as the runtime would hand it (the arena holds nothing else).
  MemoryRegion workspace() {
    const int64_t bytes = plan_.steps[0].kernel.workspace_bytes;
    if (bytes == 0) return {};
    return {cpu_backend().arena(*context_, bytes).data, bytes, MemorySpace::Host};
  }

  static Tensor filled(const Shape& shape, double value) {
    Tensor t(DType::F32, shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.set_double(i, value);
    return t;
  }

  // Scores plus a causal mask of 0 / -1e9, as a decoder's attention adds it before its
  // softmax: row r of a block of T rows keeps its first r % T + 1 columns.
  static Tensor causal_scores(const Tensor& scores) {
    const int64_t t = scores.shape()[scores.shape().rank() - 1];
    Tensor masked(DType::F32, scores.shape());
    const float* from = scores.data_as<float>();
    float* to = masked.data_as<float>();
    for (int64_t i = 0; i < scores.numel(); ++i) {
      const int64_t row = i / t;
      to[i] = i % t > row % t ? from[i] + -1e9f : from[i];
    }
    return masked;
  }

  std::unique_ptr<ExecutionContext> context_;
  ExecutionPlan plan_;
  std::deque<Tensor> filled_;
  std::vector<ConstTensorView> inputs_;
  std::vector<Tensor> outputs_;
  std::vector<TensorView> output_views_;
  double bytes_ = 0;
};

void run_node(benchmark::State& state, const NodeCase& c) {
  const int threads = static_cast<int>(state.range(0));
  PlannedNode node(c, threads);
  for (auto _ : state) {
    node.run();
    benchmark::DoNotOptimize(node.output());
    benchmark::ClobberMemory();
  }
  record_bytes(state, node.bytes());
  record_variant(state, node.variant(), threads);
}

// Element counts of the main operand: 256 KiB (L2), 4 MiB (L3), 64 MiB (DRAM) of f32.
constexpr int64_t kSizes[] = {int64_t{1} << 16, int64_t{1} << 20, int64_t{1} << 24};

std::vector<NodeCase> cases() {
  std::vector<NodeCase> all;
  const auto add = [&](std::string name, OpKind op, std::vector<Shape> inputs,
                       Attributes attrs = {}) {
    all.push_back(NodeCase{std::move(name), op, std::move(inputs), std::move(attrs)});
  };
  for (const int64_t elements : kSizes) {
    // Rows of 1024: softmax over a vocabulary-like axis, and the elementwise and reduction
    // operands. Attention scores: rows of 128 (batch * heads * T rows of T).
    const int64_t rows = elements / 1024;
    const Shape matrix{rows, 1024};
    const std::string m = "/" + std::to_string(rows) + "x1024";

    add("softmax" + m, OpKind::Softmax, {matrix}, {{"axis", int64_t{-1}}});
    add("softmax/" + std::to_string(elements / 128) + "x128", OpKind::Softmax,
        {Shape{elements / 128, 128}}, {{"axis", int64_t{-1}}});
    // The same scores causally masked: about half of a row's exponentials are of -1e9 (0).
    all.push_back(NodeCase{"softmax_causal/" + std::to_string(elements / 128) + "x128",
                           OpKind::Softmax,
                           {Shape{elements / 128, 128}},
                           {{"axis", int64_t{-1}}},
                           {},
                           true});
    // LayerNormalization over d_model 768, with Scale and B.
    const int64_t tokens = elements / 1024;
    add("layernorm/" + std::to_string(tokens) + "x768", OpKind::LayerNormalization,
        {Shape{tokens, 768}, Shape{768}, Shape{768}}, {{"axis", int64_t{-1}}, {"epsilon", 1e-5}});

    add("add" + m, OpKind::Add, {matrix, matrix});
    add("add_bias" + m, OpKind::Add, {matrix, Shape{1024}});
    add("mul" + m, OpKind::Mul, {matrix, matrix});
    add("relu" + m, OpKind::Relu, {matrix});
    add("gelu" + m, OpKind::Gelu, {matrix});
    add("exp" + m, OpKind::Exp, {matrix});
    // x^2 as PyTorch exports a variance (its decomposed LayerNorm): Pow with a scalar 2.
    all.push_back(NodeCase{"pow_square" + m, OpKind::Pow, {matrix, Shape{}}, {}, 2.0});
    add("sigmoid" + m, OpKind::Sigmoid, {matrix});
    add("tanh" + m, OpKind::Tanh, {matrix});
    add("cast_f64" + m, OpKind::Cast, {matrix}, {{"to", std::string("f64")}});

    for (const auto& [op, op_name] :
         {std::pair{OpKind::ReduceSum, "reduce_sum"}, std::pair{OpKind::ReduceMean, "reduce_mean"},
          std::pair{OpKind::ReduceMax, "reduce_max"}}) {
      add(std::string(op_name) + "_last" + m, op, {matrix},
          {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}});
      add(std::string(op_name) + "_axis0" + m, op, {matrix},
          {{"axes", std::vector<int64_t>{0}}, {"keepdims", int64_t{0}}});
    }
  }
  return all;
}

const bool kRegistered = add_registrar([](const Options& /*options*/) {
  for (NodeCase& c : cases()) {
    const std::string name = "kernel/" + c.name;
    benchmark::RegisterBenchmark(
        name.c_str(), [c = std::move(c)](benchmark::State& state) { run_node(state, c); })
        ->Apply(at_one_and_two_threads)
        ->Unit(benchmark::kMicrosecond);
  }
});

}  // namespace
}  // namespace volta::perf
