#pragma once
// The CPU backend's GEMM core, Y = alpha * op(A) @ op(B) + beta * C, built the BLIS/GotoBLAS
// way: K is cut into kc-deep slices; op(A) is packed into MR-row panels and op(B) into
// NR-column panels, and a register-blocked micro-kernel computes MR x NR pieces of Y from
// them. When a problem's output has several tiles below one another, a first parallel loop
// packs its op(B) once for all of them, and when several lie side by side (a short product of
// few tokens) its op(A), unless the tiles read op(A)'s rows in place; otherwise each tile packs
// its own.
//
// Determinism: the output is cut into tiles, set by the problems' shapes and the micro-kernel,
// never by the thread count, and each tile is one task. An element's value is its
// micro-kernel's in-register sum over each K slice, slices folded into Y in order, so it does
// not depend on the tile it falls in, the thread that runs it or the number of threads. Tiles
// at the matrix edge run the same micro-kernel on zero-padded panels, never a separate scalar
// loop. Different ISAs may give different bits; the variant name records which ran.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "volta/backends/cpu/thread_pool.h"

namespace volta::cpu {

// Instruction sets with a GEMM micro-kernel, best last. Avx512 needs AVX-512F/VL and FMA; the
// kernels carry target attributes, so the build needs no -march flag.
enum class GemmIsa : uint8_t { Generic, Avx2Fma, Avx512 };

// What a micro-kernel does with its accumulated sums before storing them.
template <class T>
struct GemmEpilogue {
  T alpha;
  T beta;
  bool load_c;  // true: c = alpha * sum + beta * c; false: c = alpha * sum, c is not read
};

// Multiplies an mr x kc panel of op(A) by a packed kc x nr panel of op(B) and applies the
// epilogue to the full mr x nr tile at c (row stride ldc, unit column stride). The op(A) panel
// is packed when a_row_stride is 0 (element (i, p) at a[p * mr + i]), else read in place from
// op(A)'s own rows (element (i, p) at a[i * a_row_stride + p]): the same products in the same
// order either way, so the same bits.
// `prefetch` (may be nullptr, and kernels may ignore it) is memory the caller needs soon: a
// kernel may touch one 64-byte line of it per step along K, kc lines from `prefetch` on. It
// is a hint only and never changes the result.
template <class T>
using GemmMicroKernelFn = void (*)(int64_t kc, const T* a, int64_t a_row_stride, const T* b_panel,
                                   T* c, int64_t ldc, GemmEpilogue<T> epilogue, const T* prefetch);

template <class T>
struct GemmMicroKernel {
  std::string_view name;  // the kernel variant: dtype, ISA and register tile
  GemmIsa isa;
  int mr;      // register tile rows: op(A) panel height
  int nr;      // register tile columns: op(B) panel width
  int64_t kc;  // K slice depth: an op(B) panel (kc x nr) stays in L1
  int64_t mc;  // output tile rows, a multiple of mr: the packed op(A) block stays in L2
  int64_t nc;  // output tile columns, a multiple of nr
  GemmMicroKernelFn<T> fn;
  // The same ISA's kernel for narrow or short products (kernel_for_shape), which gemm() runs
  // instead (same kc, so the same bits); nullptr: none. Plans name the main kernel.
  const GemmMicroKernel* narrow = nullptr;
};

// x rounded up to a whole number of `multiple`s (multiple > 0).
inline int64_t round_up(int64_t x, int64_t multiple) {
  return (x + multiple - 1) / multiple * multiple;
}

// The micro-kernel gemm() runs for an m x n product: `kernel`, or its narrow companion where
// that computes clearly fewer padded output elements (whole register tiles, each element one
// FMA per K step): a product at most one companion panel wide, or a short one whose rows the
// main kernel cuts into a ragged last panel (attention's 32 x 32 scores: 42 x 32 padded with
// 14 x 32 tiles, 32 x 32 with 16 x 16). Near a tie the main kernel stays: it loads less per FMA.
template <class T>
const GemmMicroKernel<T>& kernel_for_shape(const GemmMicroKernel<T>& kernel, int64_t m, int64_t n) {
  if (kernel.narrow == nullptr) return kernel;
  const auto padded = [m, n](const GemmMicroKernel<T>& k) {
    return static_cast<double>(round_up(m, k.mr)) * static_cast<double>(round_up(n, k.nr));
  };
  constexpr double kNarrowAdvantage = 0.8;
  return padded(*kernel.narrow) < kNarrowAdvantage * padded(kernel) ? *kernel.narrow : kernel;
}

// Called once per output tile after its last K slice, while the tile is still in cache: an
// epilogue such as FusedMatMul's bias and activation. `tile` points at Y's element (row0, col0);
// the tile is rows x cols elements with row stride `row_stride`. It must be a pure function of
// each element's value and position, so results stay independent of the tiling.
template <class T>
using GemmPostTileFn = void (*)(const void* context, T* tile, int64_t row_stride, int64_t row0,
                                int64_t col0, int64_t rows, int64_t cols);

// One row-major GEMM over strided operands. Element (i, p) of op(A) is
// a[i * a_row_stride + p * a_col_stride] and element (p, j) of op(B) is
// b[p * b_row_stride + j * b_col_stride], so transposes are just swapped strides.
// C is optional (nullptr: no beta * C term, Y is only written); its strides may be 0 to
// broadcast a row or column, and it may be Y itself (same strides) to accumulate in place.
template <class T>
struct GemmProblem {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  const T* a = nullptr;
  int64_t a_row_stride = 0;
  int64_t a_col_stride = 0;
  const T* b = nullptr;
  int64_t b_row_stride = 0;
  int64_t b_col_stride = 0;
  const T* c = nullptr;
  int64_t c_row_stride = 0;
  int64_t c_col_stride = 0;
  T* y = nullptr;
  int64_t y_row_stride = 0;  // Y's column stride is 1
  T alpha = 1;
  T beta = 0;
  GemmPostTileFn<T> post_tile = nullptr;  // optional epilogue (see GemmPostTileFn)
  const void* post_tile_context = nullptr;
};

// Whether this build has the ISA's micro-kernels and this CPU runs them.
bool gemm_isa_supported(GemmIsa isa);
// The fastest supported ISA: what the backend's MatMul and Gemm kernels are built on.
GemmIsa best_gemm_isa();

// The micro-kernel for dtype T (float or double) on `isa`; a KernelFailure VoltaError when
// the ISA is not supported, since running it would fault.
template <class T>
const GemmMicroKernel<T>& gemm_micro_kernel(GemmIsa isa);

// The scratch of one gemm() call, fixed by its problems' shapes alone: the packed op(A) and
// op(B) panels its tasks share (in the caller's planned workspace) and the most packing space one
// task uses (in the worker scratch of the thread that runs it, ThreadPool::worker_scratch). A
// kernel declares both when it is selected (KernelChoice), so gemm() never allocates.
struct GemmScratch {
  int64_t shared_bytes = 0;
  int64_t task_bytes = 0;
};

// The larger of each part: for a kernel that makes several gemm() calls.
GemmScratch max_scratch(const GemmScratch& a, const GemmScratch& b);

// The scratch of a gemm() call on `count` problems of m x n x k each. `a_row_stride` is op(A)'s
// row stride in elements where its rows run along K one element after another (a row-major
// MatMul's A), or 0 where they do not or it is not known: short rows are read in place and need
// no shared packing (0 reserves it wherever the tiles could share it).
template <class T>
GemmScratch gemm_scratch(const GemmMicroKernel<T>& kernel, int64_t m, int64_t n, int64_t k,
                         int64_t count, int64_t a_row_stride = 0);
// The scratch of a gemm() call on these problems.
template <class T>
GemmScratch gemm_scratch(const GemmMicroKernel<T>& kernel,
                         std::span<const GemmProblem<T>> problems);

// Scratch for gemm() calls outside a plan (tests, benchmarks): reserves the pool's worker
// scratch and owns an aligned shared buffer, both sized by gemm_scratch for these problems.
class OwnedGemmScratch {
 public:
  template <class T>
  OwnedGemmScratch(const GemmMicroKernel<T>& kernel, std::span<const GemmProblem<T>> problems,
                   ThreadPool& pool);
  std::span<std::byte> shared() { return {data_.get(), bytes_}; }

 private:
  struct Free {
    void operator()(std::byte* p) const;
  };
  std::unique_ptr<std::byte[], Free> data_;
  size_t bytes_ = 0;
};

// Solves independent problems (e.g. the batches of a MatMul) as one parallel loop over
// their output tiles. Problems must not write overlapping parts of Y. `shared` is the planned
// workspace for the shared op(B) panels (gemm_scratch's shared_bytes); each task packs into its
// worker's scratch. A KernelFailure when either is shorter than the problems need.
template <class T>
void gemm(const GemmMicroKernel<T>& kernel, std::span<const GemmProblem<T>> problems,
          ThreadPool& pool, std::span<std::byte> shared);

}  // namespace volta::cpu
