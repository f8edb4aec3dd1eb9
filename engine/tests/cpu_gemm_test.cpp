#define BOOST_TEST_MODULE cpu_gemm
// The GEMM core (backends/cpu/kernels/linalg_gemm.h) called directly, once per micro-kernel: values
// against a double-precision oracle, and bits against themselves across thread counts, task
// orders and tilings. An ISA this CPU lacks is skipped with a message, never passed silently.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "../backends/cpu/kernels/linalg_gemm.h"
#include "expect_error.h"
#include "test_util.h"

namespace volta {
namespace {

using cpu::GemmIsa;
using cpu::GemmMicroKernel;
using cpu::GemmProblem;
using FloatTypes = std::tuple<float, double>;

// gemm() with the scratch a plan would give it: the shared panels and the workers' packing.
template <class T>
void gemm_with_scratch(const cpu::GemmMicroKernel<T>& kernel,
                       std::span<const GemmProblem<T>> problems, ThreadPool& pool) {
  cpu::OwnedGemmScratch scratch(kernel, problems, pool);
  cpu::gemm<T>(kernel, problems, pool, scratch.shared());
}

constexpr GemmIsa kIsas[] = {GemmIsa::Generic, GemmIsa::Avx2Fma, GemmIsa::Avx512};

const char* isa_name(GemmIsa isa) {
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

// The micro-kernels to test: every ISA this CPU runs, and each one's narrow companion (called
// directly here, as the kernel of a whole call). The others are named in the log.
template <class T>
std::vector<const GemmMicroKernel<T>*> supported_kernels() {
  std::vector<const GemmMicroKernel<T>*> kernels;
  for (GemmIsa isa : kIsas) {
    if (cpu::gemm_isa_supported(isa)) {
      kernels.push_back(&cpu::gemm_micro_kernel<T>(isa));
      if (kernels.back()->narrow != nullptr) kernels.push_back(kernels.back()->narrow);
    } else {
      BOOST_TEST_MESSAGE("skipping the " << isa_name(isa) << " GEMM: this CPU lacks the ISA");
    }
  }
  return kernels;
}

template <class T>
std::vector<T> random_values(int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<T> values(static_cast<size_t>(count));
  for (T& v : values) v = static_cast<T>(uniform(rng));
  return values;
}

// A GEMM case: sizes, operand layouts and the C term. Operands live in padded buffers (row
// strides larger than the rows) so that nothing can rely on dense storage.
struct Case {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  bool trans_a = false;
  bool trans_b = false;
  double alpha = 1.0;
  double beta = 0.0;
  enum class C { None, Full, Row, Column, Scalar, InPlace } c = C::None;

  std::string str() const {
    std::ostringstream out;
    out << m << "x" << n << "x" << k << (trans_a ? " A^T" : "") << (trans_b ? " B^T" : "")
        << " alpha=" << alpha << " beta=" << beta << " C=" << static_cast<int>(c);
    return out.str();
  }
};

constexpr int64_t kPad = 3;  // extra elements at the end of every stored row

// The operands of a case and the problem that reads them.
template <class T>
struct Operands {
  std::vector<T> a, b, c, y;
  GemmProblem<T> problem;

  Operands(const Case& g, uint32_t seed) {
    const int64_t a_rows = g.trans_a ? g.k : g.m, a_cols = g.trans_a ? g.m : g.k;
    const int64_t b_rows = g.trans_b ? g.n : g.k, b_cols = g.trans_b ? g.k : g.n;
    const int64_t lda = a_cols + kPad, ldb = b_cols + kPad, ldy = g.n + kPad;
    a = random_values<T>(a_rows * lda, seed);
    b = random_values<T>(b_rows * ldb, seed + 1);
    y.assign(static_cast<size_t>(g.m * ldy), std::numeric_limits<T>::quiet_NaN());
    problem = {.m = g.m,
               .n = g.n,
               .k = g.k,
               .a = a.data(),
               .a_row_stride = g.trans_a ? 1 : lda,
               .a_col_stride = g.trans_a ? lda : 1,
               .b = b.data(),
               .b_row_stride = g.trans_b ? 1 : ldb,
               .b_col_stride = g.trans_b ? ldb : 1,
               .y = y.data(),
               .y_row_stride = ldy,
               .alpha = static_cast<T>(g.alpha),
               .beta = static_cast<T>(g.beta)};
    switch (g.c) {
      case Case::C::None:
        break;
      case Case::C::Full:
        c = random_values<T>(g.m * ldy, seed + 2);
        problem.c = c.data();
        problem.c_row_stride = ldy;
        problem.c_col_stride = 1;
        break;
      case Case::C::Row:  // [N], broadcast down the rows
        c = random_values<T>(g.n, seed + 2);
        problem.c = c.data();
        problem.c_col_stride = 1;
        break;
      case Case::C::Column:  // [M,1], broadcast along the columns
        c = random_values<T>(g.m, seed + 2);
        problem.c = c.data();
        problem.c_row_stride = 1;
        break;
      case Case::C::Scalar:
        c = random_values<T>(1, seed + 2);
        problem.c = c.data();
        break;
      case Case::C::InPlace:  // Y starts as C and accumulates
        y = random_values<T>(g.m * ldy, seed + 2);
        c = y;
        problem.y = y.data();
        problem.c = y.data();
        problem.c_row_stride = ldy;
        problem.c_col_stride = 1;
        break;
    }
  }

  T op_a(int64_t i, int64_t p) const {
    return problem.a[i * problem.a_row_stride + p * problem.a_col_stride];
  }
  T op_b(int64_t p, int64_t j) const {
    return problem.b[p * problem.b_row_stride + j * problem.b_col_stride];
  }
  // C's value at (i, j) before the call (a copy, since in place overwrites it).
  T c_at(int64_t i, int64_t j) const {
    const int64_t row = problem.c_row_stride, col = problem.c_col_stride;
    return c[static_cast<size_t>(i * row + j * col)];
  }
};

// Checks Y against the exact result: any summation order, with or without FMA, stays within
// (k + 3) * eps * (|alpha| * sum_p |a_ip * b_pj| + |beta * c_ij|). Also checks that the row
// padding of Y was not written.
template <class T>
void check_against_oracle(const GemmMicroKernel<T>& kernel, const Case& g, int threads = 3) {
  Operands<T> ops(g, 17);
  const std::vector<T> y_before = ops.y;
  ThreadPool pool(threads);
  gemm_with_scratch<T>(kernel, std::span(&ops.problem, 1), pool);
  int64_t bad = 0;
  std::ostringstream first;
  const int64_t ldy = ops.problem.y_row_stride;
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      double sum = 0, magnitude = 0;
      for (int64_t p = 0; p < g.k; ++p) {
        const double term = static_cast<double>(ops.op_a(i, p)) * ops.op_b(p, j);
        sum += term;
        magnitude += std::abs(term);
      }
      double want = g.alpha * sum;
      magnitude *= std::abs(g.alpha);
      if (ops.problem.c != nullptr) {
        const double c = ops.c_at(i, j);
        want += g.beta * c;
        magnitude += std::abs(g.beta * c);
      }
      const double bound = static_cast<double>(g.k + 3) * std::numeric_limits<T>::epsilon() *
                           std::max(magnitude, std::numeric_limits<double>::min());
      const double got = ops.y[static_cast<size_t>(i * ldy + j)];
      if (!(std::abs(got - want) <= bound) && bad++ == 0) {
        first << "(" << i << "," << j << ") is " << got << ", want " << want << " +- " << bound;
      }
    }
    for (int64_t j = g.n; j < ldy; ++j) {
      const size_t at = static_cast<size_t>(i * ldy + j);
      if (std::isnan(y_before[at]) != std::isnan(ops.y[at]) ||
          (!std::isnan(ops.y[at]) && ops.y[at] != y_before[at])) {
        if (bad++ == 0) first << "padding (" << i << "," << j << ") was written";
      }
    }
  }
  BOOST_CHECK_MESSAGE(bad == 0, kernel.name << " " << g.str() << ": " << bad
                                            << " bad elements; first " << first.str());
}

// ---- Values ----------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE_TEMPLATE(odd_shapes_match_the_oracle, T, FloatTypes) {
  for (const GemmMicroKernel<T>* kernel : supported_kernels<T>()) {
    BOOST_TEST_MESSAGE("checking " << kernel->name);
    const std::vector<Case> cases = {
        {.m = 1, .n = 1, .k = 1},
        {.m = 13, .n = 17, .k = 300},
        {.m = 257, .n = 129, .k = 513},
        {.m = 257, .n = 129, .k = 513, .trans_a = true},
        {.m = 257, .n = 129, .k = 513, .trans_b = true},
        {.m = 31, .n = 65, .k = 47, .trans_a = true, .trans_b = true, .alpha = -0.5},
        // A last op(B)^T panel with more than 16 of its lanes present.
        {.m = 9, .n = kernel->nr + 20, .k = 37, .trans_b = true},
        // K over several slices, with a short last one.
        {.m = 2 * kernel->mr + 3, .n = kernel->nr + 5, .k = 2 * kernel->kc + 7},
        // Several blocks of columns, each over all K slices.
        {.m = 30, .n = 9 * kernel->nr + 5, .k = kernel->kc + 3, .c = Case::C::Full},
        // op(A) too deep to pack up front: packed one slice at a time.
        {.m = 20, .n = kernel->nr + 3, .k = 70000, .trans_b = true},
        // M over several tiles, so op(B) is packed once and shared.
        {.m = 3 * kernel->mc + 1, .n = 2 * kernel->nr - 1, .k = 40},
    };
    for (const Case& g : cases) check_against_oracle(*kernel, g);
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(alpha_beta_and_every_c_layout, T, FloatTypes) {
  for (const GemmMicroKernel<T>* kernel : supported_kernels<T>()) {
    for (Case::C c : {Case::C::None, Case::C::Full, Case::C::Row, Case::C::Column, Case::C::Scalar,
                      Case::C::InPlace}) {
      for (int64_t k : {int64_t{0}, int64_t{1}, kernel->kc + 1}) {
        const Case g{.m = kernel->mr + 1,
                     .n = 2 * kernel->nr + 3,
                     .k = k,
                     .trans_b = k == 1,
                     .alpha = 1.5,
                     .beta = -0.75,
                     .c = c};
        check_against_oracle(*kernel, g);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(sizes_around_the_register_tile, T, FloatTypes) {
  for (const GemmMicroKernel<T>* kernel : supported_kernels<T>()) {
    const int64_t mr = kernel->mr, nr = kernel->nr;
    for (int64_t m : {int64_t{1}, mr - 1, mr, mr + 1, 2 * mr}) {
      for (int64_t n : {int64_t{1}, nr - 1, nr, nr + 1, 2 * nr}) {
        for (int64_t k : {1, 15, 16, 17}) {
          check_against_oracle(*kernel, {.m = m, .n = n, .k = k, .trans_a = (m + n) % 2 == 0});
        }
      }
    }
  }
}

// ---- Bits ------------------------------------------------------------------------------------

// Runs a set of problems (copies of `base`'s operands, so every run starts equal) on a pool.
template <class T>
std::vector<T> run_bits(const GemmMicroKernel<T>& kernel, const Case& g, int threads,
                        ScheduleOptions schedule = {}) {
  Operands<T> ops(g, 29);
  ThreadPool pool(threads, schedule);
  gemm_with_scratch<T>(kernel, std::span(&ops.problem, 1), pool);
  return ops.y;
}

// The bit pattern of x, so that NaNs and signed zeros compare exactly.
template <class T>
auto bits_of(T x) {
  if constexpr (sizeof(T) == sizeof(uint32_t)) {
    return std::bit_cast<uint32_t>(x);
  } else {
    return std::bit_cast<uint64_t>(x);
  }
}

template <class T>
bool bit_equal(const std::vector<T>& x, const std::vector<T>& y) {
  return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin(),
                                            [](T a, T b) { return bits_of(a) == bits_of(b); });
}

BOOST_AUTO_TEST_CASE_TEMPLATE(bits_do_not_depend_on_threads_or_task_order, T, FloatTypes) {
  for (const GemmMicroKernel<T>* kernel : supported_kernels<T>()) {
    // Several tiles both ways, op(B) shared, K over two slices, C broadcast, a transpose.
    const std::vector<Case> cases = {
        {.m = 2 * kernel->mc + 5,
         .n = 300,
         .k = kernel->kc + 37,
         .alpha = 0.5,
         .beta = 2.0,
         .c = Case::C::Row},
        {.m = 100, .n = 3 * kernel->nr + 1, .k = 200, .trans_a = true, .c = Case::C::InPlace},
        {.m = 40, .n = 2000, .k = 90, .trans_b = true},
    };
    for (const Case& g : cases) {
      const std::vector<T> one = run_bits(*kernel, g, 1);
      for (int threads : {2, 3, 4, 8}) {
        BOOST_CHECK_MESSAGE(
            bit_equal(run_bits(*kernel, g, threads), one),
            kernel->name << " " << g.str() << " differs with " << threads << " threads");
      }
      for (const ScheduleOptions schedule :
           {ScheduleOptions{.reverse_task_order = true}, ScheduleOptions{.chunk_scale = 0.25},
            ScheduleOptions{.reverse_task_order = true, .chunk_scale = 4.0}}) {
        BOOST_CHECK_MESSAGE(bit_equal(run_bits(*kernel, g, 3, schedule), one),
                            kernel->name << " " << g.str() << " differs with reverse order "
                                         << schedule.reverse_task_order << ", chunk scale "
                                         << schedule.chunk_scale);
      }
    }
  }
}

// Every ISA's micro-kernel rounds the same way (running FMA sums, the same K slices, the same
// epilogue), so a product has the same bits on every CPU, and the CUDA backend can match them.
BOOST_AUTO_TEST_CASE_TEMPLATE(bits_do_not_depend_on_the_isa, T, FloatTypes) {
  const std::vector<const GemmMicroKernel<T>*> kernels = supported_kernels<T>();
  BOOST_REQUIRE(!kernels.empty());
  BOOST_TEST(std::string(isa_name(kernels.front()->isa)) == "generic");
  for (const GemmMicroKernel<T>* kernel : kernels) {
    BOOST_TEST(kernel->kc == kernels.front()->kc, kernel->name);
  }
  const int64_t kc = kernels.front()->kc;
  const std::vector<Case> cases = {
      {.m = 37, .n = 45, .k = 2 * kc + 19, .alpha = 0.75, .beta = -1.5, .c = Case::C::Column},
      {.m = 20, .n = 33, .k = kc + 1, .trans_b = true, .c = Case::C::InPlace},
      {.m = 9, .n = 70, .k = 5, .trans_a = true},
      // Narrow enough for a narrow companion kernel, where an ISA has one.
      {.m = 45, .n = 16, .k = kc + 7, .c = Case::C::Full},
      {.m = 33, .n = 5, .k = 32, .trans_b = true},
      // Short enough for it: attention's scores (a main kernel's call runs its companion).
      {.m = 32, .n = 32, .k = 16, .trans_b = true},
  };
  for (const Case& g : cases) {
    const std::vector<T> generic = run_bits(*kernels.front(), g, 2);
    for (size_t i = 1; i < kernels.size(); ++i) {
      BOOST_CHECK_MESSAGE(
          bit_equal(run_bits(*kernels[i], g, 2), generic),
          kernels[i]->name << " " << g.str() << " differs from " << kernels.front()->name);
    }
  }
}

// An element's bits must not depend on the tile it falls in, which the problem's shape and the
// number of problems in the call decide: rows computed alone, or as one of many problems,
// equal the same rows of one big problem.
BOOST_AUTO_TEST_CASE_TEMPLATE(bits_do_not_depend_on_the_tiling, T, FloatTypes) {
  for (const GemmMicroKernel<T>* kernel : supported_kernels<T>()) {
    const Case g{.m = 3 * kernel->mc + 7, .n = 2 * kernel->nr + 9, .k = kernel->kc + 21};
    Operands<T> whole(g, 31);
    ThreadPool pool(2);
    gemm_with_scratch<T>(*kernel, std::span(&whole.problem, 1), pool);
    const int64_t ldy = whole.problem.y_row_stride;
    // Row blocks of assorted heights, as separate problems of one call and as calls of one.
    const std::vector<int64_t> cuts = {0, 1, kernel->mr + 2, kernel->mc, 2 * kernel->mc + 3, g.m};
    std::vector<T> y_many(whole.y.size(), T(0));
    std::vector<GemmProblem<T>> problems;
    for (size_t b = 0; b + 1 < cuts.size(); ++b) {
      GemmProblem<T> p = whole.problem;
      p.m = cuts[b + 1] - cuts[b];
      p.a = whole.problem.a + cuts[b] * whole.problem.a_row_stride;
      p.y = y_many.data() + cuts[b] * ldy;
      problems.push_back(p);
    }
    gemm_with_scratch<T>(*kernel, problems, pool);
    std::vector<T> y_alone(whole.y.size(), T(0));
    for (GemmProblem<T> p : problems) {
      p.y = y_alone.data() + (p.y - y_many.data());
      gemm_with_scratch<T>(*kernel, std::span(&p, 1), pool);
    }
    int64_t differ_many = 0, differ_alone = 0;
    for (int64_t i = 0; i < g.m; ++i) {
      const auto row = whole.y.begin() + i * ldy;
      differ_many +=
          !bit_equal(std::vector<T>(row, row + g.n),
                     std::vector<T>(y_many.begin() + i * ldy, y_many.begin() + i * ldy + g.n));
      differ_alone +=
          !bit_equal(std::vector<T>(row, row + g.n),
                     std::vector<T>(y_alone.begin() + i * ldy, y_alone.begin() + i * ldy + g.n));
    }
    BOOST_CHECK_MESSAGE(differ_many == 0, kernel->name << ": " << differ_many
                                                       << " rows differ as problems of one call");
    BOOST_CHECK_MESSAGE(differ_alone == 0, kernel->name << ": " << differ_alone
                                                        << " rows differ as calls of their own");
  }
}

// The micro-kernel's prefetch argument is a hint: the tile's bits are the same with it or
// without it, whatever the line it points at holds.
BOOST_AUTO_TEST_CASE_TEMPLATE(the_prefetch_hint_does_not_change_the_bits, T, FloatTypes) {
  for (const GemmMicroKernel<T>* kernel : supported_kernels<T>()) {
    for (const int64_t depth : {int64_t{1}, int64_t{7}, kernel->kc}) {
      const std::vector<T> a = random_values<T>(kernel->mr * depth, 41);
      const std::vector<T> b = random_values<T>(depth * kernel->nr, 42);
      const std::vector<T> c = random_values<T>(kernel->mr * kernel->nr, 43);
      // kc lines of 64 bytes, more than any kernel may touch.
      const std::vector<T> next = random_values<T>(depth * 64, 44);
      for (const bool load_c : {false, true}) {
        const cpu::GemmEpilogue<T> epilogue{.alpha = T(0.5), .beta = T(2), .load_c = load_c};
        std::vector<T> without = c, with = c;
        kernel->fn(depth, a.data(), 0, b.data(), without.data(), kernel->nr, epilogue, nullptr);
        kernel->fn(depth, a.data(), 0, b.data(), with.data(), kernel->nr, epilogue, next.data());
        BOOST_CHECK_MESSAGE(bit_equal(with, without),
                            kernel->name << " depth " << depth << " load_c " << load_c);
      }
    }
  }
}

// A micro-kernel reading op(A)'s rows in place (a_row_stride > 0) computes what it computes
// from the same rows packed: the same products in the same order.
BOOST_AUTO_TEST_CASE_TEMPLATE(a_micro_kernel_reads_a_in_place_as_it_reads_it_packed, T,
                              FloatTypes) {
  for (const GemmMicroKernel<T>* kernel : supported_kernels<T>()) {
    for (const int64_t depth : {int64_t{1}, int64_t{7}, int64_t{64}}) {
      const int64_t lda = depth + kPad;
      const std::vector<T> rows = random_values<T>(kernel->mr * lda, 51);
      std::vector<T> packed(static_cast<size_t>(kernel->mr * depth));
      for (int64_t i = 0; i < kernel->mr; ++i) {
        for (int64_t p = 0; p < depth; ++p) {
          packed[static_cast<size_t>(p * kernel->mr + i)] = rows[static_cast<size_t>(i * lda + p)];
        }
      }
      const std::vector<T> b = random_values<T>(depth * kernel->nr, 52);
      const std::vector<T> c = random_values<T>(kernel->mr * kernel->nr, 53);
      for (const bool load_c : {false, true}) {
        const cpu::GemmEpilogue<T> epilogue{.alpha = T(0.5), .beta = T(2), .load_c = load_c};
        std::vector<T> from_packed = c, in_place = c;
        kernel->fn(depth, packed.data(), 0, b.data(), from_packed.data(), kernel->nr, epilogue,
                   nullptr);
        kernel->fn(depth, rows.data(), lda, b.data(), in_place.data(), kernel->nr, epilogue,
                   nullptr);
        BOOST_CHECK_MESSAGE(bit_equal(in_place, from_packed),
                            kernel->name << " depth " << depth << " load_c " << load_c);
      }
    }
  }
}

// The same op(A) stored by rows (short ones are read in place) and by columns (packed) gives
// the same bits, whatever the rows left over below the last full register tile.
BOOST_AUTO_TEST_CASE_TEMPLATE(bits_do_not_depend_on_packing_op_a, T, FloatTypes) {
  ThreadPool pool(2);
  for (const GemmMicroKernel<T>* kernel : supported_kernels<T>()) {
    for (const int64_t k : {int64_t{1}, int64_t{5}, int64_t{64}, int64_t{200}}) {
      for (const int64_t m : {kernel->mr - 1, 3 * kernel->mr, 3 * kernel->mr + 5}) {
        const Case by_rows{.m = m, .n = 45, .k = k, .c = Case::C::Full};
        Case by_columns = by_rows;
        by_columns.trans_a = true;
        Operands<T> rows(by_rows, 61);
        Operands<T> columns(by_columns, 61);
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t p = 0; p < k; ++p) {
            columns.a[static_cast<size_t>(p * columns.problem.a_col_stride + i)] = rows.op_a(i, p);
          }
        }
        columns.c = rows.c;
        columns.b = rows.b;
        columns.problem.b = columns.b.data();
        columns.problem.c = columns.c.data();
        gemm_with_scratch<T>(*kernel, std::span(&rows.problem, 1), pool);
        gemm_with_scratch<T>(*kernel, std::span(&columns.problem, 1), pool);
        BOOST_CHECK_MESSAGE(bit_equal(rows.y, columns.y), kernel->name << " " << by_rows.str());
      }
    }
  }
}

// A short problem (one row of tiles) whose tiles lie side by side packs op(A) once for all of
// them (planned in gemm_scratch's shared part) where its rows are not read in place; a taller
// one packs its rows per tile. Either way each column panel computed as a call of its own (one
// tile, its own packing) gives the same bits.
BOOST_AUTO_TEST_CASE_TEMPLATE(op_a_packed_once_for_tiles_side_by_side_gives_the_same_bits, T,
                              FloatTypes) {
  ThreadPool pool(3);
  for (const GemmMicroKernel<T>* kernel : supported_kernels<T>()) {
    const std::vector<Case> cases = {
        {.m = 3 * kernel->mr + 5, .n = 40 * kernel->nr + 3, .k = kernel->kc + 21},
        {.m = 3 * kernel->mr + 5,
         .n = 40 * kernel->nr + 3,
         .k = 300,
         .trans_a = true,
         .c = Case::C::Full},
        {.m = 2 * kernel->mc + 5, .n = kernel->nc + 5 * kernel->nr + 3, .k = 600, .trans_a = true},
    };
    for (const Case& g : cases) {
      Operands<T> whole(g, 71);
      const cpu::GemmScratch scratch = cpu::gemm_scratch(*kernel, g.m, g.n, g.k, 1);
      const auto bytes = static_cast<int64_t>(sizeof(T));
      const int64_t m_padded = (g.m + kernel->mr - 1) / kernel->mr * kernel->mr;
      const int64_t n_padded = (g.n + kernel->nr - 1) / kernel->nr * kernel->nr;
      const bool tall = g.m > kernel->mc;
      // Short: op(A) shared; tall: op(B) shared by the tiles below one another.
      BOOST_CHECK_EQUAL(scratch.shared_bytes, (tall ? n_padded : m_padded) * g.k * bytes);
      Operands<T> panels(g, 71);
      gemm_with_scratch<T>(*kernel, std::span(&whole.problem, 1), pool);
      for (int64_t col0 = 0; col0 < g.n; col0 += kernel->nr) {
        GemmProblem<T> p = panels.problem;
        p.n = std::min<int64_t>(kernel->nr, g.n - col0);
        p.b += col0 * p.b_col_stride;
        p.y += col0;
        if (p.c != nullptr) p.c += col0;
        // One tile across: no room for op(A) in the shared part.
        BOOST_REQUIRE_LT(cpu::gemm_scratch(*kernel, p.m, p.n, p.k, 1).shared_bytes,
                         m_padded * g.k * bytes);
        gemm_with_scratch<T>(*kernel, std::span(&p, 1), pool);
      }
      BOOST_CHECK_MESSAGE(bit_equal(whole.y, panels.y), kernel->name << " " << g.str());
    }
  }
}

// ---- Selection -------------------------------------------------------------------------------

// The companion takes a product where it computes clearly fewer padded elements: one companion
// panel wide, or few rows that the main tile would pad (attention's 32 x 32 scores); near a
// tie the main tile stays.
BOOST_AUTO_TEST_CASE(the_narrow_companion_takes_products_it_pads_clearly_less) {
  // Shapes only: copies of the portable kernel with the AVX-512 f32 tiles.
  const auto tile = [](std::string_view name, int mr, int nr, const GemmMicroKernel<float>* c) {
    GemmMicroKernel<float> k = cpu::gemm_micro_kernel<float>(GemmIsa::Generic);
    k.name = name;
    k.mr = mr;
    k.nr = nr;
    k.narrow = c;
    return k;
  };
  const GemmMicroKernel<float> narrow = tile("narrow", 16, 16, nullptr);
  const GemmMicroKernel<float> main_tile = tile("main", 14, 32, &narrow);
  const auto picks = [&](int64_t m, int64_t n) {
    return std::string(cpu::kernel_for_shape(main_tile, m, n).name);
  };
  BOOST_TEST(picks(512, 16) == "narrow");  // one companion panel wide
  BOOST_TEST(picks(1, 5) == "narrow");
  BOOST_TEST(picks(32, 32) == "narrow");  // 42 x 32 padded, against 32 x 32
  BOOST_TEST(picks(512, 64) == "main");   // 518 x 64 against 512 x 64: a tie
  BOOST_TEST(picks(1, 256) == "main");    // decode: 14 x 256 against 16 x 256
  BOOST_TEST(picks(28, 32) == "main");    // no ragged panel
  const GemmMicroKernel<float> alone = tile("alone", 14, 32, nullptr);
  BOOST_TEST(std::string(cpu::kernel_for_shape(alone, 32, 32).name) == "alone");
}

BOOST_AUTO_TEST_CASE(the_best_isa_is_supported_and_named_in_the_variant) {
  const GemmIsa best = cpu::best_gemm_isa();
  BOOST_TEST(cpu::gemm_isa_supported(best));
  for (GemmIsa isa : kIsas) {
    if (static_cast<int>(isa) > static_cast<int>(best)) {
      BOOST_TEST(!cpu::gemm_isa_supported(isa), isa_name(isa) << " runs but is not chosen");
    }
  }
  const std::string name(cpu::gemm_micro_kernel<float>(best).name);
  BOOST_TEST(name.find(isa_name(best)) != std::string::npos, name);
  if (!cpu::gemm_isa_supported(GemmIsa::Avx512)) {
    test::expect_error([] { (void)cpu::gemm_micro_kernel<float>(GemmIsa::Avx512); },
                       ErrorCode::KernelFailure,
                       "no avx512 GEMM micro-kernel: this build or this CPU lacks the ISA");
  }
}

}  // namespace
}  // namespace volta
