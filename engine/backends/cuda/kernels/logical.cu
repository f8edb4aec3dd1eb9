// Logical-family kernels: Equal Less Greater LessOrEqual GreaterOrEqual with numpy broadcasting,
// And Or Xor Not on bools, IsNaN IsInf. Each result is a comparison's 0 or 1, computed as the
// CPU backend's kernels compute it (kernels/logical.cpp there); the claims are in
// logical_ops.cpp.

#include <type_traits>

#include "map.cuh"

namespace volta::cuda {
namespace {

template <class T>
struct EqualOp {
  __device__ uint8_t operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, uint8_t>) {
      return (a != 0) == (b != 0);
    } else {
      return a == b;
    }
  }
};
template <class T>
struct LessOp {
  __device__ uint8_t operator()(T a, T b) const { return a < b; }
};
template <class T>
struct GreaterOp {
  __device__ uint8_t operator()(T a, T b) const { return a > b; }
};
template <class T>
struct LessOrEqualOp {
  __device__ uint8_t operator()(T a, T b) const { return a <= b; }
};
template <class T>
struct GreaterOrEqualOp {
  __device__ uint8_t operator()(T a, T b) const { return a >= b; }
};
struct AndOp {
  __device__ uint8_t operator()(uint8_t a, uint8_t b) const { return (a != 0) & (b != 0); }
};
struct OrOp {
  __device__ uint8_t operator()(uint8_t a, uint8_t b) const { return (a | b) != 0; }
};
struct XorOp {
  __device__ uint8_t operator()(uint8_t a, uint8_t b) const { return (a != 0) != (b != 0); }
};

// Any broadcast (map.cuh's operand_offsets).
template <class T, class Op>
__global__ void broadcast_kernel(Op op, BroadcastGeometry g, const T* a, const T* b, uint8_t* y) {
  for (int64_t i = first_index(); i < g.numel; i += grid_stride()) {
    int64_t at_a = 0;
    int64_t at_b = 0;
    operand_offsets(g, i, at_a, at_b);
    y[i] = op(a[at_a], b[at_b]);
  }
}

template <class T, class Op>
cudaError_t launch_broadcast(const BroadcastGeometry& g, const void* a, const void* b, uint8_t* y,
                             cudaStream_t stream) {
  broadcast_kernel<T><<<blocks_for(g.numel), kThreadsPerBlock, 0, stream>>>(
      Op{}, g, static_cast<const T*>(a), static_cast<const T*>(b), y);
  return cudaGetLastError();
}

template <class T>
cudaError_t launch_compare_of(CompareOp op, const BroadcastGeometry& g, const void* a,
                              const void* b, uint8_t* y, cudaStream_t stream) {
  switch (op) {
    case CompareOp::Equal:
      return launch_broadcast<T, EqualOp<T>>(g, a, b, y, stream);
    case CompareOp::Less:
      return launch_broadcast<T, LessOp<T>>(g, a, b, y, stream);
    case CompareOp::Greater:
      return launch_broadcast<T, GreaterOp<T>>(g, a, b, y, stream);
    case CompareOp::LessOrEqual:
      return launch_broadcast<T, LessOrEqualOp<T>>(g, a, b, y, stream);
    case CompareOp::GreaterOrEqual:
      return launch_broadcast<T, GreaterOrEqualOp<T>>(g, a, b, y, stream);
  }
  return cudaErrorInvalidValue;
}

__global__ void not_kernel(const uint8_t* x, uint8_t* y, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) y[i] = x[i] == 0;
}

// The CPU's IsInf: each detected infinity is a value to match, an undetected one NaN, which
// matches nothing.
template <class T>
__global__ void classify_kernel(ClassifyParams p, const T* x, uint8_t* y, int64_t n) {
  const T inf = static_cast<T>(__int_as_float(0x7f800000));
  const T nan = static_cast<T>(__int_as_float(0x7fc00000));
  const T positive = p.detect_positive ? inf : nan;
  const T negative = p.detect_negative ? -inf : nan;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const T v = x[i];
    y[i] = p.is_nan ? v != v : (v == positive) | (v == negative);
  }
}

}  // namespace

cudaError_t launch_compare(CompareOp op, ElementType type, const BroadcastGeometry& geometry,
                           const void* a, const void* b, uint8_t* y, cudaStream_t stream) {
  switch (type) {
    case ElementType::F32:
      return launch_compare_of<float>(op, geometry, a, b, y, stream);
    case ElementType::F64:
      return launch_compare_of<double>(op, geometry, a, b, y, stream);
    case ElementType::I32:
      return launch_compare_of<int32_t>(op, geometry, a, b, y, stream);
    case ElementType::I64:
      return launch_compare_of<int64_t>(op, geometry, a, b, y, stream);
    case ElementType::Bool:
      return launch_compare_of<uint8_t>(op, geometry, a, b, y, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t launch_bool_binary(BoolOp op, const BroadcastGeometry& geometry, const uint8_t* a,
                               const uint8_t* b, uint8_t* y, cudaStream_t stream) {
  switch (op) {
    case BoolOp::And:
      return launch_broadcast<uint8_t, AndOp>(geometry, a, b, y, stream);
    case BoolOp::Or:
      return launch_broadcast<uint8_t, OrOp>(geometry, a, b, y, stream);
    case BoolOp::Xor:
      return launch_broadcast<uint8_t, XorOp>(geometry, a, b, y, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t launch_not(const uint8_t* x, uint8_t* y, int64_t n, cudaStream_t stream) {
  not_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}

cudaError_t launch_classify(const ClassifyParams& params, ElementType type, const void* x,
                            uint8_t* y, int64_t n, cudaStream_t stream) {
  if (type == ElementType::F32) {
    classify_kernel<float><<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(
        params, static_cast<const float*>(x), y, n);
  } else if (type == ElementType::F64) {
    classify_kernel<double><<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(
        params, static_cast<const double*>(x), y, n);
  } else {
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace volta::cuda
