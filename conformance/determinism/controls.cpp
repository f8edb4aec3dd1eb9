#include "controls.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "volta/backends/cpu.h"
#include "volta/ir/random.h"
#include "volta/runtime/forwarding_backend.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta::conformance {
namespace {

constexpr std::string_view kControlNode = "control.sum";
constexpr int64_t kControlElements = 65536;
constexpr int64_t kTasks = 64;
constexpr std::string_view kRowSumNode = "control.rowsum";
constexpr int64_t kRowElements = 4096;

// Spreads values over eight orders of magnitude, so another summation order changes the
// rounded sum.
void spread_magnitudes(float* v, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    v[i] *= std::ldexp(1.0f, static_cast<int>((i * 7919) % 27) - 13);
  }
}

// The CPU backend from the registry; subclasses take over selected nodes.
class CpuWrapper : public ForwardingBackend {
 public:
  CpuWrapper() : ForwardingBackend(make_backend("cpu")) {}
};

class DefectiveBackend final : public CpuWrapper {
 public:
  DefectiveBackend(DefectiveSum sum, KernelDeterminism declared) : sum_(sum), declared_(declared) {}

  KernelSelection select_kernel(const Graph& graph, const Node& node) const override {
    if (node.name != kControlNode) return inner().select_kernel(graph, node);
    static constexpr std::string_view kVariants[] = {"f32_sum_completion_order",
                                                     "f32_sum_per_thread", "f32_sum_per_chunk"};
    return KernelChoice{std::string(kVariants[static_cast<int>(sum_)]), declared_, this};
  }

  void run_kernel(const KernelChoice& kernel, const Node& node,
                  std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs,
                  MemoryRegion workspace, ExecutionContext& ctx) const override {
    if (kernel.impl != this) {
      return inner().run_kernel(kernel, node, inputs, outputs, workspace, ctx);
    }
    const float* x = inputs[0].as<float>();
    const int64_t n = inputs[0].numel();
    *outputs[0].as<float>() = sum(x, n, cpu_context(ctx).pool());
  }

 private:
  static float partial(const float* x, int64_t begin, int64_t end) {
    float s = 0;
    for (int64_t i = begin; i < end; ++i) s += x[i];
    return s;
  }

  float sum(const float* x, int64_t n, ThreadPool& pool) const {
    std::mutex mutex;
    switch (sum_) {
      case DefectiveSum::CompletionOrder: {
        // The bug: the partials are added in the order their tasks finish, as a float
        // atomicAdd would add them. Which task finishes before which is thread timing: the
        // pool hands each thread its own share of the tasks, and the shares run side by side.
        float total = 0;
        pool.parallel_for(kTasks, [&](int64_t t) {
          // Each task yields its core for a moment, so that on a loaded machine the workers
          // still get tasks: the defect must show whatever else the machine is doing.
          std::this_thread::sleep_for(std::chrono::microseconds(20));
          const float p = partial(x, t * n / kTasks, (t + 1) * n / kTasks);
          const std::lock_guard lock(mutex);
          total += p;
        });
        return total;
      }
      case DefectiveSum::PerThread: {
        const int64_t parts = pool.num_threads();  // the bug: split by thread count
        std::vector<float> partials(static_cast<size_t>(parts));
        pool.parallel_for(parts, [&](int64_t t) {
          partials[static_cast<size_t>(t)] = partial(x, t * n / parts, (t + 1) * n / parts);
        });
        float total = 0;
        for (float p : partials) total += p;
        return total;
      }
      case DefectiveSum::PerChunk: {
        std::map<int64_t, float> partials;  // the bug: one leaf per scheduling chunk
        pool.parallel_chunks(n, n / kTasks, [&](int64_t begin, int64_t end) {
          const float p = partial(x, begin, end);
          const std::lock_guard lock(mutex);
          partials[begin] = p;
        });
        float total = 0;
        for (const auto& [begin, p] : partials) total += p;
        return total;
      }
    }
    return 0;
  }

  DefectiveSum sum_;
  KernelDeterminism declared_;
};

class BatchChunkedBackend final : public CpuWrapper {
 public:
  KernelSelection select_kernel(const Graph& graph, const Node& node) const override {
    if (node.name != kRowSumNode) return inner().select_kernel(graph, node);
    return KernelChoice{"f32_rowsum_batch_chunked", KernelDeterminism::BitExact, this};
  }

  void run_kernel(const KernelChoice& kernel, const Node& node,
                  std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs,
                  MemoryRegion workspace, ExecutionContext& ctx) const override {
    if (kernel.impl != this) {
      return inner().run_kernel(kernel, node, inputs, outputs, workspace, ctx);
    }
    const float* x = inputs[0].as<float>();
    const int64_t rows = inputs[0].shape[0];
    const int64_t k = inputs[0].shape[1];
    float* out = outputs[0].as<float>();
    cpu_context(ctx).pool().parallel_for(rows, [&](int64_t r) {
      const int64_t chunks = rows;  // the bug: the chunking follows the batch size
      float total = 0;
      for (int64_t c = 0; c < chunks; ++c) {
        float partial = 0;
        for (int64_t i = c * k / chunks; i < (c + 1) * k / chunks; ++i) partial += x[r * k + i];
        total += partial;
      }
      out[r] = total;
    });
  }
};

class PlantedBackend final : public CpuWrapper {
 public:
  explicit PlantedBackend(std::string node) : node_(std::move(node)) {}

  void run_kernel(const KernelChoice& kernel, const Node& node,
                  std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs,
                  MemoryRegion workspace, ExecutionContext& ctx) const override {
    inner().run_kernel(kernel, node, inputs, outputs, workspace, ctx);
    if (node.name != node_ || outputs.empty() || outputs[0].numel() == 0) return;
    auto* first = static_cast<unsigned char*>(outputs[0].data);
    first[0] ^= 1;  // the lowest bit of element 0 (little-endian)
  }

 private:
  std::string node_;
};

}  // namespace

std::unique_ptr<Backend> make_defective_backend(DefectiveSum sum, KernelDeterminism declared) {
  return std::make_unique<DefectiveBackend>(sum, declared);
}

Subject control_subject() {
  Subject s{"control:sum", "graph builder", {}, {}};
  const ValueId x = s.graph.add_input("x", DType::F32, Shape{kControlElements});
  s.graph.set_outputs({s.graph.add(OpKind::ReduceSum, {x}, {}, std::string(kControlNode))});
  Tensor data = random_tensor(DType::F32, Shape{kControlElements}, 17, -1, 1);
  spread_magnitudes(data.data_as<float>(), kControlElements);
  s.inputs.push_back(std::move(data));
  return s;
}

Subject batch_control_subject(int64_t batch) {
  Subject s{"control:rowsum", "graph builder", {}, {}};
  const ValueId x = s.graph.add_input("x", DType::F32, Shape{batch, kRowElements});
  s.graph.set_outputs({s.graph.add(OpKind::ReduceSum, {x},
                                   {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}},
                                   std::string(kRowSumNode))});
  Tensor data(DType::F32, Shape{batch, kRowElements});
  for (int64_t i = 0; i < batch; ++i) {
    Tensor row =
        random_tensor(DType::F32, Shape{kRowElements}, 19, -1, 1, static_cast<uint64_t>(i));
    spread_magnitudes(row.data_as<float>(), kRowElements);
    std::memcpy(data.data_as<float>() + i * kRowElements, row.data(), row.nbytes());
  }
  s.inputs.push_back(std::move(data));
  return s;
}

std::unique_ptr<Backend> make_batch_chunked_backend() {
  return std::make_unique<BatchChunkedBackend>();
}

std::unique_ptr<Backend> make_planted_backend(std::string node) {
  return std::make_unique<PlantedBackend>(std::move(node));
}

void address_dependent_pass(Graph& graph) {
  std::vector<Node>& nodes = graph.mutable_nodes();
  if (nodes.empty()) return;
  nodes[0].name += "@" + std::to_string(reinterpret_cast<uintptr_t>(nodes.data()));
}

std::string_view optimizer_dependent_suffix() {
#ifdef __OPTIMIZE__
  return "opt";
#else
  return "noopt";
#endif
}

void optimizer_dependent_pass(Graph& graph) {
  std::vector<Node>& nodes = graph.mutable_nodes();
  if (nodes.empty()) return;
  // The last node: it produces an output, so no later pass fuses or folds the name away.
  nodes.back().name += "." + std::string(optimizer_dependent_suffix());
}

Subject fresh_process_control_subject(std::string_view name) {
  if (name != kWorkerFlipsOutputSubject && name != kWorkerRenamesNodeSubject) {
    fail(ErrorCode::InvalidArgument, "'" + std::string(name) +
                                         "' is not a fresh-process control subject (" +
                                         std::string(kWorkerFlipsOutputSubject) + ", " +
                                         std::string(kWorkerRenamesNodeSubject) + ")");
  }
  Subject s = control_subject();
  s.name = name;
  return s;
}

std::optional<WorkerControl> worker_control(std::string_view name) {
  if (name == kWorkerFlipsOutputSubject) {
    return WorkerControl{fresh_process_control_subject(name),
                         make_planted_backend(std::string(kControlNode))};
  }
  if (name == kWorkerRenamesNodeSubject) {
    WorkerControl planted{fresh_process_control_subject(name), make_backend("cpu")};
    for (Node& node : planted.subject.graph.mutable_nodes()) {
      if (node.name == kControlNode) node.name += ".worker";
    }
    return planted;
  }
  return std::nullopt;
}

}  // namespace volta::conformance
