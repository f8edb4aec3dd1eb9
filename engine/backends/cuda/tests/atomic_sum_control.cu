// Test-only: the negative control of cuda_device_determinism_test. A float sum that every
// thread adds into one word with atomicAdd, so its rounding depends on the order the GPU's
// threads happen to reach the word: exactly what Volta's kernels never do. The test plants it
// as a ReduceSum kernel that claims to be bit-exact and expects the replay check to catch it.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace volta::cuda_test {
namespace {

__global__ void zero_word(float* y) { *y = 0.0f; }

__global__ void atomic_sum(const float* x, int64_t n, float* y) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    atomicAdd(y, x[i]);
  }
}

}  // namespace

cudaError_t launch_atomic_sum(const float* x, int64_t n, float* y, cudaStream_t stream) {
  zero_word<<<1, 1, 0, stream>>>(y);
  atomic_sum<<<1024, 256, 0, stream>>>(x, n, y);
  return cudaGetLastError();
}

}  // namespace volta::cuda_test
