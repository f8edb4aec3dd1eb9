// The CUDA backend on a device: every kernel against the CPU backend, bit for bit as each op's
// claim says (cuda_op_claims()), on random inputs, special values (NaN with payloads, signaling
// NaN, +-inf, +-0, subnormals, the edges of each function's ranges), a sweep over the f32 bit
// patterns, and broadcasts; runs repeated with different poison; host<->device copies counted;
// states bound, updated and stored back.
//
// Without a usable device every case is skipped and the binary prints "SKIPPED: <reason>",
// which CTest reports as skipped (SKIP_REGULAR_EXPRESSION): never a pass without a device.

#define BOOST_TEST_MODULE cuda_device_test
#include <array>
#include <bit>
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "device_test_support.h"
#include "volta/backends/cuda.h"
#include "volta/ir/op_schema.h"
#include "volta/ir/random.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta {
namespace {

using cuda_test::DeviceOrSkip;
BOOST_TEST_GLOBAL_FIXTURE(DeviceOrSkip);
using cuda_test::cpu;
using cuda_test::device_available;
using cuda_test::gpu;
using cuda_test::run_on;

float from_bits(uint32_t bits) { return std::bit_cast<float>(bits); }
uint32_t bits_of(float x) { return std::bit_cast<uint32_t>(x); }

std::string hex(float x) {
  char text[48];
  std::snprintf(text, sizeof text, "%.9g (0x%08x)", static_cast<double>(x), bits_of(x));
  return text;
}

// Values where the CPU's functions change branch, clamp, or round specially, and every class
// of f32: zeros, subnormals, normals at the extremes, infinities, quiet / signaling NaN with
// and without payloads and signs.
std::vector<float> special_values() {
  std::vector<float> out;
  for (uint32_t bits :
       {0x00000000u, 0x80000000u, 0x00000001u, 0x80000001u, 0x007fffffu, 0x807fffffu,
        0x00800000u, 0x80800000u, 0x7f7fffffu, 0xff7fffffu, 0x7f800000u, 0xff800000u,
        0x7fc00000u, 0xffc00000u, 0x7fc01234u, 0xffc04321u, 0x7f800001u, 0xff812345u,
        0x3f800000u, 0xbf800000u, 0x3f7fffffu, 0x3f800001u}) {
    out.push_back(from_bits(bits));
  }
  for (float v :
       {0.5f,     2.0f,      3.0f,   0.625f,  0.6249999f, 0.34657359f, 1.41421356f, 0.70710678f,
        88.7228f, 88.72284f, 89.0f,  89.5f,   87.0f,      10.0f,       20.0f,       1e-8f,
        1e-30f,   1e30f,     100.0f, 103.97f, 104.0f,     150.0f}) {
    out.push_back(v);
    out.push_back(-v);
  }
  return out;
}

// Counter-based bit patterns (splitmix64), the same on every machine: every f32 class appears.
std::vector<float> random_bit_patterns(size_t n, uint64_t seed) {
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) {
    uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    out[i] = from_bits(static_cast<uint32_t>(z ^ (z >> 31)));
  }
  return out;
}

Tensor f32_tensor(const Shape& shape, const std::vector<float>& values) {
  Tensor t(DType::F32, shape);
  BOOST_REQUIRE_EQUAL(static_cast<size_t>(t.numel()), values.size());
  if (!values.empty()) std::memcpy(t.data(), values.data(), values.size() * sizeof(float));
  return t;
}

std::vector<float> values_of(const Tensor& t) {
  std::vector<float> out(static_cast<size_t>(t.numel()));
  if (!out.empty()) std::memcpy(out.data(), t.data(), out.size() * sizeof(float));
  return out;
}

// The first element where `got` breaks the claim against `want`, or empty.
std::string first_breach(CrossBackendExactness claim, const Tensor& got, const Tensor& want) {
  if (got.shape() != want.shape())
    return "shape " + got.shape().str() + " vs " + want.shape().str();
  const std::vector<float> g = values_of(got);
  const std::vector<float> w = values_of(want);
  for (size_t i = 0; i < g.size(); ++i) {
    const bool nan_aside =
        claim == CrossBackendExactness::BitwiseExceptNanPayload && w[i] != w[i] && g[i] != g[i];
    if (bits_of(g[i]) != bits_of(w[i]) && !nan_aside) {
      return "element " + std::to_string(i) + ": cuda " + hex(g[i]) + ", cpu " + hex(w[i]);
    }
  }
  return {};
}

bool is_binary(OpKind op) {
  return op == OpKind::Add || op == OpKind::Sub || op == OpKind::Mul || op == OpKind::Div ||
         op == OpKind::Min || op == OpKind::Max || op == OpKind::PRelu || op == OpKind::Mod;
}

// The claims this file's unary and binary cases cover in f32: the elementwise and activation
// ops that claim the CPU's bits, each run with its default attributes (Cast, Where, other
// dtypes, other families and the libm-backed ops, Pow and the trigonometric functions, are in
// their own device test files).
bool is_elementwise_f32(const CudaOpClaim& claim) {
  const OpFamily family = op_schema(claim.op).family;
  return (family == OpFamily::Elementwise || family == OpFamily::Activation) &&
         claim.op != OpKind::Cast && claim.op != OpKind::Where &&
         claim.dtypes.contains(DType::F32) && !claim.tolerance_dtypes.contains(DType::F32) &&
         claim.exactness != CrossBackendExactness::NotClaimed;
}

Graph unary_graph(OpKind op, const Shape& shape) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, shape);
  g.set_outputs({g.add(op, {x}, {}, "op")});
  return g;
}

Graph binary_graph(OpKind op, const Shape& a, const Shape& b) {
  Graph g;
  const ValueId x = g.add_input("a", DType::F32, a);
  const ValueId y = g.add_input("b", DType::F32, b);
  g.set_outputs({g.add(op, {x, y}, {}, "op")});
  return g;
}

// Runs the graph on both backends and checks the claim; `what` names the case.
void check_against_cpu(const CudaOpClaim& claim, const Graph& graph,
                       const std::vector<Tensor>& inputs, const std::string& what) {
  const Tensor want = run_on(cpu(), graph, inputs)[0];
  const Tensor got = run_on(gpu(), graph, inputs, std::byte{0xff})[0];
  const std::string breach = first_breach(claim.exactness, got, want);
  BOOST_CHECK_MESSAGE(breach.empty(), std::string(op_name(claim.op))
                                          << " (" << cross_backend_exactness_name(claim.exactness)
                                          << ") on " << what << ": " << breach);
}

BOOST_AUTO_TEST_CASE(unary_ops_match_the_cpu_on_special_and_random_values,
                     *boost::unit_test::precondition(device_available)) {
  std::vector<float> values = special_values();
  const std::vector<float> patterns = random_bit_patterns(100003, 1);
  values.insert(values.end(), patterns.begin(), patterns.end());
  const Tensor uniform = random_tensor(DType::F32, Shape{100003}, 2, -120.0, 120.0);
  const std::vector<float> u = values_of(uniform);
  values.insert(values.end(), u.begin(), u.end());
  const Shape shape{static_cast<int64_t>(values.size())};
  for (const CudaOpClaim& claim : cuda_op_claims()) {
    if (!is_elementwise_f32(claim) || is_binary(claim.op)) continue;
    check_against_cpu(claim, unary_graph(claim.op, shape), {f32_tensor(shape, values)},
                      "special, random-bit and uniform values " + shape.str());
  }
}

// Every 251st f32 bit pattern (17 million values, every exponent and sign).
BOOST_AUTO_TEST_CASE(unary_ops_match_the_cpu_over_a_sweep_of_bit_patterns,
                     *boost::unit_test::precondition(device_available)) {
  constexpr uint64_t kStep = 251;
  std::vector<float> values;
  values.reserve(static_cast<size_t>((uint64_t{1} << 32) / kStep + 1));
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += kStep) {
    values.push_back(from_bits(static_cast<uint32_t>(bits)));
  }
  const Shape shape{static_cast<int64_t>(values.size())};
  const Tensor x = f32_tensor(shape, values);
  for (const CudaOpClaim& claim : cuda_op_claims()) {
    if (is_elementwise_f32(claim) && !is_binary(claim.op)) {
      check_against_cpu(claim, unary_graph(claim.op, shape), {x}, "sweep");
    }
  }
}

BOOST_AUTO_TEST_CASE(binary_ops_match_the_cpu_on_every_pair_of_special_values,
                     *boost::unit_test::precondition(device_available)) {
  const std::vector<float> specials = special_values();
  std::vector<float> a;
  std::vector<float> b;
  for (float x : specials) {
    for (float y : specials) {
      a.push_back(x);
      b.push_back(y);
    }
  }
  const std::vector<float> ra = random_bit_patterns(100003, 3);
  const std::vector<float> rb = random_bit_patterns(100003, 4);
  a.insert(a.end(), ra.begin(), ra.end());
  b.insert(b.end(), rb.begin(), rb.end());
  const Shape shape{static_cast<int64_t>(a.size())};
  for (const CudaOpClaim& claim : cuda_op_claims()) {
    if (!is_elementwise_f32(claim) || !is_binary(claim.op)) continue;
    check_against_cpu(claim, binary_graph(claim.op, shape, shape),
                      {f32_tensor(shape, a), f32_tensor(shape, b)}, "pairs " + shape.str());
  }
}

// Broadcasts of every kind the merged geometry produces: row, column, scalar either side,
// leading 1s, six unmergeable dims, empty.
BOOST_AUTO_TEST_CASE(binary_ops_broadcast_like_the_cpu,
                     *boost::unit_test::precondition(device_available)) {
  const std::vector<std::pair<Shape, Shape>> cases = {{{3, 1, 5}, {4, 1}},
                                                      {{2, 3, 4}, {4}},
                                                      {{2, 3, 4}, {3, 4}},
                                                      {{7}, {}},
                                                      {{}, {5, 6}},
                                                      {{1, 6}, {1, 1, 6}},
                                                      {{1000, 33}, {1000, 1}},
                                                      {{2, 1, 3, 1, 2, 1}, {1, 2, 1, 2, 1, 2}},
                                                      {{2, 0, 3}, {3}},
                                                      {{257}, {257}},
                                                      {{300, 1}, {1, 300}},
                                                      {{64, 1024}, {1024}},
                                                      {{9, 1}, {9, 12}}};
  uint64_t seed = 10;
  for (const CudaOpClaim& claim : cuda_op_claims()) {
    // PRelu broadcasts its slope one way only: cuda_device_elementwise_test covers it.
    if (!is_elementwise_f32(claim) || !is_binary(claim.op) || claim.op == OpKind::PRelu) continue;
    for (const auto& [sa, sb] : cases) {
      const Tensor a = f32_tensor(sa, random_bit_patterns(static_cast<size_t>(sa.numel()), ++seed));
      const Tensor b = f32_tensor(sb, random_bit_patterns(static_cast<size_t>(sb.numel()), ++seed));
      check_against_cpu(claim, binary_graph(claim.op, sa, sb), {a, b},
                        sa.str() + " with " + sb.str());
    }
  }
}

// A chain of kernels through the arena: the same bits on every run, whatever the poison, in a
// fresh context or a reused one; and (the weakest claim of the chain) the CPU's bits.
BOOST_AUTO_TEST_CASE(runs_repeat_bit_identically_whatever_the_poison,
                     *boost::unit_test::precondition(device_available)) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{64, 129});
  const ValueId b = g.add_input("b", DType::F32, Shape{129});
  const ValueId e = g.add(OpKind::Exp, {x}, {}, "exp");
  const ValueId s = g.add(OpKind::Add, {e, b}, {}, "add");
  const ValueId t = g.add(OpKind::Tanh, {s}, {}, "tanh");
  g.set_outputs({g.add(OpKind::Relu, {t}, {}, "relu"), g.add(OpKind::Log, {s}, {}, "log")});
  const std::vector<Tensor> inputs = {random_tensor(DType::F32, Shape{64, 129}, 5, -4, 4),
                                      random_tensor(DType::F32, Shape{129}, 6, -2, 2)};
  const ExecutionPlan plan = compile(g, gpu(), DeterminismMode::Strict);
  const std::unique_ptr<ExecutionContext> ctx = gpu().make_context({});
  std::vector<std::vector<Tensor>> runs;
  for (std::byte poison : {std::byte{0xff}, std::byte{0x00}, std::byte{0x7f}}) {
    ctx->set_poison(poison);
    runs.push_back(execute(plan, gpu(), *ctx, inputs));
  }
  runs.push_back(run_on(gpu(), g, inputs, std::byte{0xa5}));
  for (const std::vector<Tensor>& run : runs) {
    for (size_t i = 0; i < run.size(); ++i) BOOST_TEST(run[i].bit_equal(runs[0][i]));
  }
  const std::vector<Tensor> want = run_on(cpu(), g, inputs);
  for (size_t i = 0; i < want.size(); ++i) {
    const std::string breach =
        first_breach(CrossBackendExactness::BitwiseExceptNanPayload, runs[0][i], want[i]);
    BOOST_CHECK_MESSAGE(breach.empty(), "output " << i << ": " << breach);
  }
}

// Inputs and parameters in, outputs out, each counted; a second run allocates nothing.
BOOST_AUTO_TEST_CASE(copies_are_counted_and_memory_is_reused,
                     *boost::unit_test::precondition(device_available)) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{1000});
  const ValueId c = g.add_parameter("c", random_tensor(DType::F32, Shape{1000}, 7, -1, 1));
  const ValueId s = g.add(OpKind::Add, {x, c}, {}, "add");
  g.set_outputs({g.add(OpKind::Sqrt, {s}, {}, "sqrt")});
  const ExecutionPlan plan = compile(g, gpu(), DeterminismMode::Strict, {.optimize = false});
  const std::unique_ptr<ExecutionContext> ctx = gpu().make_context({});
  const CudaContext& cuda = cuda_context(*ctx);
  const std::vector<Tensor> inputs = {random_tensor(DType::F32, Shape{1000}, 8, 0, 1)};
  execute(plan, gpu(), *ctx, inputs);
  BOOST_TEST(cuda.transfers().host_to_device_bytes == 8000);
  BOOST_TEST(cuda.transfers().host_to_device_copies == 2);
  BOOST_TEST(cuda.transfers().device_to_host_bytes == 4000);
  BOOST_TEST(cuda.transfers().device_to_host_copies == 1);
  const int64_t held = cuda.device_bytes();
  BOOST_TEST(held >= 8000 + plan.memory.arena_bytes);
  // The parameter stays on the device: the second run uploads the input alone, and a second
  // plan holding the same parameter shares its copy.
  execute(plan, gpu(), *ctx, inputs);
  BOOST_TEST(cuda.transfers().host_to_device_bytes == 12000);
  BOOST_TEST(cuda.transfers().host_to_device_copies == 3);
  BOOST_TEST(cuda.transfers().device_to_host_bytes == 8000);
  BOOST_TEST(cuda.device_bytes() == held);
  const ExecutionPlan again = compile(g, gpu(), DeterminismMode::Strict, {.optimize = false});
  const std::vector<Tensor> out = execute(again, gpu(), *ctx, inputs);
  BOOST_TEST(cuda.transfers().host_to_device_bytes == 16000);
  BOOST_TEST(out[0].bit_equal(execute(plan, gpu(), *ctx, inputs)[0]));
}

// y = w * x; w <- w + lr * x, three steps: the state goes to the device, is updated there in
// place and comes back, with the CPU's bits.
BOOST_AUTO_TEST_CASE(states_are_bound_updated_and_stored_back,
                     *boost::unit_test::precondition(device_available)) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{256});
  const ValueId w = g.add_state("w", DType::F32, Shape{256});
  const ValueId lr = g.add_parameter("lr", f32_tensor({}, {0.5f}));
  const ValueId step = g.add_node(OpKind::Mul, {lr, x}, {}, "step")[0];
  const ValueId next = g.add_node(OpKind::Add, {w, step}, {}, "w_next")[0];
  g.set_outputs({g.add_node(OpKind::Mul, {w, x}, {}, "y")[0]});
  g.set_state_update(w, next);
  const std::vector<Tensor> inputs = {random_tensor(DType::F32, Shape{256}, 9, -1, 1)};
  Tensor w_cpu = random_tensor(DType::F32, Shape{256}, 10, -1, 1);
  Tensor w_gpu = w_cpu;
  const ExecutionPlan cpu_plan = compile(g, cpu(), DeterminismMode::Strict);
  const ExecutionPlan gpu_plan = compile(g, gpu(), DeterminismMode::Strict);
  const std::unique_ptr<ExecutionContext> cpu_ctx = cpu().make_context({});
  const std::unique_ptr<ExecutionContext> gpu_ctx = gpu().make_context({});
  for (int i = 0; i < 3; ++i) {
    const std::array<Tensor*, 1> cpu_states = {&w_cpu};
    const std::array<Tensor*, 1> gpu_states = {&w_gpu};
    const Tensor y_cpu = execute(cpu_plan, cpu(), *cpu_ctx, inputs, cpu_states)[0];
    const Tensor y_gpu = execute(gpu_plan, gpu(), *gpu_ctx, inputs, gpu_states)[0];
    BOOST_TEST(y_gpu.bit_equal(y_cpu), "step " << i);
    BOOST_TEST(w_gpu.bit_equal(w_cpu), "step " << i);
  }
}

}  // namespace
}  // namespace volta
