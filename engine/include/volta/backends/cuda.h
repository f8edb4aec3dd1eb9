#pragma once
// The CUDA backend (library volta_backend_cuda, built where nvcc is found and registered as
// "cuda": make it with make_backend("cuda")). Planning needs no device: capabilities() and
// select_kernel() answer on any machine, so a graph compiles for CUDA (or is refused with
// R-MISSING-KERNEL) anywhere, unless constant folding has to run a kernel. Running needs one:
// make_context() finds the driver and device 0 (CUDA_VISIBLE_DEVICES chooses it) and throws
// VoltaError(DeviceUnavailable) naming what is missing. Never a silent fallback to the CPU.
//
// A context holds one stream, a device arena (one cudaMalloc per growth, no managed memory)
// and device copies of the run's inputs and states; every host<->device copy is counted.
// Consumers include this header only where VOLTA_CUDA_BACKEND is defined (the library defines
// it for whoever links it).

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "volta/runtime/backend.h"

namespace volta {

inline constexpr std::string_view kCudaBackend = "cuda";

struct CudaDeviceInfo {
  int ordinal = 0;
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  int sm_count = 0;
  int64_t memory_bytes = 0;
  std::string compute_capability() const;  // "9.0"
};

// What this binary and this machine offer, for `volta doctor` and result rows.
struct CudaReport {
  int runtime_version = 0;    // the CUDA runtime linked into this binary (13000: 13.0)
  int driver_version = 0;     // the newest CUDA the installed driver supports; 0: no driver
  std::string architectures;  // the kernels' code: "sm_80, sm_90 machine code; compute_90 PTX"
  std::vector<CudaDeviceInfo> devices;
  // Why make_context() would refuse (its VoltaError message); empty when device 0 runs the
  // kernels.
  std::string unavailable;
};
CudaReport cuda_report();
// Device 0 as a result row records it: "NVIDIA H100 80GB HBM3 (compute capability 9.0, 132 SMs;
// driver CUDA 13.0, toolkit 13.0)"; empty when the report has no device.
std::string cuda_device_summary(const CudaReport& report);
std::string cuda_version_text(int version);  // 13000 -> "13.0", 12040 -> "12.4"

// Host<->device traffic of one context since it was made: plan inputs, parameters and states
// in, outputs and states out.
struct CudaTransferCounters {
  int64_t host_to_device_bytes = 0;
  int64_t host_to_device_copies = 0;
  int64_t device_to_host_bytes = 0;
  int64_t device_to_host_copies = 0;
};

// The context make_backend("cuda")->make_context() returns.
class CudaContext : public ExecutionContext {
 public:
  virtual const CudaDeviceInfo& device() const = 0;
  virtual const CudaTransferCounters& transfers() const = 0;
  // Device memory the context holds: arena, input and state copies.
  virtual int64_t device_bytes() const = 0;
  // A run's kernels go to the device as one CUDA graph, captured the first time a launch
  // sequence is seen and replayed after: how many were captured and replayed.
  virtual int64_t graph_captures() const = 0;
  virtual int64_t graph_replays() const = 0;

 protected:
  explicit CudaContext(const ContextOptions& options)
      : ExecutionContext(std::string(kCudaBackend), options) {}
};

// The CUDA context of `ctx`; throws VoltaError(BackendMismatch) when another backend made it.
CudaContext& cuda_context(ExecutionContext& ctx);

// The per-op claim of each op the CUDA backend has kernels for, in OpKind order: the
// device tests (engine/backends/cuda/tests) check each against the CPU backend.
struct CudaOpClaim {
  OpKind op;
  DTypeSet dtypes;
  CrossBackendExactness exactness;
  std::string_view how;  // why the bits agree: "IEEE add, correctly rounded on both"
  // Dtypes the exactness does not cover (within the tolerance table only): where the CPU's
  // kernel calls libm, whose bits CUDA's math library does not reproduce.
  DTypeSet tolerance_dtypes = {};
};
std::span<const CudaOpClaim> cuda_op_claims();

}  // namespace volta
