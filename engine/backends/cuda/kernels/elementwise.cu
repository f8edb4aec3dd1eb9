// Elementwise-family kernels, f32: Add Sub Mul Div Min Max (and the activation family's PRelu)
// with numpy broadcasting, and Neg Abs Sqrt Reciprocal Exp Log Floor Ceil Round Sign. Each op
// computes what the CPU backend's kernel computes (kernels/elementwise.cpp there), operation for
// operation; the per-op exactness claims are in elementwise_ops.cpp.

#include "device_math.cuh"
#include "map.cuh"

namespace volta::cuda {
namespace {

struct AddOp {
  __device__ float operator()(float a, float b) const { return dmath::add(a, b); }
};
struct SubOp {
  __device__ float operator()(float a, float b) const { return dmath::sub(a, b); }
};
struct MulOp {
  __device__ float operator()(float a, float b) const { return dmath::mul(a, b); }
};
struct DivOp {
  __device__ float operator()(float a, float b) const { return dmath::div(a, b); }
};

// The CPU's Minimum / Maximum: NaN if a is NaN, else a on ties; pure selects, so every bit
// (NaN payloads too) is the operand's.
struct MinOp {
  __device__ float operator()(float a, float b) const { return a != a ? a : (a <= b ? a : b); }
};
struct MaxOp {
  __device__ float operator()(float a, float b) const { return a != a ? a : (a >= b ? a : b); }
};
// The activation family's PRelu (x, slope): slope * x below 0, as the CPU multiplies.
struct PReluOp {
  __device__ float operator()(float x, float slope) const {
    return x < 0.0f ? dmath::mul(slope, x) : x;
  }
};

// The CPU's Mod (fmod=0) and Fmod (fmod=1): fmod is exact on both (fmodf, glibc's fmodf);
// Mod moves a nonzero remainder of the other sign by b (one rounded add) and gives a zero one
// b's sign. NaN stays NaN: both comparisons are false.
struct FmodOp {
  __device__ float operator()(float a, float b) const { return fmodf(a, b); }
};
struct ModOp {
  __device__ float operator()(float a, float b) const {
    const float r = fmodf(a, b);
    if (r == 0.0f) return dmath::copysign_bits(0.0f, b);
    return (r < 0.0f) != (b < 0.0f) ? dmath::add(r, b) : r;
  }
};

struct NegOp {
  __device__ float operator()(float x) const { return dmath::neg_bits(x); }
};
struct AbsOp {
  __device__ float operator()(float x) const { return dmath::abs_bits(x); }
};
struct SqrtOp {
  __device__ float operator()(float x) const { return __fsqrt_rn(x); }
};
struct ExpOp {
  __device__ float operator()(float x) const { return dmath::exp_f32(x); }
};
struct LogOp {
  __device__ float operator()(float x) const { return dmath::log_f32(x); }
};

struct ReciprocalOp {
  __device__ float operator()(float x) const { return dmath::div(1.0f, x); }
};
struct RoundOp {
  __device__ float operator()(float x) const { return dmath::round_half_even_f32(x); }
};
struct FloorOp {
  __device__ float operator()(float x) const {
    const float r = dmath::round_half_even_f32(x);
    return r > x ? dmath::sub(r, 1.0f) : r;
  }
};
struct CeilOp {
  __device__ float operator()(float x) const {
    const float r = dmath::round_half_even_f32(x);
    return r < x ? dmath::add(r, 1.0f) : r;
  }
};
// numpy.sign as the CPU writes it: both zeros give +0, NaN passes.
struct SignOp {
  __device__ float operator()(float x) const {
    const float zero_or_nan = x == 0.0f ? 0.0f : x;
    return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : zero_or_nan);
  }
};

// Both operands walk the output element by element (BroadcastGeometry::contiguous): `vectors`
// groups of four first (map.cuh), then the rest one by one.
template <class Op>
__global__ void f32_binary_contiguous(Op op, const float* a, const float* b, float* y, int64_t n,
                                      int64_t vectors) {
  for (int64_t q = first_index(); q < vectors; q += grid_stride()) {
    store4(y + q * kVector, map4(op, load4(a + q * kVector), load4(b + q * kVector)));
  }
  for (int64_t i = vectors * kVector + first_index(); i < n; i += grid_stride()) {
    y[i] = op(a[i], b[i]);
  }
}

// Any broadcast (map.cuh's operand_offsets).
template <class Op>
__global__ void f32_binary_broadcast(Op op, BroadcastGeometry g, const float* a, const float* b,
                                     float* y) {
  for (int64_t i = first_index(); i < g.numel; i += grid_stride()) {
    int64_t at_a = 0;
    int64_t at_b = 0;
    operand_offsets(g, i, at_a, at_b);
    y[i] = op(a[at_a], b[at_b]);
  }
}

// A broadcast whose innermost merged dim is a multiple of four long, each operand walking it
// (stride 1) or repeating one element (stride 0): a group of four output elements reads four
// consecutive elements of an operand, or one four times, so the offsets are split once per group.
template <class Op>
__global__ void f32_binary_broadcast_vectors(Op op, BroadcastGeometry g, const float* a,
                                             const float* b, float* y) {
  const int last = g.rank - 1;
  const bool a_walks = g.a_strides[last] == 1;
  const bool b_walks = g.b_strides[last] == 1;
  for (int64_t q = first_index(); q < g.numel / kVector; q += grid_stride()) {
    int64_t at_a = 0;
    int64_t at_b = 0;
    operand_offsets(g, q * kVector, at_a, at_b);
    const float4 va = a_walks ? load4(a + at_a) : make_float4(a[at_a], a[at_a], a[at_a], a[at_a]);
    const float4 vb = b_walks ? load4(b + at_b) : make_float4(b[at_b], b[at_b], b[at_b], b[at_b]);
    store4(y + q * kVector, map4(op, va, vb));
  }
}

// Whether f32_binary_broadcast_vectors can run g: an innermost dim of whole groups, each
// operand walking it or repeating, and the pointers that are read or written as vectors aligned.
bool broadcasts_by_vectors(const BroadcastGeometry& g, const float* a, const float* b,
                           const float* y) {
  if (g.rank == 0) return false;
  const int last = g.rank - 1;
  const int64_t sa = g.a_strides[last];
  const int64_t sb = g.b_strides[last];
  return g.dims[last] % kVector == 0 && (sa == 0 || sa == 1) && (sb == 0 || sb == 1) &&
         vector_aligned(y) && (sa == 0 || vector_aligned(a)) && (sb == 0 || vector_aligned(b));
}

template <class Op>
cudaError_t launch_binary(const BroadcastGeometry& g, const float* a, const float* b, float* y,
                          cudaStream_t stream) {
  if (g.contiguous()) {
    const bool aligned = vector_aligned(a) && vector_aligned(b) && vector_aligned(y);
    const int64_t vectors = aligned ? g.numel / kVector : 0;
    f32_binary_contiguous<<<blocks_for(g.numel - vectors * (kVector - 1)), kThreadsPerBlock, 0,
                            stream>>>(Op{}, a, b, y, g.numel, vectors);
  } else if (broadcasts_by_vectors(g, a, b, y)) {
    f32_binary_broadcast_vectors<<<blocks_for(g.numel / kVector), kThreadsPerBlock, 0, stream>>>(
        Op{}, g, a, b, y);
  } else {
    f32_binary_broadcast<<<blocks_for(g.numel), kThreadsPerBlock, 0, stream>>>(Op{}, g, a, b, y);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_f32_binary(BinaryOp op, const BroadcastGeometry& geometry, const float* a,
                              const float* b, float* y, cudaStream_t stream) {
  switch (op) {
    case BinaryOp::Add:
      return launch_binary<AddOp>(geometry, a, b, y, stream);
    case BinaryOp::Sub:
      return launch_binary<SubOp>(geometry, a, b, y, stream);
    case BinaryOp::Mul:
      return launch_binary<MulOp>(geometry, a, b, y, stream);
    case BinaryOp::Div:
      return launch_binary<DivOp>(geometry, a, b, y, stream);
    case BinaryOp::Min:
      return launch_binary<MinOp>(geometry, a, b, y, stream);
    case BinaryOp::Max:
      return launch_binary<MaxOp>(geometry, a, b, y, stream);
    case BinaryOp::PRelu:
      return launch_binary<PReluOp>(geometry, a, b, y, stream);
    case BinaryOp::Mod:
      return launch_binary<ModOp>(geometry, a, b, y, stream);
    case BinaryOp::Fmod:
      return launch_binary<FmodOp>(geometry, a, b, y, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t launch_f32_unary(UnaryOp op, const float* x, float* y, int64_t n, cudaStream_t stream) {
  switch (op) {
    case UnaryOp::Neg:
      return launch_f32_map(NegOp{}, x, y, n, stream);
    case UnaryOp::Abs:
      return launch_f32_map(AbsOp{}, x, y, n, stream);
    case UnaryOp::Sqrt:
      return launch_f32_map(SqrtOp{}, x, y, n, stream);
    case UnaryOp::Exp:
      return launch_f32_map(ExpOp{}, x, y, n, stream);
    case UnaryOp::Log:
      return launch_f32_map(LogOp{}, x, y, n, stream);
    case UnaryOp::Reciprocal:
      return launch_f32_map(ReciprocalOp{}, x, y, n, stream);
    case UnaryOp::Floor:
      return launch_f32_map(FloorOp{}, x, y, n, stream);
    case UnaryOp::Ceil:
      return launch_f32_map(CeilOp{}, x, y, n, stream);
    case UnaryOp::Round:
      return launch_f32_map(RoundOp{}, x, y, n, stream);
    case UnaryOp::Sign:
      return launch_f32_map(SignOp{}, x, y, n, stream);
    case UnaryOp::Relu:
      break;  // activation.cu's
  }
  return cudaErrorInvalidValue;
}

// One of this file's kernels stands for all: they are built for the same architectures.
cudaError_t kernel_image_status() {
  cudaFuncAttributes attributes{};
  return cudaFuncGetAttributes(&attributes, f32_map_kernel<NegOp>);
}

}  // namespace volta::cuda
