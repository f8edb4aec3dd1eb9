// The CUDA GEMM kernel (kernels/gemm_kernel.cuh) run on the host under an emulation of the
// CUDA thread model (gemm_kernel_emulation.h), bit for bit against the order its claims name
// (gemm_reference.h, which cuda_backend_test holds the CPU backend to): the kernel's indexing,
// operand staging, edge tiles, K slices, transposes, C broadcasts, batch broadcasts and the
// FusedMatMul epilogue, checked without a device. Races and nvcc's code are the device tests'.

#define BOOST_TEST_MODULE cuda_gemm_emulation_test
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "broadcast_geometry.h"
#include "gemm_kernel_emulation.h"
#include "gemm_reference.h"
#include "volta/ir/random.h"

namespace volta {
namespace {

using cuda::emulate_gemm;
using cuda::GemmEpilogueOp;
using cuda::GemmLaunch;
using cuda::tile_count;

template <class T>
constexpr DType kDType = sizeof(T) == 4 ? DType::F32 : DType::F64;

template <class T>
Tensor values(const Shape& shape, uint64_t seed) {
  return random_tensor(kDType<T>, shape, seed, -1.0, 1.0);
}

cuda::BroadcastGeometry one_problem() { return *cuda::broadcast_geometry({{1}, {0}, {0}}); }

// Y through the emulated kernel in its large tiles, on a block per tile and on one block
// striding over all tiles, and in its medium and small tiles on three blocks striding: all must
// give the same bits.
template <class T>
Tensor emulated(GemmLaunch<T> g, const Shape& y_shape) {
  Tensor y(kDType<T>, y_shape);
  g.y = y.data_as<T>();
  emulate_gemm(g, tile_count(g));
  Tensor strided(kDType<T>, y_shape);
  g.y = strided.data_as<T>();
  emulate_gemm(g, 1);
  BOOST_TEST(strided.bit_equal(y), "a grid of one block gives other bits");
  Tensor medium(kDType<T>, y_shape);
  g.y = medium.data_as<T>();
  emulate_gemm<T, typename cuda::gemm_detail::Tiles<T>::Medium>(g, 3);
  BOOST_TEST(medium.bit_equal(y), "the medium tiles give other bits");
  Tensor small(kDType<T>, y_shape);
  g.y = small.data_as<T>();
  emulate_gemm<T, typename cuda::gemm_detail::Tiles<T>::Small>(g, 3);
  BOOST_TEST(small.bit_equal(y), "the small tiles give other bits");
  return y;
}

template <class T>
GemmLaunch<T> row_major(int64_t m, int64_t n, int64_t k, const Tensor& a, const Tensor& b) {
  GemmLaunch<T> g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.a = a.data_as<T>();
  g.a_row_stride = k;
  g.a_col_stride = 1;
  g.b = b.data_as<T>();
  g.b_row_stride = n;
  g.b_col_stride = 1;
  g.batch = one_problem();
  return g;
}

template <class T>
void check_matmul(int64_t m, int64_t k, int64_t n, uint64_t seed) {
  const Tensor a = values<T>(Shape{m, k}, seed);
  const Tensor b = values<T>(Shape{k, n}, seed + 1);
  const Tensor y = emulated(row_major<T>(m, n, k, a, b), Shape{m, n});
  const Tensor want = test::reference_matmul<T>(a, b, cuda::kGemmSlice<T>);
  BOOST_TEST(y.bit_equal(want), dtype_name(kDType<T>) << " m=" << m << " k=" << k << " n=" << n);
}

BOOST_AUTO_TEST_CASE(odd_sizes_match_the_order) {
  const int64_t sizes[][3] = {{1, 1, 1},    {3, 3, 3},    {1, 17, 1},     {17, 63, 65},
                              {65, 9, 129}, {129, 5, 63}, {127, 4, 257},  {63, 1, 65},
                              {1, 257, 1},  {2, 0, 3},    {128, 16, 128}, {3, 13, 257}};
  uint64_t seed = 10;
  for (const auto& [m, k, n] : sizes) {
    check_matmul<float>(m, k, n, seed += 2);
    check_matmul<double>(m, k, n, seed += 2);
  }
}

BOOST_AUTO_TEST_CASE(k_across_slices_matches_the_order) {
  uint64_t seed = 100;
  for (int64_t k : {7, 8, 255, 256, 257, 513, 1100}) {
    check_matmul<float>(33, k, 70, seed += 2);
    check_matmul<double>(33, k, 40, seed += 2);
  }
}

template <class T>
void check_gemm(int64_t m, int64_t k, int64_t n, const std::optional<Shape>& c_shape, double alpha,
                double beta, bool trans_a, bool trans_b, uint64_t seed) {
  const Tensor a = values<T>(trans_a ? Shape{k, m} : Shape{m, k}, seed);
  const Tensor b = values<T>(trans_b ? Shape{n, k} : Shape{k, n}, seed + 1);
  std::optional<Tensor> c;
  GemmLaunch<T> g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.a = a.data_as<T>();
  g.a_row_stride = trans_a ? 1 : k;
  g.a_col_stride = trans_a ? m : 1;
  g.b = b.data_as<T>();
  g.b_row_stride = trans_b ? 1 : n;
  g.b_col_stride = trans_b ? k : 1;
  g.alpha = static_cast<T>(alpha);
  g.beta = static_cast<T>(beta);
  g.batch = one_problem();
  if (c_shape) {
    c = values<T>(*c_shape, seed + 2);
    const std::vector<int64_t> strides = broadcast_strides(*c_shape, Shape{m, n});
    g.c = c->data_as<T>();
    g.c_row_stride = strides[0];
    g.c_col_stride = strides[1];
  }
  const Tensor y = emulated(g, Shape{m, n});
  const Tensor want =
      test::reference_gemm_op<T>(a, b, c, alpha, beta, trans_a, trans_b, cuda::kGemmSlice<T>);
  BOOST_TEST(y.bit_equal(want), dtype_name(kDType<T>)
                                    << " transA=" << trans_a << " transB=" << trans_b
                                    << " alpha=" << alpha << " beta=" << beta
                                    << " C=" << (c_shape ? c_shape->str() : "none"));
}

BOOST_AUTO_TEST_CASE(transposes_scales_and_c_broadcasts_match_the_order) {
  constexpr int64_t m = 37, n = 29;
  const std::optional<Shape> c_shapes[] = {std::nullopt, Shape{},     Shape{n},
                                           Shape{1, n},  Shape{m, 1}, Shape{m, n}};
  uint64_t seed = 200;
  for (bool trans_a : {false, true}) {
    for (bool trans_b : {false, true}) {
      for (const std::optional<Shape>& c : c_shapes) {
        check_gemm<float>(m, 530, n, c, 0.5, -2.0, trans_a, trans_b, seed += 3);
        check_gemm<double>(m, 300, n, c, -1.25, 0.75, trans_a, trans_b, seed += 3);
      }
      check_gemm<float>(m, 21, n, Shape{n}, 1.0, 1.0, trans_a, trans_b, seed += 3);
    }
  }
  check_gemm<float>(4, 0, 5, Shape{4, 5}, -1.0, 0.5, false, false, seed += 3);
  check_gemm<double>(1, 1, 1, Shape{1}, 2.0, 3.0, true, true, seed += 3);
}

// Batches broadcast as MatMul's selection merges them (broadcast_geometry.h), each problem's
// A and B found from the merged strides.
template <class T>
void check_batches(const Shape& batch_a, const Shape& batch_b, int64_t m, int64_t k, int64_t n,
                   uint64_t seed) {
  std::vector<int64_t> da = batch_a.dims(), db = batch_b.dims();
  da.insert(da.end(), {m, k});
  db.insert(db.end(), {k, n});
  const Tensor a = values<T>(Shape(da), seed);
  const Tensor b = values<T>(Shape(db), seed + 1);
  const Shape batch_y = *broadcast_shapes(batch_a, batch_b);
  std::vector<int64_t> dy = batch_y.dims();
  dy.insert(dy.end(), {m, n});
  GemmLaunch<T> g = row_major<T>(m, n, k, a, b);
  g.batch = *cuda::broadcast_geometry(cuda::merge_broadcast(batch_y, batch_a, batch_b));
  const Tensor y = emulated(g, Shape(dy));
  BOOST_TEST(y.bit_equal(test::reference_matmul<T>(a, b, cuda::kGemmSlice<T>)),
             batch_a.str() << " with " << batch_b.str());
}

BOOST_AUTO_TEST_CASE(broadcast_batches_match_the_order) {
  check_batches<float>(Shape{4, 1}, Shape{3}, 5, 7, 9, 300);
  check_batches<double>(Shape{2, 1, 3}, Shape{1, 2, 1}, 3, 520, 4, 302);
  check_batches<float>(Shape{2}, Shape{2}, 130, 9, 3, 304);
}

template <class T>
void check_fused(int64_t m, int64_t k, int64_t n, bool bias_first, bool relu, uint64_t seed) {
  const Tensor a = values<T>(Shape{m, k}, seed);
  const Tensor b = values<T>(Shape{k, n}, seed + 1);
  const Tensor bias = values<T>(Shape{n}, seed + 2);
  GemmLaunch<T> g = row_major<T>(m, n, k, a, b);
  g.epilogue = relu ? GemmEpilogueOp::BiasRelu : GemmEpilogueOp::Bias;
  g.bias = bias.data_as<T>();
  g.bias_first = bias_first;
  const Tensor y = emulated(g, Shape{m, n});
  const Tensor want =
      test::reference_fused_matmul<T>(a, b, bias, bias_first, relu, cuda::kGemmSlice<T>);
  BOOST_TEST(y.bit_equal(want), "bias_first=" << bias_first << " relu=" << relu);
}

BOOST_AUTO_TEST_CASE(the_fused_epilogue_matches_the_order) {
  uint64_t seed = 400;
  for (bool bias_first : {false, true}) {
    for (bool relu : {false, true}) {
      check_fused<float>(19, 600, 33, bias_first, relu, seed += 3);
      check_fused<double>(19, 40, 33, bias_first, relu, seed += 3);
    }
  }
}

}  // namespace
}  // namespace volta
