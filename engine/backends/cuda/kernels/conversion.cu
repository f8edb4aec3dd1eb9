// Conversion kernels of the elementwise family: Cast, Where and Clip, computing what the CPU
// backend's kernels compute (kernels/elementwise_cast.cpp and elementwise_where.cpp there).
// The per-op exactness claims are in conversion_ops.cpp.

#include <type_traits>

#include "map.cuh"

namespace volta::cuda {
namespace {

// The CPU's Convert: anything to bool is x != 0 (NaN is true), bool to anything 0 or 1, else
// the language's conversion, which CUDA rounds to nearest as x86 does (int to float, f64 to
// f32) or wraps (int to int).
template <class From, class To, bool kToBool, bool kFromBool>
__global__ void cast_kernel(const From* x, To* y, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    if constexpr (kToBool) {
      y[i] = x[i] != From{0} ? To{1} : To{0};
    } else if constexpr (kFromBool) {
      y[i] = x[i] != 0 ? To{1} : To{0};
    } else {
      y[i] = static_cast<To>(x[i]);
    }
  }
}

template <ElementType kType, class T>
struct Tagged {
  using type = T;
  static constexpr ElementType kElement = kType;
};
using F32 = Tagged<ElementType::F32, float>;
using F64 = Tagged<ElementType::F64, double>;
using I32 = Tagged<ElementType::I32, int32_t>;
using I64 = Tagged<ElementType::I64, int64_t>;
using Bool = Tagged<ElementType::Bool, uint8_t>;

template <class Fn>
cudaError_t visit_element(ElementType type, Fn&& fn) {
  switch (type) {
    case ElementType::F32:
      return fn(F32{});
    case ElementType::F64:
      return fn(F64{});
    case ElementType::I32:
      return fn(I32{});
    case ElementType::I64:
      return fn(I64{});
    case ElementType::Bool:
      return fn(Bool{});
  }
  return cudaErrorInvalidValue;
}

// out = condition ? x : y over the merged dims, innermost first.
template <class U>
__global__ void where_kernel(TernaryGeometry g, const uint8_t* condition, const U* x, const U* y,
                             U* out) {
  for (int64_t i = first_index(); i < g.numel; i += grid_stride()) {
    int64_t rest = i;
    int64_t at[kWhereOperands] = {0, 0, 0};
    for (int d = g.rank - 1; d >= 0; --d) {
      const int64_t index = rest % g.dims[d];
      rest /= g.dims[d];
      for (int k = 0; k < kWhereOperands; ++k) at[k] += index * g.strides[k][d];
    }
    out[i] = condition[at[0]] != 0 ? x[at[1]] : y[at[2]];
  }
}

template <class U>
cudaError_t launch_where_of(const TernaryGeometry& g, const uint8_t* condition, const void* x,
                            const void* y, void* out, cudaStream_t stream) {
  where_kernel<U><<<blocks_for(g.numel), kThreadsPerBlock, 0, stream>>>(
      g, condition, static_cast<const U*>(x), static_cast<const U*>(y), static_cast<U*>(out));
  return cudaGetLastError();
}

// The CPU's truncation_fits: whether v truncates toward zero into the integer type. NaN fails
// every comparison. -2^63 - 1 is not a double and none lies between it and -2^63, so the i64
// lower bound is inclusive.
template <class To>
__device__ bool truncation_fits(double v) {
  if constexpr (std::is_same_v<To, int32_t>) {
    return v > -2147483649.0 && v < 2147483648.0;
  } else {
    return v >= -9223372036854775808.0 && v < 9223372036854775808.0;
  }
}

template <class From, class To>
__global__ void find_unconvertible_kernel(const From* x, int64_t n, unsigned long long* first_bad) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    if (!truncation_fits<To>(static_cast<double>(x[i]))) {
      atomicMin(first_bad, static_cast<unsigned long long>(i));
    }
  }
}

template <class From, class To>
cudaError_t launch_find_of(const void* x, int64_t n, unsigned long long* first_bad,
                           cudaStream_t stream) {
  find_unconvertible_kernel<From, To>
      <<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(static_cast<const From*>(x), n, first_bad);
  return cudaGetLastError();
}

struct ClipOp {
  float lower, upper;
  __device__ float operator()(float x) const {
    const float raised = x < lower ? lower : x;
    return raised > upper ? upper : raised;
  }
};

template <class T>
__global__ void clip_kernel(T lower, T upper, const T* x, T* y, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const T raised = x[i] < lower ? lower : x[i];
    y[i] = raised > upper ? upper : raised;
  }
}

template <class T>
cudaError_t launch_clip_of(T lower, T upper, const void* x, void* y, int64_t n,
                           cudaStream_t stream) {
  clip_kernel<T><<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(
      lower, upper, static_cast<const T*>(x), static_cast<T*>(y), n);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_cast(ElementType from, ElementType to, const void* x, void* y, int64_t n,
                        cudaStream_t stream) {
  return visit_element(from, [&](auto from_tag) {
    return visit_element(to, [&](auto to_tag) {
      using From = typename decltype(from_tag)::type;
      using To = typename decltype(to_tag)::type;
      constexpr bool kToBool = decltype(to_tag)::kElement == ElementType::Bool;
      constexpr bool kFromBool = decltype(from_tag)::kElement == ElementType::Bool;
      cast_kernel<From, To, kToBool, kFromBool><<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(
          static_cast<const From*>(x), static_cast<To*>(y), n);
      return cudaGetLastError();
    });
  });
}

cudaError_t launch_find_unconvertible(ElementType from, ElementType to, const void* x, int64_t n,
                                      unsigned long long* first_bad, cudaStream_t stream) {
  const bool to_i32 = to == ElementType::I32;
  if (to != ElementType::I32 && to != ElementType::I64) return cudaErrorInvalidValue;
  if (from == ElementType::F32) {
    return to_i32 ? launch_find_of<float, int32_t>(x, n, first_bad, stream)
                  : launch_find_of<float, int64_t>(x, n, first_bad, stream);
  }
  if (from == ElementType::F64) {
    return to_i32 ? launch_find_of<double, int32_t>(x, n, first_bad, stream)
                  : launch_find_of<double, int64_t>(x, n, first_bad, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t launch_where(int element_bytes, const TernaryGeometry& geometry,
                         const uint8_t* condition, const void* x, const void* y, void* out,
                         cudaStream_t stream) {
  switch (element_bytes) {
    case 1:
      return launch_where_of<uint8_t>(geometry, condition, x, y, out, stream);
    case 4:
      return launch_where_of<uint32_t>(geometry, condition, x, y, out, stream);
    case 8:
      return launch_where_of<uint64_t>(geometry, condition, x, y, out, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t launch_typed_clip(ElementType type, const ClipBounds& bounds, const void* x, void* y,
                              int64_t n, cudaStream_t stream) {
  switch (type) {
    case ElementType::F64:
      return launch_clip_of<double>(bounds.f64[0], bounds.f64[1], x, y, n, stream);
    case ElementType::I32:
      return launch_clip_of<int32_t>(static_cast<int32_t>(bounds.integer[0]),
                                     static_cast<int32_t>(bounds.integer[1]), x, y, n, stream);
    case ElementType::I64:
      return launch_clip_of<int64_t>(bounds.integer[0], bounds.integer[1], x, y, n, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t launch_f32_clip(float lower, float upper, const float* x, float* y, int64_t n,
                            cudaStream_t stream) {
  return launch_f32_map(ClipOp{lower, upper}, x, y, n, stream);
}

}  // namespace volta::cuda
