#pragma once
// Internal to the CUDA backend: the context's device memory and stream.
//
// Memory is allocated only when a run needs more than the last one: the arena grows by one
// cudaMalloc, each input and state of a run has a staging slot (the i-th import of a run
// reuses the i-th slot, grown when too small), and parameters (weights) are uploaded once and
// stay resident, so a context that runs the same plan again allocates and uploads nothing but
// its inputs. A run ends at synchronize(): its slots are then free for the next run's
// copies (the backend contract keeps imported views valid until the next run only).

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "run_graphs.h"
#include "volta/backends/cuda.h"

namespace volta::cuda {

// One cudaMalloc'd region (never managed memory), freed with the object.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(int64_t bytes);  // throws VoltaError(DeviceFailure) when out of memory
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  std::byte* data() const { return data_; }
  int64_t bytes() const { return bytes_; }

 private:
  std::byte* data_ = nullptr;
  int64_t bytes_ = 0;
};

class CudaContextImpl final : public CudaContext {
 public:
  // Uses device `device.ordinal`, which discovery found usable.
  CudaContextImpl(const ContextOptions& options, CudaDeviceInfo device);
  ~CudaContextImpl() override;

  const CudaDeviceInfo& device() const override { return device_; }
  const CudaTransferCounters& transfers() const override { return transfers_; }
  int64_t device_bytes() const override;
  int64_t graph_captures() const override { return graphs_.captures(); }
  int64_t graph_replays() const override { return graphs_.replays(); }

  cudaStream_t stream() const { return stream_; }
  // The run's kernel launches, replayed as a CUDA graph at synchronize() (run_graphs.h).
  RunGraphs& graphs() { return graphs_; }
  // The arena, at least `bytes` long (grown by one cudaMalloc when shorter). The runtime asks
  // for it before a run's first step: launches an interrupted run left are dropped here.
  MemoryRegion arena(int64_t bytes);
  // Device storage for the next input (state) copy of the current run, at least `bytes` long.
  std::byte* next_input_slot(int64_t bytes);
  std::byte* next_state_slot(int64_t bytes);
  // The device copy of a parameter, uploaded on its first use by this context and kept while
  // the host tensor lives (a copy is keyed by the tensor, held weakly: a freed tensor's copy
  // is dropped, never served for another tensor at the same address).
  const std::byte* resident_parameter(const std::shared_ptr<const Tensor>& host);
  // Counted copies on the context's stream; copy_to_host returns when the bytes are there.
  void copy_to_device(void* device, const void* host, int64_t bytes);
  void copy_to_host(void* host, const void* device, int64_t bytes);
  // Launches the run's kept kernels, waits for everything enqueued; a kernel's failure is
  // reported here. Ends the run.
  void synchronize();

 private:
  std::byte* next_slot(std::vector<DeviceBuffer>& slots, size_t& used, int64_t bytes);
  void start_run_if_ended();

  CudaDeviceInfo device_;
  cudaStream_t stream_ = nullptr;
  RunGraphs graphs_;
  DeviceBuffer arena_;
  struct ResidentParameter {
    std::weak_ptr<const Tensor> host;
    DeviceBuffer device;
  };
  std::unordered_map<const Tensor*, ResidentParameter> parameters_;
  std::vector<DeviceBuffer> input_slots_;
  std::vector<DeviceBuffer> state_slots_;
  size_t inputs_used_ = 0;
  size_t states_used_ = 0;
  bool run_ended_ = true;
  CudaTransferCounters transfers_;
};

// The context's implementation; VoltaError(BackendMismatch) when another backend made it.
CudaContextImpl& cuda_context_impl(ExecutionContext& ctx);

}  // namespace volta::cuda
