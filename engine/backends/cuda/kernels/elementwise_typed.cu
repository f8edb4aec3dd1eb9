// Elementwise kernels in f64, i32 and i64: what the CPU backend's kernels compute for those
// dtypes (kernels/elementwise.cpp and elementwise_math.cpp there), for the ops whose f64 result
// is one IEEE operation, an exact fmod or a select: Add Sub Mul Div Min Max Mod Neg Abs Sqrt
// Reciprocal Floor Ceil Round Sign, and the activation family's Relu; and Exp and Log in f64,
// where the CPU calls libm (std::exp, std::log) and these CUDA's exp and log. Integer
// arithmetic wraps as the CPU's does, in the unsigned type of the same width. The claims are in
// elementwise_ops.cpp.

#include <type_traits>

#include "map.cuh"

namespace volta::cuda {
namespace {

template <class T>
using Unsigned = std::make_unsigned_t<T>;

template <class T>
__device__ __forceinline__ T wrapping_neg(T x) {
  return static_cast<T>(Unsigned<T>{0} - static_cast<Unsigned<T>>(x));
}

// A double's sign-bit operations, as andpd / xorpd do them: NaN payloads pass.
__device__ __forceinline__ double abs_bits(double x) {
  return __longlong_as_double(__double_as_longlong(x) & 0x7fffffffffffffffll);
}
__device__ __forceinline__ double neg_bits(double x) {
  return __longlong_as_double(__double_as_longlong(x) ^
                              static_cast<long long>(0x8000000000000000ull));
}
__device__ __forceinline__ double copysign_bits(double magnitude, double sign) {
  return __longlong_as_double(
      (__double_as_longlong(magnitude) & 0x7fffffffffffffffll) |
      (__double_as_longlong(sign) & static_cast<long long>(0x8000000000000000ull)));
}

template <BinaryOp kOp, class T>
struct BinaryFn {
  __device__ T operator()(T a, T b) const {
    if constexpr (kOp == BinaryOp::Min) {
      return a != a ? a : (a <= b ? a : b);
    } else if constexpr (kOp == BinaryOp::Max) {
      return a != a ? a : (a >= b ? a : b);
    } else if constexpr (std::is_integral_v<T>) {
      using U = Unsigned<T>;
      if constexpr (kOp == BinaryOp::Add)
        return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
      if constexpr (kOp == BinaryOp::Sub)
        return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
      if constexpr (kOp == BinaryOp::Mul)
        return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
      if constexpr (kOp == BinaryOp::Div) return b == -1 ? wrapping_neg(a) : a / b;
      if constexpr (kOp == BinaryOp::Fmod) return b == -1 ? T{0} : static_cast<T>(a % b);
      if constexpr (kOp == BinaryOp::Mod) {
        const T r = b == -1 ? T{0} : static_cast<T>(a % b);
        return r != 0 && ((r < 0) != (b < 0)) ? static_cast<T>(r + b) : r;
      }
      return T{0};
    } else {
      if constexpr (kOp == BinaryOp::Add) return __dadd_rn(a, b);
      if constexpr (kOp == BinaryOp::Sub) return __dsub_rn(a, b);
      if constexpr (kOp == BinaryOp::Mul) return __dmul_rn(a, b);
      if constexpr (kOp == BinaryOp::Div) return __ddiv_rn(a, b);
      if constexpr (kOp == BinaryOp::Fmod) return fmod(a, b);
      if constexpr (kOp == BinaryOp::Mod) {
        const double r = fmod(a, b);
        if (r == 0.0) return copysign_bits(0.0, b);
        return (r < 0.0) != (b < 0.0) ? __dadd_rn(r, b) : r;
      }
      return T{0};
    }
  }
};

template <class T, class Op>
__global__ void binary_kernel(Op op, BroadcastGeometry g, const T* a, const T* b, T* y) {
  for (int64_t i = first_index(); i < g.numel; i += grid_stride()) {
    int64_t at_a = 0;
    int64_t at_b = 0;
    operand_offsets(g, i, at_a, at_b);
    y[i] = op(a[at_a], b[at_b]);
  }
}

template <class T>
__global__ void find_zero_kernel(BroadcastGeometry g, const T* b, unsigned long long* first_zero) {
  for (int64_t i = first_index(); i < g.numel; i += grid_stride()) {
    int64_t at_a = 0;
    int64_t at_b = 0;
    operand_offsets(g, i, at_a, at_b);
    if (b[at_b] == 0) atomicMin(first_zero, static_cast<unsigned long long>(i));
  }
}

// The CPU's round_half_even for doubles: adding and removing 2^52 rounds to nearest even.
__device__ __forceinline__ double round_half_even(double x) {
  constexpr double kIntegral = 4503599627370496.0;
  const double ax = abs_bits(x);
  const double rounded = copysign_bits(__dsub_rn(__dadd_rn(ax, kIntegral), kIntegral), x);
  return ax < kIntegral ? rounded : x;
}

template <UnaryOp kOp, class T>
struct UnaryFn {
  __device__ T operator()(T x) const {
    if constexpr (kOp == UnaryOp::Relu) {
      return x < T{0} ? T{0} : x;
    } else if constexpr (kOp == UnaryOp::Sign) {
      if constexpr (std::is_integral_v<T>) {
        return x > 0 ? T{1} : (x < 0 ? T{-1} : T{0});
      } else {
        const T zero_or_nan = x == T{0} ? T{0} : x;
        return x > T{0} ? T{1} : (x < T{0} ? T{-1} : zero_or_nan);
      }
    } else if constexpr (std::is_integral_v<T>) {
      if constexpr (kOp == UnaryOp::Neg) return wrapping_neg(x);
      if constexpr (kOp == UnaryOp::Abs) return x < 0 ? wrapping_neg(x) : x;
      return T{0};
    } else {
      if constexpr (kOp == UnaryOp::Neg) return neg_bits(x);
      if constexpr (kOp == UnaryOp::Abs) return abs_bits(x);
      if constexpr (kOp == UnaryOp::Sqrt) return __dsqrt_rn(x);
      if constexpr (kOp == UnaryOp::Reciprocal) return __ddiv_rn(1.0, x);
      // libm on the CPU (std::exp, std::log): CUDA's, whose last bit may differ.
      if constexpr (kOp == UnaryOp::Exp) return exp(x);
      if constexpr (kOp == UnaryOp::Log) return log(x);
      if constexpr (kOp == UnaryOp::Round) return round_half_even(x);
      if constexpr (kOp == UnaryOp::Floor) {
        const double r = round_half_even(x);
        return r > x ? __dsub_rn(r, 1.0) : r;
      }
      if constexpr (kOp == UnaryOp::Ceil) {
        const double r = round_half_even(x);
        return r < x ? __dadd_rn(r, 1.0) : r;
      }
      return T{0};
    }
  }
};

template <class T, class Op>
__global__ void unary_kernel(Op op, const T* x, T* y, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) y[i] = op(x[i]);
}

template <class Fn>
cudaError_t with_type(ElementType type, Fn&& fn) {
  switch (type) {
    case ElementType::F64:
      return fn(double{});
    case ElementType::I32:
      return fn(int32_t{});
    case ElementType::I64:
      return fn(int64_t{});
    default:
      return cudaErrorInvalidValue;
  }
}

template <BinaryOp kOp>
cudaError_t launch_binary_of(ElementType type, const BroadcastGeometry& g, const void* a,
                             const void* b, void* y, cudaStream_t stream) {
  return with_type(type, [&](auto tag) {
    using T = decltype(tag);
    binary_kernel<T><<<blocks_for(g.numel), kThreadsPerBlock, 0, stream>>>(
        BinaryFn<kOp, T>{}, g, static_cast<const T*>(a), static_cast<const T*>(b),
        static_cast<T*>(y));
    return cudaGetLastError();
  });
}

template <UnaryOp kOp>
cudaError_t launch_unary_of(ElementType type, const void* x, void* y, int64_t n,
                            cudaStream_t stream) {
  return with_type(type, [&](auto tag) {
    using T = decltype(tag);
    unary_kernel<T><<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(
        UnaryFn<kOp, T>{}, static_cast<const T*>(x), static_cast<T*>(y), n);
    return cudaGetLastError();
  });
}

}  // namespace

cudaError_t launch_typed_binary(BinaryOp op, ElementType type, const BroadcastGeometry& geometry,
                                const void* a, const void* b, void* y, cudaStream_t stream) {
  switch (op) {
    case BinaryOp::Add:
      return launch_binary_of<BinaryOp::Add>(type, geometry, a, b, y, stream);
    case BinaryOp::Sub:
      return launch_binary_of<BinaryOp::Sub>(type, geometry, a, b, y, stream);
    case BinaryOp::Mul:
      return launch_binary_of<BinaryOp::Mul>(type, geometry, a, b, y, stream);
    case BinaryOp::Div:
      return launch_binary_of<BinaryOp::Div>(type, geometry, a, b, y, stream);
    case BinaryOp::Min:
      return launch_binary_of<BinaryOp::Min>(type, geometry, a, b, y, stream);
    case BinaryOp::Max:
      return launch_binary_of<BinaryOp::Max>(type, geometry, a, b, y, stream);
    case BinaryOp::Mod:
      return launch_binary_of<BinaryOp::Mod>(type, geometry, a, b, y, stream);
    case BinaryOp::Fmod:
      return launch_binary_of<BinaryOp::Fmod>(type, geometry, a, b, y, stream);
    case BinaryOp::PRelu:
      return cudaErrorInvalidValue;
  }
  return cudaErrorInvalidValue;
}

cudaError_t launch_find_zero_divisor(ElementType type, const BroadcastGeometry& geometry,
                                     const void* b, unsigned long long* first_zero,
                                     cudaStream_t stream) {
  if (type != ElementType::I32 && type != ElementType::I64) return cudaErrorInvalidValue;
  return with_type(type, [&](auto tag) {
    using T = decltype(tag);
    find_zero_kernel<T><<<blocks_for(geometry.numel), kThreadsPerBlock, 0, stream>>>(
        geometry, static_cast<const T*>(b), first_zero);
    return cudaGetLastError();
  });
}

cudaError_t launch_typed_unary(UnaryOp op, ElementType type, const void* x, void* y, int64_t n,
                               cudaStream_t stream) {
  const bool integer = type == ElementType::I32 || type == ElementType::I64;
  switch (op) {
    case UnaryOp::Neg:
      return launch_unary_of<UnaryOp::Neg>(type, x, y, n, stream);
    case UnaryOp::Abs:
      return launch_unary_of<UnaryOp::Abs>(type, x, y, n, stream);
    case UnaryOp::Sign:
      return launch_unary_of<UnaryOp::Sign>(type, x, y, n, stream);
    case UnaryOp::Relu:
      return launch_unary_of<UnaryOp::Relu>(type, x, y, n, stream);
    case UnaryOp::Sqrt:
      return integer ? cudaErrorInvalidValue
                     : launch_unary_of<UnaryOp::Sqrt>(type, x, y, n, stream);
    case UnaryOp::Reciprocal:
      return integer ? cudaErrorInvalidValue
                     : launch_unary_of<UnaryOp::Reciprocal>(type, x, y, n, stream);
    case UnaryOp::Floor:
      return integer ? cudaErrorInvalidValue
                     : launch_unary_of<UnaryOp::Floor>(type, x, y, n, stream);
    case UnaryOp::Ceil:
      return integer ? cudaErrorInvalidValue
                     : launch_unary_of<UnaryOp::Ceil>(type, x, y, n, stream);
    case UnaryOp::Round:
      return integer ? cudaErrorInvalidValue
                     : launch_unary_of<UnaryOp::Round>(type, x, y, n, stream);
    case UnaryOp::Exp:
      return integer ? cudaErrorInvalidValue : launch_unary_of<UnaryOp::Exp>(type, x, y, n, stream);
    case UnaryOp::Log:
      return integer ? cudaErrorInvalidValue : launch_unary_of<UnaryOp::Log>(type, x, y, n, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace volta::cuda
