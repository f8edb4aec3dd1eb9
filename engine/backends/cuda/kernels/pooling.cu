// Pooling kernels, f32 and f64: MaxPool (with its Indices), AveragePool, LpPool (p 1, 2) and
// their global forms. One thread per output element: a windowed pool's window in window order,
// a global pool's plane over the CPU's tree, each by one thread (spatial_element.h), so every
// output is a function of its window alone. The per-op exactness claims are in pooling_ops.cpp.

#include "map.cuh"
#include "spatial_element.h"

namespace volta::cuda {
namespace {

template <class T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    pool_kernel(PoolLaunch p, const T* x, T* y, int64_t n) {
  const PoolGeometry& g = p.geometry;
  const int64_t in_size = spatial::volume(g.in);
  const int64_t out_size = spatial::volume(g.out);
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const int64_t plane = i / out_size;
    const T* xp = x + plane * in_size;
    const int64_t o = i % out_size;
    if (p.op == PoolOp::Max) {
      int64_t within = 0;
      y[i] = spatial::max_pool_element(g, xp, o, p.column_major, &within);
      if (p.indices != nullptr) p.indices[i] = plane * in_size + within;
    } else {
      y[i] = spatial::sum_pool_element(p.op, g, xp, o);
    }
  }
}

template <class T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    global_pool_kernel(GlobalPoolOp op, int64_t planes, int64_t plane_size, const T* x, T* y) {
  for (int64_t p = first_index(); p < planes; p += grid_stride()) {
    y[p] = spatial::global_pool_element(op, x + p * plane_size, plane_size);
  }
}

template <class T>
cudaError_t launch_pool_of(const PoolLaunch& p, const T* x, T* y, cudaStream_t stream) {
  const int64_t n = p.geometry.planes * spatial::volume(p.geometry.out);
  pool_kernel<T><<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(p, x, y, n);
  return cudaGetLastError();
}

template <class T>
cudaError_t launch_global_pool_of(GlobalPoolOp op, int64_t planes, int64_t plane_size, const T* x,
                                  T* y, cudaStream_t stream) {
  global_pool_kernel<T>
      <<<blocks_for(planes), kThreadsPerBlock, 0, stream>>>(op, planes, plane_size, x, y);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_pool(const PoolLaunch& p, const float* x, float* y, cudaStream_t stream) {
  return launch_pool_of(p, x, y, stream);
}
cudaError_t launch_pool(const PoolLaunch& p, const double* x, double* y, cudaStream_t stream) {
  return launch_pool_of(p, x, y, stream);
}
cudaError_t launch_global_pool(GlobalPoolOp op, int64_t planes, int64_t plane_size, const float* x,
                               float* y, cudaStream_t stream) {
  return launch_global_pool_of(op, planes, plane_size, x, y, stream);
}
cudaError_t launch_global_pool(GlobalPoolOp op, int64_t planes, int64_t plane_size, const double* x,
                               double* y, cudaStream_t stream) {
  return launch_global_pool_of(op, planes, plane_size, x, y, stream);
}

}  // namespace volta::cuda
