// Elementwise kernels whose CPU counterparts call libm (kernels/elementwise_math.cpp and
// elementwise.cpp there): Sin Cos Tan Asin Acos Atan Sinh Cosh Asinh Acosh Atanh and Pow, f32
// and f64. The CPU computes an f32 one as the double function of the value, rounded once
// (Pow: powf); these do the same with CUDA's double functions (Pow f32 too: pow in double is
// more accurate than powf here). CUDA's last bits are not glibc's, so these kernels match the
// CPU's within the tolerance table only (elementwise_math_ops.cpp claims nothing more).

#include "map.cuh"

namespace volta::cuda {
namespace {

template <MathOp kOp>
__device__ __forceinline__ double math_of(double x) {
  if constexpr (kOp == MathOp::Sin) return sin(x);
  if constexpr (kOp == MathOp::Cos) return cos(x);
  if constexpr (kOp == MathOp::Tan) return tan(x);
  if constexpr (kOp == MathOp::Asin) return asin(x);
  if constexpr (kOp == MathOp::Acos) return acos(x);
  if constexpr (kOp == MathOp::Atan) return atan(x);
  if constexpr (kOp == MathOp::Sinh) return sinh(x);
  if constexpr (kOp == MathOp::Cosh) return cosh(x);
  if constexpr (kOp == MathOp::Asinh) return asinh(x);
  if constexpr (kOp == MathOp::Acosh) return acosh(x);
  if constexpr (kOp == MathOp::Atanh) return atanh(x);
  return 0.0;
}

// T in, T out, through double: the CPU's Libm<T, Fn>.
template <MathOp kOp, class T>
__global__ void math_unary_kernel(const T* x, T* y, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    y[i] = static_cast<T>(math_of<kOp>(static_cast<double>(x[i])));
  }
}

template <class T>
__global__ void pow_kernel(BroadcastGeometry g, const T* a, const T* b, T* y) {
  for (int64_t i = first_index(); i < g.numel; i += grid_stride()) {
    int64_t at_a = 0;
    int64_t at_b = 0;
    operand_offsets(g, i, at_a, at_b);
    y[i] = static_cast<T>(pow(static_cast<double>(a[at_a]), static_cast<double>(b[at_b])));
  }
}

template <MathOp kOp>
cudaError_t launch_unary_of(ElementType type, const void* x, void* y, int64_t n,
                            cudaStream_t stream) {
  if (type == ElementType::F32) {
    math_unary_kernel<kOp, float><<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(
        static_cast<const float*>(x), static_cast<float*>(y), n);
  } else if (type == ElementType::F64) {
    math_unary_kernel<kOp, double><<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(
        static_cast<const double*>(x), static_cast<double*>(y), n);
  } else {
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_math_unary(MathOp op, ElementType type, const void* x, void* y, int64_t n,
                              cudaStream_t stream) {
  switch (op) {
    case MathOp::Sin:
      return launch_unary_of<MathOp::Sin>(type, x, y, n, stream);
    case MathOp::Cos:
      return launch_unary_of<MathOp::Cos>(type, x, y, n, stream);
    case MathOp::Tan:
      return launch_unary_of<MathOp::Tan>(type, x, y, n, stream);
    case MathOp::Asin:
      return launch_unary_of<MathOp::Asin>(type, x, y, n, stream);
    case MathOp::Acos:
      return launch_unary_of<MathOp::Acos>(type, x, y, n, stream);
    case MathOp::Atan:
      return launch_unary_of<MathOp::Atan>(type, x, y, n, stream);
    case MathOp::Sinh:
      return launch_unary_of<MathOp::Sinh>(type, x, y, n, stream);
    case MathOp::Cosh:
      return launch_unary_of<MathOp::Cosh>(type, x, y, n, stream);
    case MathOp::Asinh:
      return launch_unary_of<MathOp::Asinh>(type, x, y, n, stream);
    case MathOp::Acosh:
      return launch_unary_of<MathOp::Acosh>(type, x, y, n, stream);
    case MathOp::Atanh:
      return launch_unary_of<MathOp::Atanh>(type, x, y, n, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t launch_pow(ElementType type, const BroadcastGeometry& geometry, const void* a,
                       const void* b, void* y, cudaStream_t stream) {
  if (type == ElementType::F32) {
    pow_kernel<float><<<blocks_for(geometry.numel), kThreadsPerBlock, 0, stream>>>(
        geometry, static_cast<const float*>(a), static_cast<const float*>(b),
        static_cast<float*>(y));
  } else if (type == ElementType::F64) {
    pow_kernel<double><<<blocks_for(geometry.numel), kThreadsPerBlock, 0, stream>>>(
        geometry, static_cast<const double*>(a), static_cast<const double*>(b),
        static_cast<double*>(y));
  } else {
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace volta::cuda
