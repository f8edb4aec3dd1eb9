// The CUDA backend's benchmarks (issue #18's targets), registered only where device 0 runs
// the backend's kernels, so a machine without one lists none of them:
//
// - cuda/copy_peak: a device-to-device cudaMemcpyAsync of 256 MiB, the device's copy
//   bandwidth that the memory-bound kernels are set against (GB/s counts bytes read plus
//   bytes written, as the kernels' do);
// - cuda/kernel/*: memory-bound ops on 2^26-element f32 operands (256 MiB), one ONNX node
//   compiled for the CUDA backend and launched through run_kernel on device buffers made
//   once, kKernelLaunches launches per iteration and one synchronisation, so the time is the
//   kernels' and not execute()'s host copies;
// - cuda/gemm/f32/size:S (S^3, 4096: cuBLAS is the peer), cuda/gemm/f64/size:S and
//   cuda/gemm/f32_tiny/NAME (the tiny transformer's products): MatMul the same way (GFLOP/s);
// - cuda/lm/infer: the tiny transformer's inference (batch 16) as `volta generate` runs it,
//   tokens in and logits out through host memory.
// A node without a CUDA kernel is skipped with the compiler's R-MISSING-KERNEL message, never
// run elsewhere.

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "perf_support.h"
#include "volta/backends/cuda.h"
#include "volta/error.h"
#include "volta/ir/graph.h"
#include "volta/model/language_model.h"
#include "volta/model/transformer_lm.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta::perf {
namespace {

constexpr int kKernelLaunches = 4;
constexpr int64_t kElements = int64_t{1} << 26;  // 256 MiB of f32

const Backend& cuda_backend() {
  static const std::unique_ptr<Backend> kBackend = make_backend(kCudaBackend);
  return *kBackend;
}

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    fail(ErrorCode::DeviceFailure, std::string(what) + " failed: " + cudaGetErrorString(status));
  }
}

void copy_peak(benchmark::State& state) {
  constexpr auto bytes = static_cast<size_t>(kElements) * sizeof(float);
  void* from = nullptr;
  void* to = nullptr;
  check(cudaMalloc(&from, bytes), "cudaMalloc");
  check(cudaMalloc(&to, bytes), "cudaMalloc");
  check(cudaMemset(from, 0x3c, bytes), "cudaMemset");
  for (auto _ : state) {
    for (int i = 0; i < kKernelLaunches; ++i) {
      check(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, nullptr), "cudaMemcpy");
    }
    check(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize");
  }
  cudaFree(from);
  cudaFree(to);
  record_bytes(state, 2.0 * static_cast<double>(bytes) * kKernelLaunches);
  record_variant(state, "cudaMemcpyAsync_d2d", 1);
}

struct NodeCase {
  std::string name;  // stable: it keys the baselines
  OpKind op = OpKind::Add;
  std::vector<Shape> inputs;
  Attributes attrs;
  DType dtype = DType::F32;  // of every input
  double flops = 0;          // per launch: a compute-bound case, judged by GFLOP/s; 0: by GB/s
};

// One node compiled for the CUDA backend, its inputs uploaded and its outputs and workspace
// carved from the context's arena once.
class DeviceNode {
 public:
  explicit DeviceNode(const NodeCase& c) : context_(cuda_backend().make_context({})) {
    Graph graph;
    std::vector<ValueId> ids;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      ids.push_back(graph.add_input("in" + std::to_string(i), c.dtype, c.inputs[i]));
    }
    graph.set_outputs(graph.add_node(c.op, ids, c.attrs, "op"));
    plan_ = compile(std::move(graph), cuda_backend(), DeterminismMode::Strict, {.optimize = false});
    const Node& node = plan_.graph.node(plan_.steps.at(0).node);
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      const Tensor host = random_tensor(c.dtype, c.inputs[i], static_cast<uint32_t>(i + 1));
      inputs_.push_back(cuda_backend().import_tensor(*context_, host));
      bytes_ += static_cast<double>(host.nbytes());
    }
    int64_t arena_bytes = plan_.steps[0].kernel.workspace_bytes;
    for (ValueId v : node.outputs) arena_bytes += align(nbytes(plan_.graph.value(v)));
    const MemoryRegion arena = cuda_backend().arena(*context_, arena_bytes);
    std::byte* next = arena.data;
    for (ValueId v : node.outputs) {
      const Value& value = plan_.graph.value(v);
      outputs_.push_back(TensorView{value.dtype, value.shape, next, MemorySpace::Device});
      bytes_ += static_cast<double>(nbytes(value));
      next += align(nbytes(value));
    }
    workspace_ = {next, plan_.steps[0].kernel.workspace_bytes, MemorySpace::Device};
    cuda_backend().synchronize(*context_);
  }

  void run() {
    const PlannedStep& step = plan_.steps[0];
    for (int i = 0; i < kKernelLaunches; ++i) {
      cuda_backend().run_kernel(step.kernel, plan_.graph.node(step.node), inputs_, outputs_,
                                workspace_, *context_);
    }
    cuda_backend().synchronize(*context_);
  }
  std::string variant() const { return kernel_variants(plan_); }
  double bytes() const { return bytes_; }

 private:
  static constexpr int64_t kAlignment = 256;
  static int64_t align(int64_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }
  static int64_t nbytes(const Value& v) {
    return v.shape.numel() * static_cast<int64_t>(dtype_size(v.dtype));
  }

  std::unique_ptr<ExecutionContext> context_;
  ExecutionPlan plan_;
  std::vector<ConstTensorView> inputs_;
  std::vector<TensorView> outputs_;
  MemoryRegion workspace_;
  double bytes_ = 0;
};

void run_node(benchmark::State& state, const NodeCase& c) {
  std::optional<DeviceNode> node;
  try {
    node.emplace(c);
  } catch (const VoltaError& e) {
    state.SkipWithError(e.what());
    return;
  }
  for (auto _ : state) node->run();
  if (c.flops > 0) {
    record_flops(state, c.flops * kKernelLaunches);
  } else {
    record_bytes(state, node->bytes() * kKernelLaunches);
  }
  record_variant(state, node->variant(), 1);
}

std::vector<NodeCase> cases() {
  const Shape matrix{kElements / 1024, 1024};
  const int64_t tokens = kElements / 1024;
  std::vector<NodeCase> all = {
      {"kernel/add", OpKind::Add, {matrix, matrix}, {}},
      {"kernel/add_bias", OpKind::Add, {matrix, Shape{1024}}, {}},
      {"kernel/relu", OpKind::Relu, {matrix}, {}},
      {"kernel/exp", OpKind::Exp, {matrix}, {}},
      {"kernel/gelu", OpKind::Gelu, {matrix}, {}},
      {"kernel/softmax", OpKind::Softmax, {matrix}, {{"axis", int64_t{-1}}}},
      {"kernel/layernorm",
       OpKind::LayerNormalization,
       {Shape{tokens, 768}, Shape{768}, Shape{768}},
       {{"axis", int64_t{-1}}, {"epsilon", 1e-5}}},
      {"kernel/reduce_sum_last",
       OpKind::ReduceSum,
       {matrix},
       {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}}},
  };
  // MatMul [batch, m, k] x [batch, k, n], 2 batch m n k flops a launch.
  const auto gemm = [&](std::string name, DType dtype, int64_t batch, int64_t m, int64_t n,
                        int64_t k) {
    const double flops = 2.0 * static_cast<double>(batch * m * n * k);
    all.push_back({"gemm/" + std::move(name),
                   OpKind::MatMul,
                   {Shape{batch, m, k}, Shape{batch, k, n}},
                   {},
                   dtype,
                   flops});
  };
  for (const int64_t size : {256, 1024, 2048, 4096}) {
    gemm("f32/size:" + std::to_string(size), DType::F32, 1, size, size, size);
  }
  for (const int64_t size : {1024, 2048}) {
    gemm("f64/size:" + std::to_string(size), DType::F64, 1, size, size, size);
  }
  // The tiny transformer's products: batch 16 x seq 32 = 512 tokens, d_model 64, FFN 256,
  // vocabulary 256, and the attention scores of 16 x 4 heads, [32,16] x [16,32].
  constexpr int64_t kTokens = 16 * 32, kModel = 64, kFfn = 256, kVocab = 256;
  gemm("f32_tiny/qkv", DType::F32, 1, kTokens, 3 * kModel, kModel);
  gemm("f32_tiny/out", DType::F32, 1, kTokens, kModel, kModel);
  gemm("f32_tiny/up", DType::F32, 1, kTokens, kFfn, kModel);
  gemm("f32_tiny/down", DType::F32, 1, kTokens, kModel, kFfn);
  gemm("f32_tiny/logits", DType::F32, 1, kTokens, kVocab, kModel);
  gemm("f32_tiny/scores", DType::F32, 16 * 4, 32, 32, 16);
  return all;
}

// The tiny transformer's forward, batch 16, tokens uploaded and logits read back per run.
void lm_infer(benchmark::State& state) {
  const model::TrainedModel trained{
      .config = model::kTinyTransformer,
      .parameters = model::initial_parameters(model::kTinyTransformer)};
  const model::TransformerConfig& c = trained.config;
  std::optional<model::LanguageModel> lm;
  try {
    lm.emplace(trained, c.batch, 1, cuda_backend());
  } catch (const VoltaError& e) {
    state.SkipWithError(e.what());
    return;
  }
  Tensor tokens(DType::I64, Shape{c.batch, c.seq});
  for (int64_t i = 0; i < tokens.numel(); ++i) tokens.data_as<int64_t>()[i] = (i * 7) % c.vocab;
  for (auto _ : state) {
    Tensor logits = lm->logits(tokens);
    benchmark::DoNotOptimize(logits.data());
  }
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(c.batch * c.seq),
                                                  benchmark::Counter::kIsIterationInvariantRate);
  record_plan(state, lm->plan(), 1);
}

const bool kRegistered = add_registrar([](const Options& /*options*/) {
  if (!cuda_report().unavailable.empty()) return;  // no device here: nothing to time
  benchmark::RegisterBenchmark("cuda/copy_peak", copy_peak)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  for (NodeCase& c : cases()) {
    const std::string name = "cuda/" + c.name;
    benchmark::RegisterBenchmark(
        name.c_str(), [c = std::move(c)](benchmark::State& state) { run_node(state, c); })
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::RegisterBenchmark("cuda/lm/infer", lm_infer)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
});

}  // namespace
}  // namespace volta::perf
