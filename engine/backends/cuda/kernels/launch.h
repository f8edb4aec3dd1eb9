#pragma once
// The seam between the CUDA backend's host code (C++20, compiled by the host compiler) and its
// kernels (.cu, compiled by nvcc): plain structs and launch functions, no Volta header, so the
// .cu files stay small to compile. Each launch function enqueues its kernel on `stream` and
// returns the launch's status (cudaGetLastError); a kernel's own failure shows at the next
// synchronisation.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace volta::cuda {

// ---- Elementwise and activation (kernels/elementwise.cu, kernels/activation.cu) ----

// Merged broadcast dims of a binary op, outermost first (broadcast_geometry.h builds it).
inline constexpr int kMaxBroadcastDims = 6;
struct BroadcastGeometry {
  int rank = 0;
  int64_t dims[kMaxBroadcastDims] = {};
  int64_t a_strides[kMaxBroadcastDims] = {};  // in elements; 0 where A is broadcast
  int64_t b_strides[kMaxBroadcastDims] = {};
  int64_t numel = 0;
  // One merged dim that both operands walk element by element: same shapes, or shapes that
  // only differ by leading 1s.
  bool contiguous() const { return rank == 1 && a_strides[0] == 1 && b_strides[0] == 1; }
};

enum class BinaryOp : int { Add, Sub, Mul, Div };
enum class UnaryOp : int { Neg, Abs, Sqrt, Exp, Log };
enum class ActivationOp : int { Relu, Tanh, Sigmoid };

// y = op(a, b) over the geometry's elements (numel > 0).
cudaError_t launch_f32_binary(BinaryOp op, const BroadcastGeometry& geometry, const float* a,
                              const float* b, float* y, cudaStream_t stream);
// y[i] = op(x[i]) for i in [0, n), n > 0; y may be x.
cudaError_t launch_f32_unary(UnaryOp op, const float* x, float* y, int64_t n, cudaStream_t stream);
cudaError_t launch_f32_activation(ActivationOp op, const float* x, float* y, int64_t n,
                                  cudaStream_t stream);

// cudaSuccess when the current device can load this binary's kernels; otherwise why not
// (cudaErrorNoKernelImageForDevice when the build has no code for its architecture).
cudaError_t kernel_image_status();

}  // namespace volta::cuda
