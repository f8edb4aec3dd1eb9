#pragma once
// Internal to the CUDA backend: how its kernels are declared and chosen. Each op family has a
// .cu file (kernels/<family>.cu: the device code) and a host file (kernels/<family>_ops.cpp:
// per op, the selector, the launch and the claim of exactness against the CPU backend); the
// backend's table is indexed by OpKind and built from the families' lists.

#include <cuda_runtime_api.h>

#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "kernels/launch.h"
#include "volta/backends/cuda.h"
#include "volta/ir/graph.h"
#include "volta/runtime/backend.h"

namespace volta::cuda {

class CudaContextImpl;

struct CudaKernelArgs {
  const Node& node;
  std::span<const ConstTensorView> inputs;  // device memory
  std::span<const TensorView> outputs;      // device memory
  cudaStream_t stream;
  MemoryRegion workspace = {};  // device memory: the KernelChoice's workspace_bytes
  // The run's context, for counted host-to-device copies (Constant's value).
  CudaContextImpl* context = nullptr;
};

// Enqueues the kernel on args.stream; throws VoltaError(DeviceFailure) when the launch fails.
using CudaKernelFn = void (*)(const CudaKernelArgs& args);

// A concrete kernel: launch function and name (dtype, op, variant: "f32_add_cuda_broadcast").
struct CudaKernel {
  CudaKernelFn fn = nullptr;
  std::string_view variant;
  // The launch exchanges data with the host before it returns (a check word read back,
  // device_checks.cpp; Constant's value copied in), so its step launches at once, outside the
  // run's CUDA graph (run_graphs.h).
  bool exchanges_with_host = false;
};

struct CudaKernelQuery {
  const Node& node;
  std::span<const std::optional<TypeInfo>> inputs;  // nullopt: an absent optional input
  std::span<const TypeInfo> outputs;
};

// Picks the kernel for an exact node, or says why there is none. Kernels have static storage.
using CudaKernelSelector = KernelSelection (*)(const CudaKernelQuery& query);

// One op with CUDA kernels: what it claims against the CPU backend, and its selector.
struct CudaOpKernels {
  CudaOpClaim claim;
  CudaKernelSelector select = nullptr;
};

// The ops of each family that has kernels, one list per kernels/<family>_ops.cpp.
std::span<const CudaOpKernels> elementwise_op_kernels();
std::span<const CudaOpKernels> activation_op_kernels();
std::span<const CudaOpKernels> linalg_op_kernels();
std::span<const CudaOpKernels> normalization_op_kernels();
std::span<const CudaOpKernels> reduction_op_kernels();
std::span<const CudaOpKernels> conversion_op_kernels();  // Cast, Where, Clip (elementwise)
std::span<const CudaOpKernels> movement_op_kernels();
std::span<const CudaOpKernels> logical_op_kernels();
std::span<const CudaOpKernels> pooling_op_kernels();
std::span<const CudaOpKernels> convolution_op_kernels();
std::span<const CudaOpKernels> indexing_op_kernels();
std::span<const CudaOpKernels> loss_op_kernels();
std::span<const CudaOpKernels> elementwise_math_op_kernels();  // Pow, trigonometric
std::span<const CudaOpKernels> layout_op_kernels();  // Tile, Pad, ..., Constant (movement)
std::span<const CudaOpKernels> resampling_op_kernels();
std::span<const CudaOpKernels> linalg_det_op_kernels();     // Det (linalg)
std::span<const CudaOpKernels> linalg_einsum_op_kernels();  // Einsum (linalg)

// Every CUDA kernel is deterministic by construction: no float atomics, no reduction whose
// order depends on the launch. (The run-time checks' integer atomicMin finds the first bad
// position, which does not depend on the order the threads get there.)
inline KernelChoice choice_of(const CudaKernel& k, int64_t workspace_bytes = 0) {
  return KernelChoice{std::string(k.variant), KernelDeterminism::BitExact, &k, workspace_bytes, 0};
}

// The refusal of a node whose data dtype (input 0's) is outside `supported`, in the CPU
// backend's words: "no f64 kernel for Exp (supported: {f32})".
std::optional<KernelUnsupported> refuse_dtype(const CudaKernelQuery& query, DTypeSet supported);

// The selection of a float op with one kernel per dtype: kKernels[input 0's dtype] (indexed in
// DType order, f32 then f64), any other dtype refused.
template <const CudaKernel* kKernels>
KernelSelection select_float_kernel(const CudaKernelQuery& query) {
  if (std::optional<KernelUnsupported> refused = refuse_dtype(query, {DType::F32, DType::F64})) {
    return *refused;
  }
  return choice_of(kKernels[static_cast<size_t>(query.inputs[0]->dtype)]);
}

// The kernels' name for a dtype's elements (kernels/conversion_ops.cpp).
ElementType element_type(DType dtype);

// Checks that fail a run the way the CPU's kernels do (Gather's indices, Cast's float to
// integer values), in kernels/device_checks.cpp: a kernel lowers one device word, the
// KernelChoice's workspace of kCheckWorkspaceBytes, to the smallest offending position (an
// integer minimum, whatever the launch), and the host waits for the answer before the op
// runs. So a node with a check synchronises its stream once per run.
inline constexpr int64_t kCheckWorkspaceBytes = sizeof(unsigned long long);
inline bool exchanges_with_host(const KernelChoice& choice) {
  return static_cast<const CudaKernel*>(choice.impl)->exchanges_with_host;
}
// Thrown by a check that finds its stream capturing a graph (its kernel is not marked
// exchanges_with_host): the capture is dropped and the run's launches go one by one.
struct HostExchangeInCapture {};
// Sets the word to all ones, enqueues find(word) and returns the position it left, or nullopt.
std::optional<int64_t> first_flagged(const CudaKernelArgs& args,
                                     const std::function<cudaError_t(unsigned long long*)>& find);
// Copies `bytes` from device memory to `host` on args.stream and waits for them.
void copy_to_host_now(void* host, const void* device, size_t bytes, const CudaKernelArgs& args);

// Throws VoltaError(DeviceFailure) naming the node when a launch failed.
void check_launch(cudaError_t status, const Node& node);

}  // namespace volta::cuda
