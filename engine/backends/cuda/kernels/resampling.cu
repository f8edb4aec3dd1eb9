// Resampling kernels: Resize and GridSample, one thread per output element, each element
// computed by resampling_kernel.cuh as the CPU backend computes it.

#include "map.cuh"
#include "resampling_kernel.cuh"

namespace volta::cuda {
namespace {

using namespace resampling_detail;  // NOLINT(google-build-using-namespace): this file's kernels

template <class U>
__global__ void resize_nearest_kernel(ResizeLaunch r, const U* x, U* y) {
  for (int64_t i = first_index(); i < r.numel; i += grid_stride()) {
    y[i] = resize_nearest_element(r, x, i);
  }
}

template <class T>
__global__ void resize_interpolate_kernel(ResizeLaunch r, const T* x, T* y) {
  for (int64_t i = first_index(); i < r.numel; i += grid_stride()) {
    y[i] = resize_interpolated_element(r, x, i);
  }
}

template <class T>
__global__ void grid_sample_kernel(GridSampleLaunch s, const T* x, const T* grid, T* y) {
  const int64_t numel = s.batch * s.channels * s.out_h * s.out_w;
  for (int64_t i = first_index(); i < numel; i += grid_stride()) {
    y[i] = grid_sample_element(s, x, grid, i);
  }
}

}  // namespace

cudaError_t launch_resize(ElementType type, const ResizeLaunch& r, const void* x, void* y,
                          cudaStream_t stream) {
  const unsigned blocks = blocks_for(r.numel);
  if (r.mode != ResizeMode::Nearest) {
    if (type == ElementType::F32) {
      resize_interpolate_kernel<float><<<blocks, kThreadsPerBlock, 0, stream>>>(
          r, static_cast<const float*>(x), static_cast<float*>(y));
    } else if (type == ElementType::F64) {
      resize_interpolate_kernel<double><<<blocks, kThreadsPerBlock, 0, stream>>>(
          r, static_cast<const double*>(x), static_cast<double*>(y));
    } else {
      return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
  }
  switch (type) {
    case ElementType::Bool:
      resize_nearest_kernel<uint8_t><<<blocks, kThreadsPerBlock, 0, stream>>>(
          r, static_cast<const uint8_t*>(x), static_cast<uint8_t*>(y));
      break;
    case ElementType::F32:
    case ElementType::I32:
      resize_nearest_kernel<uint32_t><<<blocks, kThreadsPerBlock, 0, stream>>>(
          r, static_cast<const uint32_t*>(x), static_cast<uint32_t*>(y));
      break;
    case ElementType::F64:
    case ElementType::I64:
      resize_nearest_kernel<uint64_t><<<blocks, kThreadsPerBlock, 0, stream>>>(
          r, static_cast<const uint64_t*>(x), static_cast<uint64_t*>(y));
      break;
  }
  return cudaGetLastError();
}

cudaError_t launch_grid_sample(ElementType type, const GridSampleLaunch& g, const void* x,
                               const void* grid, void* y, cudaStream_t stream) {
  const unsigned blocks = blocks_for(g.batch * g.channels * g.out_h * g.out_w);
  if (type == ElementType::F32) {
    grid_sample_kernel<float><<<blocks, kThreadsPerBlock, 0, stream>>>(
        g, static_cast<const float*>(x), static_cast<const float*>(grid), static_cast<float*>(y));
  } else if (type == ElementType::F64) {
    grid_sample_kernel<double><<<blocks, kThreadsPerBlock, 0, stream>>>(
        g, static_cast<const double*>(x), static_cast<const double*>(grid),
        static_cast<double*>(y));
  } else {
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace volta::cuda
