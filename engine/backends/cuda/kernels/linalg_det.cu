// Det, one thread per matrix: the matrix copied into its slot of the workspace, then factored
// there by linalg_det_kernel.cuh as the CPU factors it. No thread reads another's slot.

#include "linalg_det_kernel.cuh"
#include "map.cuh"

namespace volta::cuda {
namespace {

template <class T>
__global__ void det_kernel(const T* x, int64_t matrices, int64_t m, T* scratch, T* y) {
  const int64_t size = m * m;
  for (int64_t b = first_index(); b < matrices; b += grid_stride()) {
    T* a = scratch + b * size;
    for (int64_t i = 0; i < size; ++i) a[i] = x[b * size + i];
    y[b] = det_detail::lu_determinant(a, m);
  }
}

}  // namespace

cudaError_t launch_det(ElementType type, const void* x, int64_t matrices, int64_t m, void* scratch,
                       void* y, cudaStream_t stream) {
  const unsigned blocks = blocks_for(matrices);
  if (type == ElementType::F32) {
    det_kernel<float><<<blocks, kThreadsPerBlock, 0, stream>>>(
        static_cast<const float*>(x), matrices, m, static_cast<float*>(scratch),
        static_cast<float*>(y));
  } else if (type == ElementType::F64) {
    det_kernel<double><<<blocks, kThreadsPerBlock, 0, stream>>>(
        static_cast<const double*>(x), matrices, m, static_cast<double*>(scratch),
        static_cast<double*>(y));
  } else {
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace volta::cuda
