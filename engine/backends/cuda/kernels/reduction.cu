// Reduce* kernels, f32 and f64 (and i32, i64 where the op has them): Sum Mean Max Min Prod
// SumSquare L1 L2, and the line scans ArgMax ArgMin CumSum, each computing what the
// CPU backend's kernel computes (cpu/kernels/reduction.cpp), operation for operation, over the
// same tree (tree.cuh). The per-op exactness claims are in reduction_ops.cpp.
//
// Pass 1: a block takes 32 (leaf, output) items, 8 threads each, one per lane; thread `lane`
// accumulates the leaf's elements lane, lane + 8, ... in index order, and the lanes combine
// pairwise. A row of one leaf is finished there; otherwise the leaf's partial goes to the
// workspace at [leaf][output], and pass 2 combines each output's partials pairwise, level by
// level, in leaf order.

#include <cstdint>
#include <type_traits>
#include <utility>

#include "device_math.cuh"
#include "map.cuh"
#include "tree.cuh"

namespace volta::cuda {
namespace {

__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float div_rn(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ double div_rn(double a, double b) { return __ddiv_rn(a, b); }
__device__ __forceinline__ float to(float, int64_t n) { return __ll2float_rn(n); }
__device__ __forceinline__ double to(double, int64_t n) { return __ll2double_rn(n); }
__device__ __forceinline__ float abs_of(float x) { return dmath::abs_bits(x); }
__device__ __forceinline__ double abs_of(double x) {
  return __longlong_as_double(__double_as_longlong(x) & 0x7fffffffffffffffll);
}

// Integers wrap around (two's complement) as on the CPU: the arithmetic runs unsigned.
template <class T, class U>
__device__ __forceinline__ T wrap_add(T a, T b) {
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <class T, class U>
__device__ __forceinline__ T wrap_mul(T a, T b) {
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}
__device__ __forceinline__ int32_t add_rn(int32_t a, int32_t b) {
  return wrap_add<int32_t, uint32_t>(a, b);
}
__device__ __forceinline__ int64_t add_rn(int64_t a, int64_t b) {
  return wrap_add<int64_t, uint64_t>(a, b);
}
__device__ __forceinline__ int32_t mul_rn(int32_t a, int32_t b) {
  return wrap_mul<int32_t, uint32_t>(a, b);
}
__device__ __forceinline__ int64_t mul_rn(int64_t a, int64_t b) {
  return wrap_mul<int64_t, uint64_t>(a, b);
}
// |lowest| does not fit: it wraps to lowest.
__device__ __forceinline__ int32_t abs_of(int32_t a) {
  return a < 0 ? static_cast<int32_t>(0u - static_cast<uint32_t>(a)) : a;
}
__device__ __forceinline__ int64_t abs_of(int64_t a) {
  return a < 0 ? static_cast<int64_t>(uint64_t{0} - static_cast<uint64_t>(a)) : a;
}

// The identities of max and min: -inf / +inf for floats, the type's limits for integers.
template <class T>
__device__ __forceinline__ T highest();
template <>
__device__ __forceinline__ float highest<float>() {
  return __uint_as_float(0x7f800000u);
}
template <>
__device__ __forceinline__ double highest<double>() {
  return __longlong_as_double(0x7ff0000000000000ll);
}
template <>
__device__ __forceinline__ int32_t highest<int32_t>() {
  return INT32_MAX;
}
template <>
__device__ __forceinline__ int64_t highest<int64_t>() {
  return INT64_MAX;
}
template <class T>
__device__ __forceinline__ T lowest();
template <>
__device__ __forceinline__ float lowest<float>() {
  return __uint_as_float(0xff800000u);
}
template <>
__device__ __forceinline__ double lowest<double>() {
  return __longlong_as_double(static_cast<long long>(0xfff0000000000000ull));
}
template <>
__device__ __forceinline__ int32_t lowest<int32_t>() {
  return INT32_MIN;
}
template <>
__device__ __forceinline__ int64_t lowest<int64_t>() {
  return INT64_MIN;
}

// The CPU's ops (reduction.cpp there): map an element to a term, combine terms, finish a row of
// `count` elements. Accumulators are the CPU's: the input type, double for ReduceL2 (Wide), a
// scaled product for ReduceProd.
template <class T, class A>
struct SumOf {
  using Acc = A;
  __device__ A identity() const { return A{0}; }
  __device__ A map(T x) const { return static_cast<A>(x); }
  __device__ A combine(A a, A b) const { return add_rn(a, b); }
  __device__ T finish(A total, int64_t /*count*/) const { return static_cast<T>(total); }
};
template <class T>
struct SumOp : SumOf<T, T> {};
template <class T>
struct MeanOp : SumOf<T, T> {
  // An empty row gives 0 / 0 = NaN, the mean of nothing.
  __device__ T finish(T total, int64_t count) const { return div_rn(total, to(T{}, count)); }
};
template <class T>
struct SumSquareOp : SumOf<T, T> {
  __device__ T map(T x) const { return mul_rn(x, x); }
};
template <class T>
struct L1Op : SumOf<T, T> {
  __device__ T map(T x) const { return abs_of(x); }
};
// Squares in double (exact for f32), summed in double, one square root rounded to nearest,
// then rounded to T: std::sqrt(double) and static_cast<T> on the CPU.
template <class T>
struct L2Op : SumOf<T, double> {
  __device__ double map(T x) const {
    const auto d = static_cast<double>(x);
    return __dmul_rn(d, d);
  }
  __device__ T finish(double total, int64_t /*count*/) const {
    return static_cast<T>(__dsqrt_rn(total));
  }
};
// The CPU's max_propagating_nan / min_propagating_nan: a NaN operand on the left stays, one on
// the right replaces; otherwise the left operand is kept on ties.
template <class T>
struct MaxOp : SumOf<T, T> {
  __device__ T identity() const { return lowest<T>(); }
  __device__ T combine(T a, T b) const { return (a == a && !(b <= a)) ? b : a; }
};
template <class T>
struct MinOp : SumOf<T, T> {
  __device__ T identity() const { return highest<T>(); }
  __device__ T combine(T a, T b) const { return (a == a && !(b >= a)) ? b : a; }
};

// The CPU's ScaledProduct: mantissa in [0.5, 1) (or 0, NaN, infinite) times 2^exponent,
// renormalized by frexp at every step, rounded once at the end by ldexp. frexp and ldexp are
// exact; the mantissa product is one IEEE double multiply.
struct ScaledProduct {
  double mantissa;
  int64_t exponent;
};
__device__ __forceinline__ ScaledProduct normalized(double mantissa, int64_t exponent) {
  int e = 0;
  const double m = frexp(mantissa, &e);
  return {m, isfinite(m) ? exponent + e : 0};
}
template <class T>
struct ScaledProdOp {
  using Acc = ScaledProduct;
  __device__ Acc identity() const { return {1.0, 0}; }
  __device__ Acc map(T x) const { return normalized(static_cast<double>(x), 0); }
  __device__ Acc combine(Acc a, Acc b) const {
    return normalized(__dmul_rn(a.mantissa, b.mantissa), a.exponent + b.exponent);
  }
  __device__ T finish(Acc total, int64_t /*count*/) const {
    constexpr int64_t kBeyondAnyRange = 4096;  // past f64's exponents either way
    const int64_t e = total.exponent < -kBeyondAnyRange  ? -kBeyondAnyRange
                      : total.exponent > kBeyondAnyRange ? kBeyondAnyRange
                                                         : total.exponent;
    return static_cast<T>(ldexp(total.mantissa, static_cast<int>(e)));
  }
};

// Integer products wrap around in their own type.
template <class T>
struct WrappingProdOp : SumOf<T, T> {
  __device__ T identity() const { return T{1}; }
  __device__ T combine(T a, T b) const { return mul_rn(a, b); }
};
template <class T>
using ProdOp = std::conditional_t<std::is_floating_point_v<T>, ScaledProdOp<T>, WrappingProdOp<T>>;

// ReduceLogSumExp's second pass, the CPU's ExpSumAboveMaxOp: the terms e^(x - max of the row),
// summed as ReduceSum sums; a row whose max is not finite has its answer already (-inf, +inf
// or NaN), else max + log(sum). exp and log are libm's there (expf, logf for f32) and CUDA's
// double functions here (rounded once for f32).
__device__ __forceinline__ float exp_of(float v) {
  return __double2float_rn(exp(static_cast<double>(v)));
}
__device__ __forceinline__ double exp_of(double v) { return exp(v); }
__device__ __forceinline__ float log_of(float v) {
  return __double2float_rn(log(static_cast<double>(v)));
}
__device__ __forceinline__ double log_of(double v) { return log(v); }
__device__ __forceinline__ float sub_rn(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ double sub_rn(double a, double b) { return __dsub_rn(a, b); }

template <class T>
struct ExpSumAboveMaxOp : SumOf<T, T> {
  const T* row_max = nullptr;
  __device__ T map_at(int64_t output, T x) const { return exp_of(sub_rn(x, row_max[output])); }
  __device__ T finish_at(int64_t output, T total, int64_t /*count*/) const {
    const T max = row_max[output];
    return isfinite(max) ? add_rn(max, log_of(total)) : max;
  }
};

// An op's term and result; ops with a `row_max` (ExpSumAboveMaxOp) read their output's.
template <class Op, class = void>
struct ReadsRowMax : std::false_type {};
template <class Op>
struct ReadsRowMax<Op, std::void_t<decltype(std::declval<Op>().row_max)>> : std::true_type {};
template <class Op, class T>
__device__ __forceinline__ typename Op::Acc term_of(const Op& op, int64_t output, T x) {
  if constexpr (ReadsRowMax<Op>::value) {
    return op.map_at(output, x);
  } else {
    return op.map(x);
  }
}
template <class Op, class A>
__device__ __forceinline__ auto row_result(const Op& op, int64_t output, A total, int64_t count) {
  if constexpr (ReadsRowMax<Op>::value) {
    return op.finish_at(output, total, count);
  } else {
    return op.finish(total, count);
  }
}

// Walks a row's elements `step` apart: an odometer over the reduced extents.
struct RowWalker {
  int64_t index[kMaxReduceExtents];
  int64_t offset;

  __device__ RowWalker(const ReduceExtents& e, int64_t flat) : offset(0) {
    for (int d = e.rank - 1; d >= 0; --d) {
      index[d] = flat % e.sizes[d];
      flat /= e.sizes[d];
      offset += index[d] * e.strides[d];
    }
  }
  __device__ void advance(const ReduceExtents& e, int64_t step) {
    int64_t carry = step;
    for (int d = e.rank - 1; d >= 0 && carry != 0; --d) {
      const int64_t sum = index[d] + carry;
      carry = sum / e.sizes[d];
      const int64_t now = sum - carry * e.sizes[d];
      offset += (now - index[d]) * e.strides[d];
      index[d] = now;
    }
  }
};

constexpr int kItemsPerBlock = 32;
constexpr int kLeafThreads = kItemsPerBlock * kTreeLanes;  // 256
constexpr int64_t kMaxLeafBlocks = 65536;

// Lanes run fastest along the threads (neighbouring threads read neighbouring elements) when
// the innermost reduced extent is contiguous; otherwise the items do (neighbouring outputs of
// a kept innermost axis). Either way each lane computes the same thing.
template <class T, class Op>
__global__ void __launch_bounds__(kLeafThreads)
    reduce_leaves(Op op, ReduceGeometry g, int64_t leaves, const T* x, T* y,
                  typename Op::Acc* partials, bool lanes_fastest) {
  using A = typename Op::Acc;
  __shared__ A lanes[kTreeLanes][kItemsPerBlock];
  const int64_t items = leaves * g.outputs;  // item = leaf * outputs + output
  const int lane = lanes_fastest ? threadIdx.x % kTreeLanes : threadIdx.x / kItemsPerBlock;
  const int slot = lanes_fastest ? threadIdx.x / kTreeLanes : threadIdx.x % kItemsPerBlock;
  const bool single_extent = g.reduced.rank <= 1;
  const int64_t unit_stride = g.reduced.rank == 1 ? g.reduced.strides[0] : 0;
  for (int64_t first_item = static_cast<int64_t>(blockIdx.x) * kItemsPerBlock; first_item < items;
       first_item += static_cast<int64_t>(gridDim.x) * kItemsPerBlock) {
    const int64_t item = first_item + slot;
    A acc = op.identity();
    if (item < items) {
      const int64_t leaf = item / g.outputs;
      const int64_t o = item % g.outputs;
      const T* row = x + tree::offset_of(g.kept, o);
      const int64_t first = leaf * kTreeLeaf;
      const int64_t count = tree::leaf_length(g.row_length, leaf);
      if (single_extent) {
        for (int64_t i = lane; i < count; i += kTreeLanes) {
          acc = op.combine(acc, term_of(op, o, row[(first + i) * unit_stride]));
        }
      } else if (lane < count) {
        RowWalker walk(g.reduced, first + lane);
        for (int64_t i = lane; i < count; i += kTreeLanes) {
          acc = op.combine(acc, term_of(op, o, row[walk.offset]));
          walk.advance(g.reduced, kTreeLanes);
        }
      }
    }
    lanes[lane][slot] = acc;
    __syncthreads();
    if (threadIdx.x < kItemsPerBlock && first_item + threadIdx.x < items) {
      const int64_t mine = first_item + threadIdx.x;
      A values[kTreeLanes];
      for (int l = 0; l < kTreeLanes; ++l) values[l] = lanes[l][threadIdx.x];
      const A leaf_result = tree::combine_pairwise(values, kTreeLanes, 1,
                                                   [&op](A a, A b) { return op.combine(a, b); });
      if (leaves == 1) {
        y[mine] = row_result(op, mine, leaf_result, g.row_length);
      } else {
        partials[mine] = leaf_result;
      }
    }
    __syncthreads();
  }
}

// Each output's leaf partials ([leaf][output] in the workspace) combined pairwise in leaf order.
template <class T, class Op>
__global__ void combine_leaves(Op op, int64_t outputs, int64_t leaves, int64_t row_length,
                               typename Op::Acc* partials, T* y) {
  using A = typename Op::Acc;
  for (int64_t o = first_index(); o < outputs; o += grid_stride()) {
    const A total = tree::combine_pairwise(partials + o, leaves, outputs,
                                           [&op](A a, A b) { return op.combine(a, b); });
    y[o] = row_result(op, o, total, row_length);
  }
}

template <class T, class Op>
cudaError_t launch_op(const ReduceGeometry& g, const void* x, void* y, void* workspace,
                      cudaStream_t stream, const Op& op = Op{}) {
  using A = typename Op::Acc;
  const int64_t items = g.leaves() * g.outputs;
  const int64_t blocks = (items + kItemsPerBlock - 1) / kItemsPerBlock;
  const bool lanes_fastest = g.reduced.rank == 0 || g.reduced.strides[g.reduced.rank - 1] == 1;
  auto* partials = static_cast<A*>(workspace);
  reduce_leaves<T, Op><<<static_cast<unsigned>(blocks < kMaxLeafBlocks ? blocks : kMaxLeafBlocks),
                         kLeafThreads, 0, stream>>>(op, g, g.leaves(), static_cast<const T*>(x),
                                                    static_cast<T*>(y), partials, lanes_fastest);
  if (g.leaves() > 1) {
    combine_leaves<T, Op><<<blocks_for(g.outputs), kThreadsPerBlock, 0, stream>>>(
        op, g.outputs, g.leaves(), g.row_length, partials, static_cast<T*>(y));
  }
  return cudaGetLastError();
}

// Mean and L2 are float ops (the op table's types); selection never asks for them on integers.
template <class T>
cudaError_t launch_typed(ReduceOp op, const ReduceGeometry& g, const void* x, void* y,
                         void* workspace, cudaStream_t stream) {
  constexpr bool kFloat = std::is_floating_point_v<T>;
  switch (op) {
    case ReduceOp::Sum:
      return launch_op<T, SumOp<T>>(g, x, y, workspace, stream);
    case ReduceOp::Mean:
      if constexpr (kFloat) return launch_op<T, MeanOp<T>>(g, x, y, workspace, stream);
      break;
    case ReduceOp::Max:
      return launch_op<T, MaxOp<T>>(g, x, y, workspace, stream);
    case ReduceOp::Min:
      return launch_op<T, MinOp<T>>(g, x, y, workspace, stream);
    case ReduceOp::Prod:
      return launch_op<T, ProdOp<T>>(g, x, y, workspace, stream);
    case ReduceOp::SumSquare:
      return launch_op<T, SumSquareOp<T>>(g, x, y, workspace, stream);
    case ReduceOp::L1:
      return launch_op<T, L1Op<T>>(g, x, y, workspace, stream);
    case ReduceOp::L2:
      if constexpr (kFloat) return launch_op<T, L2Op<T>>(g, x, y, workspace, stream);
      break;
  }
  return cudaErrorInvalidValue;
}

// ---- ArgMax / ArgMin and CumSum: one thread per line, scanning it in index order ----

__device__ __forceinline__ int64_t line_start(const RowGeometry& g, int64_t line) {
  return (line / g.inner) * g.length * g.inner + line % g.inner;
}

// The CPU's `replaces`: whether `candidate`, met after `best`, takes its place.
template <class T, bool kMax>
__device__ __forceinline__ bool replaces(T candidate, T best, bool select_last) {
  if (best != best) return select_last && candidate != candidate;
  if (candidate != candidate) return true;
  if (candidate == best) return select_last;
  return kMax ? candidate > best : candidate < best;
}

template <class T, bool kMax>
__global__ void arg_extreme(RowGeometry g, bool select_last, const T* x, int64_t* indices) {
  for (int64_t line = first_index(); line < g.rows; line += grid_stride()) {
    const T* xl = x + line_start(g, line);
    T best = xl[0];
    int64_t at = 0;
    for (int64_t a = 1; a < g.length; ++a) {
      const T v = xl[a * g.inner];
      if (replaces<T, kMax>(v, best, select_last)) {
        best = v;
        at = a;
      }
    }
    indices[line] = at;  // the output is [outer, inner] (keepdims only adds a 1)
  }
}

template <class T>
__global__ void cumsum_lines(RowGeometry g, bool exclusive, bool reverse, const T* x, T* y) {
  using A = std::conditional_t<std::is_same_v<T, float>, double, T>;  // the CPU's Wide<T>
  for (int64_t line = first_index(); line < g.rows; line += grid_stride()) {
    const int64_t start = line_start(g, line);
    A sum{0};
    for (int64_t step = 0; step < g.length; ++step) {
      const int64_t at = start + (reverse ? g.length - 1 - step : step) * g.inner;
      const A value = static_cast<A>(x[at]);
      if (exclusive) y[at] = static_cast<T>(sum);
      sum = add_rn(sum, value);
      if (!exclusive) y[at] = static_cast<T>(sum);
    }
  }
}

template <class T>
cudaError_t launch_arg_typed(bool max, bool select_last, const RowGeometry& g, const void* x,
                             int64_t* indices, cudaStream_t stream) {
  if (max) {
    arg_extreme<T, true><<<blocks_for(g.rows), kThreadsPerBlock, 0, stream>>>(
        g, select_last, static_cast<const T*>(x), indices);
  } else {
    arg_extreme<T, false><<<blocks_for(g.rows), kThreadsPerBlock, 0, stream>>>(
        g, select_last, static_cast<const T*>(x), indices);
  }
  return cudaGetLastError();
}

template <class T>
cudaError_t launch_cumsum_typed(const RowGeometry& g, bool exclusive, bool reverse, const void* x,
                                void* y, cudaStream_t stream) {
  cumsum_lines<T><<<blocks_for(g.rows), kThreadsPerBlock, 0, stream>>>(
      g, exclusive, reverse, static_cast<const T*>(x), static_cast<T*>(y));
  return cudaGetLastError();
}

template <class T>
int64_t partial_bytes(ReduceOp op) {
  switch (op) {
    case ReduceOp::Prod:
      return std::is_floating_point_v<T> ? sizeof(ScaledProduct) : sizeof(T);
    case ReduceOp::L2:
      return sizeof(double);
    default:
      return sizeof(T);
  }
}

// Workspace of ReduceLogSumExp: the row maxima, then the leaf partials both passes use in turn
// (the launches run in stream order).
constexpr int64_t kWorkspaceAlignment = 256;
template <class T>
int64_t row_max_bytes(const ReduceGeometry& g) {
  const int64_t bytes = g.outputs * static_cast<int64_t>(sizeof(T));
  return (bytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
}
template <class T>
int64_t log_sum_exp_bytes(const ReduceGeometry& g) {
  const int64_t partials = g.leaves() > 1 ? g.leaves() * g.outputs * sizeof(T) : 0;
  return row_max_bytes<T>(g) + partials;
}

template <class T>
cudaError_t launch_log_sum_exp_of(const ReduceGeometry& g, const void* x, void* y, void* workspace,
                                  cudaStream_t stream) {
  auto* row_max = static_cast<T*>(workspace);
  void* partials = static_cast<char*>(workspace) + row_max_bytes<T>(g);
  const cudaError_t max_status = launch_op<T, MaxOp<T>>(g, x, row_max, partials, stream);
  if (max_status != cudaSuccess) return max_status;
  ExpSumAboveMaxOp<T> op;
  op.row_max = row_max;
  return launch_op<T, ExpSumAboveMaxOp<T>>(g, x, y, partials, stream, op);
}

}  // namespace

int64_t log_sum_exp_workspace_bytes(ReduceType type, const ReduceGeometry& geometry) {
  return type == ReduceType::F64 ? log_sum_exp_bytes<double>(geometry)
                                 : log_sum_exp_bytes<float>(geometry);
}

cudaError_t launch_reduce_log_sum_exp(ReduceType type, const ReduceGeometry& geometry,
                                      const void* x, void* y, void* workspace,
                                      cudaStream_t stream) {
  if (type == ReduceType::F64)
    return launch_log_sum_exp_of<double>(geometry, x, y, workspace, stream);
  if (type == ReduceType::F32)
    return launch_log_sum_exp_of<float>(geometry, x, y, workspace, stream);
  return cudaErrorInvalidValue;
}

int64_t reduce_partial_bytes(ReduceOp op, ReduceType type) {
  switch (type) {
    case ReduceType::F32:
      return partial_bytes<float>(op);
    case ReduceType::F64:
      return partial_bytes<double>(op);
    case ReduceType::I32:
      return partial_bytes<int32_t>(op);
    case ReduceType::I64:
      return partial_bytes<int64_t>(op);
  }
  return 0;
}

cudaError_t launch_reduce(ReduceOp op, ReduceType type, const ReduceGeometry& geometry,
                          const void* x, void* y, void* workspace, cudaStream_t stream) {
  switch (type) {
    case ReduceType::F32:
      return launch_typed<float>(op, geometry, x, y, workspace, stream);
    case ReduceType::F64:
      return launch_typed<double>(op, geometry, x, y, workspace, stream);
    case ReduceType::I32:
      return launch_typed<int32_t>(op, geometry, x, y, workspace, stream);
    case ReduceType::I64:
      return launch_typed<int64_t>(op, geometry, x, y, workspace, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t launch_arg_extreme(bool max, bool select_last, ReduceType type,
                               const RowGeometry& lines, const void* x, int64_t* indices,
                               cudaStream_t stream) {
  switch (type) {
    case ReduceType::F32:
      return launch_arg_typed<float>(max, select_last, lines, x, indices, stream);
    case ReduceType::F64:
      return launch_arg_typed<double>(max, select_last, lines, x, indices, stream);
    case ReduceType::I32:
      return launch_arg_typed<int32_t>(max, select_last, lines, x, indices, stream);
    case ReduceType::I64:
      return launch_arg_typed<int64_t>(max, select_last, lines, x, indices, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t launch_cumsum(ReduceType type, const RowGeometry& lines, bool exclusive, bool reverse,
                          const void* x, void* y, cudaStream_t stream) {
  switch (type) {
    case ReduceType::F32:
      return launch_cumsum_typed<float>(lines, exclusive, reverse, x, y, stream);
    case ReduceType::F64:
      return launch_cumsum_typed<double>(lines, exclusive, reverse, x, y, stream);
    case ReduceType::I32:
      return launch_cumsum_typed<int32_t>(lines, exclusive, reverse, x, y, stream);
    case ReduceType::I64:
      return launch_cumsum_typed<int64_t>(lines, exclusive, reverse, x, y, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace volta::cuda
