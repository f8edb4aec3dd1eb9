// The CUDA backend's run-time checks: a device word lowered to the first offending position,
// read back by the host (cuda_kernel.h says why and what it costs).

#include "../cuda_kernel.h"

namespace volta::cuda {

namespace {

// A check inside a graph capture would read nothing back: its kernel should be marked
// exchanges_with_host (launched outside captures); one that is not gives up the capture here.
void refuse_capture(const CudaKernelArgs& args) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  check_launch(cudaStreamIsCapturing(args.stream, &status), args.node);
  if (status != cudaStreamCaptureStatusNone) throw HostExchangeInCapture{};
}

}  // namespace

void copy_to_host_now(void* host, const void* device, size_t bytes, const CudaKernelArgs& args) {
  refuse_capture(args);
  check_launch(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, args.stream),
               args.node);
  check_launch(cudaStreamSynchronize(args.stream), args.node);
}

std::optional<int64_t> first_flagged(const CudaKernelArgs& args,
                                     const std::function<cudaError_t(unsigned long long*)>& find) {
  if (args.workspace.bytes < kCheckWorkspaceBytes) {
    fail(ErrorCode::KernelFailure, "node '" + args.node.name + "' (" +
                                       std::string(op_name(args.node.op)) +
                                       ") was given no workspace for its check");
  }
  refuse_capture(args);
  auto* word = reinterpret_cast<unsigned long long*>(args.workspace.data);
  check_launch(cudaMemsetAsync(word, 0xff, sizeof *word, args.stream), args.node);
  check_launch(find(word), args.node);
  unsigned long long position = 0;
  copy_to_host_now(&position, word, sizeof position, args);
  if (position == ~0ull) return std::nullopt;
  return static_cast<int64_t>(position);
}

}  // namespace volta::cuda
