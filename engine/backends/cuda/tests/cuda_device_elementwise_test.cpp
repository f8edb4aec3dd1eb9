// The CUDA backend's elementwise, activation and movement kernels on a device, against the CPU
// backend, as each op's claim says (cuda_op_claims()): activations with non-default attributes
// (Gelu's tanh form, alphas, Clip's bounds), variadic Min / Max and PRelu's slope broadcast, Cast
// between every pair it takes, Where for every dtype and broadcast, the logical ops for their
// dtypes, and the movement ops
// (Transpose, Slice, Expand, Concat, Split, Gather, the reshape family) for every element size;
// errors (a NaN Clip bound, an out-of-range Gather index) in the CPU's words. The plain f32
// unary and binary ops are cuda_device_test's.
//
// Without a usable device every case is skipped and the binary prints "SKIPPED: <reason>",
// which CTest reports as skipped (SKIP_REGULAR_EXPRESSION): never a pass without a device.

#define BOOST_TEST_MODULE cuda_device_elementwise_test
#include <algorithm>
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
#include <vector>

#include "device_test_support.h"
#include "volta/backends/cuda.h"
#include "volta/error.h"
#include "volta/ir/random.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta {
namespace {

using cuda_test::DeviceOrSkip;
BOOST_TEST_GLOBAL_FIXTURE(DeviceOrSkip);
using cuda_test::check_against_cpu;
using cuda_test::cpu;
using cuda_test::device_available;
using cuda_test::error_of;
using cuda_test::gpu;
using cuda_test::op_graph;

// ---- Values ----

float from_bits(uint32_t bits) { return std::bit_cast<float>(bits); }

// Every class of f32 (zeros, subnormals, extremes, infinities, NaNs with payloads and signs),
// the branch points of the activations, then counter-based random bit patterns, uniform values
// in [-30, 30) and a sweep of every 4099th bit pattern.
std::vector<float> f32_values() {
  std::vector<float> out;
  for (uint32_t bits :
       {0x00000000u, 0x80000000u, 0x00000001u, 0x80000001u, 0x007fffffu, 0x807fffffu, 0x00800000u,
        0x80800000u, 0x7f7fffffu, 0xff7fffffu, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u,
        0x7fc01234u, 0xffc04321u, 0x7f800001u, 0xff812345u, 0x4b000000u, 0xcb000000u}) {
    out.push_back(from_bits(bits));
  }
  for (float v : {0.5f,  1.0f,  1.5f,  2.5f,  3.0f,  4.0f,   6.0f,  0.625f, 1.75f, 1.125f, 12.0f,
                  14.5f, 20.0f, 40.0f, 80.0f, 88.7f, 100.0f, 1e-8f, 1e-30f, 1e30f, 0.6f,   0.3f}) {
    out.push_back(v);
    out.push_back(-v);
    out.push_back(std::nextafter(v, 0.0f));
    out.push_back(-std::nextafter(v, 100.0f));
  }
  for (uint64_t i = 0; i < 50003; ++i) {
    out.push_back(from_bits(static_cast<uint32_t>(counter_random_u64(7, 0, i))));
  }
  const Tensor uniform = random_tensor(DType::F32, Shape{50003}, 8, -30.0, 30.0);
  const auto* u = static_cast<const float*>(uniform.data());
  out.insert(out.end(), u, u + uniform.numel());
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 4099) {
    out.push_back(from_bits(static_cast<uint32_t>(bits)));
  }
  return out;
}

Tensor f32_tensor(const std::vector<float>& values) {
  Tensor t(DType::F32, Shape{static_cast<int64_t>(values.size())});
  std::memcpy(t.data(), values.data(), values.size() * sizeof(float));
  return t;
}

// Random contents of any dtype, bit patterns for floats (every class), raw bytes for bool
// (any nonzero byte reads as true).
Tensor random_of(DType dtype, const Shape& shape, uint64_t seed) {
  Tensor t(dtype, shape);
  auto* bytes = static_cast<std::byte*>(t.data());
  for (size_t i = 0; i < t.nbytes(); ++i) {
    bytes[i] = static_cast<std::byte>(counter_random_u64(seed, 1, i));
  }
  return t;
}

// ---- Activations with attributes, Clip ----

BOOST_AUTO_TEST_CASE(activations_with_attributes_match_the_cpu,
                     *boost::unit_test::precondition(device_available)) {
  const std::vector<float> values = f32_values();
  const Tensor x = f32_tensor(values);
  const TypeInfo type{DType::F32, x.shape()};
  const std::vector<std::pair<OpKind, Attributes>> cases = {
      {OpKind::Gelu, {{"approximate", std::string("tanh")}}},
      {OpKind::Gelu, {{"approximate", std::string("none")}}},
      {OpKind::LeakyRelu, {{"alpha", 0.1}}},
      {OpKind::Elu, {{"alpha", 0.7}}},
      {OpKind::Selu, {{"alpha", 1.5}, {"gamma", 1.1}}},
      {OpKind::Celu, {{"alpha", 0.3}}},
      {OpKind::HardSigmoid, {{"alpha", 0.3}, {"beta", 0.4}}},
      {OpKind::ThresholdedRelu, {{"alpha", 0.5}}},
      {OpKind::Shrink, {{"bias", 0.2}, {"lambd", 0.6}}},
      {OpKind::Clip, {{"min", -1.5}, {"max", 2.25}}},
      {OpKind::Clip, {{"min", 0.1}, {"max", -0.1}}},
  };
  for (const auto& [op, attrs] : cases) {
    check_against_cpu(op_graph(op, {type}, attrs), {x},
                      std::to_string(values.size()) + " values, attrs of case " +
                          std::to_string(&attrs - &cases.front().second));
  }
}

BOOST_AUTO_TEST_CASE(a_nan_clip_bound_fails_like_the_cpu,
                     *boost::unit_test::precondition(device_available)) {
  const Graph g = op_graph(OpKind::Clip, {TypeInfo{DType::F32, Shape{3}}},
                           {{"min", std::numeric_limits<double>::quiet_NaN()}, {"max", 1.0}});
  const std::vector<Tensor> in = {f32_tensor({1, 2, 3})};
  const std::string want = error_of(cpu(), g, in);
  BOOST_TEST(!want.empty());
  BOOST_TEST(error_of(gpu(), g, in) == want);
}

// ---- Min, Max, PRelu ----

BOOST_AUTO_TEST_CASE(min_and_max_fold_broadcast_inputs_like_the_cpu,
                     *boost::unit_test::precondition(device_available)) {
  const std::vector<std::vector<Shape>> cases = {{{7}},
                                                 {{4099}, {4099}},
                                                 {{3, 1, 5}, {4, 1}, {5}},
                                                 {{}, {2, 3}, {3}, {1, 1}},
                                                 {{2, 0, 3}, {3}},
                                                 {{300, 1}, {1, 300}, {300, 300}}};
  uint64_t seed = 100;
  for (OpKind op : {OpKind::Min, OpKind::Max}) {
    for (const std::vector<Shape>& shapes : cases) {
      std::vector<TypeInfo> types;
      std::vector<Tensor> inputs;
      std::string what;
      for (const Shape& s : shapes) {
        types.push_back({DType::F32, s});
        inputs.push_back(random_of(DType::F32, s, ++seed));
        what += s.str();
      }
      check_against_cpu(op_graph(op, types), inputs, what);
    }
  }
}

BOOST_AUTO_TEST_CASE(prelu_broadcasts_its_slope_like_the_cpu,
                     *boost::unit_test::precondition(device_available)) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{5000}, {5000}}, {{2, 3, 4}, {3, 1}}, {{2, 3, 4}, {}}, {{7, 9}, {9}}, {{0, 4}, {4}}};
  uint64_t seed = 200;
  for (const auto& [xs, ss] : cases) {
    check_against_cpu(op_graph(OpKind::PRelu, {{DType::F32, xs}, {DType::F32, ss}}),
                      {random_of(DType::F32, xs, ++seed), random_of(DType::F32, ss, ++seed)},
                      xs.str() + " slope " + ss.str());
  }
}

// ---- Cast, Where ----

constexpr DType kDTypes[] = {DType::F32, DType::F64, DType::I64, DType::I32, DType::Bool};

// Values of `dtype` that exercise conversions: every f32 class (as f32, or widened to f64 with
// f64-only extremes and subnormals added), integer extremes and random bits, bool bytes
// 0, 1, 2 and 255.
Tensor cast_source(DType dtype) {
  if (dtype == DType::F32) return f32_tensor(f32_values());
  if (dtype == DType::F64) {
    std::vector<double> v;
    for (float f : f32_values()) v.push_back(f);
    for (uint64_t bits : {0x0000000000000001ull, 0x000fffffffffffffull, 0x7fefffffffffffffull,
                          0x7ff0000000000001ull, 0xfff8000000001234ull, 0x47efffffe0000000ull,
                          0x47efffffffffffffull, 0x36a0000000000000ull, 0x3690000000000000ull}) {
      v.push_back(std::bit_cast<double>(bits));
    }
    for (uint64_t i = 0; i < 50003; ++i)
      v.push_back(std::bit_cast<double>(counter_random_u64(9, 0, i)));
    Tensor t(DType::F64, Shape{static_cast<int64_t>(v.size())});
    std::memcpy(t.data(), v.data(), v.size() * sizeof(double));
    return t;
  }
  Tensor t = random_of(dtype, Shape{100003}, 10 + static_cast<uint64_t>(dtype));
  if (dtype == DType::Bool) {
    auto* b = static_cast<uint8_t*>(t.data());
    b[0] = 0;
    b[1] = 1;
    b[2] = 2;
    b[3] = 255;
  }
  return t;
}

BOOST_AUTO_TEST_CASE(cast_matches_the_cpu_for_every_pair_it_takes,
                     *boost::unit_test::precondition(device_available)) {
  for (DType from : kDTypes) {
    const Tensor x = cast_source(from);
    for (DType to : kDTypes) {
      if (is_floating(from) && is_integer(to)) continue;  // checked: the next case
      check_against_cpu(
          op_graph(OpKind::Cast, {{from, x.shape()}}, {{"to", std::string(dtype_name(to))}}), {x},
          std::string(dtype_name(from)) + " to " + std::string(dtype_name(to)));
    }
  }
}

// Float to integer: truncation of values that fit (up to the bounds, fractions either side of
// them), and the CPU's error naming the first value that does not (NaN, infinity, out of range).
BOOST_AUTO_TEST_CASE(float_to_integer_casts_truncate_and_fail_like_the_cpu,
                     *boost::unit_test::precondition(device_available)) {
  for (DType from : {DType::F32, DType::F64}) {
    for (DType to : {DType::I32, DType::I64}) {
      // The largest magnitude of `from` whose truncation fits `to`.
      const double bound = to == DType::I32     ? 2147483520.0
                           : from == DType::F32 ? 9223371487098961920.0
                                                : 9223372036854774784.0;
      Tensor x = random_tensor(from, Shape{100003}, 20, -0.9 * bound, 0.9 * bound);
      const std::vector<double> edges = {0.0,  -0.0,  0.5,    -0.5,   0.9999, -0.9999, 1.5,
                                         -2.5, 1e-45, -1e-45, 123.75, -bound, bound};
      for (size_t i = 0; i < edges.size(); ++i) x.set_double(static_cast<int64_t>(i), edges[i]);
      if (from == DType::F64 && to == DType::I32) {
        x.set_double(20, 2147483647.99);
        x.set_double(21, -2147483648.99);
      }
      const Graph g =
          op_graph(OpKind::Cast, {{from, x.shape()}}, {{"to", std::string(dtype_name(to))}});
      const std::string what = std::string(dtype_name(from)) + " to " + std::string(dtype_name(to));
      check_against_cpu(g, {x}, what);
      for (double bad : {std::numeric_limits<double>::quiet_NaN(),
                         -std::numeric_limits<double>::infinity(), 2.5 * bound, -4.0 * bound}) {
        Tensor y = x;
        y.set_double(70001, bad);
        y.set_double(90001, std::numeric_limits<double>::quiet_NaN());
        const std::string want = error_of(cpu(), g, {y});
        BOOST_TEST(want.find("at element 70001") != std::string::npos, want);
        BOOST_TEST(error_of(gpu(), g, {y}) == want, what);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(where_matches_the_cpu_for_every_dtype_and_broadcast,
                     *boost::unit_test::precondition(device_available)) {
  const std::vector<std::array<Shape, 3>> cases = {{Shape{4099}, Shape{4099}, Shape{4099}},
                                                   {Shape{2, 1}, Shape{3}, Shape{2, 3}},
                                                   {Shape{}, Shape{5, 6}, Shape{6}},
                                                   {Shape{3, 1, 4}, Shape{1, 5, 1}, Shape{}},
                                                   {Shape{2, 0}, Shape{1}, Shape{2, 1}}};
  uint64_t seed = 300;
  for (DType dtype : kDTypes) {
    for (const auto& [c, x, y] : cases) {
      check_against_cpu(op_graph(OpKind::Where, {{DType::Bool, c}, {dtype, x}, {dtype, y}}),
                        {random_of(DType::Bool, c, ++seed), random_of(dtype, x, ++seed),
                         random_of(dtype, y, ++seed)},
                        std::string(dtype_name(dtype)) + " " + c.str() + x.str() + y.str());
    }
  }
}

// ---- f64 and integer arithmetic ----

// f64 specials, values at the rounding ops' edges, random bit patterns; or integers with
// their extremes, -1 and 0, and random bits.
Tensor typed_values(DType dtype, uint64_t seed, bool nonzero = false) {
  if (dtype == DType::F64) {
    Tensor base = cast_source(DType::F64);
    std::vector<double> v(static_cast<size_t>(base.numel()));
    std::memcpy(v.data(), base.data(), v.size() * sizeof(double));
    for (double e : {4503599627370496.0, 4503599627370495.5, 2251799813685248.5, 2.5, -2.5, 0.5,
                     -0.5, 1.5, -0.49999999999999994, 9007199254740993.0}) {
      v.push_back(e);
      v.push_back(-e);
    }
    Tensor t(DType::F64, Shape{static_cast<int64_t>(v.size())});
    std::memcpy(t.data(), v.data(), v.size() * sizeof(double));
    return t;
  }
  Tensor t = random_of(dtype, Shape{100003}, seed);
  const bool i32 = dtype == DType::I32;
  const std::vector<double> edges = {i32 ? -2147483648.0 : -9223372036854775808.0,
                                     i32 ? 2147483647.0 : 9.2233720368547e18,
                                     -1.0,
                                     1.0,
                                     0.0,
                                     7.0,
                                     -7.0};
  for (size_t i = 0; i < edges.size(); ++i) t.set_double(static_cast<int64_t>(i), edges[i]);
  if (nonzero) {
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (t.get_double(i) == 0.0) t.set_double(i, 3.0);
    }
  }
  return t;
}

// Random contents with no zero element (integer divisors).
Tensor nonzero_random(DType dtype, const Shape& shape, uint64_t seed) {
  Tensor t = random_of(dtype, shape, seed);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (t.get_double(i) == 0.0) t.set_double(i, 3.0);
  }
  return t;
}

BOOST_AUTO_TEST_CASE(f64_and_integer_ops_match_the_cpu,
                     *boost::unit_test::precondition(device_available)) {
  uint64_t seed = 700;
  for (DType dtype : {DType::F64, DType::I64, DType::I32}) {
    const std::string name(dtype_name(dtype));
    const Tensor x = typed_values(dtype, ++seed);
    for (OpKind op : {OpKind::Neg, OpKind::Abs, OpKind::Sign, OpKind::Relu, OpKind::Sqrt,
                      OpKind::Reciprocal, OpKind::Floor, OpKind::Ceil, OpKind::Round}) {
      if (dtype != DType::F64 &&
          !(op == OpKind::Neg || op == OpKind::Abs || op == OpKind::Sign || op == OpKind::Relu)) {
        continue;
      }
      check_against_cpu(op_graph(op, {{dtype, x.shape()}}), {x}, name + " values");
    }
    for (const auto& [lo, hi] : std::vector<std::pair<double, double>>{
             {-1.5, 2.25}, {-1e30, 1e30}, {3.5, 3.2}, {-2147483648.5, 9.3e18}}) {
      check_against_cpu(op_graph(OpKind::Clip, {{dtype, x.shape()}}, {{"min", lo}, {"max", hi}}),
                        {x},
                        name + " Clip to [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    // Same-shape pairs (the values against the other values reversed), then broadcasts.
    const Tensor y = typed_values(dtype, ++seed, /*nonzero=*/true);
    const Shape pair_shape{std::min(x.numel(), y.numel())};
    Tensor a(dtype, pair_shape);
    Tensor b(dtype, pair_shape);
    const size_t size = dtype_size(dtype);
    std::memcpy(a.data(), x.data(), a.nbytes());
    for (int64_t i = 0; i < pair_shape[0]; ++i) {
      std::memcpy(
          static_cast<std::byte*>(b.data()) + static_cast<size_t>(i) * size,
          static_cast<const std::byte*>(y.data()) + static_cast<size_t>(y.numel() - 1 - i) * size,
          size);
    }
    for (OpKind op : {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Min, OpKind::Max,
                      OpKind::Mod}) {
      check_against_cpu(op_graph(op, {{dtype, pair_shape}, {dtype, pair_shape}}), {a, b},
                        name + " pairs");
      if (op == OpKind::Mod) {
        check_against_cpu(
            op_graph(op, {{dtype, pair_shape}, {dtype, pair_shape}}, {{"fmod", int64_t{1}}}),
            {a, b}, name + " pairs, fmod=1");
      }
      for (const auto& [sa, sb] : std::vector<std::pair<Shape, Shape>>{
               {{3, 1, 5}, {4, 1}}, {{}, {5, 6}}, {{300, 1}, {1, 300}}}) {
        check_against_cpu(op_graph(op, {{dtype, sa}, {dtype, sb}}),
                          {random_of(dtype, sa, ++seed), nonzero_random(dtype, sb, ++seed)},
                          name + " " + sa.str() + sb.str());
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(an_integer_division_by_zero_fails_like_the_cpu,
                     *boost::unit_test::precondition(device_available)) {
  for (const auto& [dtype, op] :
       {std::pair{DType::I32, OpKind::Div}, std::pair{DType::I64, OpKind::Div},
        std::pair{DType::I32, OpKind::Mod}, std::pair{DType::I64, OpKind::Mod}}) {
    const Graph g = op_graph(op, {{dtype, Shape{4, 5}}, {dtype, Shape{5}}});
    Tensor b = nonzero_random(dtype, Shape{5}, 800);
    b.set_double(3, 0.0);
    b.set_double(4, 0.0);
    const std::vector<Tensor> in = {random_of(dtype, Shape{4, 5}, 801), b};
    const std::string want = error_of(cpu(), g, in);
    BOOST_TEST(want.find("divisor B is 0 at output element 3 ") != std::string::npos, want);
    BOOST_TEST(error_of(gpu(), g, in) == want);
  }
}

// ---- Logical ----

BOOST_AUTO_TEST_CASE(logical_ops_match_the_cpu_for_their_dtypes_and_broadcasts,
                     *boost::unit_test::precondition(device_available)) {
  uint64_t seed = 350;
  const std::vector<std::pair<Shape, Shape>> shapes = {{Shape{4099}, Shape{4099}},
                                                       {Shape{3, 1, 5}, Shape{4, 1}},
                                                       {Shape{}, Shape{2, 3}},
                                                       {Shape{2, 0}, Shape{1}}};
  for (DType dtype : kDTypes) {
    for (OpKind op : {OpKind::Equal, OpKind::Less, OpKind::Greater, OpKind::LessOrEqual,
                      OpKind::GreaterOrEqual, OpKind::And, OpKind::Or, OpKind::Xor}) {
      const bool bool_op = op == OpKind::And || op == OpKind::Or || op == OpKind::Xor;
      if (bool_op != (dtype == DType::Bool) && op != OpKind::Equal) continue;
      for (const auto& [a, b] : shapes) {
        check_against_cpu(op_graph(op, {{dtype, a}, {dtype, b}}),
                          {random_of(dtype, a, ++seed), random_of(dtype, b, ++seed)},
                          std::string(dtype_name(dtype)) + " " + a.str() + b.str());
      }
    }
  }
  // Every pair of special f32 values, equal ones included.
  const std::vector<float> values = f32_values();
  std::vector<float> a;
  std::vector<float> b;
  for (size_t i = 0; i < 108; ++i) {
    for (size_t j = 0; j < 108; ++j) {
      a.push_back(values[i]);
      b.push_back(values[j]);
    }
  }
  for (OpKind op : {OpKind::Equal, OpKind::Less, OpKind::Greater, OpKind::LessOrEqual,
                    OpKind::GreaterOrEqual}) {
    const TypeInfo type{DType::F32, Shape{static_cast<int64_t>(a.size())}};
    check_against_cpu(op_graph(op, {type, type}), {f32_tensor(a), f32_tensor(b)},
                      "pairs of special values");
  }
  const Tensor bytes = cast_source(DType::Bool);
  check_against_cpu(op_graph(OpKind::Not, {{DType::Bool, bytes.shape()}}), {bytes}, "bool bytes");
  const Tensor x32 = f32_tensor(values);
  const Tensor x64 = cast_source(DType::F64);
  for (const Tensor& x : {x32, x64}) {
    check_against_cpu(op_graph(OpKind::IsNaN, {{x.dtype(), x.shape()}}), {x}, "special values");
    for (int64_t positive : {0, 1}) {
      for (int64_t negative : {0, 1}) {
        check_against_cpu(
            op_graph(OpKind::IsInf, {{x.dtype(), x.shape()}},
                     {{"detect_positive", positive}, {"detect_negative", negative}}),
            {x},
            "special values, detecting " + std::to_string(positive) + std::to_string(negative));
      }
    }
  }
}

// ---- Movement ----

BOOST_AUTO_TEST_CASE(strided_copies_match_the_cpu_for_every_element_size,
                     *boost::unit_test::precondition(device_available)) {
  struct Case {
    OpKind op;
    Shape in;
    Attributes attrs;
  };
  const std::vector<Case> cases = {
      {OpKind::Transpose, {37, 41}, {}},
      {OpKind::Transpose, {2, 3, 4, 5}, {{"perm", std::vector<int64_t>{3, 1, 0, 2}}}},
      {OpKind::Transpose, {2, 3, 1, 4, 2, 3}, {{"perm", std::vector<int64_t>{5, 0, 4, 1, 3, 2}}}},
      {OpKind::Transpose, {2, 32, 4, 16}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}}},
      {OpKind::Transpose, {0, 3}, {}},
      {OpKind::Slice,
       {10, 9, 8},
       {{"starts", std::vector<int64_t>{1, -1, 0}},
        {"ends", std::vector<int64_t>{9, -100, 8}},
        {"axes", std::vector<int64_t>{0, 1, 2}},
        {"steps", std::vector<int64_t>{2, -3, 1}}}},
      {OpKind::Slice,
       {5000},
       {{"starts", std::vector<int64_t>{7}}, {"ends", std::vector<int64_t>{4990}}}},
  };
  uint64_t seed = 400;
  for (DType dtype : kDTypes) {
    for (const Case& c : cases) {
      check_against_cpu(
          op_graph(c.op, {{dtype, c.in}}, c.attrs), {random_of(dtype, c.in, ++seed)},
          std::string(dtype_name(dtype)) + " " + std::string(op_name(c.op)) + " of " + c.in.str());
    }
    for (const auto& [in, out] : std::vector<std::pair<Shape, Shape>>{
             {{3, 1}, {2, 3, 4}}, {{}, {5, 7}}, {{1, 4}, {4099, 4}}, {{2, 1, 3}, {2, 5, 3}}}) {
      const Graph g = op_graph(OpKind::Expand, {{dtype, in}}, {{"shape", out.dims()}});
      check_against_cpu(
          g, {random_of(dtype, in, ++seed)},
          std::string(dtype_name(dtype)) + " Expand " + in.str() + " to " + out.str());
    }
  }
}

BOOST_AUTO_TEST_CASE(concat_split_and_reshapes_match_the_cpu,
                     *boost::unit_test::precondition(device_available)) {
  uint64_t seed = 500;
  for (DType dtype : kDTypes) {
    const std::string name(dtype_name(dtype));
    for (int64_t axis : {0, 1, -1}) {
      const std::vector<Shape> shapes =
          axis == 0   ? std::vector<Shape>{{2, 3, 4}, {0, 3, 4}, {5, 3, 4}}
          : axis == 1 ? std::vector<Shape>{{2, 1, 4}, {2, 7, 4}}
                      : std::vector<Shape>{{2, 3, 4}, {2, 3, 1}, {2, 3, 0}, {2, 3, 9}};
      std::vector<TypeInfo> types;
      std::vector<Tensor> inputs;
      for (const Shape& s : shapes) {
        types.push_back({dtype, s});
        inputs.push_back(random_of(dtype, s, ++seed));
      }
      check_against_cpu(op_graph(OpKind::Concat, types, {{"axis", axis}}), inputs,
                        name + " Concat axis " + std::to_string(axis));
    }
    check_against_cpu(
        op_graph(OpKind::Split, {{dtype, Shape{4, 10, 3}}},
                 {{"axis", int64_t{1}}, {"split", std::vector<int64_t>{2, 0, 5, 3}}}, 4),
        {random_of(dtype, Shape{4, 10, 3}, ++seed)}, name + " Split");
    // A reshape chain whose last step is a graph output: copied or aliased, the same bytes.
    Graph g;
    const ValueId x = g.add_input("x", dtype, Shape{2, 3, 4});
    const ValueId f = g.add(OpKind::Flatten, {x}, {{"axis", int64_t{1}}}, "op");
    const ValueId u =
        g.add(OpKind::Unsqueeze, {f}, {{"axes", std::vector<int64_t>{0}}}, "unsqueeze");
    const ValueId q = g.add(OpKind::Squeeze, {u}, {{"axes", std::vector<int64_t>{0}}}, "squeeze");
    const ValueId r =
        g.add(OpKind::Reshape, {q}, {{"shape", std::vector<int64_t>{4, -1}}}, "reshape");
    g.set_outputs({g.add(OpKind::Identity, {r}, {}, "identity"), f});
    check_against_cpu(g, {random_of(dtype, Shape{2, 3, 4}, ++seed)}, name + " reshape chain");
  }
}

BOOST_AUTO_TEST_CASE(gather_matches_the_cpu_and_fails_on_the_same_index,
                     *boost::unit_test::precondition(device_available)) {
  uint64_t seed = 600;
  for (DType dtype : kDTypes) {
    for (DType index_type : {DType::I64, DType::I32}) {
      for (int64_t axis : {0, 1, -1}) {
        const Shape data{6, 5, 4};
        const int64_t dim = data[static_cast<int>(axis < 0 ? axis + 3 : axis)];
        Tensor idx(index_type, Shape{2, 3});
        for (int64_t i = 0; i < 6; ++i) idx.set_double(i, static_cast<double>(i % (2 * dim) - dim));
        const Graph g =
            op_graph(OpKind::Gather, {{dtype, data}, {index_type, idx.shape()}}, {{"axis", axis}});
        const Tensor x = random_of(dtype, data, ++seed);
        check_against_cpu(g, {x, idx},
                          std::string(dtype_name(dtype)) + " Gather axis " + std::to_string(axis));
        Tensor bad = idx;
        bad.set_double(4, static_cast<double>(dim));
        bad.set_double(5, static_cast<double>(-dim - 1));
        const std::string want = error_of(cpu(), g, {x, bad});
        BOOST_TEST(want.find("index " + std::to_string(dim) + " at indices position [1,1]") !=
                       std::string::npos,
                   want);
        BOOST_TEST(error_of(gpu(), g, {x, bad}) == want);
      }
    }
  }
  // The embedding lookup: a [vocab, d] table, [batch, seq] i64 tokens.
  const Tensor table = random_of(DType::F32, Shape{256, 64}, ++seed);
  const Tensor tokens = random_tensor(DType::I64, Shape{16, 32}, ++seed, 0.0, 256.0);
  check_against_cpu(
      op_graph(OpKind::Gather, {{DType::F32, table.shape()}, {DType::I64, tokens.shape()}}),
      {table, tokens}, "embedding lookup");
}

}  // namespace
}  // namespace volta
