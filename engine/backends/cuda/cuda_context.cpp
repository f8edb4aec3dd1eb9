#include "cuda_context.h"

#include <algorithm>
#include <string>
#include <utility>

#include "cuda_check.h"
#include "volta/ir/tensor.h"

namespace volta {
namespace cuda {
namespace {

// Slots are rounded up so that a slot grown for one run fits slightly larger inputs later,
// and never empty, so that a zero-element tensor still has a (non-null) address.
int64_t slot_bytes(int64_t bytes) {
  const auto align = static_cast<int64_t>(kTensorAlignment);
  return std::max<int64_t>(align, (bytes + align - 1) / align * align);
}

}  // namespace

DeviceBuffer::DeviceBuffer(int64_t bytes) : bytes_(bytes) {
  void* p = nullptr;
  check_cuda(cudaMalloc(&p, static_cast<size_t>(bytes)),
             "cudaMalloc of " + std::to_string(bytes) + " bytes");
  data_ = static_cast<std::byte*>(p);
}

DeviceBuffer::~DeviceBuffer() {
  // Nothing to report to: a failure here means the context is already broken.
  if (data_ != nullptr) cudaFree(data_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) cudaFree(data_);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

CudaContextImpl::CudaContextImpl(const ContextOptions& options, CudaDeviceInfo device)
    : CudaContext(options), device_(std::move(device)) {
  check_cuda(cudaSetDevice(device_.ordinal),
             "cudaSetDevice(" + std::to_string(device_.ordinal) + ")");
  check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
}

CudaContextImpl::~CudaContextImpl() {
  // Buffers may still be read by kernels of an interrupted run: wait before freeing them.
  cudaStreamSynchronize(stream_);
  graphs_.clear();
  arena_ = {};
  parameters_.clear();
  input_slots_.clear();
  state_slots_.clear();
  cudaStreamDestroy(stream_);
}

int64_t CudaContextImpl::device_bytes() const {
  int64_t total = arena_.bytes();
  for (const auto& [host, p] : parameters_) total += p.device.bytes();
  for (const DeviceBuffer& b : input_slots_) total += b.bytes();
  for (const DeviceBuffer& b : state_slots_) total += b.bytes();
  return total;
}

MemoryRegion CudaContextImpl::arena(int64_t bytes) {
  graphs_.discard();
  if (bytes > arena_.bytes()) {
    check_cuda(cudaStreamSynchronize(stream_), "waiting for the stream before the arena grows");
    arena_ = {};  // free first: the old arena's contents are not kept
    arena_ = DeviceBuffer(slot_bytes(bytes));
  }
  return {arena_.data(), bytes, MemorySpace::Device};
}

void CudaContextImpl::start_run_if_ended() {
  if (!run_ended_) return;
  inputs_used_ = 0;
  states_used_ = 0;
  run_ended_ = false;
}

std::byte* CudaContextImpl::next_slot(std::vector<DeviceBuffer>& slots, size_t& used,
                                      int64_t bytes) {
  start_run_if_ended();
  if (used == slots.size()) slots.emplace_back();
  DeviceBuffer& slot = slots[used++];
  if (slot.bytes() < bytes || slot.data() == nullptr) slot = DeviceBuffer(slot_bytes(bytes));
  return slot.data();
}

const std::byte* CudaContextImpl::resident_parameter(const std::shared_ptr<const Tensor>& host) {
  if (const auto it = parameters_.find(host.get());
      it != parameters_.end() && it->second.host.lock() == host) {
    return it->second.device.data();
  }
  std::erase_if(parameters_, [](const auto& entry) { return entry.second.host.expired(); });
  const auto bytes = static_cast<int64_t>(host->nbytes());
  DeviceBuffer device(slot_bytes(bytes));
  copy_to_device(device.data(), host->data(), bytes);
  const std::byte* data = device.data();
  parameters_[host.get()] = ResidentParameter{host, std::move(device)};
  return data;
}

std::byte* CudaContextImpl::next_input_slot(int64_t bytes) {
  return next_slot(input_slots_, inputs_used_, bytes);
}

std::byte* CudaContextImpl::next_state_slot(int64_t bytes) {
  return next_slot(state_slots_, states_used_, bytes);
}

void CudaContextImpl::copy_to_device(void* device, const void* host, int64_t bytes) {
  if (bytes == 0) return;
  check_cuda(
      cudaMemcpyAsync(device, host, static_cast<size_t>(bytes), cudaMemcpyHostToDevice, stream_),
      "copying " + std::to_string(bytes) + " bytes to the device");
  transfers_.host_to_device_bytes += bytes;
  ++transfers_.host_to_device_copies;
}

void CudaContextImpl::copy_to_host(void* host, const void* device, int64_t bytes) {
  if (bytes == 0) return;
  check_cuda(
      cudaMemcpyAsync(host, device, static_cast<size_t>(bytes), cudaMemcpyDeviceToHost, stream_),
      "copying " + std::to_string(bytes) + " bytes to the host");
  check_cuda(cudaStreamSynchronize(stream_), "waiting for a copy to the host");
  transfers_.device_to_host_bytes += bytes;
  ++transfers_.device_to_host_copies;
}

void CudaContextImpl::synchronize() {
  graphs_.launch(stream_);
  check_cuda(cudaStreamSynchronize(stream_), "a kernel of this run");
  run_ended_ = true;
}

CudaContextImpl& cuda_context_impl(ExecutionContext& ctx) {
  auto* impl = dynamic_cast<CudaContextImpl*>(&ctx);
  if (impl == nullptr) {
    fail(ErrorCode::BackendMismatch, "an execution context made by backend '" + ctx.backend() +
                                         "' given to the CUDA backend: make one with its "
                                         "make_context()");
  }
  return *impl;
}

}  // namespace cuda

CudaContext& cuda_context(ExecutionContext& ctx) { return cuda::cuda_context_impl(ctx); }

}  // namespace volta
