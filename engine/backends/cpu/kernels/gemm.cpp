#include "gemm.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <memory>
#include <new>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "volta/error.h"
#include "volta/ir/tensor.h"
#include "volta/runtime/planted_slowdown.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define VOLTA_GEMM_X86 1
#else
#define VOLTA_GEMM_X86 0
#endif

namespace volta::cpu {
namespace {

// The largest register tile of any micro-kernel (f32 AVX2, 6 x 16): edge tiles are staged in a
// local tile this big.
constexpr int kMaxMicroTileElements = 6 * 16;

// ---- Micro-kernels ---------------------------------------------------------------------------

// Portable C++ for CPUs without a SIMD kernel; the compiler may vectorize the j loop for its
// baseline ISA. Like the SIMD kernels, each element is one running sum over p in order.
template <class T, int MR, int NR>
void generic_micro_kernel(int64_t kc, const T* a, const T* b, T* c, int64_t ldc,
                          GemmEpilogue<T> epilogue) {
  T acc[MR][NR] = {};
  for (int64_t p = 0; p < kc; ++p, a += MR, b += NR) {
    for (int i = 0; i < MR; ++i) {
      for (int j = 0; j < NR; ++j) acc[i][j] += a[i] * b[j];
    }
  }
  for (int i = 0; i < MR; ++i) {
    T* row = c + i * ldc;
    for (int j = 0; j < NR; ++j) {
      const T scaled = epilogue.alpha * acc[i][j];
      row[j] = epilogue.load_c ? scaled + epilogue.beta * row[j] : scaled;
    }
  }
}

constexpr int kGenericRows = 4;
constexpr int kGenericCols = 8;

#if VOLTA_GEMM_X86
#define VOLTA_AVX2_FMA __attribute__((target("avx2,fma")))

// The AVX2 operations the micro-kernel needs, for each element type.
struct Avx2F32 {
  using Scalar = float;
  using Vec = __m256;
  static constexpr int kLanes = 8;
  VOLTA_AVX2_FMA static Vec zero() { return _mm256_setzero_ps(); }
  VOLTA_AVX2_FMA static Vec splat(float x) { return _mm256_set1_ps(x); }
  VOLTA_AVX2_FMA static Vec broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  VOLTA_AVX2_FMA static Vec load(const float* p) { return _mm256_loadu_ps(p); }
  VOLTA_AVX2_FMA static void store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
  VOLTA_AVX2_FMA static Vec mul(Vec x, Vec y) { return _mm256_mul_ps(x, y); }
  VOLTA_AVX2_FMA static Vec fmadd(Vec x, Vec y, Vec z) { return _mm256_fmadd_ps(x, y, z); }
};

struct Avx2F64 {
  using Scalar = double;
  using Vec = __m256d;
  static constexpr int kLanes = 4;
  VOLTA_AVX2_FMA static Vec zero() { return _mm256_setzero_pd(); }
  VOLTA_AVX2_FMA static Vec splat(double x) { return _mm256_set1_pd(x); }
  VOLTA_AVX2_FMA static Vec broadcast(const double* p) { return _mm256_broadcast_sd(p); }
  VOLTA_AVX2_FMA static Vec load(const double* p) { return _mm256_loadu_pd(p); }
  VOLTA_AVX2_FMA static void store(double* p, Vec v) { _mm256_storeu_pd(p, v); }
  VOLTA_AVX2_FMA static Vec mul(Vec x, Vec y) { return _mm256_mul_pd(x, y); }
  VOLTA_AVX2_FMA static Vec fmadd(Vec x, Vec y, Vec z) { return _mm256_fmadd_pd(x, y, z); }
};

// Six rows of two vectors: 12 accumulators, 2 op(B) vectors and one broadcast op(A) value
// fill the 16 ymm registers.
constexpr int kAvx2Rows = 6;
constexpr int kAvx2VectorsPerRow = 2;

template <class Ops>
VOLTA_AVX2_FMA void avx2_fma_micro_kernel(int64_t kc, const typename Ops::Scalar* a,
                                          const typename Ops::Scalar* b, typename Ops::Scalar* c,
                                          int64_t ldc,
                                          GemmEpilogue<typename Ops::Scalar> epilogue) {
  using Vec = typename Ops::Vec;
  constexpr int kCols = kAvx2VectorsPerRow * Ops::kLanes;
  Vec acc[kAvx2Rows][kAvx2VectorsPerRow];
#pragma GCC unroll 6
  for (int i = 0; i < kAvx2Rows; ++i) {
#pragma GCC unroll 2
    for (int v = 0; v < kAvx2VectorsPerRow; ++v) acc[i][v] = Ops::zero();
  }
  for (int64_t p = 0; p < kc; ++p, a += kAvx2Rows, b += kCols) {
    Vec b_row[kAvx2VectorsPerRow];
#pragma GCC unroll 2
    for (int v = 0; v < kAvx2VectorsPerRow; ++v) b_row[v] = Ops::load(b + v * Ops::kLanes);
#pragma GCC unroll 6
    for (int i = 0; i < kAvx2Rows; ++i) {
      const Vec a_value = Ops::broadcast(a + i);
#pragma GCC unroll 2
      for (int v = 0; v < kAvx2VectorsPerRow; ++v) {
        acc[i][v] = Ops::fmadd(a_value, b_row[v], acc[i][v]);
      }
    }
  }
  const Vec alpha = Ops::splat(epilogue.alpha);
  const Vec beta = Ops::splat(epilogue.beta);
#pragma GCC unroll 6
  for (int i = 0; i < kAvx2Rows; ++i) {
#pragma GCC unroll 2
    for (int v = 0; v < kAvx2VectorsPerRow; ++v) {
      typename Ops::Scalar* out = c + i * ldc + v * Ops::kLanes;
      Vec result = Ops::mul(alpha, acc[i][v]);
      if (epilogue.load_c) result = Ops::fmadd(beta, Ops::load(out), result);
      Ops::store(out, result);
    }
  }
}

bool cpu_runs_avx2_fma() {
  static const bool kRuns = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return kRuns;
}
#endif  // VOLTA_GEMM_X86

// ---- Variants --------------------------------------------------------------------------------

// Blocking: a kc x nr op(B) panel is 8-16 KiB, resident in L1 while the micro-kernel sweeps
// the op(A) panels; a tile's packed op(A) block (mc x kc, 128-192 KiB) and op(B) block
// (kc x nc, 512 KiB) fit a 1 MiB L2 together.
template <class T>
struct MicroKernels;

template <>
struct MicroKernels<float> {
  static constexpr GemmMicroKernel<float> kGeneric{
      .name = "f32_gemm_generic_4x8",
      .isa = GemmIsa::Generic,
      .mr = kGenericRows,
      .nr = kGenericCols,
      .kc = 256,
      .mc = 128,
      .nc = 512,
      .fn = &generic_micro_kernel<float, kGenericRows, kGenericCols>};
#if VOLTA_GEMM_X86
  static constexpr GemmMicroKernel<float> kAvx2Fma{.name = "f32_gemm_avx2fma_6x16",
                                                   .isa = GemmIsa::Avx2Fma,
                                                   .mr = kAvx2Rows,
                                                   .nr = kAvx2VectorsPerRow * Avx2F32::kLanes,
                                                   .kc = 256,
                                                   .mc = 168,
                                                   .nc = 512,
                                                   .fn = &avx2_fma_micro_kernel<Avx2F32>};
#endif
};

template <>
struct MicroKernels<double> {
  static constexpr GemmMicroKernel<double> kGeneric{
      .name = "f64_gemm_generic_4x8",
      .isa = GemmIsa::Generic,
      .mr = kGenericRows,
      .nr = kGenericCols,
      .kc = 256,
      .mc = 64,
      .nc = 256,
      .fn = &generic_micro_kernel<double, kGenericRows, kGenericCols>};
#if VOLTA_GEMM_X86
  static constexpr GemmMicroKernel<double> kAvx2Fma{.name = "f64_gemm_avx2fma_6x8",
                                                    .isa = GemmIsa::Avx2Fma,
                                                    .mr = kAvx2Rows,
                                                    .nr = kAvx2VectorsPerRow * Avx2F64::kLanes,
                                                    .kc = 256,
                                                    .mc = 96,
                                                    .nc = 256,
                                                    .fn = &avx2_fma_micro_kernel<Avx2F64>};
#endif
};

template <class T>
constexpr bool well_formed(const GemmMicroKernel<T>& k) {
  return k.mr * k.nr <= kMaxMicroTileElements && k.kc > 0 && k.mc % k.mr == 0 && k.nc % k.nr == 0;
}
static_assert(well_formed(MicroKernels<float>::kGeneric));
static_assert(well_formed(MicroKernels<double>::kGeneric));
#if VOLTA_GEMM_X86
static_assert(well_formed(MicroKernels<float>::kAvx2Fma));
static_assert(well_formed(MicroKernels<double>::kAvx2Fma));
#endif

std::string_view gemm_isa_name(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::Generic:
      return "generic";
    case GemmIsa::Avx2Fma:
      return "avx2fma";
  }
  return "unknown";
}

// ---- Packing ---------------------------------------------------------------------------------

// Packs one panel: `lanes` of its `width` lanes (rows of op(A) or columns of op(B)), `depth`
// steps along K, interleaved so the micro-kernel reads it front to back:
// dst[s * width + l] = src[l * lane_stride + s * step_stride]. Lanes past `lanes` are zero.
template <class T>
void pack_panel(const T* src, int64_t lane_stride, int64_t step_stride, int64_t depth, int width,
                int lanes, T* dst) {
  if (lane_stride == 1) {
    // Lanes adjacent in memory (op(B) as stored, or a transposed op(A)): copy runs of lanes.
    for (int64_t s = 0; s < depth; ++s) {
      const T* from = src + s * step_stride;
      T* to = dst + s * width;
      std::copy(from, from + lanes, to);
      std::fill(to + lanes, to + width, T(0));
    }
    return;
  }
  // Otherwise walk each lane along K, which is contiguous for op(A) as stored.
  for (int l = 0; l < lanes; ++l) {
    const T* from = src + l * lane_stride;
    for (int64_t s = 0; s < depth; ++s) dst[s * width + l] = from[s * step_stride];
  }
  for (int l = lanes; l < width; ++l) {
    for (int64_t s = 0; s < depth; ++s) dst[s * width + l] = T(0);
  }
}

// Packs `extent` lanes as consecutive panels of `width` lanes, each width x depth.
template <class T>
void pack_block(const T* src, int64_t lane_stride, int64_t step_stride, int64_t extent,
                int64_t depth, int width, T* dst) {
  for (int64_t first = 0; first < extent; first += width) {
    const int lanes = static_cast<int>(std::min<int64_t>(width, extent - first));
    pack_panel(src + first * lane_stride, lane_stride, step_stride, depth, width, lanes,
               dst + first * depth);
  }
}

// Packing space for the task running on this thread: grown on demand, never shared.
template <class T>
T* packing_buffer(size_t elements) {
  struct AlignedDelete {
    void operator()(T* p) const { ::operator delete[](p, std::align_val_t{kTensorAlignment}); }
  };
  thread_local std::unique_ptr<T[], AlignedDelete> buffer;
  thread_local size_t capacity = 0;
  if (capacity < elements) {
    buffer.reset(static_cast<T*>(
        ::operator new[](elements * sizeof(T), std::align_val_t{kTensorAlignment})));
    capacity = elements;
  }
  return buffer.get();
}

int64_t round_up(int64_t x, int64_t multiple) { return (x + multiple - 1) / multiple * multiple; }

// ---- Tiles -----------------------------------------------------------------------------------

// Runs the micro-kernel on an mr x nr piece of Y of which only rows x cols exist, through a
// local full-size tile: the same instructions as for a full tile, so the same bits.
template <class T>
void run_edge_micro_tile(const GemmMicroKernel<T>& kernel, int64_t depth, const T* a_panel,
                         const T* b_panel, T* y, int64_t y_row_stride, int64_t rows, int64_t cols,
                         GemmEpilogue<T> epilogue) {
  std::array<T, kMaxMicroTileElements> tile{};
  if (epilogue.load_c) {
    for (int64_t i = 0; i < rows; ++i) {
      std::copy(y + i * y_row_stride, y + i * y_row_stride + cols, tile.data() + i * kernel.nr);
    }
  }
  kernel.fn(depth, a_panel, b_panel, tile.data(), kernel.nr, epilogue);
  for (int64_t i = 0; i < rows; ++i) {
    const T* from = tile.data() + i * kernel.nr;
    std::copy(from, from + cols, y + i * y_row_stride);
  }
}

// Writes the C operand, broadcast by its strides, into a tile of Y so that the first K slice
// can apply beta to it in place.
template <class T>
void copy_c_into_tile(const GemmProblem<T>& p, int64_t row0, int64_t col0, int64_t rows,
                      int64_t cols, T* y_tile) {
  for (int64_t i = 0; i < rows; ++i) {
    const T* c_row = p.c + (row0 + i) * p.c_row_stride + col0 * p.c_col_stride;
    T* y_row = y_tile + i * p.y_row_stride;
    for (int64_t j = 0; j < cols; ++j) y_row[j] = c_row[j * p.c_col_stride];
  }
}

// How a problem's output is cut into tasks: a grid of tiles of at most mc x nc elements, as
// even as multiples of mr x nr allow, so that the tasks cost about the same. The grid depends
// on the problem's shape alone.
struct TileGrid {
  int64_t tile_rows = 0;
  int64_t tile_cols = 0;
  int64_t tiles_down = 0;
  int64_t tiles_across = 0;
  int64_t tasks() const { return tiles_down * tiles_across; }
};

int64_t ceil_div(int64_t x, int64_t y) { return (x + y - 1) / y; }

// `extent` split into the fewest pieces of at most `block`, each a multiple of `unit` but
// perhaps the last: returns the piece size and count.
std::pair<int64_t, int64_t> even_split(int64_t extent, int64_t block, int64_t unit) {
  if (extent == 0) return {0, 0};
  const int64_t pieces = ceil_div(extent, block);
  const int64_t size = round_up(ceil_div(extent, pieces), unit);
  return {size, ceil_div(extent, size)};
}

template <class T>
TileGrid tile_grid(const GemmMicroKernel<T>& kernel, const GemmProblem<T>& p) {
  TileGrid grid;
  std::tie(grid.tile_rows, grid.tiles_down) = even_split(p.m, kernel.mc, kernel.mr);
  std::tie(grid.tile_cols, grid.tiles_across) = even_split(p.n, kernel.nc, kernel.nr);
  return grid;
}

// One task: the tile of Y with `rows` x `cols` elements whose top-left element is (row0, col0).
template <class T>
void run_tile(const GemmMicroKernel<T>& kernel, const GemmProblem<T>& p, int64_t row0, int64_t col0,
              int64_t rows, int64_t cols) {
  T* const y = p.y + row0 * p.y_row_stride + col0;
  const bool has_c = p.c != nullptr;
  if (has_c && p.c != p.y) copy_c_into_tile(p, row0, col0, rows, cols, y);

  const int64_t max_depth = std::min(kernel.kc, p.k);
  const int64_t a_block_elements = round_up(rows, kernel.mr) * max_depth;
  const int64_t b_block_elements = round_up(cols, kernel.nr) * max_depth;
  T* const a_block = packing_buffer<T>(static_cast<size_t>(a_block_elements + b_block_elements));
  T* const b_block = a_block + a_block_elements;

  // One pass even when K is 0, so that Y still gets alpha * 0 + beta * C.
  int64_t k0 = 0;
  do {
    const int64_t depth = std::min(kernel.kc, p.k - k0);
    if (depth > 0) {
      pack_block(p.a + row0 * p.a_row_stride + k0 * p.a_col_stride, p.a_row_stride, p.a_col_stride,
                 rows, depth, kernel.mr, a_block);
      pack_block(p.b + k0 * p.b_row_stride + col0 * p.b_col_stride, p.b_col_stride, p.b_row_stride,
                 cols, depth, kernel.nr, b_block);
    }
    // The first slice applies beta to C (or overwrites Y when there is none); later slices
    // add their partial sums onto Y.
    const GemmEpilogue<T> epilogue =
        k0 == 0 ? GemmEpilogue<T>{p.alpha, p.beta, has_c} : GemmEpilogue<T>{p.alpha, T(1), true};
    for (int64_t j = 0; j < cols; j += kernel.nr) {
      for (int64_t i = 0; i < rows; i += kernel.mr) {
        const T* a_panel = a_block + i * depth;
        const T* b_panel = b_block + j * depth;
        T* y_piece = y + i * p.y_row_stride + j;
        const int64_t piece_rows = std::min<int64_t>(kernel.mr, rows - i);
        const int64_t piece_cols = std::min<int64_t>(kernel.nr, cols - j);
        if (piece_rows == kernel.mr && piece_cols == kernel.nr) {
          kernel.fn(depth, a_panel, b_panel, y_piece, p.y_row_stride, epilogue);
        } else {
          run_edge_micro_tile(kernel, depth, a_panel, b_panel, y_piece, p.y_row_stride, piece_rows,
                              piece_cols, epilogue);
        }
      }
    }
    k0 += depth;
  } while (k0 < p.k);
  // The optional per-tile epilogue, after the full K sum (never folded into a K slice).
  if (p.post_tile != nullptr)
    p.post_tile(p.post_tile_context, y, p.y_row_stride, row0, col0, rows, cols);
}

template <class T>
void check_problem(const GemmProblem<T>& p) {
  if (p.m < 0 || p.n < 0 || p.k < 0) {
    fail(ErrorCode::KernelFailure, "GEMM sizes must be >= 0, got m=" + std::to_string(p.m) +
                                       " n=" + std::to_string(p.n) + " k=" + std::to_string(p.k));
  }
  if (p.m > 1 && p.y_row_stride < p.n) {
    fail(ErrorCode::KernelFailure, "GEMM output row stride " + std::to_string(p.y_row_stride) +
                                       " overlaps rows of " + std::to_string(p.n) + " columns");
  }
  if (p.c == p.y && p.c != nullptr && (p.c_row_stride != p.y_row_stride || p.c_col_stride != 1)) {
    fail(ErrorCode::KernelFailure, "GEMM C aliases Y with strides [" +
                                       std::to_string(p.c_row_stride) + "," +
                                       std::to_string(p.c_col_stride) + "], in place needs Y's [" +
                                       std::to_string(p.y_row_stride) + ",1]");
  }
}

}  // namespace

bool gemm_isa_supported(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::Generic:
      return true;
    case GemmIsa::Avx2Fma:
#if VOLTA_GEMM_X86
      return cpu_runs_avx2_fma();
#else
      return false;
#endif
  }
  return false;
}

GemmIsa best_gemm_isa() {
  return gemm_isa_supported(GemmIsa::Avx2Fma) ? GemmIsa::Avx2Fma : GemmIsa::Generic;
}

template <class T>
const GemmMicroKernel<T>& gemm_micro_kernel(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::Generic:
      return MicroKernels<T>::kGeneric;
    case GemmIsa::Avx2Fma:
#if VOLTA_GEMM_X86
      if (cpu_runs_avx2_fma()) return MicroKernels<T>::kAvx2Fma;
#endif
      break;
  }
  fail(ErrorCode::KernelFailure, "no " + std::string(gemm_isa_name(isa)) +
                                     " GEMM micro-kernel: this build or this CPU lacks the ISA");
}

template <class T>
void gemm(const GemmMicroKernel<T>& kernel, std::span<const GemmProblem<T>> problems,
          ThreadPool& pool) {
  if (!gemm_isa_supported(kernel.isa)) {
    fail(ErrorCode::KernelFailure, std::string(kernel.name) + " cannot run on this CPU");
  }
  const PlantedSlowdownScope planted("gemm");
  // Problem q owns tasks [first_task[q], first_task[q] + grids[q].tasks()), one per tile of
  // its grid, row-major.
  std::vector<int64_t> first_task;
  std::vector<TileGrid> grids;
  first_task.reserve(problems.size());
  grids.reserve(problems.size());
  int64_t num_tasks = 0;
  for (const GemmProblem<T>& p : problems) {
    check_problem(p);
    first_task.push_back(num_tasks);
    grids.push_back(tile_grid(kernel, p));
    num_tasks += grids.back().tasks();
  }
  pool.parallel_for(num_tasks, [&](int64_t task) {
    const auto owner = std::upper_bound(first_task.begin(), first_task.end(), task) - 1;
    const size_t q = static_cast<size_t>(owner - first_task.begin());
    const GemmProblem<T>& p = problems[q];
    const TileGrid& grid = grids[q];
    const int64_t tile = task - *owner;
    const int64_t row0 = tile / grid.tiles_across * grid.tile_rows;
    const int64_t col0 = tile % grid.tiles_across * grid.tile_cols;
    run_tile(kernel, p, row0, col0, std::min(grid.tile_rows, p.m - row0),
             std::min(grid.tile_cols, p.n - col0));
  });
}

template const GemmMicroKernel<float>& gemm_micro_kernel<float>(GemmIsa isa);
template const GemmMicroKernel<double>& gemm_micro_kernel<double>(GemmIsa isa);
template void gemm<float>(const GemmMicroKernel<float>& kernel,
                          std::span<const GemmProblem<float>> problems, ThreadPool& pool);
template void gemm<double>(const GemmMicroKernel<double>& kernel,
                           std::span<const GemmProblem<double>> problems, ThreadPool& pool);

}  // namespace volta::cpu
