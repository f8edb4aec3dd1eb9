// Normalization-family kernels: Softmax, LogSoftmax, LRN, LayerNormalization,
// InstanceNormalization, MeanVarianceNormalization, BatchNormalization inference and Hardmax
// (f32, f64), each computing what the CPU backend's kernel computes (cpu/kernels/
// normalization.cpp and softmax_rows.h), operation for operation (where that calls libm, with
// CUDA's function in its place); every sum within a row goes over the CPU's tree (tree.cuh).
// The per-op exactness claims are in normalization_ops.cpp.
//
// A row belongs to a group of 8 neighbouring threads, one per tree lane: for each leaf in turn,
// thread `lane` accumulates the leaf's elements lane, lane + 8, ... in index order, the lanes
// combine pairwise through shuffles and the leaf result joins the leaves' pairwise combination
// (tree::LeafStack). All rows of a launch have the same length, so the threads of a warp run the
// same loops; a group past the last row runs them on no elements.

#include "device_math.cuh"
#include "map.cuh"
#include "tree.cuh"

namespace volta::cuda {
namespace {

constexpr int kRowsPerBlock = kThreadsPerBlock / kTreeLanes;  // 32
constexpr int64_t kMaxRowBlocks = 65536;

__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float sub_rn(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ double sub_rn(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float div_rn(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ double div_rn(double a, double b) { return __ddiv_rn(a, b); }
__device__ __forceinline__ float sqrt_rn(float a) { return __fsqrt_rn(a); }
__device__ __forceinline__ double sqrt_rn(double a) { return __dsqrt_rn(a); }
__device__ __forceinline__ float to(float, int64_t n) { return __ll2float_rn(n); }
__device__ __forceinline__ double to(double, int64_t n) { return __ll2double_rn(n); }
// std::numeric_limits<T>::quiet_NaN(), the NaN the CPU writes.
__device__ __forceinline__ float quiet_nan(float) { return __uint_as_float(0x7fc00000u); }
__device__ __forceinline__ double quiet_nan(double) {
  return __longlong_as_double(0x7ff8000000000000ll);
}

struct Plus {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return add_rn(a, b);
  }
};
// The CPU's max_of_numbers (softmax_rows.h): NaN-blind, the left operand kept unless the right
// is greater.
struct MaxOfNumbers {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return b > a ? b : a;
  }
};

// reduce_row of the CPU over a row of n elements, load(i) giving element i. Every thread of the
// warp calls it with the same n; `active` false: a group with no row, which loads nothing.
template <class A, class Load, class Combine>
__device__ A reduce_row(int64_t n, bool active, A identity, const Load& load,
                        const Combine& combine) {
  const int lane = static_cast<int>(threadIdx.x % kTreeLanes);
  const int64_t leaves = n <= kTreeLeaf ? 1 : (n + kTreeLeaf - 1) / kTreeLeaf;
  tree::LeafStack<A> stack;
  for (int64_t leaf = 0; leaf < leaves; ++leaf) {
    const int64_t first = leaf * kTreeLeaf;
    const int64_t count = active ? tree::leaf_length(n, leaf) : 0;
    A acc = identity;
    for (int64_t i = lane; i < count; i += kTreeLanes) acc = combine(acc, load(first + i));
    stack.push(tree::combine_group_lanes(acc, combine), combine);
  }
  return stack.result(combine);
}

// The row of thread group `threadIdx.x / 8` in the block's current run of rows.
struct RowSlot {
  int64_t row;
  bool active;
  int lane;
};
__device__ __forceinline__ RowSlot row_slot(int64_t first_row, int64_t rows) {
  const int64_t row = first_row + threadIdx.x / kTreeLanes;
  return {row, row < rows, static_cast<int>(threadIdx.x % kTreeLanes)};
}
__device__ __forceinline__ int64_t rows_per_block() { return blockDim.x / kTreeLanes; }

// Softmax and the row normalizations pass over a row two or three times. Where rows are
// contiguous and a block's run of them fits in shared memory, the block copies the run there
// first, coalesced, and the passes read it from there: global memory is read once. `pitch`
// elements separate staged rows (0: not staged), a row rounded up to whole bank rounds plus one
// tree group, so that the four groups of a warp read four different sets of banks. Where the
// values are read from never changes them.
struct RowStaging {
  int rows_per_block = kRowsPerBlock;
  int64_t pitch = 0;
};
constexpr int64_t kStageBytes = 48 * 1024;  // the most a launch gets without opting in

template <class T>
RowStaging row_staging(int64_t length, bool contiguous_rows) {
  constexpr int kRowsPerWarp = 32 / kTreeLanes;
  const int64_t pitch = (length + 31) / 32 * 32 + kTreeLanes;
  const int64_t fit = kStageBytes / (pitch * static_cast<int64_t>(sizeof(T)));
  const int64_t rows = (fit < kRowsPerBlock ? fit : kRowsPerBlock) / kRowsPerWarp * kRowsPerWarp;
  if (!contiguous_rows || rows == 0) return {};
  return {static_cast<int>(rows), pitch};
}

template <class T>
size_t stage_bytes(const RowStaging& staging) {
  return static_cast<size_t>(staging.rows_per_block * staging.pitch) * sizeof(T);
}

// The block's rows from first_row (rows of n contiguous elements from x) into `stage`, as whole
// 16-byte vectors where the rows allow, kBatch loads in flight per thread before their stores
// (a block holds few rows, so each thread must keep several loads going). Every thread of the
// block calls it.
template <class T>
__device__ void stage_rows(const T* x, int64_t first_row, int64_t rows, int64_t n, int64_t pitch,
                           T* stage) {
  constexpr int kPerVector = static_cast<int>(sizeof(float4) / sizeof(T));
  constexpr int kBatch = 8;
  const int64_t left = rows - first_row;
  const int64_t count = left < rows_per_block() ? left : rows_per_block();
  const T* from = x + first_row * n;
  __syncthreads();  // the previous run's passes are done with the stage
  if (n % kPerVector == 0 && vector_aligned(from)) {
    // The run is contiguous: vector e of the run is vector e % per_row of row e / per_row.
    // Staged runs hold at most kStageBytes, so int indexes them.
    const auto per_row = static_cast<int>(n / kPerVector);
    const auto total = static_cast<int>(count) * per_row;
    const int threads = static_cast<int>(blockDim.x);
    const auto* src = reinterpret_cast<const float4*>(from);
    for (int first = static_cast<int>(threadIdx.x); first < total; first += kBatch * threads) {
      float4 v[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int e = first + b * threads;
        if (e < total) v[b] = src[e];
      }
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int e = first + b * threads;
        if (e >= total) break;
        const int r = e / per_row;
        reinterpret_cast<float4*>(stage + r * pitch)[e - r * per_row] = v[b];
      }
    }
  } else {
    for (int64_t r = 0; r < count; ++r) {
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x) stage[r * pitch + i] = from[r * n + i];
    }
  }
  __syncthreads();
}

template <class T>
__device__ __forceinline__ T* stage_memory() {
  extern __shared__ float4 stage[];
  return reinterpret_cast<T*>(stage);
}

unsigned row_blocks(int64_t rows, const RowStaging& staging = {}) {
  const int64_t blocks = (rows + staging.rows_per_block - 1) / staging.rows_per_block;
  return static_cast<unsigned>(blocks < kMaxRowBlocks ? blocks : kMaxRowBlocks);
}

// softmax_rows.h's exp_of: the CPU's exp_f32 for f32 rows; libm's exp for f64 rows, CUDA's
// here (its last bit may differ).
__device__ __forceinline__ float exp_of(float v) { return dmath::exp_f32(v); }
__device__ __forceinline__ double exp_of(double v) { return exp(v); }
// LogSoftmax's log of the sum: std::log on the CPU (logf for f32, which glibc rounds nearly
// always correctly); here the double log rounded once for f32, CUDA's log for f64.
__device__ __forceinline__ float log_of(float v) {
  return __double2float_rn(log(static_cast<double>(v)));
}
__device__ __forceinline__ double log_of(double v) { return log(v); }

// softmax_row_loop of the CPU. Softmax (kLog false): y = e^(x - max) * (1 / sum); LogSoftmax:
// y = (x - max) - log(sum); the quiet NaN over the whole row when the sum is NaN. The
// exponentials are recomputed for y, with the same bits.
template <class T, bool kLog>
__global__ void __launch_bounds__(kThreadsPerBlock)
    softmax_rows(RowGeometry g, RowStaging staging, const T* x, T* y) {
  const int64_t n = g.length;
  for (int64_t first_row = static_cast<int64_t>(blockIdx.x) * rows_per_block(); first_row < g.rows;
       first_row += static_cast<int64_t>(gridDim.x) * rows_per_block()) {
    const RowSlot s = row_slot(first_row, g.rows);
    const int64_t start = (s.row / g.inner) * n * g.inner + s.row % g.inner;
    const T* xr = x + start;
    T* yr = y + start;
    int64_t step = g.inner;
    if (staging.pitch > 0) {
      stage_rows(x, first_row, g.rows, n, staging.pitch, stage_memory<T>());
      xr = stage_memory<T>() + threadIdx.x / kTreeLanes * staging.pitch;
      step = 1;
    }
    const T max = reduce_row(
        n, s.active, -T(dmath::kInf()), [=](int64_t i) { return xr[i * step]; }, MaxOfNumbers{});
    const T sum = reduce_row(
        n, s.active, T{0}, [=](int64_t i) { return exp_of(sub_rn(xr[i * step], max)); }, Plus{});
    if (!s.active) continue;
    if (sum != sum) {
      for (int64_t i = s.lane; i < n; i += kTreeLanes) yr[i * g.inner] = quiet_nan(T{});
      continue;
    }
    if constexpr (kLog) {
      const T log_sum = log_of(sum);
      for (int64_t i = s.lane; i < n; i += kTreeLanes) {
        yr[i * g.inner] = sub_rn(sub_rn(xr[i * step], max), log_sum);
      }
    } else {
      const T inverse = div_rn(T{1}, sum);
      for (int64_t i = s.lane; i < n; i += kTreeLanes) {
        yr[i * g.inner] = mul_rn(exp_of(sub_rn(xr[i * step], max)), inverse);
      }
    }
  }
}

// LrnKernel of the CPU, one thread per output element: the window's squares summed channel by
// channel in ascending order from 0 (x * x, then +, in T), then x / pow(bias + scale * sum,
// beta). pow is libm's there (powf for f32) and CUDA's double pow here (rounded once for f32).
template <class T>
__global__ void lrn_kernel(LrnParams p, const T* x, T* y) {
  const int64_t numel = p.batch * p.channels * p.spatial;
  const T scale = static_cast<T>(p.scale);
  const T bias = static_cast<T>(p.bias);
  for (int64_t i = first_index(); i < numel; i += grid_stride()) {
    const int64_t s = i % p.spatial;
    const int64_t r = i / p.spatial;  // the [n, c] row
    const int64_t c = r % p.channels;
    const int64_t first = c - p.before < 0 ? 0 : c - p.before;
    const int64_t last = c + p.after > p.channels - 1 ? p.channels - 1 : c + p.after;
    T sum{0};
    for (int64_t k = first; k <= last; ++k) {
      const T v = x[(r - c + k) * p.spatial + s];
      sum = add_rn(sum, mul_rn(v, v));
    }
    const double base = static_cast<double>(add_rn(bias, mul_rn(scale, sum)));
    y[i] = div_rn(x[i], static_cast<T>(pow(base, p.beta)));
  }
}

// Where row element i finds its scale and bias: i itself when both have the row's layout,
// else its index split into the merged dims, innermost first.
struct OperandOffsets {
  int64_t scale;
  int64_t bias;
};
__device__ OperandOffsets operand_offsets(const BroadcastGeometry& g, int64_t i) {
  if (g.rank == 1 && g.a_strides[0] == 1 && g.b_strides[0] == 1) return {i, i};
  OperandOffsets at{0, 0};
  for (int d = g.rank - 1; d >= 0; --d) {
    const int64_t index = i % g.dims[d];
    i /= g.dims[d];
    at.scale += index * g.a_strides[d];
    at.bias += index * g.b_strides[d];
  }
  return at;
}

// LayerNormKernel and InstanceNormKernel of the CPU: mean = sum / n, variance = (sum of
// squared deviations) / n, inv_std = 1 / sqrt(variance + epsilon), y = (x - mean) * inv_std *
// scale + bias, left to right, no FMA.
template <class T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    normalize_rows(RowGeometry g, RowStaging staging, RowNormalization<T> a) {
  const int64_t n = g.length;
  for (int64_t first_row = static_cast<int64_t>(blockIdx.x) * rows_per_block(); first_row < g.rows;
       first_row += static_cast<int64_t>(gridDim.x) * rows_per_block()) {
    const RowSlot s = row_slot(first_row, g.rows);
    const T* xr = a.x + s.row * n;
    if (staging.pitch > 0) {
      stage_rows(a.x, first_row, g.rows, n, staging.pitch, stage_memory<T>());
      xr = stage_memory<T>() + threadIdx.x / kTreeLanes * staging.pitch;
    }
    const T sum = reduce_row(
        n, s.active, T{0}, [=](int64_t i) { return xr[i]; }, Plus{});
    const T mean = div_rn(sum, to(T{}, n));
    const T squares = reduce_row(
        n, s.active, T{0},
        [=](int64_t i) {
          const T d = sub_rn(xr[i], mean);
          return mul_rn(d, d);
        },
        Plus{});
    if (!s.active) continue;
    const T variance = div_rn(squares, to(T{}, n));
    const T inv_std = div_rn(T{1}, sqrt_rn(add_rn(variance, a.epsilon)));
    T* yr = a.y + s.row * n;
    const int64_t channel = a.channels > 0 ? s.row % a.channels : 0;
    for (int64_t i = s.lane; i < n; i += kTreeLanes) {
      const OperandOffsets at =
          a.channels > 0 ? OperandOffsets{channel, channel} : operand_offsets(a.operands, i);
      const T scaled = mul_rn(mul_rn(sub_rn(xr[i], mean), inv_std), a.scale[at.scale]);
      yr[i] = a.bias != nullptr ? add_rn(scaled, a.bias[at.bias]) : scaled;
    }
    if (s.lane == 0 && a.mean != nullptr) a.mean[s.row] = mean;
    if (s.lane == 0 && a.inv_std != nullptr) a.inv_std[s.row] = inv_std;
  }
}

// MeanVarianceNormKernel of the CPU: statistics in double (Wide), (x - mean) / (sqrt(variance)
// + epsilon) in double, one rounding to T.
template <class T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    mean_variance_groups(ReduceGeometry g, const T* x, T* y, double epsilon) {
  const int64_t n = g.row_length;
  for (int64_t first_row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock; first_row < g.outputs;
       first_row += static_cast<int64_t>(gridDim.x) * kRowsPerBlock) {
    const RowSlot s = row_slot(first_row, g.outputs);
    const int64_t base = s.active ? tree::offset_of(g.kept, s.row) : 0;
    const T* xg = x + base;
    const ReduceExtents members = g.reduced;
    const auto load = [=](int64_t i) {
      return static_cast<double>(xg[tree::offset_of(members, i)]);
    };
    const double sum = reduce_row(n, s.active, 0.0, load, Plus{});
    const double mean = __ddiv_rn(sum, __ll2double_rn(n));
    const double squares = reduce_row(
        n, s.active, 0.0,
        [=](int64_t i) {
          const double d = __dsub_rn(load(i), mean);
          return __dmul_rn(d, d);
        },
        Plus{});
    if (!s.active) continue;
    const double variance = __ddiv_rn(squares, __ll2double_rn(n));
    const double denominator = __dadd_rn(__dsqrt_rn(variance), epsilon);
    for (int64_t i = s.lane; i < n; i += kTreeLanes) {
      const int64_t at = base + tree::offset_of(members, i);
      y[at] = static_cast<T>(__ddiv_rn(__dsub_rn(static_cast<double>(x[at]), mean), denominator));
    }
  }
}

// HardmaxKernel of the CPU: the first maximum of each line (the first NaN once one is met),
// then 1 there and 0 elsewhere; one thread per line.
template <class T>
__global__ void hardmax_lines(RowGeometry g, const T* x, T* y) {
  for (int64_t line = first_index(); line < g.rows; line += grid_stride()) {
    const int64_t start = (line / g.inner) * g.length * g.inner + line % g.inner;
    const T* xl = x + start;
    T* yl = y + start;
    int64_t best = 0;
    T b = xl[0];
    for (int64_t j = 1; j < g.length; ++j) {
      const T v = xl[j * g.inner];
      if (b == b && (v != v || v > b)) {
        b = v;
        best = j;
      }
    }
    for (int64_t j = 0; j < g.length; ++j) yl[j * g.inner] = best == j ? T{1} : T{0};
  }
}

template <class T>
__global__ void fill_quiet_nan(T* y, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) y[i] = quiet_nan(T{});
}

// BatchNormKernel of the CPU: per channel inv_std = 1 / sqrt(var + epsilon), then
// y = (x - mean) * inv_std * scale + bias, left to right, no FMA.
template <class T>
__global__ void batch_norm(BatchNormArgs<T> a) {
  for (int64_t i = first_index(); i < a.numel; i += grid_stride()) {
    const int64_t c = (i / a.plane) % a.channels;
    const T inv_std = div_rn(T{1}, sqrt_rn(add_rn(a.var[c], a.epsilon)));
    a.y[i] = add_rn(mul_rn(mul_rn(sub_rn(a.x[i], a.mean[c]), inv_std), a.scale[c]), a.bias[c]);
  }
}

template <class T>
cudaError_t launch_rows(const RowGeometry& rows, const RowNormalization<T>& args,
                        cudaStream_t stream) {
  const RowStaging staging = row_staging<T>(rows.length, true);
  normalize_rows<T><<<row_blocks(rows.rows, staging), staging.rows_per_block * kTreeLanes,
                      stage_bytes<T>(staging), stream>>>(rows, staging, args);
  return cudaGetLastError();
}

template <class T, bool kLog>
cudaError_t launch_softmax(const RowGeometry& rows, const T* x, T* y, cudaStream_t stream) {
  const RowStaging staging = row_staging<T>(rows.length, rows.inner == 1);
  softmax_rows<T, kLog><<<row_blocks(rows.rows, staging), staging.rows_per_block * kTreeLanes,
                          stage_bytes<T>(staging), stream>>>(rows, staging, x, y);
  return cudaGetLastError();
}

template <class T>
cudaError_t launch_fill(T* y, int64_t n, cudaStream_t stream) {
  fill_quiet_nan<T><<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(y, n);
  return cudaGetLastError();
}

template <class T>
cudaError_t launch_batch(const BatchNormArgs<T>& args, cudaStream_t stream) {
  batch_norm<T><<<blocks_for(args.numel), kThreadsPerBlock, 0, stream>>>(args);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_f32_softmax(const RowGeometry& rows, const float* x, float* y,
                               cudaStream_t stream) {
  return launch_softmax<float, false>(rows, x, y, stream);
}

cudaError_t launch_f64_softmax(const RowGeometry& rows, const double* x, double* y,
                               cudaStream_t stream) {
  return launch_softmax<double, false>(rows, x, y, stream);
}

cudaError_t launch_log_softmax(ReduceType type, const RowGeometry& rows, const void* x, void* y,
                               cudaStream_t stream) {
  if (type == ReduceType::F64) {
    return launch_softmax<double, true>(rows, static_cast<const double*>(x),
                                        static_cast<double*>(y), stream);
  }
  return launch_softmax<float, true>(rows, static_cast<const float*>(x), static_cast<float*>(y),
                                     stream);
}

cudaError_t launch_lrn(ReduceType type, const LrnParams& params, const void* x, void* y,
                       cudaStream_t stream) {
  const int64_t numel = params.batch * params.channels * params.spatial;
  if (type == ReduceType::F64) {
    lrn_kernel<double><<<blocks_for(numel), kThreadsPerBlock, 0, stream>>>(
        params, static_cast<const double*>(x), static_cast<double*>(y));
  } else {
    lrn_kernel<float><<<blocks_for(numel), kThreadsPerBlock, 0, stream>>>(
        params, static_cast<const float*>(x), static_cast<float*>(y));
  }
  return cudaGetLastError();
}

cudaError_t launch_normalize_rows(const RowGeometry& rows, const RowNormalization<float>& args,
                                  cudaStream_t stream) {
  return launch_rows(rows, args, stream);
}
cudaError_t launch_normalize_rows(const RowGeometry& rows, const RowNormalization<double>& args,
                                  cudaStream_t stream) {
  return launch_rows(rows, args, stream);
}

cudaError_t launch_fill_quiet_nan(float* y, int64_t n, cudaStream_t stream) {
  return launch_fill(y, n, stream);
}
cudaError_t launch_fill_quiet_nan(double* y, int64_t n, cudaStream_t stream) {
  return launch_fill(y, n, stream);
}

cudaError_t launch_mean_variance_normalization(const ReduceGeometry& groups, const float* x,
                                               float* y, double epsilon, cudaStream_t stream) {
  mean_variance_groups<float>
      <<<row_blocks(groups.outputs), kThreadsPerBlock, 0, stream>>>(groups, x, y, epsilon);
  return cudaGetLastError();
}
cudaError_t launch_mean_variance_normalization(const ReduceGeometry& groups, const double* x,
                                               double* y, double epsilon, cudaStream_t stream) {
  mean_variance_groups<double>
      <<<row_blocks(groups.outputs), kThreadsPerBlock, 0, stream>>>(groups, x, y, epsilon);
  return cudaGetLastError();
}

cudaError_t launch_batch_norm(const BatchNormArgs<float>& args, cudaStream_t stream) {
  return launch_batch(args, stream);
}
cudaError_t launch_batch_norm(const BatchNormArgs<double>& args, cudaStream_t stream) {
  return launch_batch(args, stream);
}

cudaError_t launch_hardmax(ReduceType type, const RowGeometry& lines, const void* x, void* y,
                           cudaStream_t stream) {
  if (type == ReduceType::F64) {
    hardmax_lines<double><<<blocks_for(lines.rows), kThreadsPerBlock, 0, stream>>>(
        lines, static_cast<const double*>(x), static_cast<double*>(y));
  } else {
    hardmax_lines<float><<<blocks_for(lines.rows), kThreadsPerBlock, 0, stream>>>(
        lines, static_cast<const float*>(x), static_cast<float*>(y));
  }
  return cudaGetLastError();
}

}  // namespace volta::cuda
