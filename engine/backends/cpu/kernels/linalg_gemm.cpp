#include "linalg_gemm.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "linalg_gemm_micro_kernels.h"
#include "linalg_gemm_pack.h"
#include "volta/backends/cpu/planted_slowdown.h"
#include "volta/error.h"
#include "volta/ir/host_memory.h"
#include "volta/ir/tensor.h"

namespace volta::cpu {
namespace {

using gemm_detail::kCacheLine;
using gemm_detail::kMaxMicroTileElements;
using gemm_detail::MicroKernels;
using gemm_detail::pack_block;
#if VOLTA_GEMM_X86
using gemm_detail::cpu_runs_avx2_fma;
using gemm_detail::cpu_runs_avx512;
#endif

std::string_view gemm_isa_name(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::Generic:
      return "generic";
    case GemmIsa::Avx2Fma:
      return "avx2fma";
    case GemmIsa::Avx512:
      return "avx512";
  }
  return "unknown";
}

int64_t ceil_div(int64_t x, int64_t y) { return (x + y - 1) / y; }

// ---- Tiles -----------------------------------------------------------------------------------

// Runs the micro-kernel on an mr x nr piece of Y of which only rows x cols exist, through a
// local full-size tile: the same instructions as for a full tile, so the same bits.
template <class T>
void run_edge_micro_tile(const GemmMicroKernel<T>& kernel, int64_t depth, const T* a_panel,
                         int64_t a_row_stride, const T* b_panel, T* y, int64_t y_row_stride,
                         int64_t rows, int64_t cols, GemmEpilogue<T> epilogue) {
  alignas(kTensorAlignment) std::array<T, kMaxMicroTileElements> tile{};
  if (epilogue.load_c) {
    for (int64_t i = 0; i < rows; ++i) {
      std::copy(y + i * y_row_stride, y + i * y_row_stride + cols, tile.data() + i * kernel.nr);
    }
  }
  kernel.fn(depth, a_panel, a_row_stride, b_panel, tile.data(), kernel.nr, epilogue, nullptr);
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

// How a problem's output is cut into tasks: a grid of tiles_down x tiles_across tiles, each
// a whole number of mr x nr register tiles (but at the matrix edge), the counts differing by
// at most one between tiles so that the tasks cost about the same. The grid depends on the
// problems' shapes alone, and no element's value depends on the grid.
struct TileGrid {
  int64_t row_units = 0;  // register tile rows: ceil(m / mr)
  int64_t col_units = 0;  // register tile columns: ceil(n / nr)
  int64_t tiles_down = 0;
  int64_t tiles_across = 0;
  int64_t tasks() const { return tiles_down * tiles_across; }
};

// Where tile `t` of `tiles` starts along an axis of `units` register tiles of `unit` elements.
int64_t tile_start(int64_t t, int64_t tiles, int64_t units, int64_t unit) {
  return t * units / tiles * unit;
}

// A call should have at least kTargetTasks tiles, so that as many threads share it, and each
// problem a multiple of kTaskMultiple of them, so that 2 or 4 threads get equal shares (where
// fewer are affordable, the most of 4, 8, ... or 2: 3 or 5 would split 2:1 or 3:2 on 2
// threads); but no tile is cut below kMinTileFlops of work, where waking a thread would cost
// more than it saves. 0.75 MFLOP is about 7 us on one AVX-512 core, far above a wake-up of the
// pool's spinning workers; 4 MFLOP left a transformer's 16.8 MFLOP products in 5 tiles, 3:2 on
// 2 threads, and 1 MFLOP a decode-sized qkv product (64 tokens, d 64: 1.6 MFLOP) in one tile,
// on one thread; 0.5 MFLOP cut the 2.1 MFLOP ones into 4 tiles of one column panel, each
// reading all of op(A) again.
// Tiles below one another that the cache blocks did not ask for share one packed op(B), made in
// a phase of its own before the products: a cost only tiles of kMinStackedTileFlops repay, so a
// short problem (one row block) is cut across its columns first.
constexpr int64_t kTargetTasks = 8;
constexpr int64_t kTaskMultiple = 4;
constexpr double kMinTileFlops = 0.75e6;
constexpr double kMinStackedTileFlops = 2e6;
// Past this many tiles a problem's grid is left as the cache blocks cut it.
constexpr int64_t kMaxTilesSearched = 64;

// Of the grids that refine `blocks` (the cache blocks' grid) into at least `wanted` and at most
// `most` tiles, stacking no tiles of less than kMinStackedTileFlops where the blocks do not
// stack: the squarest (which reads the
// least of op(A) and op(B) per flop) of the fewest, preferring a multiple of kTaskMultiple.
// Returns `blocks` when none qualifies.
template <class T>
TileGrid refine_grid(const GemmProblem<T>& p, const TileGrid& blocks, double flops, int64_t wanted,
                     int64_t most) {
  const auto score = [&](int64_t down, int64_t across) {
    const int64_t tasks = down * across;
    const bool even = tasks % kTaskMultiple == 0 && tasks < 2 * wanted;
    const double reads = static_cast<double>(down) / static_cast<double>(p.m) +
                         static_cast<double>(across) / static_cast<double>(p.n);
    return std::tuple(!even, tasks, reads);
  };
  TileGrid best = blocks;
  bool found = false;
  for (int64_t down = blocks.tiles_down; down <= std::min(blocks.row_units, 2 * wanted); ++down) {
    for (int64_t across = blocks.tiles_across; across <= std::min(blocks.col_units, 2 * wanted);
         ++across) {
      const int64_t tasks = down * across;
      if (tasks < wanted || tasks > most) continue;
      const bool stacks = down > 1 && blocks.tiles_down == 1;
      if (stacks && flops / static_cast<double>(tasks) < kMinStackedTileFlops) continue;
      if (!found || score(down, across) < score(best.tiles_down, best.tiles_across)) {
        best.tiles_down = down;
        best.tiles_across = across;
        found = true;
      }
    }
  }
  return best;
}

// The largest tile count up to n that 2 and 4 threads share equally (a multiple of
// kTaskMultiple, else 2 or 1), or n itself when it is at most `floor` (already that many tiles).
int64_t balanced_below(int64_t n, int64_t floor) {
  if (n <= floor || n <= 2) return n;
  return n >= kTaskMultiple ? n - n % kTaskMultiple : 2;
}

template <class T>
TileGrid tile_grid(const GemmMicroKernel<T>& kernel, const GemmProblem<T>& p, size_t num_problems) {
  TileGrid grid;
  grid.row_units = ceil_div(p.m, kernel.mr);
  grid.col_units = ceil_div(p.n, kernel.nr);
  if (grid.row_units == 0 || grid.col_units == 0) return grid;
  // As big as the cache blocks allow...
  grid.tiles_down = ceil_div(p.m, kernel.mc);
  grid.tiles_across = ceil_div(p.n, kernel.nc);
  // ...then cut finer for threads to share: the fewest tiles that are enough, a multiple of
  // kTaskMultiple if a few more tiles get there.
  const double flops = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) *
                       static_cast<double>(std::max<int64_t>(p.k, 1));
  const auto affordable = static_cast<int64_t>(flops / kMinTileFlops);
  const int64_t per_problem = ceil_div(kTargetTasks, static_cast<int64_t>(num_problems));
  const int64_t target = std::max(grid.tasks(), per_problem);
  int64_t wanted = std::min(target, affordable);
  // Where the work limits the count, the most that 2 and 4 threads share equally.
  if (wanted < target) wanted = balanced_below(wanted, 1);
  // Enough tiles already, and either a multiple or so many that the remainder hardly matters.
  const bool balanced = grid.tasks() % kTaskMultiple == 0 || grid.tasks() > kMaxTilesSearched;
  if (grid.tasks() >= wanted && (balanced || grid.tasks() == 1)) return grid;
  const int64_t most = std::max(grid.tasks(), affordable);
  for (int64_t want = wanted;; want = balanced_below(want - 1, grid.tasks())) {
    const TileGrid refined = refine_grid(p, grid, flops, want, most);
    // Where the limits leave fewer tiles than wanted: the most they allow.
    if (refined.tasks() >= want || want <= grid.tasks()) return refined;
  }
}

// The most elements of op(A) a task packs up front; past it, it packs one K slice at a time.
// Also the most a problem packs once for all its tiles (ProblemPlan::a_shareable).
constexpr int64_t kMaxPackedElements = int64_t{1} << 20;

// One problem's place in a gemm() call: its tiles' task numbers and, when several tiles lie
// below one another, where its shared packed op(B) lives, or when a single row of tiles lies
// side by side, where its shared packed op(A) may live (never both: one row of tiles stacks
// none).
template <class T>
struct ProblemPlan {
  // The call's kernel or, for a narrow product, its companion (kernel_for_shape).
  const GemmMicroKernel<T>* kernel = nullptr;
  TileGrid grid;
  bool shared_b = false;
  int64_t n_padded = 0;  // n rounded up to whole nr-column panels
  // Whether op(A) may be packed once for the tiles side by side of a short problem (one row of
  // tiles), which would each pack all of it (8 times over: 45 % of a 64-token product's time);
  // it is, unless the tiles read its rows in place (shares_a). Taller problems keep packing
  // their rows per tile, where the pack is still in L2 when the tile reads it: a shared pack of
  // a 1x1 convolution's 3136 x 64 op(A) made it 11 % slower.
  bool a_shareable = false;
  int64_t m_padded = 0;       // m rounded up to whole mr-row panels
  int64_t shared_offset = 0;  // of its shared packed operand in the shared buffer
};

// A problem's grid, and whether its op(B) is packed once for the tiles below one another and
// its op(A) for the tiles side by side.
template <class T>
ProblemPlan<T> plan_problem(const GemmMicroKernel<T>& call_kernel, const GemmProblem<T>& p,
                            size_t num_problems) {
  const GemmMicroKernel<T>& kernel = kernel_for_shape(call_kernel, p.m, p.n);
  ProblemPlan<T> plan{.kernel = &kernel, .grid = tile_grid(kernel, p, num_problems)};
  plan.shared_b = plan.grid.tiles_down > 1 && p.k > 0 && p.n > 0;
  if (plan.shared_b) plan.n_padded = round_up(p.n, kernel.nr);
  plan.m_padded = round_up(p.m, kernel.mr);
  plan.a_shareable = plan.grid.tiles_down == 1 && plan.grid.tiles_across > 1 && p.k > 0 &&
                     p.m > 0 && plan.m_padded * p.k <= kMaxPackedElements;
  return plan;
}

// Packed op(B) of a K slice: panel after panel of depth x nr, so that the panel for column
// col (a multiple of nr) starts at (col / nr) * depth * nr = col * depth. Slice k0 starts
// after k0 full-depth rows of panels.
template <class T>
T* shared_b_slice(T* shared, const ProblemPlan<T>& plan, int64_t k0) {
  return shared + plan.shared_offset + k0 * plan.n_padded;
}

// Packed op(A) of a K slice, as a task packs its rows (panel after panel of depth x mr, the
// panel for row `row`, a multiple of mr, at row * depth), for all of op(A)'s rows.
template <class T>
T* shared_a_slice(T* shared, const ProblemPlan<T>& plan, int64_t k0) {
  return shared + plan.shared_offset + k0 * plan.m_padded;
}

// Output columns a task finishes over all K slices before it moves on, in register tiles:
// enough for the op(A) block of a slice to be reused, few enough that this part of Y stays in
// L2 from one slice to the next.
constexpr int64_t kColumnBlockPanels = 8;

// A task's packing space in its worker's scratch: unless the problem shares its op(A), op(A)'s
// rows for all of K unless that is too big to keep (then one K slice, packed again for each
// block of columns), followed, unless the problem shares its op(B), by one block of op(B)'s
// columns for one K slice.
struct TaskPacking {
  bool a_packed_once = false;
  int64_t a_elements = 0;
  int64_t b_elements = 0;
};

template <class T>
TaskPacking task_packing(const GemmMicroKernel<T>& kernel, int64_t k, int64_t rows, int64_t cols,
                         bool shared_a, bool shared_b) {
  const int64_t rows_padded = round_up(rows, kernel.mr);
  const int64_t max_depth = std::min(kernel.kc, k);
  TaskPacking t;
  t.a_packed_once = rows_padded * k <= kMaxPackedElements;
  t.a_elements = shared_a ? 0 : rows_padded * (t.a_packed_once ? k : max_depth);
  t.b_elements =
      shared_b ? 0
               : std::min(round_up(cols, kernel.nr), kColumnBlockPanels * kernel.nr) * max_depth;
  return t;
}

// The largest extent of the `tiles` tiles along an axis of `units` units of `unit` elements, the
// last cut at `extent`.
int64_t largest_tile(int64_t tiles, int64_t units, int64_t unit, int64_t extent) {
  int64_t largest = 0;
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t begin = tile_start(t, tiles, units, unit);
    largest = std::max(largest, std::min(tile_start(t + 1, tiles, units, unit), extent) - begin);
  }
  return largest;
}

// The most packing elements a task of this problem uses: op(A)'s part depends on the tile's
// rows only and op(B)'s on its columns only, so each takes its largest tile. op(A)'s part is
// counted even where the problem may share it (a_shareable): gemm_scratch's callers may not
// know op(A)'s strides, which decide whether it is shared.
template <class T>
int64_t most_task_packing(const GemmMicroKernel<T>& kernel, const GemmProblem<T>& p,
                          const ProblemPlan<T>& plan) {
  const TileGrid& grid = plan.grid;
  int64_t a_most = 0, b_most = 0;
  for (int64_t t = 0; t < grid.tiles_down; ++t) {
    const int64_t row0 = tile_start(t, grid.tiles_down, grid.row_units, kernel.mr);
    const int64_t row1 = tile_start(t + 1, grid.tiles_down, grid.row_units, kernel.mr);
    a_most = std::max(
        a_most, task_packing(kernel, p.k, std::min(row1, p.m) - row0, 0, false, true).a_elements);
  }
  const int64_t cols = largest_tile(grid.tiles_across, grid.col_units, kernel.nr, p.n);
  if (grid.tasks() > 0) {
    b_most = task_packing(kernel, p.k, 0, cols, false, plan.shared_b).b_elements;
  }
  return a_most + b_most;
}

// The shared op(B) pack is read from L3 (packed by another task, or too big for L2), and its
// kc x nr panels overflow L1, so the micro-kernel's calls for the first two row panels of a
// column panel fetch the next column panel, half each: a kernel call streams one line per K
// step, and a panel is two lines per step when a step is 128 bytes (f32 x 32, f64 x 16).
// nullptr for the other calls, the last column panel of a block, or another panel width.
template <class T>
const T* next_b_half(const GemmMicroKernel<T>& kernel, const T* b_panel, int64_t depth, int64_t row,
                     bool has_next) {
  const bool two_lines = kernel.nr * static_cast<int64_t>(sizeof(T)) == 2 * kCacheLine;
  if (!two_lines || !has_next || row >= 2 * kernel.mr) return nullptr;
  return b_panel + kernel.nr * depth + row / kernel.mr * (kernel.nr * depth / 2);
}

// op(A)'s rows are read in place by the micro-kernel, not packed, when they lie along K one
// element after another and at most this many bytes apart: then the mr rows a kernel call
// reads sit in mr distinct L1 sets (or few per set) rather than aliasing one set, as rows 4 KiB
// apart would. That is the short-K case (a transformer's d = 64 .. 256), where packing costs
// as much as the products it feeds.
constexpr int64_t kInPlaceRowStrideBytes = 1024;

template <class T>
bool reads_a_in_place(const GemmProblem<T>& p) {
  return p.a_col_stride == 1 && p.a_row_stride > 0 &&
         p.a_row_stride * static_cast<int64_t>(sizeof(T)) <= kInPlaceRowStrideBytes;
}

// Whether the problem's tiles read op(A) from one pack made before them (ProblemPlan).
template <class T>
bool shares_a(const GemmProblem<T>& p, const ProblemPlan<T>& plan) {
  return plan.a_shareable && !reads_a_in_place(p);
}

// The problem's shared scratch in elements: its packed op(B) and op(A).
template <class T>
int64_t shared_elements(const GemmProblem<T>& p, const ProblemPlan<T>& plan) {
  return (plan.shared_b ? plan.n_padded * p.k : 0) + (shares_a(p, plan) ? plan.m_padded * p.k : 0);
}

// One task: the tile of Y with `rows` x `cols` elements whose top-left element is (row0, col0).
// `shared_a` and `shared_b` are the problem's packed op(A) and op(B), or nullptr for the task to
// pack its own rows and columns. The tile's op(A) rows are read in place (reads_a_in_place),
// from the shared pack, or packed once for all of K; then each block of columns runs its K
// slices in order, so every element still sums its slices in order.
template <class T>
void run_tile(const GemmMicroKernel<T>& kernel, const GemmProblem<T>& p, int64_t row0, int64_t col0,
              int64_t rows, int64_t cols, T* shared_a, T* shared_b, const ProblemPlan<T>& plan,
              std::span<std::byte> scratch) {
  T* const y = p.y + row0 * p.y_row_stride + col0;
  const bool has_c = p.c != nullptr;
  if (has_c && p.c != p.y) copy_c_into_tile(p, row0, col0, rows, cols, y);

  const int64_t rows_padded = round_up(rows, kernel.mr);
  const int64_t block_cols = kColumnBlockPanels * kernel.nr;
  const TaskPacking packing =
      task_packing(kernel, p.k, rows, cols, shared_a != nullptr, shared_b != nullptr);
  const bool a_packed_once = packing.a_packed_once;
  const auto need = static_cast<size_t>(packing.a_elements + packing.b_elements) * sizeof(T);
  if (need > scratch.size()) {
    fail(ErrorCode::KernelFailure, "a GEMM task needs " + std::to_string(need) +
                                       " bytes of worker scratch, the context holds " +
                                       std::to_string(scratch.size()) +
                                       ": the kernel's selection declared less than it uses");
  }
  T* const a_all = reinterpret_cast<T*>(scratch.data());
  T* const own_b_block = a_all + packing.a_elements;
  // Packs op(A)'s slice k0 at `dst`.
  const auto pack_a_slice = [&](int64_t k0, T* dst) {
    pack_block(kernel.isa, p.a + row0 * p.a_row_stride + k0 * p.a_col_stride, p.a_row_stride,
               p.a_col_stride, rows, std::min(kernel.kc, p.k - k0), kernel.mr, dst);
  };
  // Read in place, op(A) needs packing only for a last panel of fewer than mr rows (below).
  const bool a_in_place = reads_a_in_place(p);
  const int64_t full_rows = rows / kernel.mr * kernel.mr;
  // Slice k0 of op(A) starts after k0 full-depth steps of every panel.
  if (a_packed_once && !a_in_place && shared_a == nullptr) {
    for (int64_t k0 = 0; k0 < p.k; k0 += kernel.kc) pack_a_slice(k0, a_all + rows_padded * k0);
  }

  for (int64_t c0 = 0; c0 < cols; c0 += block_cols) {
    const int64_t bcols = std::min(block_cols, cols - c0);
    // One pass even when K is 0, so that Y still gets alpha * 0 + beta * C.
    int64_t k0 = 0;
    do {
      const int64_t depth = std::min(kernel.kc, p.k - k0);
      const T* a_block = a_all;
      if (shared_a != nullptr) {
        a_block = shared_a_slice(shared_a, plan, k0) + row0 * depth;
      } else if (a_in_place) {
        if (depth > 0 && full_rows < rows) {
          pack_block(kernel.isa, p.a + (row0 + full_rows) * p.a_row_stride + k0, p.a_row_stride,
                     int64_t{1}, rows - full_rows, depth, kernel.mr, a_all);
        }
      } else if (a_packed_once) {
        a_block += rows_padded * k0;
      } else if (depth > 0) {
        pack_a_slice(k0, a_all);
      }
      const T* b_block = own_b_block;
      if (depth > 0 && shared_b) {
        b_block = shared_b_slice(shared_b, plan, k0) + (col0 + c0) * depth;
      } else if (depth > 0) {
        pack_block(kernel.isa, p.b + k0 * p.b_row_stride + (col0 + c0) * p.b_col_stride,
                   p.b_col_stride, p.b_row_stride, bcols, depth, kernel.nr, own_b_block);
      }
      // The first slice applies beta to C (or overwrites Y when there is none); later slices
      // add their partial sums onto Y.
      const GemmEpilogue<T> epilogue =
          k0 == 0 ? GemmEpilogue<T>{p.alpha, p.beta, has_c} : GemmEpilogue<T>{p.alpha, T(1), true};
      for (int64_t j = 0; j < bcols; j += kernel.nr) {
        const T* b_panel = b_block + j * depth;
        const int64_t piece_cols = std::min<int64_t>(kernel.nr, bcols - j);
        for (int64_t i = 0; i < rows; i += kernel.mr) {
          const bool in_place = a_in_place && i < full_rows;
          const T* a_panel = in_place     ? p.a + (row0 + i) * p.a_row_stride + k0
                             : a_in_place ? a_all
                                          : a_block + i * depth;
          T* y_piece = y + i * p.y_row_stride + c0 + j;
          const int64_t a_stride = in_place ? p.a_row_stride : 0;
          const int64_t piece_rows = std::min<int64_t>(kernel.mr, rows - i);
          if (piece_rows == kernel.mr && piece_cols == kernel.nr) {
            kernel.fn(depth, a_panel, a_stride, b_panel, y_piece, p.y_row_stride, epilogue,
                      next_b_half(kernel, b_panel, depth, i,
                                  shared_b != nullptr && j + kernel.nr < bcols));
          } else {
            run_edge_micro_tile(kernel, depth, a_panel, a_stride, b_panel, y_piece, p.y_row_stride,
                                piece_rows, piece_cols, epilogue);
          }
        }
      }
      k0 += depth;
    } while (k0 < p.k);
  }
  // The optional per-tile epilogue, after the full K sum (never folded into a K slice).
  if (p.post_tile != nullptr) {
    p.post_tile(p.post_tile_context, y, p.y_row_stride, row0, col0, rows, cols);
  }
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

// Columns of op(B) one packing task packs for one K slice. A shared op(A) (one row of tiles,
// at most mc rows) is one task a slice.
constexpr int64_t kPackTaskColumns = 512;

// A packing task: lanes [first, first + count) of problem q's op(A) (rows) or op(B) (columns),
// K slice k0.
struct PackTask {
  size_t problem = 0;
  bool a = false;
  int64_t k0 = 0;
  int64_t first = 0;
  int64_t count = 0;
};

}  // namespace

GemmScratch max_scratch(const GemmScratch& a, const GemmScratch& b) {
  return {std::max(a.shared_bytes, b.shared_bytes), std::max(a.task_bytes, b.task_bytes)};
}

template <class T>
GemmScratch gemm_scratch(const GemmMicroKernel<T>& kernel, int64_t m, int64_t n, int64_t k,
                         int64_t count, int64_t a_row_stride) {
  if (count <= 0) return {};
  const GemmProblem<T> p{.m = m,
                         .n = n,
                         .k = k,
                         .a_row_stride = a_row_stride,
                         .a_col_stride = a_row_stride > 0 ? 1 : 0};
  const ProblemPlan<T> plan = plan_problem(kernel, p, static_cast<size_t>(count));
  const auto bytes = static_cast<int64_t>(sizeof(T));
  return {.shared_bytes = count * shared_elements(p, plan) * bytes,
          .task_bytes = most_task_packing(*plan.kernel, p, plan) * bytes};
}

template <class T>
GemmScratch gemm_scratch(const GemmMicroKernel<T>& kernel,
                         std::span<const GemmProblem<T>> problems) {
  GemmScratch s;
  for (const GemmProblem<T>& p : problems) {
    const ProblemPlan<T> plan = plan_problem(kernel, p, problems.size());
    const auto bytes = static_cast<int64_t>(sizeof(T));
    s.shared_bytes += shared_elements(p, plan) * bytes;
    s.task_bytes = std::max(s.task_bytes, most_task_packing(*plan.kernel, p, plan) * bytes);
  }
  return s;
}

void OwnedGemmScratch::Free::operator()(std::byte* p) const { std::free(p); }

template <class T>
OwnedGemmScratch::OwnedGemmScratch(const GemmMicroKernel<T>& kernel,
                                   std::span<const GemmProblem<T>> problems, ThreadPool& pool) {
  const GemmScratch s = gemm_scratch(kernel, problems);
  pool.reserve_worker_scratch(s.task_bytes);
  bytes_ = static_cast<size_t>(s.shared_bytes);
  if (bytes_ > 0) {
    data_.reset(
        allocate_host(s.shared_bytes, kTensorAlignment, [] { return "GEMM's packed panels"; }));
  }
}

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
    case GemmIsa::Avx512:
#if VOLTA_GEMM_X86
      return cpu_runs_avx512();
#else
      return false;
#endif
  }
  return false;
}

GemmIsa best_gemm_isa() {
  for (GemmIsa isa : {GemmIsa::Avx512, GemmIsa::Avx2Fma}) {
    if (gemm_isa_supported(isa)) return isa;
  }
  return GemmIsa::Generic;
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
    case GemmIsa::Avx512:
#if VOLTA_GEMM_X86
      if (cpu_runs_avx512()) return MicroKernels<T>::kAvx512;
#endif
      break;
  }
  fail(ErrorCode::KernelFailure, "no " + std::string(gemm_isa_name(isa)) +
                                     " GEMM micro-kernel: this build or this CPU lacks the ISA");
}

template <class T>
void gemm(const GemmMicroKernel<T>& kernel, std::span<const GemmProblem<T>> problems,
          ThreadPool& pool, std::span<std::byte> shared_workspace) {
  if (!gemm_isa_supported(kernel.isa)) {
    fail(ErrorCode::KernelFailure, std::string(kernel.name) + " cannot run on this CPU");
  }
#ifdef VOLTA_PLANT_HOOKS
  const PlantedSlowdownScope planted("gemm");
#endif
  // Problem q owns tasks [plans[q].first_task, + plans[q].grid.tasks()), one per tile of its
  // grid, row-major. A problem with tiles below one another has its op(B) packed once, by a
  // first parallel loop, rather than by each of them; one with tiles side by side its op(A)
  // (unless the tiles read it in place).
  std::vector<ProblemPlan<T>> plans;
  std::vector<int64_t> first_task;
  std::vector<PackTask> pack_tasks;
  plans.reserve(problems.size());
  first_task.reserve(problems.size());
  int64_t num_tasks = 0;
  size_t shared_total = 0;
  for (const GemmProblem<T>& p : problems) {
    check_problem(p);
    ProblemPlan<T> plan = plan_problem(kernel, p, problems.size());
    // The packing tasks of one shared operand: `extent` lanes, `lanes` a task, for each K slice.
    const auto add_pack_tasks = [&](bool a, int64_t extent, int64_t lanes) {
      for (int64_t k0 = 0; k0 < p.k; k0 += plan.kernel->kc) {
        for (int64_t first = 0; first < extent; first += lanes) {
          pack_tasks.push_back({.problem = plans.size(),
                                .a = a,
                                .k0 = k0,
                                .first = first,
                                .count = std::min(lanes, extent - first)});
        }
      }
    };
    plan.shared_offset = static_cast<int64_t>(shared_total);
    shared_total += static_cast<size_t>(shared_elements(p, plan));
    if (plan.shared_b) add_pack_tasks(false, p.n, kPackTaskColumns);
    if (shares_a(p, plan)) add_pack_tasks(true, p.m, p.m);
    first_task.push_back(num_tasks);
    num_tasks += plan.grid.tasks();
    plans.push_back(plan);
  }

  if (shared_total * sizeof(T) > shared_workspace.size()) {
    fail(ErrorCode::KernelFailure, "a GEMM call shares " +
                                       std::to_string(shared_total * sizeof(T)) +
                                       " bytes of packed op(A) and op(B), its workspace has " +
                                       std::to_string(shared_workspace.size()) +
                                       ": the kernel's selection declared less than it uses");
  }
  T* const shared = reinterpret_cast<T*>(shared_workspace.data());
  pool.parallel_for(static_cast<int64_t>(pack_tasks.size()), [&](int64_t index) {
    const PackTask& t = pack_tasks[static_cast<size_t>(index)];
    const GemmProblem<T>& p = problems[t.problem];
    const ProblemPlan<T>& plan = plans[t.problem];
    const GemmMicroKernel<T>& micro = *plan.kernel;
    const int64_t depth = std::min(micro.kc, p.k - t.k0);
    if (t.a) {
      pack_block(micro.isa, p.a + t.first * p.a_row_stride + t.k0 * p.a_col_stride, p.a_row_stride,
                 p.a_col_stride, t.count, depth, micro.mr,
                 shared_a_slice(shared, plan, t.k0) + t.first * depth);
    } else {
      pack_block(micro.isa, p.b + t.k0 * p.b_row_stride + t.first * p.b_col_stride, p.b_col_stride,
                 p.b_row_stride, t.count, depth, micro.nr,
                 shared_b_slice(shared, plan, t.k0) + t.first * depth);
    }
  });

  pool.parallel_for(num_tasks, [&](int64_t task) {
    const auto owner = std::upper_bound(first_task.begin(), first_task.end(), task) - 1;
    const size_t q = static_cast<size_t>(owner - first_task.begin());
    const GemmProblem<T>& p = problems[q];
    const ProblemPlan<T>& plan = plans[q];
    const GemmMicroKernel<T>& micro = *plan.kernel;
    const TileGrid& grid = plan.grid;
    const int64_t tile = task - *owner;
    const int64_t down = tile / grid.tiles_across, across = tile % grid.tiles_across;
    const int64_t row0 = tile_start(down, grid.tiles_down, grid.row_units, micro.mr);
    const int64_t row1 = tile_start(down + 1, grid.tiles_down, grid.row_units, micro.mr);
    const int64_t col0 = tile_start(across, grid.tiles_across, grid.col_units, micro.nr);
    const int64_t col1 = tile_start(across + 1, grid.tiles_across, grid.col_units, micro.nr);
    run_tile(micro, p, row0, col0, std::min(row1, p.m) - row0, std::min(col1, p.n) - col0,
             shares_a(p, plan) ? shared : nullptr, plan.shared_b ? shared : nullptr, plan,
             pool.worker_scratch());
  });
}

template const GemmMicroKernel<float>& gemm_micro_kernel<float>(GemmIsa isa);
template const GemmMicroKernel<double>& gemm_micro_kernel<double>(GemmIsa isa);
template GemmScratch gemm_scratch<float>(const GemmMicroKernel<float>& kernel, int64_t m, int64_t n,
                                         int64_t k, int64_t count, int64_t a_row_stride);
template GemmScratch gemm_scratch<double>(const GemmMicroKernel<double>& kernel, int64_t m,
                                          int64_t n, int64_t k, int64_t count,
                                          int64_t a_row_stride);
template GemmScratch gemm_scratch<float>(const GemmMicroKernel<float>& kernel,
                                         std::span<const GemmProblem<float>> problems);
template GemmScratch gemm_scratch<double>(const GemmMicroKernel<double>& kernel,
                                          std::span<const GemmProblem<double>> problems);
template OwnedGemmScratch::OwnedGemmScratch(const GemmMicroKernel<float>& kernel,
                                            std::span<const GemmProblem<float>> problems,
                                            ThreadPool& pool);
template OwnedGemmScratch::OwnedGemmScratch(const GemmMicroKernel<double>& kernel,
                                            std::span<const GemmProblem<double>> problems,
                                            ThreadPool& pool);
template void gemm<float>(const GemmMicroKernel<float>& kernel,
                          std::span<const GemmProblem<float>> problems, ThreadPool& pool,
                          std::span<std::byte> shared_workspace);
template void gemm<double>(const GemmMicroKernel<double>& kernel,
                           std::span<const GemmProblem<double>> problems, ThreadPool& pool,
                           std::span<std::byte> shared_workspace);

}  // namespace volta::cpu
