#define BOOST_TEST_MODULE cpu_simd
// The CPU kernels' row loops run on the best ISA the CPU has (kernels/simd.h); the ISA must
// change the speed and never the bits. Each case runs at every level this CPU supports and
// compares the bytes with the baseline build's loops, on shapes that leave vector tails and
// span several reduction leaves, with NaN, infinities, signed zeros and subnormals mixed in.

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "../backends/cpu/kernels/reduce_tree.h"
#include "../backends/cpu/kernels/simd.h"
#include "test_util.h"

namespace volta {
namespace {

using cpu::ScopedSimdLevel;
using cpu::SimdLevel;

// The levels this CPU can run, baseline first.
std::vector<SimdLevel> supported_levels() {
  std::vector<SimdLevel> levels = {SimdLevel::Baseline};
  if (cpu::detected_simd_level() >= SimdLevel::Avx2) levels.push_back(SimdLevel::Avx2);
  if (cpu::detected_simd_level() >= SimdLevel::Avx512) levels.push_back(SimdLevel::Avx512);
  return levels;
}

// Uniform values in [-4, 4) with every 97th element replaced by a special value; NaN among
// them only `with_nan` (Max and Min take a faster path on rows without NaN).
Tensor input(DType dtype, const Shape& shape, uint64_t seed, bool with_nan) {
  Tensor t = test::uniform(dtype, shape, seed, -4.0, 4.0);
  const double specials[] = {std::numeric_limits<double>::quiet_NaN(),
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(),
                             -0.0,
                             0.0,
                             1e-40,
                             -1e-310,
                             88.9,
                             -104.5,
                             30.0};
  const size_t first = with_nan ? 0 : 1;
  for (int64_t i = static_cast<int64_t>(seed % 7); i < t.numel(); i += 97) {
    t.set_double(i, specials[first + static_cast<size_t>(i / 97) % (std::size(specials) - first)]);
  }
  return t;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && a.nbytes() == b.nbytes() &&
         std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

struct Case {
  std::string name;
  OpKind op;
  std::vector<Shape> shapes;
  Attributes attrs;
};

std::vector<Case> cases() {
  const Shape rows{37, 1029};      // rows leave a tail of every vector width
  const Shape long_rows{3, 9000};  // three reduction leaves per row
  std::vector<Case> all = {
      {"add", OpKind::Add, {rows, rows}, {}},
      {"add_bias", OpKind::Add, {rows, Shape{1029}}, {}},
      {"mul_scalar", OpKind::Mul, {rows, Shape{}}, {}},
      {"div", OpKind::Div, {rows, rows}, {}},
      {"max3", OpKind::Max, {rows, rows, Shape{1029}}, {}},
      {"relu", OpKind::Relu, {rows}, {}},
      {"exp", OpKind::Exp, {rows}, {}},
      {"log", OpKind::Log, {rows}, {}},
      {"tanh", OpKind::Tanh, {rows}, {}},
      {"sigmoid", OpKind::Sigmoid, {rows}, {}},
      {"erf", OpKind::Erf, {rows}, {}},
      {"gelu", OpKind::Gelu, {rows}, {}},
      {"gelu_tanh", OpKind::Gelu, {rows}, {{"approximate", std::string("tanh")}}},
      {"softmax_last", OpKind::Softmax, {rows}, {{"axis", int64_t{-1}}}},
      {"softmax_long", OpKind::Softmax, {long_rows}, {{"axis", int64_t{-1}}}},
      {"softmax_axis0", OpKind::Softmax, {rows}, {{"axis", int64_t{0}}}},
      {"log_softmax", OpKind::LogSoftmax, {rows}, {{"axis", int64_t{-1}}}},
      {"layernorm",
       OpKind::LayerNormalization,
       {rows, Shape{1029}, Shape{1029}},
       {{"axis", int64_t{-1}}, {"epsilon", 1e-5}}},
      {"layernorm_long",
       OpKind::LayerNormalization,
       {long_rows, Shape{9000}},
       {{"axis", int64_t{-1}}, {"epsilon", 1e-5}}},
  };
  for (const OpKind op : {OpKind::ReduceSum, OpKind::ReduceMean, OpKind::ReduceMax,
                          OpKind::ReduceMin, OpKind::ReduceSumSquare}) {
    const std::string name(op_name(op));
    for (const int64_t axis : {0, 1}) {
      all.push_back({name + "_axis" + std::to_string(axis),
                     op,
                     {rows},
                     {{"axes", std::vector<int64_t>{axis}}, {"keepdims", int64_t{0}}}});
    }
    all.push_back({name + "_long",
                   op,
                   {long_rows},
                   {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{1}}}});
  }
  return all;
}

void check_levels_agree(DType dtype, int threads, bool with_nan) {
  for (const Case& c : cases()) {
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < c.shapes.size(); ++i) {
      inputs.push_back(input(dtype, c.shapes[i], i + 1, with_nan));
    }
    std::vector<Tensor> baseline;
    {
      const ScopedSimdLevel level(SimdLevel::Baseline);
      baseline = test::run_op(c.op, inputs, c.attrs, 1, threads);
    }
    for (const SimdLevel level : supported_levels()) {
      const ScopedSimdLevel scoped(level);
      const std::vector<Tensor> got = test::run_op(c.op, inputs, c.attrs, 1, threads);
      BOOST_TEST_CONTEXT(c.name << " " << dtype_name(dtype) << " threads " << threads
                                << (with_nan ? " with NaN" : "") << " at "
                                << cpu::simd_isa_name(level)) {
        BOOST_TEST(same_bytes(got[0], baseline[0]));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(f32_kernels_give_the_same_bits_at_every_simd_level) {
  for (const bool with_nan : {true, false}) {
    check_levels_agree(DType::F32, 1, with_nan);
    check_levels_agree(DType::F32, 2, with_nan);
  }
}

BOOST_AUTO_TEST_CASE(f64_kernels_give_the_same_bits_at_every_simd_level) {
  for (const bool with_nan : {true, false}) check_levels_agree(DType::F64, 2, with_nan);
}

// Where's rows on 4-byte elements widen the condition bytes into lane masks explicitly: every
// nonzero byte (not only 1) selects X, on every operand layout, at every level, with the
// bits of X or Y unchanged (NaN payloads, signed zeros).
BOOST_AUTO_TEST_CASE(where_selects_the_same_bits_at_every_simd_level) {
  const Shape rows{37, 1029};
  Tensor condition(DType::Bool, rows);
  auto* bytes = static_cast<uint8_t*>(condition.data());
  for (int64_t i = 0; i < condition.numel(); ++i) {
    bytes[i] = static_cast<uint8_t>((i * 7919) % 5 == 0 ? 0 : (i % 3 == 0 ? 1 : 128 + i % 127));
  }
  Tensor row_condition(DType::Bool, Shape{1029});
  std::memcpy(row_condition.data(), bytes, 1029);
  for (const DType dtype : {DType::F32, DType::I32}) {
    const Tensor x = input(dtype, rows, 3, true);
    const Tensor y = input(dtype, rows, 4, true);
    const Tensor y_row = input(dtype, Shape{1029}, 5, true);
    const Tensor scalar = input(dtype, Shape{}, 6, false);
    const std::vector<std::vector<Tensor>> layouts = {{condition, x, y},
                                                      {condition, scalar, y},
                                                      {condition, x, scalar},
                                                      {condition, x, y_row},
                                                      {row_condition, x, y}};
    for (size_t layout = 0; layout < layouts.size(); ++layout) {
      const std::vector<Tensor>& in = layouts[layout];
      std::vector<Tensor> baseline;
      {
        const ScopedSimdLevel level(SimdLevel::Baseline);
        baseline = test::run_op(OpKind::Where, in, {}, 1, 2);
      }
      const size_t width = dtype_size(dtype);
      const auto* got = static_cast<const std::byte*>(baseline[0].data());
      int wrong = 0;
      for (int64_t i = 0; i < baseline[0].numel(); ++i) {
        const int64_t column = i % 1029;
        const bool take_x =
            static_cast<const uint8_t*>(in[0].data())[in[0].numel() == 1029 ? column : i] != 0;
        const Tensor& from = take_x ? in[1] : in[2];
        const int64_t at = from.numel() == 1 ? 0 : (from.numel() == 1029 ? column : i);
        wrong += std::memcmp(got + i * width,
                             static_cast<const std::byte*>(from.data()) + at * width, width) != 0;
      }
      BOOST_TEST(wrong == 0, "layout " << layout << " " << dtype_name(dtype));
      for (const SimdLevel level : supported_levels()) {
        const ScopedSimdLevel scoped(level);
        BOOST_TEST(
            same_bytes(test::run_op(OpKind::Where, in, {}, 1, 2)[0], baseline[0]),
            "layout " << layout << " " << dtype_name(dtype) << " at " << cpu::simd_isa_name(level));
      }
    }
  }
}

// A leaf's lanes combine by the unrolled tree (combine_lanes) exactly as by the loop that defines
// it (combine_pairwise): on sums whose rounding depends on the grouping, and on signed zeros,
// where max keeps its first operand.
BOOST_AUTO_TEST_CASE(the_unrolled_lane_tree_is_the_pairwise_tree) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-30, 30);
  const auto plus = [](float a, float b) { return a + b; };
  const auto max = [](float a, float b) { return cpu::max_of_numbers(a, b); };
  int order_sensitive = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::array<float, cpu::kReductionLanes> lanes;
    for (float& v : lanes) v = std::ldexp(mantissa(rng), exponent(rng));
    if (trial % 5 == 0) lanes[static_cast<size_t>(trial % 8)] = trial % 2 == 0 ? 0.0f : -0.0f;
    std::array<float, cpu::kReductionLanes> copy = lanes;
    const float tree = cpu::combine_pairwise(copy.data(), cpu::kReductionLanes, plus);
    BOOST_REQUIRE(std::bit_cast<uint32_t>(cpu::combine_lanes(lanes, plus)) ==
                  std::bit_cast<uint32_t>(tree));
    float in_order = 0;
    for (float v : lanes) in_order += v;
    order_sensitive += in_order != tree;
    copy = lanes;
    BOOST_REQUIRE(std::bit_cast<uint32_t>(cpu::combine_lanes(lanes, max)) ==
                  std::bit_cast<uint32_t>(cpu::combine_pairwise(copy.data(), 8, max)));
  }
  BOOST_TEST(order_sensitive > 100);  // the data can tell two trees apart
  const std::array<float, cpu::kReductionLanes> zeros = {-0.0f, 0.0f,  0.0f,  -0.0f,
                                                         0.0f,  -0.0f, -0.0f, 0.0f};
  BOOST_TEST(std::signbit(cpu::combine_lanes(zeros, max)));  // the first lane's zero
}

// Without NaN, Max and Min take a plain compare-and-select (reduce_tree.h max_of_numbers). It
// must keep the first of equal operands as the NaN-propagating form does, so which zero
// survives a row of signed zeros is still fixed by the tree: the first element's.
BOOST_AUTO_TEST_CASE(max_and_min_of_signed_zeros_keep_the_first) {
  for (const OpKind op : {OpKind::ReduceMax, OpKind::ReduceMin}) {
    for (const double first : {-0.0, 0.0}) {
      Tensor x(DType::F32, Shape{2, 40});
      for (int64_t i = 0; i < x.numel(); ++i) x.set_double(i, i % 2 == 0 ? first : -first);
      const Tensor y =
          test::run_op(op, {x}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}})[0];
      for (int64_t r = 0; r < 2; ++r) {
        BOOST_TEST_CONTEXT(op_name(op) << " first " << first) {
          BOOST_TEST(y.get_double(r) == 0.0);
          BOOST_TEST(std::signbit(y.get_double(r)) == std::signbit(first));
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(scoped_level_is_clamped_to_the_cpu_and_restored) {
  const SimdLevel detected = cpu::detected_simd_level();
  {
    const ScopedSimdLevel baseline(SimdLevel::Baseline);
    BOOST_TEST(static_cast<int>(cpu::simd_level()) == static_cast<int>(SimdLevel::Baseline));
    {
      const ScopedSimdLevel highest(SimdLevel::Avx512);
      BOOST_TEST(static_cast<int>(cpu::simd_level()) == static_cast<int>(detected));
    }
    BOOST_TEST(static_cast<int>(cpu::simd_level()) == static_cast<int>(SimdLevel::Baseline));
  }
  BOOST_TEST(static_cast<int>(cpu::simd_level()) == static_cast<int>(detected));
}

// Variants name the ISA the loops run on, so results record the code that ran.
BOOST_AUTO_TEST_CASE(variants_name_the_detected_isa) {
  const std::unique_ptr<Backend> backend = make_backend("cpu");
  const std::string isa(cpu::simd_isa_name(cpu::detected_simd_level()));
  const auto variant_of = [&](OpKind op, const std::vector<std::optional<TypeInfo>>& types,
                              Attributes attrs) {
    const Graph g = test::single_op_graph(op, types, std::move(attrs));
    const KernelSelection s = backend->select_kernel(g, g.node(0));
    BOOST_REQUIRE(std::holds_alternative<KernelChoice>(s));
    return std::get<KernelChoice>(s).variant;
  };
  const TypeInfo matrix{DType::F32, Shape{4, 8}};
  BOOST_TEST(variant_of(OpKind::Add, {matrix, matrix}, {}) == "f32_add_" + isa);
  BOOST_TEST(variant_of(OpKind::Exp, {TypeInfo{DType::F64, Shape{4}}}, {}) == "f64_exp_libm");
  BOOST_TEST(variant_of(OpKind::Softmax, {matrix}, {{"axis", int64_t{-1}}}) ==
             "f32_softmax_rows_tree4096x8_" + isa);
}

}  // namespace
}  // namespace volta
