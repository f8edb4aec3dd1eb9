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

// ---- Linalg (kernels/linalg.cu) ----

// Y = alpha * op(A) @ op(B) + beta * C over a batch of problems, each output element computed
// as the CPU backend's FMA micro-kernels compute it (engine/backends/cpu/kernels/
// linalg_gemm_micro_kernels.h): K cut into slices of kGemmSlice<T> from 0; within a slice one
// running FMA sum from +0 over k in order; the first slice stores alpha * sum (then
// fma(beta, C, that) when there is a C), each later one fma(1, Y, alpha * sum). The f32 slice
// is the AVX-512 kernel's kc (the AVX2 one's is 256), f64's is both ISAs' kc.
template <class T>
inline constexpr int64_t kGemmSlice = sizeof(T) == 4 ? 512 : 256;

// What FusedMatMul adds after the full sum: the bias (bias + y when bias_first, else y + bias,
// one IEEE add), then the activation.
enum class GemmEpilogueOp : int { None, Bias, BiasRelu };

template <class T>
struct GemmLaunch {
  int64_t m = 0;  // rows of each problem's op(A) and Y
  int64_t n = 0;  // columns of op(B) and Y
  int64_t k = 0;
  // Element (i, p) of op(A) is a[i * a_row_stride + p * a_col_stride]; (p, j) of op(B) is
  // b[p * b_row_stride + j * b_col_stride] (transposes swap the strides).
  const T* a = nullptr;
  int64_t a_row_stride = 0;
  int64_t a_col_stride = 0;
  const T* b = nullptr;
  int64_t b_row_stride = 0;
  int64_t b_col_stride = 0;
  const T* c = nullptr;  // nullptr: no beta * C term; strides 0 where C broadcasts
  int64_t c_row_stride = 0;
  int64_t c_col_stride = 0;
  T* y = nullptr;  // each problem's Y is m x n, row-major, problem after problem
  T alpha = 1;
  T beta = 0;
  // The problems: the batch dims merged as for a broadcast (the strides count matrices of A,
  // of m x k, and of B, of k x n); one problem is one dim of 1.
  BroadcastGeometry batch;
  GemmEpilogueOp epilogue = GemmEpilogueOp::None;
  const T* bias = nullptr;  // [n], for the Bias epilogues
  bool bias_first = false;
};

// Enqueues the GEMM (m, n >= 1; k >= 0; batch.numel >= 1).
cudaError_t launch_f32_gemm(const GemmLaunch<float>& g, cudaStream_t stream);
cudaError_t launch_f64_gemm(const GemmLaunch<double>& g, cudaStream_t stream);

}  // namespace volta::cuda
