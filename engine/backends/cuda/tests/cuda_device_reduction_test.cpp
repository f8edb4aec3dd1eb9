// The CUDA backend's reduction and normalization kernels on a device, against the CPU backend,
// bit for bit as each op's claim says: every Reduce* over rows crossing the 4096-element leaves
// (1 ... 100000 elements), contiguous, strided and non-contiguous axis sets, keepdims both ways,
// empty rows, special values (NaN with payloads, +-inf, +-0); Softmax, LayerNormalization,
// BatchNormalization and InstanceNormalization on transformer-like shapes and long rows.
//
// Without a usable device every case is skipped and the binary prints "SKIPPED: <reason>",
// which CTest reports as skipped (SKIP_REGULAR_EXPRESSION): never a pass without a device.

#define BOOST_TEST_MODULE cuda_device_reduction_test
#include <algorithm>
#include <array>
#include <bit>
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "device_test_support.h"
#include "volta/backends/cuda.h"
#include "volta/ir/random.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta {
namespace {

using Ints = std::vector<int64_t>;

using cuda_test::DeviceOrSkip;
BOOST_TEST_GLOBAL_FIXTURE(DeviceOrSkip);
using cuda_test::cpu;
using cuda_test::device_available;
using cuda_test::gpu;
using cuda_test::run_on;

const CudaOpClaim& claim_of(OpKind op) {
  const std::span<const CudaOpClaim> claims = cuda_op_claims();
  const auto it = std::ranges::find(claims, op, &CudaOpClaim::op);
  BOOST_REQUIRE_MESSAGE(it != claims.end(), "no claim for " << op_name(op));
  return *it;
}

// Element i of an f32 or f64 tensor: its bits, and whether it is NaN.
struct Element {
  uint64_t bits;
  bool nan;
  double value;
};
Element element(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::I32) {
    const int32_t v = t.data_as<int32_t>()[i];
    return {static_cast<uint32_t>(v), false, static_cast<double>(v)};
  }
  if (t.dtype() == DType::I64) {
    const int64_t v = t.data_as<int64_t>()[i];
    return {static_cast<uint64_t>(v), false, static_cast<double>(v)};
  }
  if (t.dtype() == DType::F64) {
    const double v = t.data_as<double>()[i];
    return {std::bit_cast<uint64_t>(v), v != v, v};
  }
  const float v = t.data_as<float>()[i];
  return {std::bit_cast<uint32_t>(v), v != v, static_cast<double>(v)};
}

std::string describe(const Element& e) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g (0x%llx)", e.value,
                static_cast<unsigned long long>(e.bits));
  return text;
}

// The first element where `got` breaks the claim against `want`, or empty.
std::string first_breach(CrossBackendExactness claim, const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    return "type " + got.shape().str() + " vs " + want.shape().str();
  }
  for (int64_t i = 0; i < got.numel(); ++i) {
    const Element g = element(got, i);
    const Element w = element(want, i);
    const bool nan_aside =
        claim == CrossBackendExactness::BitwiseExceptNanPayload && g.nan && w.nan;
    if (g.bits != w.bits && !nan_aside) {
      return "element " + std::to_string(i) + ": cuda " + describe(g) + ", cpu " + describe(w);
    }
  }
  return {};
}

// Runs the graph on both backends (the GPU's arena poisoned) and checks every output against
// the claim of `op`.
void check_against_cpu(OpKind op, const Graph& graph, const std::vector<Tensor>& inputs,
                       const std::string& what) {
  const CudaOpClaim& claim = claim_of(op);
  const std::vector<Tensor> want = run_on(cpu(), graph, inputs);
  const std::vector<Tensor> got = run_on(gpu(), graph, inputs, std::byte{0xff});
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    const std::string breach = first_breach(claim.exactness, got[k], want[k]);
    BOOST_CHECK_MESSAGE(breach.empty(),
                        op_name(op) << " (" << cross_backend_exactness_name(claim.exactness)
                                    << ") on " << what << ", output " << k << ": " << breach);
  }
}

Graph single_op(OpKind op, DType dtype, const std::vector<Shape>& shapes, Attributes attrs,
                int outputs = 1) {
  Graph g;
  std::vector<ValueId> ids;
  for (size_t i = 0; i < shapes.size(); ++i) {
    ids.push_back(g.add_input("in" + std::to_string(i), dtype, shapes[i]));
  }
  g.set_outputs(g.add_node(op, ids, std::move(attrs), "op", outputs));
  return g;
}

Attributes reduce_attrs(const Ints& axes, int64_t keepdims) {
  return {{"axes", axes}, {"keepdims", keepdims}};
}

const std::vector<OpKind> kReduceOps = {
    OpKind::ReduceSum,  OpKind::ReduceMean,      OpKind::ReduceMax, OpKind::ReduceMin,
    OpKind::ReduceProd, OpKind::ReduceSumSquare, OpKind::ReduceL1,  OpKind::ReduceL2};

// Counter-based f32 bit patterns (splitmix64): every class of f32 appears, NaN payloads too.
Tensor f32_bit_patterns(const Shape& shape, uint64_t seed) {
  Tensor t(DType::F32, shape);
  auto* out = t.data_as<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    uint64_t z = seed + static_cast<uint64_t>(i + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    out[i] = std::bit_cast<float>(static_cast<uint32_t>(z ^ (z >> 31)));
  }
  return t;
}

void check_reductions(DType dtype, const Shape& shape, const Ints& axes, const Tensor& x,
                      const std::string& what) {
  for (OpKind op : kReduceOps) {
    if (!claim_of(op).dtypes.contains(dtype)) continue;
    for (int64_t keepdims : {0, 1}) {
      check_against_cpu(op, single_op(op, dtype, {shape}, reduce_attrs(axes, keepdims)), {x},
                        std::string(dtype_name(dtype)) + " " + shape.str() + " axes " +
                            Shape(axes).str() + " keepdims " + std::to_string(keepdims) + " " +
                            what);
    }
  }
}

// Rows of every length around the leaf and lane boundaries, as the last axis and as the first
// (strided rows: the kept axis is innermost).
BOOST_AUTO_TEST_CASE(reductions_match_the_cpu_on_rows_crossing_the_leaves,
                     *boost::unit_test::precondition(device_available)) {
  uint64_t seed = 100;
  for (const int64_t n : {1, 7, 8, 9, 4095, 4096, 4097, 3 * 4096 + 5, 100000}) {
    for (DType dtype : {DType::F32, DType::F64}) {
      const Shape rows{3, n};
      check_reductions(dtype, rows, {1}, random_tensor(dtype, rows, ++seed, -2.0, 2.0), "uniform");
      const Shape columns{n, 3};
      check_reductions(dtype, columns, {0}, random_tensor(dtype, columns, ++seed, 0.5, 1.5),
                       "uniform");
      const Shape all{n};
      check_reductions(dtype, all, {}, random_tensor(dtype, all, ++seed, -1e3, 1e3), "uniform");
    }
  }
}

// Kept and reduced axes interleaved, size-1 axes, everything, nothing, and an empty row.
BOOST_AUTO_TEST_CASE(reductions_match_the_cpu_on_every_kind_of_axis_set,
                     *boost::unit_test::precondition(device_available)) {
  const std::vector<std::pair<Shape, std::vector<Ints>>> cases = {
      {{5, 6, 7, 8}, {{0}, {1}, {3}, {0, 2}, {1, 3}, {0, 3}, {0, 1, 3}, {}, {-1, -2}}},
      {{70, 7, 70}, {{0, 2}, {1}, {0, 1}}},  // rows of 4900 over two strided extents
      {{2, 1, 3, 1}, {{1}, {0, 2}, {1, 3}}},
      {{3, 0, 2}, {{1}, {0}}},  // empty rows; no outputs
  };
  uint64_t seed = 200;
  for (const auto& [shape, axis_sets] : cases) {
    for (const Ints& axes : axis_sets) {
      for (DType dtype : {DType::F32, DType::F64}) {
        check_reductions(dtype, shape, axes, random_tensor(dtype, shape, ++seed, -2.0, 2.0),
                         "uniform");
      }
      check_reductions(DType::F32, shape, axes, f32_bit_patterns(shape, ++seed), "bit patterns");
    }
  }
  Attributes noop = reduce_attrs({}, 1);
  noop["noop_with_empty_axes"] = int64_t{1};
  const Shape shape{4, 5};
  for (OpKind op : kReduceOps) {
    check_against_cpu(op, single_op(op, DType::F32, {shape}, noop), {f32_bit_patterns(shape, 300)},
                      "noop_with_empty_axes");
  }
}

// Rows holding NaN (with payloads, first and late), infinities of both signs, and zeros of both
// signs, so that which NaN and which zero survives is seen; the rows cross the leaves.
BOOST_AUTO_TEST_CASE(reductions_match_the_cpu_on_special_values,
                     *boost::unit_test::precondition(device_available)) {
  const std::vector<uint32_t> specials = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,
                                          0x7fc00000u, 0xffc01234u, 0x7fa00001u, 0x00000001u,
                                          0x7f7fffffu, 0xff7fffffu, 0x3f800000u, 0xbf800000u};
  for (const int64_t n : {9, 4097, 3 * 4096 + 5}) {
    const Shape shape{static_cast<int64_t>(specials.size()) + 3, n};
    Tensor x(DType::F32, shape);
    auto* v = x.data_as<float>();
    for (int64_t r = 0; r < shape[0]; ++r) {
      for (int64_t i = 0; i < n; ++i) {
        // Row r: zeros of alternating sign, then special r at a few places.
        float value = std::bit_cast<float>(i % 2 == 0 ? 0x80000000u : 0x00000000u);
        if (r < static_cast<int64_t>(specials.size()) && (i == n / 2 || i == n - 1 || i == 5)) {
          value = std::bit_cast<float>(specials[static_cast<size_t>(r)] ^ (i == n - 1 ? 0x1u : 0));
        }
        if (r == shape[0] - 2) value = std::bit_cast<float>(0x80000000u);  // all -0
        if (r == shape[0] - 1) value = std::bit_cast<float>(i % 3 == 0 ? 0x7fc00000u : 0xffc00001u);
        v[r * n + i] = value;
      }
    }
    check_reductions(DType::F32, shape, {1}, x, "special values");
    check_reductions(DType::F32, shape, {0}, x, "special values");
  }
}

// Integers wrap around on both: sums and products of values across the whole range.
BOOST_AUTO_TEST_CASE(integer_reductions_match_the_cpu,
                     *boost::unit_test::precondition(device_available)) {
  uint64_t seed = 350;
  for (DType dtype : {DType::I32, DType::I64}) {
    const double limit = dtype == DType::I32 ? 2147483648.0 : 9.2e18;
    for (const Shape& shape : {Shape{3, 9}, Shape{3, 3 * 4096 + 5}, Shape{4097, 3}}) {
      for (const Ints& axes : {Ints{1}, Ints{0}, Ints{}}) {
        check_reductions(dtype, shape, axes, random_tensor(dtype, shape, ++seed, -limit, limit),
                         "full range");
        check_reductions(dtype, shape, axes, random_tensor(dtype, shape, ++seed, -3.0, 4.0),
                         "small values");
      }
    }
  }
}

// ---- Normalizations ----

BOOST_AUTO_TEST_CASE(softmax_matches_the_cpu, *boost::unit_test::precondition(device_available)) {
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{16, 32, 64}, {-1, 1, 0}},
      {{16, 4, 32, 32}, {-1, 1, 2}},
      {{2, 100000}, {1}},
      {{4097, 3}, {0}},
      {{1, 1}, {0}},
      // Rows staged in shared memory: whole vectors, and not; blocks of 8 and of 4 rows.
      {{37, 1024}, {1}},
      {{37, 1027}, {1}},
      {{19, 3000}, {-1}},
  };
  uint64_t seed = 400;
  for (const auto& [shape, axes] : cases) {
    for (const int64_t axis : axes) {
      const Graph g = single_op(OpKind::Softmax, DType::F32, {shape}, {{"axis", axis}});
      const std::string what = shape.str() + " axis " + std::to_string(axis);
      check_against_cpu(OpKind::Softmax, g, {random_tensor(DType::F32, shape, ++seed, -30.0, 30.0)},
                        what);
      check_against_cpu(OpKind::Softmax, g, {f32_bit_patterns(shape, ++seed)},
                        what + " bit patterns");
    }
  }
  // Rows of -inf, of +inf, with NaN, of zeros of both signs.
  const Shape rows{4, 9};
  Tensor x(DType::F32, rows);
  for (int64_t i = 0; i < 9; ++i) {
    x.data_as<float>()[i] = -std::numeric_limits<float>::infinity();
    x.data_as<float>()[9 + i] = i == 4 ? std::numeric_limits<float>::infinity() : 1.0f;
    x.data_as<float>()[18 + i] = i == 7 ? std::bit_cast<float>(0xffc01234u) : 2.0f;
    x.data_as<float>()[27 + i] = i % 2 == 0 ? -0.0f : 0.0f;
  }
  check_against_cpu(OpKind::Softmax,
                    single_op(OpKind::Softmax, DType::F32, {rows}, {{"axis", int64_t{1}}}), {x},
                    "special rows");
}

BOOST_AUTO_TEST_CASE(layer_normalization_matches_the_cpu_with_every_output,
                     *boost::unit_test::precondition(device_available)) {
  struct Case {
    Shape x;
    int64_t axis;
  };
  const std::vector<Case> cases = {{{16, 32, 64}, -1}, {{16, 4, 32, 32}, 2}, {{16, 4, 32, 32}, 1},
                                   {{2, 100000}, 1},   {{5, 4097}, -1},      {{7, 1}, 1},
                                   {{37, 1024}, 1},    {{37, 1027}, -1},     {{19, 3000}, 1}};
  uint64_t seed = 500;
  for (DType dtype : {DType::F32, DType::F64}) {
    for (const Case& c : cases) {
      std::vector<int64_t> block(c.x.dims().begin() + (c.axis + c.x.rank()) % c.x.rank(),
                                 c.x.dims().end());
      const Shape row{block};
      const Attributes attrs = {{"axis", c.axis}, {"epsilon", 1e-5}};
      const std::string what =
          std::string(dtype_name(dtype)) + " " + c.x.str() + " axis " + std::to_string(c.axis);
      const std::vector<Tensor> inputs = {random_tensor(dtype, c.x, ++seed, -3.0, 5.0),
                                          random_tensor(dtype, row, ++seed, 0.5, 1.5),
                                          random_tensor(dtype, row, ++seed, -1.0, 1.0)};
      check_against_cpu(OpKind::LayerNormalization,
                        single_op(OpKind::LayerNormalization, dtype, {c.x, row, row}, attrs, 3),
                        inputs, what + " with bias, 3 outputs");
      check_against_cpu(OpKind::LayerNormalization,
                        single_op(OpKind::LayerNormalization, dtype, {c.x, row}, attrs, 1),
                        {inputs[0], inputs[1]}, what + " without bias");
    }
  }
  // Scale and B broadcast within the normalized block.
  const std::vector<std::array<Shape, 3>> broadcasts = {{{{16, 32, 64}, {64}, {32, 1}}},
                                                        {{{16, 4, 32, 32}, {4, 1, 1}, {32}}},
                                                        {{{8, 4100}, {1}, {4100}}}};
  for (const auto& [x, scale, bias] : broadcasts) {
    const Attributes attrs = {{"axis", int64_t{1}}, {"epsilon", 1e-3}};
    check_against_cpu(OpKind::LayerNormalization,
                      single_op(OpKind::LayerNormalization, DType::F32, {x, scale, bias}, attrs, 3),
                      {random_tensor(DType::F32, x, ++seed, -3.0, 5.0),
                       random_tensor(DType::F32, scale, ++seed, 0.5, 1.5),
                       random_tensor(DType::F32, bias, ++seed, -1.0, 1.0)},
                      x.str() + " scale " + scale.str() + " bias " + bias.str());
  }
  // NaN and infinities in rows.
  const Shape x{3, 9};
  Tensor special = random_tensor(DType::F32, x, 600, -1.0, 1.0);
  special.data_as<float>()[4] = std::bit_cast<float>(0x7fc00000u);
  special.data_as<float>()[13] = std::numeric_limits<float>::infinity();
  check_against_cpu(
      OpKind::LayerNormalization,
      single_op(OpKind::LayerNormalization, DType::F32, {x, Shape{9}}, {{"axis", int64_t{1}}}, 3),
      {special, random_tensor(DType::F32, Shape{9}, 601, 0.5, 1.5)}, "special rows");
}

BOOST_AUTO_TEST_CASE(batch_and_instance_normalization_match_the_cpu,
                     *boost::unit_test::precondition(device_available)) {
  uint64_t seed = 700;
  for (DType dtype : {DType::F32, DType::F64}) {
    for (const Shape& x : {Shape{2, 3, 5, 7}, Shape{4, 8, 64, 65}, Shape{1, 2, 5000}}) {
      const Shape c{x[1]};
      const Attributes attrs = {{"epsilon", 1e-5}};
      const std::string what = std::string(dtype_name(dtype)) + " " + x.str();
      check_against_cpu(
          OpKind::BatchNormalization,
          single_op(OpKind::BatchNormalization, dtype, {x, c, c, c, c}, attrs),
          {random_tensor(dtype, x, ++seed, -3.0, 3.0), random_tensor(dtype, c, ++seed, 0.5, 1.5),
           random_tensor(dtype, c, ++seed, -1.0, 1.0), random_tensor(dtype, c, ++seed, -0.5, 0.5),
           random_tensor(dtype, c, ++seed, 0.1, 2.0)},
          what);
      check_against_cpu(
          OpKind::InstanceNormalization,
          single_op(OpKind::InstanceNormalization, dtype, {x, c, c}, attrs),
          {random_tensor(dtype, x, ++seed, -3.0, 3.0), random_tensor(dtype, c, ++seed, 0.5, 1.5),
           random_tensor(dtype, c, ++seed, -1.0, 1.0)},
          what);
    }
  }
}

BOOST_AUTO_TEST_CASE(mean_variance_normalization_matches_the_cpu,
                     *boost::unit_test::precondition(device_available)) {
  const std::vector<std::pair<Shape, std::vector<Ints>>> cases = {
      {{2, 3, 5, 7}, {{0, 2, 3}, {1}, {3}, {0, 1, 2, 3}, {-1, 1}}},
      {{3, 70, 2, 70}, {{1, 3}, {0, 2}}},  // groups of 4900 over two strided extents
  };
  uint64_t seed = 900;
  for (DType dtype : {DType::F32, DType::F64}) {
    for (const auto& [shape, axis_sets] : cases) {
      for (const Ints& axes : axis_sets) {
        check_against_cpu(
            OpKind::MeanVarianceNormalization,
            single_op(OpKind::MeanVarianceNormalization, dtype, {shape},
                      {{"axes", axes}, {"epsilon", 1e-9}}),
            {random_tensor(dtype, shape, ++seed, -2.0, 6.0)},
            std::string(dtype_name(dtype)) + " " + shape.str() + " axes " + Shape(axes).str());
      }
    }
  }
}

// Line scans: ties, NaN and both zeros met in every order, select_last_index both ways.
BOOST_AUTO_TEST_CASE(arg_extremes_and_hardmax_match_the_cpu,
                     *boost::unit_test::precondition(device_available)) {
  // Few distinct values, so ties are everywhere; NaN with payloads and zeros of both signs.
  const std::vector<uint32_t> palette = {0x00000000u, 0x80000000u, 0x3f800000u, 0xbf800000u,
                                         0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc01234u};
  uint64_t seed = 1000;
  for (const Shape& shape : {Shape{7, 9, 5}, Shape{3, 5000}, Shape{1}}) {
    Tensor x = f32_bit_patterns(shape, ++seed);
    for (int64_t i = 0; i < x.numel(); ++i) {
      const auto pick = std::bit_cast<uint32_t>(x.data_as<float>()[i]) % palette.size();
      if (i % 3 != 0) x.data_as<float>()[i] = std::bit_cast<float>(palette[pick]);
    }
    Tensor small = random_tensor(DType::I32, shape, ++seed, -3.0, 3.0);
    for (int64_t axis = 0; axis < shape.rank(); ++axis) {
      const std::string what = shape.str() + " axis " + std::to_string(axis);
      for (OpKind op : {OpKind::ArgMax, OpKind::ArgMin}) {
        for (int64_t last : {0, 1}) {
          const Attributes attrs = {
              {"axis", axis}, {"keepdims", int64_t{1} - last}, {"select_last_index", last}};
          check_against_cpu(op, single_op(op, DType::F32, {shape}, attrs), {x},
                            what + " select_last " + std::to_string(last));
          check_against_cpu(op, single_op(op, DType::I32, {shape}, attrs), {small},
                            what + " i32 select_last " + std::to_string(last));
        }
      }
      check_against_cpu(OpKind::Hardmax,
                        single_op(OpKind::Hardmax, DType::F32, {shape}, {{"axis", axis}}), {x},
                        what);
      check_against_cpu(OpKind::Hardmax,
                        single_op(OpKind::Hardmax, DType::F64, {shape}, {{"axis", axis}}),
                        {random_tensor(DType::F64, shape, ++seed, -3.0, 3.0)}, what + " f64");
    }
  }
}

BOOST_AUTO_TEST_CASE(cumsum_matches_the_cpu, *boost::unit_test::precondition(device_available)) {
  uint64_t seed = 1100;
  for (DType dtype : {DType::F32, DType::F64, DType::I32, DType::I64}) {
    const double limit = dtype == DType::I32 ? 2147483648.0 : dtype == DType::I64 ? 9.2e18 : 1e4;
    for (const Shape& shape : {Shape{4, 6, 5}, Shape{2, 10000}, Shape{10000, 3}}) {
      const Tensor x = random_tensor(dtype, shape, ++seed, -limit, limit);
      for (int64_t axis = 0; axis < shape.rank(); ++axis) {
        for (int64_t exclusive : {0, 1}) {
          for (int64_t reverse : {0, 1}) {
            check_against_cpu(
                OpKind::CumSum,
                single_op(OpKind::CumSum, dtype, {shape},
                          {{"axis", axis}, {"exclusive", exclusive}, {"reverse", reverse}}),
                {x},
                std::string(dtype_name(dtype)) + " " + shape.str() + " axis " +
                    std::to_string(axis) + " exclusive " + std::to_string(exclusive) + " reverse " +
                    std::to_string(reverse));
          }
        }
      }
    }
  }
}

// The same bits on every run whatever the poison of the arena and its workspace.
BOOST_AUTO_TEST_CASE(runs_repeat_bit_identically,
                     *boost::unit_test::precondition(device_available)) {
  const Shape shape{3, 3 * 4096 + 5};
  const Graph g = single_op(OpKind::ReduceSum, DType::F32, {shape}, reduce_attrs({1}, 0));
  const std::vector<Tensor> inputs = {random_tensor(DType::F32, shape, 800, -1.0, 1.0)};
  const Tensor first = run_on(gpu(), g, inputs, std::byte{0xff})[0];
  for (std::byte poison : {std::byte{0x00}, std::byte{0x7f}, std::byte{0xa5}}) {
    BOOST_TEST(run_on(gpu(), g, inputs, poison)[0].bit_equal(first));
  }
}

}  // namespace
}  // namespace volta
