// The CUDA backend's libm-backed and f64 math kernels on a device: the f64 activations and PRelu
// in f64, i32 and i64, Exp and Log in f64, Pow and the trigonometric and hyperbolic functions,
// Softmax and LogSoftmax, LRN and ReduceLogSumExp. Each output is held to the op's claim for
// its dtype (cuda_op_claims()): the CPU backend's bits where the claim covers the dtype, else
// the CPU's outputs within the tolerance table's cuda:reference row (the kernels compute the
// CPU's formulas with CUDA's libm in place of glibc's, so they differ by the libraries' last
// bits; the NaN positions and infinities must agree). Every case also runs twice on the device,
// the arena poisoned differently, and must give the same bits.
//
// Without a usable device every case is skipped and the binary prints "SKIPPED: <reason>",
// which CTest reports as skipped (SKIP_REGULAR_EXPRESSION): never a pass without a device.

#define BOOST_TEST_MODULE cuda_device_math_test
#include <bit>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "device_test_support.h"
#include "volta/backends/cuda.h"
#include "volta/conformance/tolerance.h"
#include "volta/ir/op_schema.h"
#include "volta/ir/random.h"

namespace volta {
namespace {

using cuda_test::DeviceOrSkip;
BOOST_TEST_GLOBAL_FIXTURE(DeviceOrSkip);
using cuda_test::cpu;
using cuda_test::device_available;
using cuda_test::first_breach;
using cuda_test::gpu;
using cuda_test::op_graph;
using cuda_test::run_on;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The op's claim for inputs of `dtype`: NotClaimed where the claim leaves the dtype out.
CrossBackendExactness claim_for(OpKind op, DType dtype) {
  for (const CudaOpClaim& c : cuda_op_claims()) {
    if (c.op != op) continue;
    return c.tolerance_dtypes.contains(dtype) ? CrossBackendExactness::NotClaimed : c.exactness;
  }
  BOOST_FAIL("no CUDA claim for " << op_name(op));
  return CrossBackendExactness::Bitwise;
}

// Runs the one-op graph on the device twice (the same bits both times), then holds the outputs
// to the claim against the CPU backend's: its bits, or the tolerance table's row.
void check(const Graph& graph, const std::vector<Tensor>& inputs, const std::string& what) {
  const OpKind op = graph.node(0).op;
  const CrossBackendExactness claim = claim_for(op, inputs[0].dtype());
  const std::string name =
      std::string(op_name(op)) + " " + std::string(dtype_name(inputs[0].dtype())) + " on " + what;
  const std::vector<Tensor> got = run_on(gpu(), graph, inputs, std::byte{0xff});
  const std::vector<Tensor> again = run_on(gpu(), graph, inputs, std::byte{0x00});
  BOOST_REQUIRE_EQUAL(got.size(), again.size());
  for (size_t k = 0; k < got.size(); ++k) {
    const std::string drift = first_breach(CrossBackendExactness::Bitwise, again[k], got[k]);
    BOOST_CHECK_MESSAGE(drift.empty(), name << ": a second run differs at " << drift);
  }
  const std::vector<Tensor> want = run_on(cpu(), graph, inputs);
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  if (claim != CrossBackendExactness::NotClaimed) {
    for (size_t k = 0; k < got.size(); ++k) {
      const std::string breach = first_breach(claim, got[k], want[k]);
      BOOST_CHECK_MESSAGE(breach.empty(), name << " (" << cross_backend_exactness_name(claim)
                                               << "), output " << k << ": " << breach);
    }
    return;
  }
  for (size_t k = 0; k < got.size(); ++k) {
    const conformance::Tolerance tolerance = conformance::ToleranceTable::builtin().lookup(
        op_schema(op).family, want[k].dtype(), "cuda:reference");
    const conformance::Comparison c = conformance::compare(got[k], want[k], tolerance);
    BOOST_CHECK_MESSAGE(c.passed(), name << " (tolerance " << tolerance.str() << "), output " << k
                                         << ": " << c.detail);
  }
}

void check_unary(OpKind op, const Tensor& x, Attributes attrs, const std::string& what) {
  check(op_graph(op, {TypeInfo{x.dtype(), x.shape()}}, std::move(attrs)), {x}, what);
}

// ---- Values ----

// Every class of double (zeros, subnormals, extremes, infinities, NaNs with payloads), the
// activations' branch points and their neighbours, counter-based random bit patterns and
// uniform values in [-30, 30).
std::vector<double> f64_values() {
  std::vector<double> out;
  for (uint64_t bits : {0x0000000000000000ull, 0x8000000000000000ull, 0x0000000000000001ull,
                        0x800fffffffffffffull, 0x0010000000000000ull, 0x7fefffffffffffffull,
                        0xffefffffffffffffull, 0x7ff0000000000000ull, 0xfff0000000000000ull,
                        0x7ff8000000000000ull, 0xfff8000000000123ull, 0x7ff0000000000001ull}) {
    out.push_back(std::bit_cast<double>(bits));
  }
  for (double v : {0.5,  1.0,   1.5,   2.5,   3.0,  6.0,    0.625, 10.0, 20.0, 30.0,
                   40.0, 100.0, 700.0, 710.0, 1e-8, 1e-300, 1e300, 0.3,  0.6,  0.75}) {
    for (double s : {v, -v}) {
      out.push_back(s);
      out.push_back(std::nextafter(s, 0.0));
      out.push_back(std::nextafter(s, s * 2));
    }
  }
  for (uint64_t i = 0; i < 20011; ++i) {
    out.push_back(std::bit_cast<double>(counter_random_u64(31, 0, i)));
  }
  const Tensor uniform = random_tensor(DType::F64, Shape{20011}, 32, -30.0, 30.0);
  const auto* u = static_cast<const double*>(uniform.data());
  out.insert(out.end(), u, u + uniform.numel());
  return out;
}

// The same classes in f32 (f64 values rounded, with f32's own subnormals and extremes).
std::vector<float> f32_values() {
  std::vector<float> out;
  for (uint32_t bits : {0x00000001u, 0x807fffffu, 0x00800000u, 0x7f7fffffu, 0xff7fffffu,
                        0x7fc01234u, 0xff812345u}) {
    out.push_back(std::bit_cast<float>(bits));
  }
  for (double v : f64_values()) out.push_back(static_cast<float>(v));
  for (uint64_t i = 0; i < 20011; ++i) {
    out.push_back(std::bit_cast<float>(static_cast<uint32_t>(counter_random_u64(33, 0, i))));
  }
  return out;
}

Tensor tensor_of(DType dtype, const std::vector<double>& values) {
  Tensor t(dtype, Shape{static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::F64) {
      t.data_as<double>()[i] = values[i];
    } else {
      t.data_as<float>()[i] = static_cast<float>(values[i]);
    }
  }
  return t;
}

Tensor values_of(DType dtype) {
  if (dtype == DType::F64) return tensor_of(DType::F64, f64_values());
  const std::vector<float> v = f32_values();
  Tensor t(DType::F32, Shape{static_cast<int64_t>(v.size())});
  std::memcpy(t.data(), v.data(), v.size() * sizeof(float));
  return t;
}

// n values evenly spaced over [lo, hi], the ends included.
Tensor spaced(DType dtype, int64_t n, double lo, double hi) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = lo + (hi - lo) * i / (n - 1);
  return tensor_of(dtype, v);
}

// Random bits of any dtype.
Tensor random_bits(DType dtype, const Shape& shape, uint64_t seed) {
  Tensor t(dtype, shape);
  auto* bytes = static_cast<std::byte*>(t.data());
  for (size_t i = 0; i < t.nbytes(); ++i) {
    bytes[i] = static_cast<std::byte>(counter_random_u64(seed, 1, i));
  }
  return t;
}

// ---- Activations ----

BOOST_AUTO_TEST_CASE(f64_activations_match_their_claims,
                     *boost::unit_test::precondition(device_available)) {
  const Tensor x = values_of(DType::F64);
  const std::vector<std::pair<OpKind, Attributes>> cases = {
      {OpKind::Erf, {}},
      {OpKind::Tanh, {}},
      {OpKind::Sigmoid, {}},
      {OpKind::Gelu, {}},
      {OpKind::Gelu, {{"approximate", std::string("tanh")}}},
      {OpKind::LeakyRelu, {}},
      {OpKind::LeakyRelu, {{"alpha", 0.1}}},
      {OpKind::Elu, {}},
      {OpKind::Elu, {{"alpha", 0.7}}},
      {OpKind::Selu, {}},
      {OpKind::Selu, {{"alpha", 1.5}, {"gamma", 1.1}}},
      {OpKind::Celu, {}},
      {OpKind::Celu, {{"alpha", 0.3}}},
      {OpKind::HardSigmoid, {}},
      {OpKind::HardSigmoid, {{"alpha", 0.3}, {"beta", 0.4}}},
      {OpKind::HardSwish, {}},
      {OpKind::Softplus, {}},
      {OpKind::Softsign, {}},
      {OpKind::ThresholdedRelu, {}},
      {OpKind::ThresholdedRelu, {{"alpha", 0.1}}},
      {OpKind::Shrink, {}},
      {OpKind::Shrink, {{"bias", 0.2}, {"lambd", 0.6}}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    check_unary(cases[i].first, x, cases[i].second,
                std::to_string(x.numel()) + " values, case " + std::to_string(i));
  }
  // Past the f32 table's shapes: one element, and an empty tensor.
  check_unary(OpKind::Sigmoid, tensor_of(DType::F64, {-0.5}), {}, "one element");
  check_unary(OpKind::Erf, Tensor(DType::F64, Shape{0, 3}), {}, "an empty tensor");
}

BOOST_AUTO_TEST_CASE(prelu_in_f64_and_integers_matches_the_cpu,
                     *boost::unit_test::precondition(device_available)) {
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{5000}, {5000}}, {{2, 3, 4}, {3, 1}}, {{2, 3, 4}, {}}, {{7, 9}, {9}}, {{0, 4}, {4}}};
  uint64_t seed = 300;
  for (DType dtype : {DType::F64, DType::I32, DType::I64}) {
    for (const auto& [xs, ss] : shapes) {
      check(op_graph(OpKind::PRelu, {{dtype, xs}, {dtype, ss}}),
            {random_bits(dtype, xs, ++seed), random_bits(dtype, ss, ++seed)},
            xs.str() + " slope " + ss.str());
    }
  }
}

// ---- Elementwise math ----

BOOST_AUTO_TEST_CASE(exp_and_log_in_f64_match_their_claims,
                     *boost::unit_test::precondition(device_available)) {
  const Tensor x = values_of(DType::F64);
  for (OpKind op : {OpKind::Exp, OpKind::Log}) {
    check_unary(op, x, {}, std::to_string(x.numel()) + " values");
  }
}

BOOST_AUTO_TEST_CASE(trigonometric_functions_stay_within_the_tolerance,
                     *boost::unit_test::precondition(device_available)) {
  for (DType dtype : {DType::F32, DType::F64}) {
    const Tensor x = values_of(dtype);
    for (OpKind op :
         {OpKind::Sin, OpKind::Cos, OpKind::Tan, OpKind::Asin, OpKind::Acos, OpKind::Atan,
          OpKind::Sinh, OpKind::Cosh, OpKind::Asinh, OpKind::Acosh, OpKind::Atanh}) {
      check_unary(op, x, {}, std::to_string(x.numel()) + " values");
    }
    // The inverse functions' domains, where random values are mostly NaN.
    for (OpKind op : {OpKind::Asin, OpKind::Acos, OpKind::Atanh}) {
      check_unary(op, spaced(dtype, 4001, -1, 1), {}, "a sweep of [-1, 1]");
    }
    check_unary(OpKind::Acosh, spaced(dtype, 4001, 1, 100), {}, "a sweep of [1, 100]");
  }
}

BOOST_AUTO_TEST_CASE(pow_stays_within_the_tolerance,
                     *boost::unit_test::precondition(device_available)) {
  // Special pairs: zeros, infinities, NaN, negative bases with integral and other exponents.
  const std::vector<double> a = {0,  -0.0, 0,  -0.0, kInf, -kInf, -kInf, kNaN,  1, kNaN,
                                 -2, -2,   -8, 0.5,  0.5,  2,     1e10,  1e-10, 1, -1};
  const std::vector<double> b = {2, 3,   -1,      -3,   0.5,   3,    2,  0,   kNaN, 1,
                                 3, 0.5, 1.0 / 3, kInf, -kInf, 1024, 40, -40, kInf, kInf};
  uint64_t seed = 400;
  for (DType dtype : {DType::F32, DType::F64}) {
    const Shape n{static_cast<int64_t>(a.size())};
    check(op_graph(OpKind::Pow, {{dtype, n}, {dtype, n}}),
          {tensor_of(dtype, a), tensor_of(dtype, b)}, "special pairs");
    for (const auto& [as, bs] : std::vector<std::pair<Shape, Shape>>{
             {{4099}, {4099}}, {{3, 5}, {5}}, {{2, 3, 4}, {3, 1}}, {{}, {}}, {{0, 4}, {4}}}) {
      check(op_graph(OpKind::Pow, {{dtype, as}, {dtype, bs}}),
            {random_tensor(dtype, as, ++seed, 0.0, 10.0), random_tensor(dtype, bs, ++seed, -5, 5)},
            as.str() + " ^ " + bs.str());
    }
    const Shape big{20011};
    check(op_graph(OpKind::Pow, {{dtype, big}, {dtype, big}}),
          {random_bits(dtype, big, ++seed), random_bits(dtype, big, ++seed)}, "random bits");
  }
}

// ---- Softmax, LogSoftmax, LRN ----

// Random rows in [-30, 30), the first row holding an infinity and the second a NaN where the
// row has room (each gives a NaN row), the third -inf.
Tensor rows_of(DType dtype, const Shape& shape, uint64_t seed) {
  Tensor t = random_tensor(dtype, shape, seed, -30.0, 30.0);
  const int64_t last = shape.rank() == 0 ? 1 : shape[shape.rank() - 1];
  const std::vector<std::pair<int64_t, double>> specials = {
      {0, kInf}, {last + 1, kNaN}, {2 * last, -kInf}};
  for (const auto& [at, value] : specials) {
    if (at >= t.numel() || last < 3) continue;
    if (dtype == DType::F64) {
      t.data_as<double>()[at] = value;
    } else {
      t.data_as<float>()[at] = static_cast<float>(value);
    }
  }
  return t;
}

BOOST_AUTO_TEST_CASE(softmax_and_log_softmax_match_their_claims,
                     *boost::unit_test::precondition(device_available)) {
  const std::vector<std::pair<Shape, int64_t>> cases = {
      {{3, 5}, -1}, {{2, 8193}, 1}, {{4, 6, 5}, 1}, {{4, 6, 5}, 0},
      {{1}, 0},     {{0, 5}, 1},    {{5, 4097}, -1}};
  uint64_t seed = 500;
  for (DType dtype : {DType::F32, DType::F64}) {
    for (OpKind op : {OpKind::Softmax, OpKind::LogSoftmax}) {
      for (const auto& [shape, axis] : cases) {
        check(op_graph(op, {{dtype, shape}}, {{"axis", axis}}), {rows_of(dtype, shape, ++seed)},
              shape.str() + " axis " + std::to_string(axis));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(lrn_stays_within_the_tolerance,
                     *boost::unit_test::precondition(device_available)) {
  const std::vector<std::pair<Shape, Attributes>> cases = {
      {{2, 5, 3, 4}, {{"size", int64_t{5}}, {"beta", 1.5}}},
      {{2, 5, 3, 4}, {{"size", int64_t{2}}, {"alpha", 0.01}, {"bias", 2.0}}},
      {{1, 7, 1, 1}, {{"size", int64_t{3}}}},
      {{3, 4, 33}, {{"size", int64_t{4}}, {"beta", 0.5}}},
      {{0, 3, 2, 2}, {{"size", int64_t{3}}}}};
  uint64_t seed = 600;
  for (DType dtype : {DType::F32, DType::F64}) {
    for (const auto& [shape, attrs] : cases) {
      check(op_graph(OpKind::LRN, {{dtype, shape}}, attrs),
            {random_tensor(dtype, shape, ++seed, -3.0, 3.0)}, shape.str());
    }
  }
}

// ---- ReduceLogSumExp ----

BOOST_AUTO_TEST_CASE(reduce_log_sum_exp_stays_within_the_tolerance,
                     *boost::unit_test::precondition(device_available)) {
  using Ints = std::vector<int64_t>;
  const std::vector<std::pair<Shape, Ints>> cases = {
      {{3, 8193}, {1}}, {{4, 6, 5}, {0, 2}}, {{10000}, {}},    {{3, 0, 2}, {1}},
      {{5, 3}, {0}},    {{2, 4097}, {1}},    {{6, 7, 8}, {1}}, {{1}, {0}}};
  uint64_t seed = 700;
  for (DType dtype : {DType::F32, DType::F64}) {
    for (const auto& [shape, axes] : cases) {
      for (int64_t keepdims : {0, 1}) {
        check(op_graph(OpKind::ReduceLogSumExp, {{dtype, shape}},
                       {{"axes", axes}, {"keepdims", keepdims}}),
              {rows_of(dtype, shape, ++seed)},
              shape.str() + " axes " + Shape(axes).str() + " keepdims " + std::to_string(keepdims));
      }
    }
  }
}

}  // namespace
}  // namespace volta
