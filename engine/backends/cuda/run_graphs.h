#pragma once
// Internal to the CUDA backend: a run's kernel launches, kept until the run synchronises and
// then replayed as one CUDA graph. On a small model the launches cost more than the kernels
// (a few microseconds each, a few dozen per run); a graph is one launch. The first run of a
// launch sequence captures it; a later run with the same sequence (the same nodes, kernels,
// attributes, shapes and device addresses: the same plan in the same context, its arena, input
// slots and resident weights unchanged) replays the instantiated graph. Any difference captures
// anew; a few graphs are kept, most recently used first.
//
// Steps that cannot wait for the end of the run launch at once, after everything kept before
// them: a run with a step observer (it reads each step's outputs as the step ends), and a step
// whose kernel reads a check word back to the host mid-run (cuda_kernel.h's exchanges_with_host),
// which a capture cannot do. What follows such a step is kept and captured again.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "cuda_kernel.h"

namespace volta::cuda {

struct DeferredLaunch {
  const CudaKernel* kernel = nullptr;
  const Node* node = nullptr;
  std::vector<ConstTensorView> inputs;
  std::vector<TensorView> outputs;
  MemoryRegion workspace;
  CudaContextImpl* context = nullptr;
};

class RunGraphs {
 public:
  RunGraphs() = default;
  ~RunGraphs();
  RunGraphs(const RunGraphs&) = delete;
  RunGraphs& operator=(const RunGraphs&) = delete;

  // Drops launches an interrupted run left (a new run starts).
  void discard() { pending_.clear(); }
  void defer(DeferredLaunch launch) { pending_.push_back(std::move(launch)); }
  // The kept launches, one by one on `stream`.
  void launch_eagerly(cudaStream_t stream);
  // The kept launches as one graph on `stream`: a cached one's replay, or a new capture.
  void launch(cudaStream_t stream);
  // Destroys every instantiated graph (before the stream they ran on goes).
  void clear();

  int64_t captures() const { return captures_; }
  int64_t replays() const { return replays_; }

 private:
  struct Captured {
    std::vector<DeferredLaunch> launches;
    std::vector<Attributes> attributes;  // each node's, as captured
    cudaGraphExec_t exec = nullptr;
  };
  // How many captured sequences a context keeps (a graph holds device resources).
  static constexpr size_t kMaxGraphs = 8;

  bool matches(const Captured& c) const;
  void capture(cudaStream_t stream);

  std::vector<DeferredLaunch> pending_;
  std::vector<Captured> cache_;  // most recently used first
  int64_t captures_ = 0;
  int64_t replays_ = 0;
};

}  // namespace volta::cuda
