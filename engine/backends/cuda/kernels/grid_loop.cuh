#pragma once
// Grid-stride loops in plain CUDA C++ (no CUDA header, no launch syntax), for the kernel headers
// a host test also runs under an emulation of CUDA's threads (indexing_kernels.cuh,
// loss_kernels.cuh): a thread starts at its global index and steps by the grid's threads.

#include <cstdint>

namespace volta::cuda {

__device__ __forceinline__ int64_t thread_begin() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t thread_stride() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

}  // namespace volta::cuda
