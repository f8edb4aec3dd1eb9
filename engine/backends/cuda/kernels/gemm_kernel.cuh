#pragma once
// The GEMM kernel of the linalg family (kernels/linalg.cu launches it). Every output element is
// computed operation for operation as the CPU backend's FMA micro-kernels compute it
// (GemmLaunch in launch.h says how). The tiling only decides which thread computes an element
// and how the operands travel through shared memory: each element belongs to one thread, which
// walks k upwards with one explicitly rounded FMA per step and folds its K slices into Y in
// order. No split-K, no atomics, no TF32; tile shapes are compile-time constants, independent of
// the batch, the grid and the device, so an element's bits depend on its row of op(A), its
// column of op(B) and the epilogue's operands alone: the same on every run, in any batch, on
// any supported GPU.
//
// Plain CUDA C++ over launch.h, so that a host test can also run it under an emulation of the
// CUDA thread model (tests/gemm_kernel_emulation.h).

#include <cstdint>

#include "launch.h"

// nvcc's unroll hint; nothing for a host compiler (the emulation), which would warn.
#ifdef __CUDACC__
#define VOLTA_UNROLL _Pragma("unroll")
#else
#define VOLTA_UNROLL
#endif

namespace volta::cuda::gemm_detail {

__device__ __forceinline__ float fma_rn(float a, float b, float c) { return __fmaf_rn(a, b, c); }
__device__ __forceinline__ double fma_rn(double a, double b, double c) { return __fma_rn(a, b, c); }
__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }

inline constexpr int kThreads = 256;

// A block computes a kBlock x kBlock tile of Y, kStepK values of k per pass through shared
// memory; each thread owns kPerThread x kPerThread elements of it: two groups of kHalf rows
// kBlock / 2 apart by two such groups of columns, so that a warp's shared-memory reads of
// either operand are contiguous 16-byte vectors.
template <class T>
struct Tiling;
template <>
struct Tiling<float> {
  static constexpr int kBlock = 128;
  static constexpr int kPerThread = 8;
};
template <>
struct Tiling<double> {
  static constexpr int kBlock = 64;
  static constexpr int kPerThread = 4;
};
inline constexpr int kStepK = 8;

template <class T>
inline constexpr int kBlock = Tiling<T>::kBlock;
template <class T>
inline constexpr int kPerThread = Tiling<T>::kPerThread;
template <class T>
inline constexpr int kHalf = kPerThread<T> / 2;
template <class T>
inline constexpr int kThreadsAcross = kBlock<T> / kPerThread<T>;

static_assert(kThreadsAcross<float> * kThreadsAcross<float> == kThreads);
static_assert(kThreadsAcross<double> * kThreadsAcross<double> == kThreads);
// Every slice boundary is a K step boundary, so a step never straddles two slices.
static_assert(kGemmSlice<float> % kStepK == 0 && kGemmSlice<double> % kStepK == 0);

// kHalf consecutive elements, read as one vector (16 bytes for both types).
template <class T>
struct alignas(sizeof(T) * kHalf<T>) HalfGroup {
  T v[kHalf<T>];
};

// Row (or column) within the block tile of this thread's element e, for thread coordinate t.
template <class T>
__device__ __forceinline__ int owned(int t, int e) {
  return (e / kHalf<T>)*(kBlock<T> / 2) + t * kHalf<T> + e % kHalf<T>;
}

// One operand as the block tile reads it: element (r, p) is base[r * r_stride + p * k_stride]
// for r < rows (rows of Y for op(A), columns of Y for op(B)) and p < depth.
template <class T>
struct Operand {
  const T* base;
  int64_t r_stride;
  int64_t k_stride;
  int64_t rows;
  int64_t depth;
};

// A K step's kBlock x kStepK piece of one operand, staged in registers: each thread fetches
// kLoads elements, consecutive along k when the operand is contiguous along k (one vector
// load), else consecutive along r. Elements outside the operand are 0; they only ever meet
// elements of Y outside the matrix, since the K loop stops at the operand's depth.
template <class T>
struct Staged {
  static constexpr int kLoads = kBlock<T> * kStepK / kThreads;
  static_assert(kLoads * static_cast<int>(sizeof(T)) == 16);
  struct alignas(16) Vector {
    T v[kLoads];
  };
  T v[kLoads];

  __device__ static void place(bool along_k, int& r, int& p) {
    const int first = static_cast<int>(threadIdx.x) * kLoads;
    if (along_k) {
      r = first / kStepK;
      p = first % kStepK;
    } else {
      r = first % kBlock<T>;
      p = first / kBlock<T>;
    }
  }

  __device__ void fetch(const Operand<T>& op, int64_t k0) {
    const bool along_k = op.k_stride == 1;
    int r = 0, p = 0;
    place(along_k, r, p);
    const int64_t k = k0 + p;
    const int64_t step = along_k ? op.k_stride : op.r_stride;
    const bool whole =
        along_k ? (r < op.rows && k + kLoads <= op.depth) : (k < op.depth && r + kLoads <= op.rows);
    if (whole) {
      const T* src = op.base + r * op.r_stride + k * op.k_stride;
      if (step == 1 && reinterpret_cast<uintptr_t>(src) % sizeof(Vector) == 0) {
        const Vector loaded = *reinterpret_cast<const Vector*>(src);
        VOLTA_UNROLL
        for (int l = 0; l < kLoads; ++l) v[l] = loaded.v[l];
      } else {
        VOLTA_UNROLL
        for (int l = 0; l < kLoads; ++l) v[l] = src[l * step];
      }
      return;
    }
    VOLTA_UNROLL
    for (int l = 0; l < kLoads; ++l) {
      const int64_t rl = along_k ? r : r + l;
      const int64_t kl = along_k ? k + l : k;
      v[l] = rl < op.rows && kl < op.depth ? op.base[rl * op.r_stride + kl * op.k_stride] : T(0);
    }
  }

  __device__ void store(T (*tile)[kBlock<T>], bool along_k) const {
    int r = 0, p = 0;
    place(along_k, r, p);
    VOLTA_UNROLL
    for (int l = 0; l < kLoads; ++l) {
      if (along_k) {
        tile[p + l][r] = v[l];
      } else {
        tile[p][r + l] = v[l];
      }
    }
  }
};

// This thread's kPerThread values of one operand at step p of the tile in shared memory.
template <class T>
__device__ __forceinline__ void read_owned(const T (*tile)[kBlock<T>], int p, int t,
                                           T (&out)[kPerThread<T>]) {
  VOLTA_UNROLL
  for (int g = 0; g < 2; ++g) {
    const HalfGroup<T> group =
        *reinterpret_cast<const HalfGroup<T>*>(&tile[p][owned<T>(t, g * kHalf<T>)]);
    VOLTA_UNROLL
    for (int e = 0; e < kHalf<T>; ++e) out[g * kHalf<T> + e] = group.v[e];
  }
}

// A thread's running sums, one per owned element (a struct, so that a slice's sums can be handed
// to fold_slice by value and stay in registers meanwhile).
template <class T>
struct Accumulators {
  T v[kPerThread<T>][kPerThread<T>];
};

// One k: every owned element's running sum takes one FMA (the CPU's fmadd(a, b, acc)).
template <class T>
__device__ __forceinline__ void multiply_step(Accumulators<T>& acc, const T (*a_tile)[kBlock<T>],
                                              const T (*b_tile)[kBlock<T>], int p, int ty, int tx) {
  T a[kPerThread<T>];
  T b[kPerThread<T>];
  read_owned<T>(a_tile, p, ty, a);
  read_owned<T>(b_tile, p, tx, b);
  VOLTA_UNROLL
  for (int i = 0; i < kPerThread<T>; ++i) {
    VOLTA_UNROLL
    for (int j = 0; j < kPerThread<T>; ++j) acc.v[i][j] = fma_rn(a[i], b[j], acc.v[i][j]);
  }
}

// Where a block tile's results go.
template <class T>
struct TileOutput {
  T* y;  // this problem's Y
  int64_t row0;
  int64_t col0;
};

// Folds a K slice's sums into Y as the CPU's micro-kernel epilogue does: r = alpha * sum; the
// first slice then takes fma(beta, C, r) (C present) or r, a later one fma(1, Y, r). After the
// last slice FusedMatMul's bias and activation follow, as its post-tile epilogue does. Not
// inlined: it runs once per slice, and inlined its addresses would be hoisted out of the K loop
// into registers the multiply needs.
template <class T>
__device__ __noinline__ void fold_slice(const GemmLaunch<T>& g, TileOutput<T> out,
                                        Accumulators<T> sums, bool first, bool last) {
  const int tx = static_cast<int>(threadIdx.x) % kThreadsAcross<T>;
  const int ty = static_cast<int>(threadIdx.x) / kThreadsAcross<T>;
  for (int i = 0; i < kPerThread<T>; ++i) {
    const int64_t row = out.row0 + owned<T>(ty, i);
    if (row >= g.m) continue;
    for (int j = 0; j < kPerThread<T>; ++j) {
      const int64_t col = out.col0 + owned<T>(tx, j);
      if (col >= g.n) continue;
      T* const at = out.y + row * g.n + col;
      T r = mul_rn(g.alpha, sums.v[i][j]);
      if (!first) {
        r = fma_rn(T(1), *at, r);
      } else if (g.c != nullptr) {
        r = fma_rn(g.beta, g.c[row * g.c_row_stride + col * g.c_col_stride], r);
      }
      if (last && g.epilogue != GemmEpilogueOp::None) {
        r = g.bias_first ? add_rn(g.bias[col], r) : add_rn(r, g.bias[col]);
        if (g.epilogue == GemmEpilogueOp::BiasRelu) r = r < T(0) ? T(0) : r;
      }
      *at = r;
    }
  }
}

template <class T>
__device__ __forceinline__ void clear(Accumulators<T>& acc) {
  VOLTA_UNROLL
  for (int i = 0; i < kPerThread<T>; ++i) {
    VOLTA_UNROLL
    for (int j = 0; j < kPerThread<T>; ++j) acc.v[i][j] = T(0);
  }
}

// One kBlock x kBlock tile of one problem's Y: the K steps double-buffered through shared
// memory (the next step's operands are fetched into registers while this one multiplies).
template <class T>
__device__ __forceinline__ void block_tile(const GemmLaunch<T>& g, const TileOutput<T>& out,
                                           const T* a, const T* b, T (*a_tiles)[kStepK][kBlock<T>],
                                           T (*b_tiles)[kStepK][kBlock<T>]) {
  const int tx = static_cast<int>(threadIdx.x) % kThreadsAcross<T>;
  const int ty = static_cast<int>(threadIdx.x) / kThreadsAcross<T>;
  const Operand<T> op_a{a + out.row0 * g.a_row_stride, g.a_row_stride, g.a_col_stride,
                        g.m - out.row0, g.k};
  const Operand<T> op_b{b + out.col0 * g.b_col_stride, g.b_col_stride, g.b_row_stride,
                        g.n - out.col0, g.k};
  const bool a_along_k = op_a.k_stride == 1;
  const bool b_along_k = op_b.k_stride == 1;
  Accumulators<T> acc;
  clear(acc);
  if (g.k == 0) {  // one empty slice: Y = alpha * 0 (+ beta * C)
    fold_slice(g, out, acc, true, true);
    return;
  }
  Staged<T> staged_a;
  Staged<T> staged_b;
  // The previous tile's last step may still be reading the buffers.
  __syncthreads();
  staged_a.fetch(op_a, 0);
  staged_b.fetch(op_b, 0);
  staged_a.store(a_tiles[0], a_along_k);
  staged_b.store(b_tiles[0], b_along_k);
  __syncthreads();
  const int64_t steps = (g.k + kStepK - 1) / kStepK;
  bool first = true;
  for (int64_t s = 0; s < steps; ++s) {
    const int buffer = static_cast<int>(s & 1);
    const bool more = s + 1 < steps;
    if (more) {
      staged_a.fetch(op_a, (s + 1) * kStepK);
      staged_b.fetch(op_b, (s + 1) * kStepK);
    }
    const int64_t k0 = s * kStepK;
    if (k0 + kStepK <= g.k) {
      VOLTA_UNROLL
      for (int p = 0; p < kStepK; ++p) {
        multiply_step<T>(acc, a_tiles[buffer], b_tiles[buffer], p, ty, tx);
      }
    } else {
      const auto depth = static_cast<int>(g.k - k0);
      for (int p = 0; p < depth; ++p) {
        multiply_step<T>(acc, a_tiles[buffer], b_tiles[buffer], p, ty, tx);
      }
    }
    const int64_t k_end = k0 + kStepK < g.k ? k0 + kStepK : g.k;
    if (k_end == g.k || k_end % kGemmSlice<T> == 0) {
      fold_slice(g, out, acc, first, k_end == g.k);
      clear(acc);
      first = false;
    }
    if (more) {
      staged_a.store(a_tiles[buffer ^ 1], a_along_k);
      staged_b.store(b_tiles[buffer ^ 1], b_along_k);
    }
    __syncthreads();
  }
}

// The double-buffered K steps of both operands in shared memory.
template <class T>
struct alignas(16) SharedTiles {
  T a[2][kStepK][kBlock<T>];
  T b[2][kStepK][kBlock<T>];
};

// Blocks walk problems (z), row tiles (y) and column tiles (x), striding by the grid where
// there are more than it has: the grid never changes an element's value.
template <class T>
__global__ void __launch_bounds__(kThreads, 2)
    gemm_kernel(GemmLaunch<T> g, int64_t row_tiles, int64_t col_tiles) {
  __shared__ SharedTiles<T> tiles;
  const BroadcastGeometry& batch = g.batch;
  for (int64_t problem = blockIdx.z; problem < batch.numel; problem += gridDim.z) {
    int64_t rest = problem;
    int64_t a_matrix = 0;
    int64_t b_matrix = 0;
    for (int d = batch.rank - 1; d >= 0; --d) {
      const int64_t index = rest % batch.dims[d];
      rest /= batch.dims[d];
      a_matrix += index * batch.a_strides[d];
      b_matrix += index * batch.b_strides[d];
    }
    const T* a = g.a + a_matrix * g.m * g.k;
    const T* b = g.b + b_matrix * g.k * g.n;
    T* y = g.y + problem * g.m * g.n;
    for (int64_t rt = blockIdx.y; rt < row_tiles; rt += gridDim.y) {
      for (int64_t ct = blockIdx.x; ct < col_tiles; ct += gridDim.x) {
        const TileOutput<T> out{y, rt * kBlock<T>, ct * kBlock<T>};
        block_tile<T>(g, out, a, b, tiles.a, tiles.b);
      }
    }
  }
}

}  // namespace volta::cuda::gemm_detail
