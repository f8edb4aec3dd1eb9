#define BOOST_TEST_MODULE cpu_linalg
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <tuple>
#include <vector>

#include "../backends/cpu/kernels/linalg_gemm.h"
#include "expect_error.h"
#include "test_util.h"

namespace volta {
namespace {

using cpu::best_gemm_isa;
using cpu::gemm_micro_kernel;
using cpu::GemmIsa;
using cpu::GemmProblem;
using FloatTypes = std::tuple<float, double>;

// gemm() with the scratch a plan would give it: the shared panels and the workers' packing.
template <class T>
void gemm_with_scratch(const cpu::GemmMicroKernel<T>& kernel,
                       std::span<const GemmProblem<T>> problems, ThreadPool& pool) {
  cpu::OwnedGemmScratch scratch(kernel, problems, pool);
  cpu::gemm<T>(kernel, problems, pool, scratch.shared());
}

template <class T>
Tensor random_tensor(Shape shape, uint32_t seed) {
  Tensor t(dtype_of<T>(), std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_double(i, uniform(rng));
  return t;
}

// The oracle's answer: exact values (double accumulation) and, per element, how far a
// T-precision GEMM may be from them. Any summation order, with or without FMA, stays within
// (k + 3) * eps * (|alpha| * sum_p |a_ip * b_pj| + |beta * c_ij|).
struct Expected {
  Shape shape;
  std::vector<double> value;
  std::vector<double> bound;
};

template <class T>
double rounding_bound(int64_t k, double magnitude) {
  return static_cast<double>(k + 3) * std::numeric_limits<T>::epsilon() * magnitude;
}

// Splits a row-major flat index of `shape` into per-axis indices.
std::vector<int64_t> unravel(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

// The flat index, in `dims`, of the element an output index (right-aligned) reads through
// numpy broadcasting.
int64_t broadcast_source(const std::vector<int64_t>& out_index, const std::vector<int64_t>& dims) {
  const size_t skip = out_index.size() - dims.size();
  int64_t flat = 0;
  for (size_t d = 0; d < dims.size(); ++d) {
    flat = flat * dims[d] + (dims[d] == 1 ? 0 : out_index[skip + d]);
  }
  return flat;
}

// numpy matmul, written from its definition.
template <class T>
Expected expected_matmul(const Tensor& a, const Tensor& b) {
  std::vector<int64_t> a_dims = a.shape().dims(), b_dims = b.shape().dims();
  const bool a_vector = a_dims.size() == 1, b_vector = b_dims.size() == 1;
  if (a_vector) a_dims.insert(a_dims.begin(), 1);
  if (b_vector) b_dims.push_back(1);
  const int64_t m = a_dims[a_dims.size() - 2], k = a_dims.back(), n = b_dims.back();
  const std::vector<int64_t> a_batch(a_dims.begin(), a_dims.end() - 2);
  const std::vector<int64_t> b_batch(b_dims.begin(), b_dims.end() - 2);
  std::vector<int64_t> batch(std::max(a_batch.size(), b_batch.size()), 1);
  for (size_t d = 0; d < batch.size(); ++d) {
    const size_t from_end = batch.size() - d;
    const int64_t da = from_end <= a_batch.size() ? a_batch[a_batch.size() - from_end] : 1;
    const int64_t db = from_end <= b_batch.size() ? b_batch[b_batch.size() - from_end] : 1;
    batch[d] = da == 1 ? db : da;
  }
  std::vector<int64_t> out_dims = batch;
  if (!a_vector) out_dims.push_back(m);
  if (!b_vector) out_dims.push_back(n);
  Expected want{Shape(out_dims), {}, {}};
  int64_t batches = 1;
  for (int64_t d : batch) batches *= d;
  for (int64_t q = 0; q < batches; ++q) {
    const std::vector<int64_t> index = unravel(q, batch);
    const int64_t qa = broadcast_source(index, a_batch), qb = broadcast_source(index, b_batch);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0, magnitude = 0;
        for (int64_t p = 0; p < k; ++p) {
          const double term =
              a.get_double((qa * m + i) * k + p) * b.get_double((qb * k + p) * n + j);
          sum += term;
          magnitude += std::abs(term);
        }
        want.value.push_back(sum);
        want.bound.push_back(rounding_bound<T>(k, magnitude));
      }
    }
  }
  return want;
}

struct GemmAttrs {
  bool trans_a = false;
  bool trans_b = false;
  double alpha = 1.0;
  double beta = 1.0;
};

Attributes attributes_of(const GemmAttrs& g) {
  return {{"transA", int64_t{g.trans_a}},
          {"transB", int64_t{g.trans_b}},
          {"alpha", g.alpha},
          {"beta", g.beta}};
}

// ONNX Gemm, written from its definition: alpha * op(A) @ op(B) + beta * C, C broadcast.
template <class T>
Expected expected_gemm(const Tensor& a, const Tensor& b, const Tensor* c, const GemmAttrs& g) {
  const int64_t m = a.shape()[g.trans_a ? 1 : 0], k = a.shape()[g.trans_a ? 0 : 1];
  const int64_t n = b.shape()[g.trans_b ? 0 : 1];
  auto op_a = [&](int64_t i, int64_t p) { return a.get_double(g.trans_a ? p * m + i : i * k + p); };
  auto op_b = [&](int64_t p, int64_t j) { return b.get_double(g.trans_b ? j * k + p : p * n + j); };
  Expected want{Shape{m, n}, {}, {}};
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0, magnitude = 0;
      for (int64_t p = 0; p < k; ++p) {
        sum += op_a(i, p) * op_b(p, j);
        magnitude += std::abs(op_a(i, p) * op_b(p, j));
      }
      double value = g.alpha * sum;
      magnitude *= std::abs(g.alpha);
      if (c != nullptr) {
        const double c_ij = c->get_double(broadcast_source({i, j}, c->shape().dims()));
        value += g.beta * c_ij;
        magnitude += std::abs(g.beta * c_ij);
      }
      want.value.push_back(value);
      want.bound.push_back(rounding_bound<T>(k, magnitude));
    }
  }
  return want;
}

// One message per failing case (not per element): the count and the first bad element.
void check_matches(const Tensor& got, const Expected& want, const std::string& what) {
  BOOST_REQUIRE_MESSAGE(got.shape() == want.shape,
                        what << ": shape " << got.shape().str() << ", want " << want.shape.str());
  int64_t bad = 0;
  std::ostringstream first;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double g = got.get_double(i), w = want.value[static_cast<size_t>(i)];
    if (!(std::abs(g - w) <= want.bound[static_cast<size_t>(i)])) {
      if (bad++ == 0) {
        first << "element " << i << " is " << g << ", want " << w << " +- "
              << want.bound[static_cast<size_t>(i)];
      }
    }
  }
  BOOST_CHECK_MESSAGE(bad == 0, what << ": " << bad << " of " << got.numel()
                                     << " elements out of bounds; " << first.str());
}

std::string dims_str(int64_t m, int64_t n, int64_t k) {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

template <class T>
void check_matmul(const Shape& a_shape, const Shape& b_shape, uint32_t seed = 1) {
  const Tensor a = random_tensor<T>(a_shape, seed), b = random_tensor<T>(b_shape, seed + 1);
  check_matches(test::run_op(OpKind::MatMul, {a, b}).at(0), expected_matmul<T>(a, b),
                "MatMul " + a_shape.str() + " x " + b_shape.str());
}

template <class T>
void check_gemm(int64_t m, int64_t n, int64_t k, const GemmAttrs& g,
                const std::optional<Shape>& c_shape, uint32_t seed = 7) {
  const Tensor a = random_tensor<T>(g.trans_a ? Shape{k, m} : Shape{m, k}, seed);
  const Tensor b = random_tensor<T>(g.trans_b ? Shape{n, k} : Shape{k, n}, seed + 1);
  std::vector<Tensor> inputs{a, b};
  if (c_shape) inputs.push_back(random_tensor<T>(*c_shape, seed + 2));
  std::ostringstream what;
  what << "Gemm " << dims_str(m, n, k) << " transA=" << g.trans_a << " transB=" << g.trans_b
       << " alpha=" << g.alpha << " beta=" << g.beta
       << " C=" << (c_shape ? c_shape->str() : "absent");
  const Tensor got = test::run_op(OpKind::Gemm, inputs, attributes_of(g)).at(0);
  check_matches(got, expected_gemm<T>(a, b, c_shape ? &inputs[2] : nullptr, g), what.str());
}

// ---- MatMul against the oracle -------------------------------------------------------------

BOOST_AUTO_TEST_CASE_TEMPLATE(matmul_around_the_register_tile, T, FloatTypes) {
  const auto& kernel = gemm_micro_kernel<T>(best_gemm_isa());
  const int64_t mr = kernel.mr, nr = kernel.nr;
  for (int64_t m : {int64_t{1}, mr - 1, mr, mr + 1, 2 * mr, 3 * mr + 1}) {
    for (int64_t n : {int64_t{1}, nr - 1, nr, nr + 1, 2 * nr, 2 * nr + 3}) {
      for (int64_t k : {1, 2, 17}) check_matmul<T>(Shape{m, k}, Shape{k, n});
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(matmul_around_the_cache_blocks, T, FloatTypes) {
  const auto& kernel = gemm_micro_kernel<T>(best_gemm_isa());
  const int64_t mc = kernel.mc, nc = kernel.nc, kc = kernel.kc, mr = kernel.mr, nr = kernel.nr;
  const std::vector<std::array<int64_t, 3>> cases = {
      {mc, nc, kc},         {mc - 1, nc - 1, kc - 1}, {mc + 1, nc + 1, kc + 1},
      {2 * mc, nr, 2 * kc}, {mr, 2 * nc, 3 * kc + 5}, {2 * mc + 5, 2 * nr + 1, 3}};
  for (const auto& [m, n, k] : cases) check_matmul<T>(Shape{m, k}, Shape{k, n});
}

BOOST_AUTO_TEST_CASE_TEMPLATE(matmul_promotes_vectors_and_broadcasts_batches, T, FloatTypes) {
  check_matmul<T>(Shape{7}, Shape{7, 5});              // [K] x [K,N] -> [N]
  check_matmul<T>(Shape{6, 7}, Shape{7});              // [M,K] x [K] -> [M]
  check_matmul<T>(Shape{9}, Shape{9});                 // [K] x [K] -> []
  check_matmul<T>(Shape{4}, Shape{3, 4, 5});           // [K] x [b,K,N] -> [b,N]
  check_matmul<T>(Shape{2, 3, 4}, Shape{4});           // [b,M,K] x [K] -> [b,M]
  check_matmul<T>(Shape{2, 1, 3, 4}, Shape{5, 4, 6});  // batch dims broadcast both ways
  check_matmul<T>(Shape{3, 5, 7}, Shape{7, 9});        // B shared by every batch
  check_matmul<T>(Shape{3, 5, 7}, Shape{1, 7, 9});
  check_matmul<T>(Shape{1, 5, 7}, Shape{4, 7, 9});  // A shared by every batch
  check_matmul<T>(Shape{2, 3, 20, 30}, Shape{2, 3, 30, 40});
}

BOOST_AUTO_TEST_CASE_TEMPLATE(matmul_with_empty_dims, T, FloatTypes) {
  check_matmul<T>(Shape{0, 5}, Shape{5, 3});     // M = 0
  check_matmul<T>(Shape{4, 5}, Shape{5, 0});     // N = 0
  check_matmul<T>(Shape{0, 2, 3}, Shape{3, 4});  // no batches
  check_matmul<T>(Shape{2, 0, 3}, Shape{2, 3, 4});
  // K = 0: an empty sum, so every element is exactly 0.
  const Tensor y = test::run_op(OpKind::MatMul, {Tensor(dtype_of<T>(), Shape{4, 0}),
                                                 Tensor(dtype_of<T>(), Shape{0, 3})})
                       .at(0);
  BOOST_CHECK(y.bit_equal(Tensor(dtype_of<T>(), Shape{4, 3})));
}

// ---- Gemm against the oracle ---------------------------------------------------------------

BOOST_AUTO_TEST_CASE_TEMPLATE(gemm_transposes_alpha_beta_and_c_broadcast, T, FloatTypes) {
  const auto& kernel = gemm_micro_kernel<T>(best_gemm_isa());
  const std::vector<std::array<int64_t, 3>> sizes = {
      {7, 19, 33}, {2 * kernel.mr + 1, 3 * kernel.nr - 1, kernel.kc + 3}};
  for (const auto& [m, n, k] : sizes) {
    const std::vector<std::optional<Shape>> cs = {std::nullopt, Shape{m, n}, Shape{n},
                                                  Shape{1, n},  Shape{m, 1}, Shape{}};
    for (bool trans_a : {false, true}) {
      for (bool trans_b : {false, true}) {
        for (const auto& [alpha, beta] : {std::pair{1.0, 1.0}, std::pair{0.5, -2.0}}) {
          for (const std::optional<Shape>& c : cs) {
            check_gemm<T>(m, n, k, {trans_a, trans_b, alpha, beta}, c);
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(gemm_with_empty_k_gives_beta_c, T, FloatTypes) {
  const Tensor a(dtype_of<T>(), Shape{4, 0}), b(dtype_of<T>(), Shape{0, 5});
  const Tensor c = random_tensor<T>(Shape{4, 5}, 3);
  const Tensor y = test::run_op(OpKind::Gemm, {a, b, c}, attributes_of({.beta = 0.5})).at(0);
  for (int64_t i = 0; i < y.numel(); ++i) {
    BOOST_CHECK_EQUAL(y.get_double(i), static_cast<double>(static_cast<T>(0.5 * c.get_double(i))));
  }
  const Tensor no_c = test::run_op(OpKind::Gemm, {a, b}).at(0);
  BOOST_CHECK(no_c.bit_equal(Tensor(dtype_of<T>(), Shape{4, 5})));
  check_gemm<T>(0, 5, 3, {}, Shape{5});
  check_gemm<T>(4, 0, 3, {}, std::nullopt);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(gemm_propagates_nan, T, FloatTypes) {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  Tensor a = random_tensor<T>(Shape{3, 4}, 11);
  a.data_as<T>()[1 * 4 + 2] = nan;  // row 1 of A
  const Tensor b = random_tensor<T>(Shape{4, 5}, 12);
  Tensor c = random_tensor<T>(Shape{3, 5}, 13);
  c.data_as<T>()[2 * 5 + 3] = nan;  // element (2, 3) of C, scaled by beta = 0
  const Tensor y = test::run_op(OpKind::Gemm, {a, b, c}, attributes_of({.beta = 0.0})).at(0);
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 5; ++j) {
      const bool want_nan = i == 1 || (i == 2 && j == 3);  // 0 * NaN is NaN, as in ONNX
      BOOST_CHECK_MESSAGE(std::isnan(y.get_double(i * 5 + j)) == want_nan,
                          "(" << i << "," << j << ") is " << y.get_double(i * 5 + j));
    }
  }
}

// ---- Determinism ---------------------------------------------------------------------------

template <class T>
void check_thread_invariance(OpKind op, const std::vector<Tensor>& inputs,
                             const Attributes& attrs = {}) {
  const Tensor one_thread = test::run_op(op, inputs, attrs, 1, 1).at(0);
  for (int threads : {2, 3, 4, 8}) {
    const Tensor got = test::run_op(op, inputs, attrs, 1, threads).at(0);
    BOOST_CHECK_MESSAGE(got.bit_equal(one_thread), op_name(op) << " " << inputs[0].shape().str()
                                                               << " differs with " << threads
                                                               << " threads");
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(outputs_are_bit_identical_for_any_thread_count, T, FloatTypes) {
  check_thread_invariance<T>(OpKind::MatMul, {random_tensor<T>(Shape{257, 300}, 21),
                                              random_tensor<T>(Shape{300, 129}, 22)});
  check_thread_invariance<T>(OpKind::MatMul, {random_tensor<T>(Shape{4, 37, 50}, 23),
                                              random_tensor<T>(Shape{4, 50, 70}, 24)});
  // Many output tiles in both directions, K over several slices, C broadcast, transposes.
  check_thread_invariance<T>(
      OpKind::Gemm,
      {random_tensor<T>(Shape{600, 400}, 25), random_tensor<T>(Shape{1100, 600}, 26),
       random_tensor<T>(Shape{1100}, 27)},
      attributes_of({.trans_a = true, .trans_b = true, .alpha = 0.5, .beta = 2.0}));
}

// Each element must have the same bits whichever output tile, edge or full, it falls in.
// Rows [first, first + count) of `t` read as a matrix of rows of its last dim.
template <class T>
Tensor slice_rows(const Tensor& t, int64_t first, int64_t count) {
  const int64_t width = t.shape()[t.shape().rank() - 1];
  Tensor rows(t.dtype(), Shape{count, width});
  const T* from = t.data_as<T>() + first * width;
  std::copy(from, from + count * width, rows.data_as<T>());
  return rows;
}

BOOST_AUTO_TEST_CASE_TEMPLATE(elements_do_not_depend_on_their_tile, T, FloatTypes) {
  const auto& kernel = gemm_micro_kernel<T>(best_gemm_isa());
  const int64_t mr = kernel.mr, mc = kernel.mc;
  const int64_t m = mc + mr + 1, k = kernel.kc + 9, n = 2 * kernel.nr + 5;
  const Tensor a = random_tensor<T>(Shape{m, k}, 31), b = random_tensor<T>(Shape{k, n}, 32);
  const Tensor y = test::run_op(OpKind::MatMul, {a, b}).at(0);
  for (int64_t i : {int64_t{0}, mr - 1, mr, mc, m - 1}) {
    const Tensor alone = test::run_op(OpKind::MatMul, {slice_rows<T>(a, i, 1), b}).at(0);
    BOOST_CHECK_MESSAGE(alone.bit_equal(slice_rows<T>(y, i, 1)),
                        "row " << i << " differs when computed alone");
  }
  // Batched MatMul (stacked into one problem, or one problem per batch) equals its 2-D slices.
  constexpr int64_t kBatches = 3, kRows = 10;
  const Tensor a3 = random_tensor<T>(Shape{kBatches, kRows, k}, 33);
  const Tensor b3 = random_tensor<T>(Shape{kBatches, k, n}, 34);
  const Tensor shared_b = test::run_op(OpKind::MatMul, {a3, b}).at(0);
  const Tensor per_batch_b = test::run_op(OpKind::MatMul, {a3, b3}).at(0);
  for (int64_t q = 0; q < kBatches; ++q) {
    const Tensor a2 = slice_rows<T>(a3, q * kRows, kRows), b2 = slice_rows<T>(b3, q * k, k);
    BOOST_CHECK(test::run_op(OpKind::MatMul, {a2, b})
                    .at(0)
                    .bit_equal(slice_rows<T>(shared_b, q * kRows, kRows)));
    BOOST_CHECK(test::run_op(OpKind::MatMul, {a2, b2})
                    .at(0)
                    .bit_equal(slice_rows<T>(per_batch_b, q * kRows, kRows)));
  }
}

// ---- Every micro-kernel, through the GEMM entry point ---------------------------------------

// Runs Gemm semantics straight through cpu::gemm with the given micro-kernel.
template <class T>
Tensor direct_gemm(const cpu::GemmMicroKernel<T>& kernel, const Tensor& a, const Tensor& b,
                   const Tensor* c, const GemmAttrs& g, ThreadPool& pool, bool c_in_place) {
  const int64_t m = a.shape()[g.trans_a ? 1 : 0], k = a.shape()[g.trans_a ? 0 : 1];
  const int64_t n = b.shape()[g.trans_b ? 0 : 1];
  Tensor y(dtype_of<T>(), Shape{m, n});
  GemmProblem<T> p{.m = m,
                   .n = n,
                   .k = k,
                   .a = a.data_as<T>(),
                   .a_row_stride = g.trans_a ? 1 : k,
                   .a_col_stride = g.trans_a ? m : 1,
                   .b = b.data_as<T>(),
                   .b_row_stride = g.trans_b ? 1 : n,
                   .b_col_stride = g.trans_b ? k : 1,
                   .y = y.data_as<T>(),
                   .y_row_stride = n,
                   .alpha = static_cast<T>(g.alpha),
                   .beta = static_cast<T>(g.beta)};
  if (c != nullptr && c_in_place) {
    y = *c;  // C is [M,N]: accumulate into it
    p.y = y.data_as<T>();
    p.c = p.y;
    p.c_row_stride = n;
    p.c_col_stride = 1;
  } else if (c != nullptr) {
    p.c = c->data_as<T>();  // C is [N]: broadcast down the rows
    p.c_col_stride = 1;
  }
  gemm_with_scratch<T>(kernel, std::span(&p, 1), pool);
  return y;
}

BOOST_AUTO_TEST_CASE_TEMPLATE(every_supported_micro_kernel_matches_the_oracle, T, FloatTypes) {
  ThreadPool pool(3);
  for (GemmIsa isa : {GemmIsa::Generic, GemmIsa::Avx2Fma, GemmIsa::Avx512}) {
    if (!cpu::gemm_isa_supported(isa)) {
      BOOST_TEST_MESSAGE("skipping ISA " << static_cast<int>(isa) << ": this CPU lacks it");
      continue;
    }
    const auto& kernel = gemm_micro_kernel<T>(isa);
    BOOST_TEST_MESSAGE("checking " << kernel.name);
    const int64_t mr = kernel.mr, nr = kernel.nr;
    for (int64_t m : {int64_t{1}, mr - 1, mr + 1, kernel.mc + 1}) {
      for (int64_t n : {int64_t{1}, nr, nr + 1, kernel.nc + 1}) {
        for (int64_t k : {int64_t{1}, kernel.kc + 1}) {
          const GemmAttrs g{
              .trans_a = m % 2 == 0, .trans_b = n % 2 == 1, .alpha = 1.5, .beta = -0.5};
          const Tensor a = random_tensor<T>(g.trans_a ? Shape{k, m} : Shape{m, k}, 41);
          const Tensor b = random_tensor<T>(g.trans_b ? Shape{n, k} : Shape{k, n}, 42);
          const bool in_place = k == 1;
          const Tensor c = random_tensor<T>(in_place ? Shape{m, n} : Shape{n}, 43);
          const std::string what = std::string(kernel.name) + " " + dims_str(m, n, k);
          check_matches(direct_gemm(kernel, a, b, &c, g, pool, in_place),
                        expected_gemm<T>(a, b, &c, g), what);
          check_matches(direct_gemm(kernel, a, b, nullptr, g, pool, false),
                        expected_gemm<T>(a, b, nullptr, g), what + " without C");
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(plan_records_the_micro_kernel_variant) {
  const bool avx512 = cpu::gemm_isa_supported(GemmIsa::Avx512);
  const bool avx2 = cpu::gemm_isa_supported(GemmIsa::Avx2Fma);
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  auto variant = [&](OpKind op, DType dtype) {
    const Graph g =
        test::single_op_graph(op, {TypeInfo{dtype, Shape{4, 4}}, TypeInfo{dtype, Shape{4, 4}}});
    return compile(g, *cpu, DeterminismMode::Strict, {.optimize = false})
        .steps.at(0)
        .kernel.variant;
  };
  BOOST_CHECK_EQUAL(variant(OpKind::MatMul, DType::F32), avx512 ? "f32_gemm_avx512_14x32"
                                                         : avx2 ? "f32_gemm_avx2fma_6x16"
                                                                : "f32_gemm_generic_4x8");
  BOOST_CHECK_EQUAL(variant(OpKind::Gemm, DType::F64), avx512 ? "f64_gemm_avx512_14x16"
                                                       : avx2 ? "f64_gemm_avx2fma_6x8"
                                                              : "f64_gemm_generic_4x8");
}

// ---- Bad input to the GEMM entry point ------------------------------------------------------

BOOST_AUTO_TEST_CASE(gemm_rejects_malformed_problems) {
  ThreadPool pool(1);
  const auto& kernel = gemm_micro_kernel<float>(GemmIsa::Generic);
  std::vector<float> y(6);
  test::expect_error(
      [&] {
        const GemmProblem<float> p{.m = -1, .n = 2, .k = 0, .y = y.data(), .y_row_stride = 2};
        cpu::gemm<float>(kernel, std::span(&p, 1), pool, {});
      },
      ErrorCode::KernelFailure, "GEMM sizes must be >= 0, got m=-1 n=2 k=0");
  test::expect_error(
      [&] {
        const GemmProblem<float> p{.m = 2, .n = 3, .k = 0, .y = y.data(), .y_row_stride = 2};
        cpu::gemm<float>(kernel, std::span(&p, 1), pool, {});
      },
      ErrorCode::KernelFailure, "GEMM output row stride 2 overlaps rows of 3 columns");
  test::expect_error(
      [&] {
        const GemmProblem<float> p{.m = 2,
                                   .n = 3,
                                   .k = 0,
                                   .c = y.data(),
                                   .c_row_stride = 0,
                                   .c_col_stride = 1,
                                   .y = y.data(),
                                   .y_row_stride = 3};
        cpu::gemm<float>(kernel, std::span(&p, 1), pool, {});
      },
      ErrorCode::KernelFailure, "GEMM C aliases Y with strides [0,1], in place needs Y's [3,1]");
}

// gemm() never allocates: a call whose planned workspace or worker scratch is shorter than its
// problems need is refused, naming both sizes. gemm_scratch's two forms agree.
BOOST_AUTO_TEST_CASE(gemm_refuses_scratch_shorter_than_its_problems_need) {
  ThreadPool pool(2);
  const auto& kernel = gemm_micro_kernel<float>(GemmIsa::Generic);
  const int64_t m = 4 * kernel.mc, n = 64, k = 64;
  std::vector<float> a(static_cast<size_t>(m * k), 1.0f), b(static_cast<size_t>(k * n), 1.0f);
  std::vector<float> y(static_cast<size_t>(m * n));
  const GemmProblem<float> p{.m = m,
                             .n = n,
                             .k = k,
                             .a = a.data(),
                             .a_row_stride = k,
                             .a_col_stride = 1,
                             .b = b.data(),
                             .b_row_stride = n,
                             .b_col_stride = 1,
                             .y = y.data(),
                             .y_row_stride = n};
  const cpu::GemmScratch need = cpu::gemm_scratch(kernel, m, n, k, 1);
  const cpu::GemmScratch from_problems =
      cpu::gemm_scratch(kernel, std::span<const GemmProblem<float>>(&p, 1));
  BOOST_CHECK_EQUAL(need.shared_bytes, from_problems.shared_bytes);
  BOOST_CHECK_EQUAL(need.task_bytes, from_problems.task_bytes);
  // Tiles below one another share op(B): n rounded to whole panels, times K, as floats.
  BOOST_CHECK_EQUAL(need.shared_bytes, (n + kernel.nr - 1) / kernel.nr * kernel.nr * k * 4);
  BOOST_REQUIRE_GT(need.task_bytes, 0);
  test::expect_error([&] { cpu::gemm<float>(kernel, std::span(&p, 1), pool, {}); },
                     ErrorCode::KernelFailure,
                     "a GEMM call shares " + std::to_string(need.shared_bytes) +
                         " bytes of packed op(A) and op(B), its workspace has 0: the kernel's "
                         "selection declared less than it uses");
  std::vector<std::byte> shared(static_cast<size_t>(need.shared_bytes) + 64);
  auto aligned =
      std::span(shared).subspan((64 - reinterpret_cast<uintptr_t>(shared.data()) % 64) % 64,
                                static_cast<size_t>(need.shared_bytes));
  pool.reserve_worker_scratch(need.task_bytes - 1);
  test::expect_error(
      [&] { cpu::gemm<float>(kernel, std::span(&p, 1), pool, aligned); }, ErrorCode::KernelFailure,
      "a GEMM task needs " + std::to_string(need.task_bytes) +
          " bytes of worker scratch, the context holds " + std::to_string(need.task_bytes - 1) +
          ": the kernel's selection declared less than it uses");
  pool.reserve_worker_scratch(need.task_bytes);
  cpu::gemm<float>(kernel, std::span(&p, 1), pool, aligned);
  BOOST_CHECK_EQUAL(y.front(), static_cast<float>(k));
  BOOST_CHECK_EQUAL(y.back(), static_cast<float>(k));
}

}  // namespace
}  // namespace volta
