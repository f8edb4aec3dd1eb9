// The CUDA backend's linalg kernels on a device (MatMul, Gemm, FusedMatMul; f32 and f64): every
// element against the order the claims name (gemm_reference.h) and against the CPU backend
// wherever the CPU runs the micro-kernels the claim is made against, bit for bit except NaN
// payloads. Odd sizes, K across the slice depth, batches stacked and broadcast, 1-D operands,
// transposes, alpha, beta, C broadcast, special values; runs repeated under different poison;
// every row's bits independent of the rows and batches computed with it.
//
// Without a usable device every case is skipped and the binary prints "SKIPPED: <reason>",
// which CTest reports as skipped (SKIP_REGULAR_EXPRESSION): never a pass without a device.

#define BOOST_TEST_MODULE cuda_device_gemm_test
#include <bit>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "device_test_support.h"
#include "gemm_reference.h"
#include "kernels/launch.h"
#include "test_util.h"
#include "volta/backends/cuda.h"
#include "volta/ir/random.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta {
namespace {

using test::single_op_graph;

using cuda_test::DeviceOrSkip;
BOOST_TEST_GLOBAL_FIXTURE(DeviceOrSkip);
using cuda_test::cpu;
using cuda_test::device_available;
using cuda_test::gpu;

// The output of a one-node graph and the variant that computed it.
struct Run {
  Tensor y;
  std::string variant;
};

Run run_on(const Backend& backend, const Graph& graph, const std::vector<Tensor>& inputs,
           std::optional<std::byte> poison = std::nullopt) {
  const ExecutionPlan plan = compile(graph, backend, DeterminismMode::Strict, {.optimize = false});
  const std::unique_ptr<ExecutionContext> ctx = backend.make_context({.threads = 4});
  ctx->set_poison(poison);
  return {execute(plan, backend, *ctx, inputs)[0], plan.steps.at(0).kernel.variant};
}

template <class T>
using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;

template <class T>
std::string shown(T x) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g (0x%llx)", static_cast<double>(x),
                static_cast<unsigned long long>(std::bit_cast<Bits<T>>(x)));
  return text;
}

// The first element where `got` differs from `want` in any bit but a NaN's, or empty.
template <class T>
std::string first_difference(const Tensor& got, const Tensor& want) {
  if (got.shape() != want.shape())
    return "shape " + got.shape().str() + " vs " + want.shape().str();
  const T* g = got.data_as<T>();
  const T* w = want.data_as<T>();
  for (int64_t i = 0; i < got.numel(); ++i) {
    if (std::isnan(g[i]) && std::isnan(w[i])) continue;
    if (std::bit_cast<Bits<T>>(g[i]) != std::bit_cast<Bits<T>>(w[i])) {
      return "element " + std::to_string(i) + ": cuda " + shown(g[i]) + ", want " + shown(w[i]);
    }
  }
  return {};
}

std::string first_difference(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype()) return "dtypes differ";
  return got.dtype() == DType::F32 ? first_difference<float>(got, want)
                                   : first_difference<double>(got, want);
}

int64_t slice_of(DType dtype) {
  return dtype == DType::F32 ? cuda::kGemmSlice<float> : cuda::kGemmSlice<double>;
}

// The CUDA result of the graph against the claimed order's `reference` and against the CPU
// backend's (whose micro-kernels use that order on every ISA).
void check(const Graph& graph, const std::vector<Tensor>& inputs, const Tensor& reference,
           int64_t /*k*/, const std::string& what) {
  const Run got = run_on(gpu(), graph, inputs, std::byte{0xff});
  const std::string off_order = first_difference(got.y, reference);
  BOOST_CHECK_MESSAGE(off_order.empty(),
                      what << " (" << got.variant << ") against the claimed order: " << off_order);
  const Run want = run_on(cpu(), graph, inputs);
  const std::string off_cpu = first_difference(got.y, want.y);
  BOOST_CHECK_MESSAGE(off_cpu.empty(), what << " (" << got.variant << ") against the cpu ("
                                            << want.variant << "): " << off_cpu);
}

Tensor uniform_values(DType dtype, const Shape& shape, uint64_t seed) {
  return random_tensor(dtype, shape, seed, -1.0, 1.0);
}

Graph matmul_graph(DType dtype, const Shape& a, const Shape& b) {
  return single_op_graph(OpKind::MatMul, {TypeInfo{dtype, a}, TypeInfo{dtype, b}});
}

Tensor reference_matmul(const Tensor& a, const Tensor& b) {
  const int64_t slice = slice_of(a.dtype());
  return a.dtype() == DType::F32 ? test::reference_matmul<float>(a, b, slice)
                                 : test::reference_matmul<double>(a, b, slice);
}

void check_matmul(DType dtype, const Shape& sa, const Shape& sb, uint64_t seed) {
  const Tensor a = uniform_values(dtype, sa, seed);
  const Tensor b = uniform_values(dtype, sb, seed + 1);
  check(matmul_graph(dtype, sa, sb), {a, b}, reference_matmul(a, b), sa[sa.rank() - 1],
        "MatMul " + std::string(dtype_name(dtype)) + " " + sa.str() + " x " + sb.str());
}

constexpr DType kDTypes[] = {DType::F32, DType::F64};

BOOST_AUTO_TEST_CASE(matmul_matches_on_odd_sizes,
                     *boost::unit_test::precondition(device_available)) {
  const int64_t sizes[][3] = {{1, 1, 1},      {3, 3, 3},       {1, 17, 1},      {17, 63, 65},
                              {65, 127, 129}, {129, 257, 127}, {257, 129, 257}, {63, 1, 65},
                              {1, 257, 1},    {127, 65, 3},    {128, 128, 128}, {3, 5, 257}};
  uint64_t seed = 100;
  for (DType dtype : kDTypes) {
    for (const auto& [m, k, n] : sizes) check_matmul(dtype, Shape{m, k}, Shape{k, n}, seed += 2);
  }
}

// K around and across the slice depths (256 for f64 and the CPU's AVX2 f32, 512 for f32).
BOOST_AUTO_TEST_CASE(matmul_matches_across_k_slices,
                     *boost::unit_test::precondition(device_available)) {
  uint64_t seed = 200;
  for (DType dtype : kDTypes) {
    for (int64_t k : {7, 8, 9, 255, 256, 257, 511, 512, 513, 1024, 1100}) {
      check_matmul(dtype, Shape{33, k}, Shape{k, 70}, seed += 2);
    }
  }
}

BOOST_AUTO_TEST_CASE(matmul_matches_on_batches_and_1d_operands,
                     *boost::unit_test::precondition(device_available)) {
  const std::pair<Shape, Shape> cases[] = {
      {{2, 3, 17, 65}, {65, 33}},  // one B: stacked into one problem
      {{4, 1, 5, 7}, {3, 7, 9}},   // batch dims broadcast both ways
      {{5, 1, 3, 4}, {1, 6, 4, 2}},
      {{1, 3, 4}, {2, 1, 4, 5}},
      {{3, 20, 600}, {3, 600, 70}},  // K across a slice in every batch
      {{7}, {7}},
      {{7}, {2, 7, 5}},
      {{2, 5, 7}, {7}},
      {{9}, {9, 4}},
      {{6, 9}, {9}},
      {{2, 0, 3}, {3, 4}},  // empty
      {{3, 0}, {0, 4}},     // K = 0: zeros
  };
  uint64_t seed = 300;
  for (DType dtype : kDTypes) {
    for (const auto& [sa, sb] : cases) check_matmul(dtype, sa, sb, seed += 2);
  }
}

Graph gemm_graph(DType dtype, const Shape& a, const Shape& b, const std::optional<Shape>& c,
                 double alpha, double beta, bool trans_a, bool trans_b) {
  std::vector<std::optional<TypeInfo>> inputs = {TypeInfo{dtype, a}, TypeInfo{dtype, b}};
  if (c) inputs.emplace_back(TypeInfo{dtype, *c});
  return single_op_graph(OpKind::Gemm, inputs,
                         {{"alpha", alpha},
                          {"beta", beta},
                          {"transA", int64_t{trans_a}},
                          {"transB", int64_t{trans_b}}});
}

void check_gemm(DType dtype, int64_t m, int64_t k, int64_t n, const std::optional<Shape>& c_shape,
                double alpha, double beta, bool trans_a, bool trans_b, uint64_t seed) {
  const Shape sa = trans_a ? Shape{k, m} : Shape{m, k};
  const Shape sb = trans_b ? Shape{n, k} : Shape{k, n};
  std::vector<Tensor> inputs = {uniform_values(dtype, sa, seed),
                                uniform_values(dtype, sb, seed + 1)};
  std::optional<Tensor> c;
  if (c_shape) {
    c = uniform_values(dtype, *c_shape, seed + 2);
    inputs.push_back(*c);
  }
  const int64_t slice = slice_of(dtype);
  const Tensor want = dtype == DType::F32
                          ? test::reference_gemm_op<float>(inputs[0], inputs[1], c, alpha, beta,
                                                           trans_a, trans_b, slice)
                          : test::reference_gemm_op<double>(inputs[0], inputs[1], c, alpha, beta,
                                                            trans_a, trans_b, slice);
  check(gemm_graph(dtype, sa, sb, c_shape, alpha, beta, trans_a, trans_b), inputs, want, k,
        "Gemm " + std::string(dtype_name(dtype)) + " m=" + std::to_string(m) + " k=" +
            std::to_string(k) + " n=" + std::to_string(n) + " transA=" + std::to_string(trans_a) +
            " transB=" + std::to_string(trans_b) + " alpha=" + std::to_string(alpha) +
            " beta=" + std::to_string(beta) + " C=" + (c_shape ? c_shape->str() : "none"));
}

BOOST_AUTO_TEST_CASE(gemm_matches_with_transposes_scales_and_c_broadcasts,
                     *boost::unit_test::precondition(device_available)) {
  constexpr int64_t m = 65, n = 33;
  const std::optional<Shape> c_shapes[] = {std::nullopt, Shape{},     Shape{n},
                                           Shape{1, n},  Shape{m, 1}, Shape{m, n}};
  const std::pair<double, double> scales[] = {
      {1.0, 1.0}, {0.5, -2.0}, {1.0, 0.0}, {0.0, 1.0}, {-1.25, 0.75}};
  uint64_t seed = 400;
  for (DType dtype : kDTypes) {
    for (bool trans_a : {false, true}) {
      for (bool trans_b : {false, true}) {
        for (int64_t k : {17, 530}) {
          for (const std::optional<Shape>& c : c_shapes) {
            for (const auto& [alpha, beta] : scales) {
              check_gemm(dtype, m, k, n, c, alpha, beta, trans_a, trans_b, seed += 3);
            }
          }
        }
      }
    }
    check_gemm(dtype, 1, 1, 1, Shape{1}, 2.0, 3.0, true, true, seed += 3);
    check_gemm(dtype, 129, 257, 127, Shape{127}, 1.0, 1.0, true, false, seed += 3);
    check_gemm(dtype, 4, 0, 5, Shape{4, 5}, -1.0, 0.5, false, false, seed += 3);
  }
}

Graph fused_graph(DType dtype, const Shape& a, const Shape& b, const std::string& activation,
                  bool bias_first) {
  return single_op_graph(OpKind::FusedMatMul,
                         {TypeInfo{dtype, a}, TypeInfo{dtype, b}, TypeInfo{dtype, Shape{b[1]}}},
                         {{"activation", activation}, {"bias_first", int64_t{bias_first}}});
}

BOOST_AUTO_TEST_CASE(fused_matmul_matches_with_bias_and_relu,
                     *boost::unit_test::precondition(device_available)) {
  const std::pair<Shape, Shape> cases[] = {
      {{2, 9, 600}, {600, 70}}, {{5}, {5, 3}}, {{130, 64}, {64, 256}}, {{1, 1}, {1, 1}}};
  uint64_t seed = 500;
  for (DType dtype : kDTypes) {
    for (const auto& [sa, sb] : cases) {
      for (const std::string activation : {"none", "relu"}) {
        for (bool bias_first : {false, true}) {
          const Tensor a = uniform_values(dtype, sa, seed += 3);
          const Tensor b = uniform_values(dtype, sb, seed + 1);
          const Tensor bias = uniform_values(dtype, Shape{sb[1]}, seed + 2);
          const int64_t slice = slice_of(dtype);
          const bool relu = activation == "relu";
          const Tensor want =
              dtype == DType::F32
                  ? test::reference_fused_matmul<float>(a, b, bias, bias_first, relu, slice)
                  : test::reference_fused_matmul<double>(a, b, bias, bias_first, relu, slice);
          check(fused_graph(dtype, sa, sb, activation, bias_first), {a, b, bias}, want,
                sa[sa.rank() - 1],
                "FusedMatMul " + std::string(dtype_name(dtype)) + " " + sa.str() + " x " +
                    sb.str() + " " + activation + (bias_first ? " bias first" : ""));
        }
      }
    }
  }
}

// Infinities, NaN, signed zeros and subnormals among the operands: the same bits (NaN aside)
// as the order and the CPU, including the sign of every zero.
BOOST_AUTO_TEST_CASE(special_values_match, *boost::unit_test::precondition(device_available)) {
  constexpr int64_t m = 37, k = 600, n = 41;
  Tensor a = uniform_values(DType::F32, Shape{m, k}, 600);
  Tensor b = uniform_values(DType::F32, Shape{k, n}, 601);
  float* av = a.data_as<float>();
  float* bv = b.data_as<float>();
  const float inf = std::numeric_limits<float>::infinity();
  const float specials[] = {inf,    -inf,  std::numeric_limits<float>::quiet_NaN(),
                            -0.0f,  0.0f,  std::numeric_limits<float>::denorm_min(),
                            1e-40f, 3e38f, -3e38f};
  for (int64_t i = 0; i < m; ++i) {
    // A few rows hold one special value each; some rows are all -0, so their sums are +0 or -0
    // only as the order makes them.
    if (i % 4 == 1) av[i * k + (i * 7) % k] = specials[static_cast<size_t>(i / 4) % 9];
    if (i % 6 == 2) {
      for (int64_t p = 0; p < k; ++p) av[i * k + p] = -0.0f;
    }
  }
  for (int64_t j = 0; j < n; j += 5)
    bv[(j * 13) % k * n + j] = specials[static_cast<size_t>(j) % 9];
  check(matmul_graph(DType::F32, a.shape(), b.shape()), {a, b}, reference_matmul(a, b), k,
        "MatMul f32 with special values");
  const Tensor c = uniform_values(DType::F32, Shape{n}, 602);
  for (const auto& [alpha, beta] : {std::pair{-1.0, 0.5}, std::pair{0.0, -1.0}}) {
    check(
        gemm_graph(DType::F32, a.shape(), b.shape(), Shape{n}, alpha, beta, false, false),
        {a, b, c},
        test::reference_gemm_op<float>(a, b, c, alpha, beta, false, false, cuda::kGemmSlice<float>),
        k, "Gemm f32 with special values, alpha=" + std::to_string(alpha));
  }
}

// The same plan run again, under other poison, in a fresh context: the same bits.
BOOST_AUTO_TEST_CASE(runs_repeat_bit_identically,
                     *boost::unit_test::precondition(device_available)) {
  for (DType dtype : kDTypes) {
    const Shape sa{3, 190, 700};
    const Shape sb{700, 150};
    const Graph g = matmul_graph(dtype, sa, sb);
    const std::vector<Tensor> inputs = {uniform_values(dtype, sa, 700),
                                        uniform_values(dtype, sb, 701)};
    const ExecutionPlan plan = compile(g, gpu(), DeterminismMode::Strict);
    const std::unique_ptr<ExecutionContext> ctx = gpu().make_context({});
    std::vector<Tensor> runs;
    for (std::byte poison : {std::byte{0xff}, std::byte{0x00}, std::byte{0x7f}}) {
      ctx->set_poison(poison);
      runs.push_back(execute(plan, gpu(), *ctx, inputs)[0]);
    }
    runs.push_back(run_on(gpu(), g, inputs, std::byte{0xa5}).y);
    for (const Tensor& run : runs) BOOST_TEST(run.bit_equal(runs[0]));
  }
}

// Row i of a product is the same bits whatever else is computed with it: the row alone, the
// whole matrix, or one batch of many.
BOOST_AUTO_TEST_CASE(rows_are_batch_invariant, *boost::unit_test::precondition(device_available)) {
  for (DType dtype : kDTypes) {
    constexpr int64_t m = 257, k = 600, n = 129;
    const Tensor a = uniform_values(dtype, Shape{m, k}, 800);
    const Tensor b = uniform_values(dtype, Shape{k, n}, 801);
    const Tensor whole = run_on(gpu(), matmul_graph(dtype, a.shape(), b.shape()), {a, b}).y;
    const size_t element = dtype_size(dtype);
    for (int64_t row : {int64_t{0}, int64_t{1}, int64_t{127}, int64_t{128}, int64_t{256}}) {
      Tensor one(dtype, Shape{1, k});
      std::memcpy(one.data(), static_cast<const std::byte*>(a.data()) + row * k * element,
                  static_cast<size_t>(k) * element);
      const Tensor alone = run_on(gpu(), matmul_graph(dtype, one.shape(), b.shape()), {one, b}).y;
      BOOST_TEST(
          std::memcmp(alone.data(), static_cast<const std::byte*>(whole.data()) + row * n * element,
                      static_cast<size_t>(n) * element) == 0,
          "row " << row << " " << dtype_name(dtype));
    }
    // The same matrix as batch 2 of 4 (each batch its own B): the same bits.
    Tensor batch_a = uniform_values(dtype, Shape{4, m, k}, 802);
    Tensor batch_b = uniform_values(dtype, Shape{4, k, n}, 803);
    std::memcpy(static_cast<std::byte*>(batch_a.data()) + 2 * m * k * element, a.data(),
                static_cast<size_t>(m * k) * element);
    std::memcpy(static_cast<std::byte*>(batch_b.data()) + 2 * k * n * element, b.data(),
                static_cast<size_t>(k * n) * element);
    const Tensor batched =
        run_on(gpu(), matmul_graph(dtype, batch_a.shape(), batch_b.shape()), {batch_a, batch_b}).y;
    BOOST_TEST(std::memcmp(static_cast<const std::byte*>(batched.data()) + 2 * m * n * element,
                           whole.data(), static_cast<size_t>(m * n) * element) == 0,
               "batch 2 of 4 " << dtype_name(dtype));
  }
}

}  // namespace
}  // namespace volta
