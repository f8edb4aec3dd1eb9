// Convolution kernels, f32 and f64: Conv (1-D to 3-D, groups, strides, dilations, pads, B),
// ConvTranspose and ConvGradFilter, direct: one thread per element of Y (dW), which sums its
// terms in the order the CPU backend's im2col / col2im + GEMM (or its direct depthwise kernel)
// sums them (spatial_element.h). No
// workspace, no atomics, no split of any sum: an element's bits depend on its operands alone.
// The per-op exactness claims are in convolution_ops.cpp.

#include "map.cuh"
#include "spatial_element.h"

namespace volta::cuda {
namespace {

template <class T>
__global__ void __launch_bounds__(kThreadsPerBlock) conv_kernel(ConvLaunch<T> c, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    c.y[i] = spatial::conv_element(c.geometry, c.x, c.w, c.bias, i);
  }
}

template <class T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    conv_transpose_kernel(ConvLaunch<T> c, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    c.y[i] = spatial::conv_transpose_element(c.geometry, c.x, c.w, c.bias, i);
  }
}

template <class T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    conv_grad_filter_kernel(ConvLaunch<T> c, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    c.y[i] = spatial::conv_grad_filter_element(c.geometry, c.x, c.w, i);
  }
}

template <class T>
int64_t outputs_of(const ConvLaunch<T>& c) {
  return c.geometry.batch * c.geometry.channels_out * spatial::volume(c.geometry.out);
}

template <class T>
cudaError_t launch_conv_of(const ConvLaunch<T>& c, cudaStream_t stream) {
  const int64_t n = outputs_of(c);
  conv_kernel<T><<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(c, n);
  return cudaGetLastError();
}

template <class T>
cudaError_t launch_conv_transpose_of(const ConvLaunch<T>& c, cudaStream_t stream) {
  const int64_t n = outputs_of(c);
  conv_transpose_kernel<T><<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(c, n);
  return cudaGetLastError();
}

template <class T>
cudaError_t launch_conv_grad_filter_of(const ConvLaunch<T>& c, cudaStream_t stream) {
  const ConvGeometry& g = c.geometry;
  const int64_t n = g.channels_out * (g.channels_in / g.group) * spatial::volume(g.kernel);
  conv_grad_filter_kernel<T><<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(c, n);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_conv(const ConvLaunch<float>& c, cudaStream_t stream) {
  return launch_conv_of(c, stream);
}
cudaError_t launch_conv(const ConvLaunch<double>& c, cudaStream_t stream) {
  return launch_conv_of(c, stream);
}
cudaError_t launch_conv_transpose(const ConvLaunch<float>& c, cudaStream_t stream) {
  return launch_conv_transpose_of(c, stream);
}
cudaError_t launch_conv_transpose(const ConvLaunch<double>& c, cudaStream_t stream) {
  return launch_conv_transpose_of(c, stream);
}

cudaError_t launch_conv_grad_filter(const ConvLaunch<float>& c, cudaStream_t stream) {
  return launch_conv_grad_filter_of(c, stream);
}
cudaError_t launch_conv_grad_filter(const ConvLaunch<double>& c, cudaStream_t stream) {
  return launch_conv_grad_filter_of(c, stream);
}

}  // namespace volta::cuda
