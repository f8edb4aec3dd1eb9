#pragma once
// Internal to the CUDA backend: every CUDA runtime call's status is checked, and a failure is a
// VoltaError(DeviceFailure) naming the call and CUDA's error, never an abort or a silent skip.

#include <cuda_runtime_api.h>

#include <string>
#include <string_view>

#include "volta/error.h"

namespace volta::cuda {

// "cudaErrorMemoryAllocation (out of memory)".
inline std::string cuda_error_text(cudaError_t status) {
  return std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ")";
}

inline void check_cuda(cudaError_t status, std::string_view what) {
  if (status == cudaSuccess) return;
  fail(ErrorCode::DeviceFailure, std::string(what) + " failed: " + cuda_error_text(status));
}

}  // namespace volta::cuda
