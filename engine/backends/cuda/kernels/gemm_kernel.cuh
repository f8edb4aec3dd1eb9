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

inline constexpr int kThreads = 256;  // per block, for every tile shape

// A block computes a kBlock x kBlock tile of Y, kStepK values of k per pass through shared
// memory; each thread owns kPerThread x kPerThread elements of it: two groups of kHalf rows
// kBlock / 2 apart by two such groups of columns, so that a warp's shared-memory reads of
// either operand are contiguous vectors. Three tile shapes per type, all compile-time
// constants: a problem of few large tiles, which would leave most of the device idle, takes
// smaller ones. Which one computes an element never changes its bits: a thread's sums are the
// same either way.
template <class Scalar, int kBlockSize, int kPerThreadSize>
struct Tile {
  using T = Scalar;
  static constexpr int kBlock = kBlockSize;
  static constexpr int kPerThread = kPerThreadSize;
  static constexpr int kHalf = kPerThread / 2;
  static constexpr int kThreadsAcross = kBlock / kPerThread;
  static_assert(kThreadsAcross * kThreadsAcross == kThreads);
};
template <class T>
struct Tiles;
template <>
struct Tiles<float> {
  using Large = Tile<float, 128, 8>;
  using Medium = Tile<float, 64, 4>;
  using Small = Tile<float, 32, 2>;
};
template <>
struct Tiles<double> {
  using Large = Tile<double, 64, 4>;
  using Medium = Large;
  using Small = Tile<double, 32, 2>;
};
inline constexpr int kStepK = 8;
// A launch of fewer tiles of a shape than this (a problem-size constant, not the device's SM
// count) takes the next smaller shape.
inline constexpr int64_t kEnoughTiles = 128;

// Every slice boundary is a K step boundary, so a step never straddles two slices.
static_assert(kGemmSlice<float> % kStepK == 0 && kGemmSlice<double> % kStepK == 0);

// kHalf consecutive elements, read as one vector.
template <class Tile>
struct alignas(sizeof(typename Tile::T) * Tile::kHalf) HalfGroup {
  typename Tile::T v[Tile::kHalf];
};

// Row (or column) within the block tile of this thread's element e, for thread coordinate t.
template <class Tile>
__device__ __forceinline__ int owned(int t, int e) {
  return (e / Tile::kHalf) * (Tile::kBlock / 2) + t * Tile::kHalf + e % Tile::kHalf;
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

// A thread's share of one operand's kBlock x kStepK piece at each K step: kLoads elements,
// consecutive along k when the operand is contiguous along k (one vector load), else along r.
// Elements outside the operand are 0; they only ever meet elements of Y outside the matrix,
// since the K loop stops at the operand's depth. Set up once per tile, so that a step's fetch
// is a pointer bump and a few compares.
template <class Tile>
struct Fetcher {
  using T = typename Tile::T;
  static constexpr int kBlock = Tile::kBlock;
  static constexpr int kLoads = kBlock * kStepK / kThreads;
  static_assert(kLoads >= 1 && kLoads * sizeof(T) <= 16);
  struct alignas(kLoads * sizeof(T)) Vector {
    T v[kLoads];
  };

  const T* at;      // this thread's first element at the next step
  int64_t advance;  // from one step to the next: kStepK * k_stride
  int64_t step;     // between this thread's elements
  int64_t k_left;   // depth minus the k of this thread's first element at the next step
  int rows_left;    // rows minus the r of this thread's first element, at most kBlock
  bool along_k;

  // Where this thread's first element lies in the piece.
  __device__ static void place(bool k_contiguous, int& r, int& p) {
    const int first = static_cast<int>(threadIdx.x) * kLoads;
    if (k_contiguous) {
      r = first / kStepK;
      p = first % kStepK;
    } else {
      r = first % kBlock;
      p = first / kBlock;
    }
  }

  __device__ explicit Fetcher(const Operand<T>& op) {
    along_k = op.k_stride == 1;
    int r = 0, p = 0;
    place(along_k, r, p);
    at = op.base + r * op.r_stride + p * op.k_stride;
    advance = kStepK * op.k_stride;
    step = along_k ? op.k_stride : op.r_stride;
    k_left = op.depth - p;
    const int64_t rows = op.rows - r;
    rows_left = static_cast<int>(rows < kBlock ? rows : kBlock);
  }

  // This step's elements into v, and on to the next step.
  __device__ void fetch(T (&v)[kLoads]) {
    const bool whole =
        along_k ? (rows_left > 0 && k_left >= kLoads) : (k_left > 0 && rows_left >= kLoads);
    if (whole && step == 1 && reinterpret_cast<uintptr_t>(at) % sizeof(Vector) == 0) {
      const Vector loaded = *reinterpret_cast<const Vector*>(at);
      VOLTA_UNROLL
      for (int l = 0; l < kLoads; ++l) v[l] = loaded.v[l];
    } else {
      VOLTA_UNROLL
      for (int l = 0; l < kLoads; ++l) {
        const bool exists = along_k ? (rows_left > 0 && l < k_left) : (k_left > 0 && l < rows_left);
        v[l] = exists ? at[l * step] : T(0);
      }
    }
    at += advance;
    k_left -= kStepK;
  }

  __device__ void store(const T (&v)[kLoads], T (*tile)[kBlock]) const {
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
template <class Tile, class T = typename Tile::T>
__device__ __forceinline__ void read_owned(const T (*tile)[Tile::kBlock], int p, int t,
                                           T (&out)[Tile::kPerThread]) {
  VOLTA_UNROLL
  for (int g = 0; g < 2; ++g) {
    const HalfGroup<Tile> group =
        *reinterpret_cast<const HalfGroup<Tile>*>(&tile[p][owned<Tile>(t, g * Tile::kHalf)]);
    VOLTA_UNROLL
    for (int e = 0; e < Tile::kHalf; ++e) out[g * Tile::kHalf + e] = group.v[e];
  }
}

// A thread's running sums, one per owned element.
template <class Tile>
struct Accumulators {
  typename Tile::T v[Tile::kPerThread][Tile::kPerThread];
};

// One k: every owned element's running sum takes one FMA (the CPU's fmadd(a, b, acc)).
template <class Tile, class T = typename Tile::T>
__device__ __forceinline__ void multiply_step(Accumulators<Tile>& acc,
                                              const T (*a_tile)[Tile::kBlock],
                                              const T (*b_tile)[Tile::kBlock], int p, int ty,
                                              int tx) {
  T a[Tile::kPerThread];
  T b[Tile::kPerThread];
  read_owned<Tile>(a_tile, p, ty, a);
  read_owned<Tile>(b_tile, p, tx, b);
  VOLTA_UNROLL
  for (int i = 0; i < Tile::kPerThread; ++i) {
    VOLTA_UNROLL
    for (int j = 0; j < Tile::kPerThread; ++j) acc.v[i][j] = fma_rn(a[i], b[j], acc.v[i][j]);
  }
}

// Hides x's value from the optimiser, so that what is computed from it where it is used stays
// there: the output addresses of fold_slice, which would otherwise be hoisted out of the K loop
// into registers the multiply needs.
template <class V>
__device__ __forceinline__ V opaque(V x) {
#ifdef __CUDACC__
  asm volatile("" : "+l"(x));
#endif
  return x;
}

// Which problem, and where in its Y, block tile `tile` is: tiles run across a problem's columns
// first, then down its rows, then through the problems (the batch).
struct TilePlace {
  int64_t problem;
  int64_t row0;
  int64_t col0;
};

// The block tiles of a launch: one kBlock x kBlock tile per block.
template <class Tile, class T>
inline int64_t tile_count(const GemmLaunch<T>& g) {
  return (g.m + Tile::kBlock - 1) / Tile::kBlock * ((g.n + Tile::kBlock - 1) / Tile::kBlock) *
         g.batch.numel;
}

template <class Tile, class T>
__device__ __forceinline__ TilePlace place_of(const GemmLaunch<T>& g, int64_t tile) {
  const int64_t across = (g.n + Tile::kBlock - 1) / Tile::kBlock;
  const int64_t per_problem = across * ((g.m + Tile::kBlock - 1) / Tile::kBlock);
  const int64_t in_problem = tile % per_problem;
  return {tile / per_problem, in_problem / across * Tile::kBlock,
          in_problem % across * Tile::kBlock};
}

template <class Tile>
__device__ __forceinline__ void clear(Accumulators<Tile>& acc) {
  VOLTA_UNROLL
  for (int i = 0; i < Tile::kPerThread; ++i) {
    VOLTA_UNROLL
    for (int j = 0; j < Tile::kPerThread; ++j) acc.v[i][j] = typename Tile::T(0);
  }
}

// Folds a K slice's sums into Y as the CPU's micro-kernel epilogue does: r = alpha * sum; the
// first slice then takes fma(beta, C, r) (C present) or r, a later one fma(1, Y, r). After the
// last slice FusedMatMul's bias and activation follow, as its post-tile epilogue does. Clears
// the sums for the next slice.
template <class Tile, class T>
__device__ __forceinline__ void fold_slice(const GemmLaunch<T>& g, int64_t tile,
                                           Accumulators<Tile>& acc, bool first, bool last) {
  const TilePlace at_tile = place_of<Tile>(g, opaque(tile));
  T* const y = g.y + at_tile.problem * g.m * g.n;
  const int tx = static_cast<int>(threadIdx.x) % Tile::kThreadsAcross;
  const int ty = static_cast<int>(threadIdx.x) / Tile::kThreadsAcross;
  VOLTA_UNROLL
  for (int i = 0; i < Tile::kPerThread; ++i) {
    const int64_t row = at_tile.row0 + owned<Tile>(ty, i);
    VOLTA_UNROLL
    for (int j = 0; j < Tile::kPerThread; ++j) {
      const int64_t col = at_tile.col0 + owned<Tile>(tx, j);
      const T sum = acc.v[i][j];
      acc.v[i][j] = T(0);
      if (row >= g.m || col >= g.n) continue;
      T* const at = y + row * g.n + col;
      T r = mul_rn(g.alpha, sum);
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

// The double-buffered K steps of both operands in shared memory.
template <class Tile>
struct alignas(16) SharedTiles {
  typename Tile::T a[2][kStepK][Tile::kBlock];
  typename Tile::T b[2][kStepK][Tile::kBlock];
};

// One kBlock x kBlock block tile of Y: the K steps double-buffered through shared memory (the
// next step's operands are fetched into registers while this one multiplies).
template <class Tile, class T = typename Tile::T>
__device__ __forceinline__ void block_tile(const GemmLaunch<T>& g, int64_t tile,
                                           SharedTiles<Tile>& shared) {
  Accumulators<Tile> acc;
  clear(acc);
  if (g.k == 0) {  // one empty slice: Y = alpha * 0 (+ beta * C)
    fold_slice<Tile>(g, tile, acc, true, true);
    return;
  }
  const TilePlace at_tile = place_of<Tile>(g, tile);
  // The problem's matrices: its batch index split by the merged batch dims.
  int64_t rest = at_tile.problem;
  int64_t a_matrix = 0;
  int64_t b_matrix = 0;
  for (int d = g.batch.rank - 1; d >= 0; --d) {
    const int64_t index = rest % g.batch.dims[d];
    rest /= g.batch.dims[d];
    a_matrix += index * g.batch.a_strides[d];
    b_matrix += index * g.batch.b_strides[d];
  }
  const T* a = g.a + a_matrix * g.m * g.k + at_tile.row0 * g.a_row_stride;
  const T* b = g.b + b_matrix * g.k * g.n + at_tile.col0 * g.b_col_stride;
  Fetcher<Tile> fetch_a(Operand<T>{a, g.a_row_stride, g.a_col_stride, g.m - at_tile.row0, g.k});
  Fetcher<Tile> fetch_b(Operand<T>{b, g.b_col_stride, g.b_row_stride, g.n - at_tile.col0, g.k});
  const int tx = static_cast<int>(threadIdx.x) % Tile::kThreadsAcross;
  const int ty = static_cast<int>(threadIdx.x) / Tile::kThreadsAcross;
  T staged_a[Fetcher<Tile>::kLoads];
  T staged_b[Fetcher<Tile>::kLoads];
  // The previous tile's last step may still be reading the buffers.
  __syncthreads();
  fetch_a.fetch(staged_a);
  fetch_b.fetch(staged_b);
  fetch_a.store(staged_a, shared.a[0]);
  fetch_b.store(staged_b, shared.b[0]);
  __syncthreads();
  bool first = true;
  for (int64_t k0 = 0; k0 < g.k; k0 += kStepK) {
    const int buffer = static_cast<int>((k0 / kStepK) & 1);
    const bool more = k0 + kStepK < g.k;
    if (more) {
      fetch_a.fetch(staged_a);
      fetch_b.fetch(staged_b);
    }
    if (more) {
      VOLTA_UNROLL
      for (int p = 0; p < kStepK; ++p) {
        multiply_step<Tile>(acc, shared.a[buffer], shared.b[buffer], p, ty, tx);
      }
    } else {  // the last step: up to kStepK values of k
      const auto depth = static_cast<int>(g.k - k0);
      for (int p = 0; p < depth; ++p) {
        multiply_step<Tile>(acc, shared.a[buffer], shared.b[buffer], p, ty, tx);
      }
    }
    if (!more || (k0 + kStepK) % kGemmSlice<T> == 0) {
      fold_slice<Tile>(g, tile, acc, first, !more);
      first = false;
    }
    if (more) {
      fetch_a.store(staged_a, shared.a[buffer ^ 1]);
      fetch_b.store(staged_b, shared.b[buffer ^ 1]);
    }
    __syncthreads();
  }
}

// Block b computes tiles b, b + gridDim.x, ...: the grid never changes an element's value.
template <class Tile>
__global__ void __launch_bounds__(kThreads, 2)
    gemm_kernel(GemmLaunch<typename Tile::T> g, int64_t tiles) {
  __shared__ SharedTiles<Tile> shared;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    block_tile<Tile>(g, tile, shared);
  }
}

}  // namespace volta::cuda::gemm_detail
