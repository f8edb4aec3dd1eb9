// The CUDA backend on the host, without a device: its registration, its kernel table against
// its capabilities and per-op claims, refusals of what it has no kernel for (as the planner
// reports them), the broadcast geometry its binary kernels walk, and discovery's verdict for
// every way a machine can lack what it needs, including this machine's.

#define BOOST_TEST_MODULE cuda_backend_test
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cctype>
#include <memory>
#include <string>
#include <vector>

#include "broadcast_geometry.h"
#include "cuda_discovery.h"
#include "expect_error.h"
#include "gemm_reference.h"
#include "kernels/launch.h"
#include "reduce_geometry.h"
#include "test_util.h"
#include "volta/backends/cuda.h"
#include "volta/ir/op_schema.h"
#include "volta/model/transformer_lm.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta {
namespace {

using test::expect_error;
using test::single_op_graph;

const Backend& cuda_backend() {
  static const std::unique_ptr<Backend> backend = make_backend("cuda");
  return *backend;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return out;
}

// "Add, Sub, ..." : the ops with kernels, in OpKind order, as the backend's refusals name them.
std::string cuda_ops() {
  std::string out;
  for (const CudaOpClaim& c : cuda_op_claims()) {
    out += (out.empty() ? "" : ", ") + std::string(op_name(c.op));
  }
  return out;
}

// The families whose per-op dtypes and claims this file's first suites pin; the linalg,
// reduction and normalization families are pinned by their own suites below.
bool pinned_here(OpKind op) {
  const OpFamily family = op_schema(op).family;
  return family == OpFamily::Elementwise || family == OpFamily::Activation ||
         family == OpFamily::Logical || family == OpFamily::Movement;
}

bool is_binary(OpKind op) {
  return op == OpKind::Add || op == OpKind::Sub || op == OpKind::Mul || op == OpKind::Div ||
         op == OpKind::Min || op == OpKind::Max || op == OpKind::PRelu || op == OpKind::Mod ||
         op == OpKind::Pow;
}

// The ops whose kernels compute through CUDA's math library where the CPU calls glibc's:
// nothing claimed against the CPU (the parity suite uses the tolerance table).
bool is_libm(OpKind op) {
  using K = OpKind;
  for (OpKind libm : {K::Pow, K::Sin, K::Cos, K::Tan, K::Asin, K::Acos, K::Atan, K::Sinh, K::Cosh,
                      K::Asinh, K::Acosh, K::Atanh}) {
    if (op == libm) return true;
  }
  return false;
}

// The ops that claim no CPU bits at any dtype: where the CPU kernel calls libm (Pow and the
// trigonometric functions; log, exp or pow inside LogSoftmax, ReduceLogSumExp, LRN and
// SoftmaxCrossEntropyLoss).
bool claims_nothing(OpKind op) {
  using K = OpKind;
  return is_libm(op) || op == K::LogSoftmax || op == K::ReduceLogSumExp || op == K::LRN ||
         op == K::SoftmaxCrossEntropyLoss;
}

// The ops whose kernels take every dtype (they move, select or compare bytes).
bool takes_every_dtype(OpKind op) {
  return op == OpKind::Where || op == OpKind::Cast || op == OpKind::Equal ||
         op_schema(op).family == OpFamily::Movement;
}
bool is_logical(OpKind op) { return op_schema(op).family == OpFamily::Logical; }

// The dtypes each op claims: the CPU's.
std::string claimed_dtypes(OpKind op) {
  using K = OpKind;
  if (takes_every_dtype(op)) return "{f32,f64,i64,i32,bool}";
  if (op == K::Not || op == K::And || op == K::Or || op == K::Xor) return "{bool}";
  for (OpKind numeric : {K::Add, K::Sub, K::Mul, K::Div, K::Neg, K::Abs, K::Min, K::Max, K::Sign,
                         K::Relu, K::Clip, K::Mod, K::PRelu}) {
    if (op == numeric) return "{f32,f64,i64,i32}";
  }
  if (op == K::IsNaN || op == K::IsInf) return "{f32,f64}";
  if (is_logical(op)) return "{f32,f64,i64,i32}";
  return "{f32,f64}";
}

// The f64 kernels that call CUDA's math library where the CPU's f64 kernel calls glibc's: the
// op's claim leaves f64 out.
bool f64_is_libm(OpKind op) {
  using K = OpKind;
  for (OpKind libm : {K::Exp, K::Log, K::Erf, K::Tanh, K::Sigmoid, K::Gelu, K::Elu, K::Selu,
                      K::Celu, K::Softplus}) {
    if (op == libm) return true;
  }
  return false;
}
bool claims(OpKind op, DType dtype) {
  return claimed_dtypes(op).find(dtype_name(dtype)) != std::string::npos;
}

// The elementwise and activation ops a one-node graph of default attributes exercises (unary
// or binary, of one dtype).
bool is_plain(OpKind op) {
  const OpFamily family = op_schema(op).family;
  return (family == OpFamily::Elementwise || family == OpFamily::Activation) &&
         op != OpKind::Cast && op != OpKind::Where;
}

// The variant an exact node of a plain op gets.
std::string plain_variant(OpKind op, DType dtype) {
  if (op == OpKind::Gelu) return std::string(dtype_name(dtype)) + "_gelu_erf_cuda";
  const std::string base = std::string(dtype_name(dtype)) + "_" + lower(op_name(op)) + "_cuda" +
                           (is_libm(op) ? "_libm" : "");
  if (op == OpKind::Min || op == OpKind::Max) return base + "_fold";
  return is_binary(op) ? base + "_contiguous" : base;
}

Graph f_graph(OpKind op, DType dtype, const Shape& a, const Shape& b = {}) {
  if (is_binary(op)) return single_op_graph(op, {TypeInfo{dtype, a}, TypeInfo{dtype, b}});
  return single_op_graph(op, {TypeInfo{dtype, a}});
}

const Node& only_node(const Graph& g) { return g.node(0); }

BOOST_AUTO_TEST_SUITE(registration)

BOOST_AUTO_TEST_CASE(registers_as_cuda) {
  BOOST_TEST(has_backend("cuda"));
  const std::vector<BackendInfo> all = available_backends();
  const auto it = std::ranges::find(all, std::string("cuda"), &BackendInfo::name);
  BOOST_REQUIRE(it != all.end());
  BOOST_TEST(it->description ==
             "the CUDA engine: one stream, a device arena, deterministic kernels");
  BOOST_TEST(cuda_backend().name() == "cuda");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(kernel_table)

BOOST_AUTO_TEST_CASE(the_claims_name_the_ops_with_kernels_in_op_order) {
  int previous = -1;
  for (const CudaOpClaim& c : cuda_op_claims()) {
    BOOST_TEST(op_index(c.op) > previous, op_name(c.op));
    previous = op_index(c.op);
    if (pinned_here(c.op)) BOOST_TEST(c.dtypes.str() == claimed_dtypes(c.op), op_name(c.op));
    BOOST_TEST(!c.how.empty());
    BOOST_TEST((c.exactness == CrossBackendExactness::NotClaimed) == claims_nothing(c.op),
               op_name(c.op));
    if (pinned_here(c.op)) {
      BOOST_TEST(c.tolerance_dtypes.str() == (f64_is_libm(c.op) ? "{f64}" : "{}"), op_name(c.op));
    }
  }
  // What each claims against the CPU backend; the device tests hold each to it.
  std::string bitwise;
  for (const CudaOpClaim& c : cuda_op_claims()) {
    if (!pinned_here(c.op) || is_libm(c.op)) continue;
    if (c.exactness == CrossBackendExactness::Bitwise) {
      bitwise += (bitwise.empty() ? "" : ", ") + std::string(op_name(c.op));
    } else {
      BOOST_TEST(cross_backend_exactness_name(c.exactness) == "bitwise-except-nan-payload");
    }
  }
  BOOST_TEST(bitwise ==
             "Neg, Abs, Log, Sigmoid, Relu, Min, Max, Where, Equal, Less, Greater, Not, And, Or, "
             "Clip, Reshape, Transpose, Concat, Split, Slice, Gather, Expand, Squeeze, Unsqueeze, "
             "Flatten, Identity, Constant, Floor, Ceil, Round, Sign, ThresholdedRelu, Shrink, "
             "IsNaN, IsInf, Xor, LessOrEqual, GreaterOrEqual, Tile, Pad, DepthToSpace, "
             "SpaceToDepth, ReverseSequence");
}

BOOST_AUTO_TEST_CASE(capabilities_are_the_claimed_ops) {
  const Capabilities caps = cuda_backend().capabilities();
  const std::span<const CudaOpClaim> claims = cuda_op_claims();
  for (int i = 0; i < kOpCount; ++i) {
    const auto op = static_cast<OpKind>(i);
    const bool claimed =
        std::ranges::any_of(claims, [&](const CudaOpClaim& c) { return c.op == op; });
    const OpCapability& cap = caps[static_cast<size_t>(i)];
    BOOST_TEST(cap.supported == claimed, op_name(op));
    if (cap.supported) {
      const auto claim = std::ranges::find(claims, op, &CudaOpClaim::op);
      BOOST_TEST(cap.dtypes.str() == claim->dtypes.str(), op_name(op));
      BOOST_TEST((cap.cpu_exactness == claim->exactness), op_name(op));
      BOOST_TEST(kernel_determinism_name(cap.determinism) == "bit-exact");
    }
  }
}

// Every elementwise and activation op the capabilities list has a kernel for an exact node of
// each dtype it claims and refuses f64 in the CPU backend's words where it does not claim it
// (the other ops have their own cases below); every other op is refused naming it and what the
// backend has.
BOOST_AUTO_TEST_CASE(select_kernel_agrees_with_capabilities) {
  const Capabilities caps = cuda_backend().capabilities();
  for (int i = 0; i < kOpCount; ++i) {
    const auto op = static_cast<OpKind>(i);
    if (!caps[static_cast<size_t>(i)].supported) {
      Node node;
      node.op = op;
      node.name = "n";
      const KernelSelection s = cuda_backend().select_kernel(Graph{}, node);
      const auto* refused = std::get_if<KernelUnsupported>(&s);
      BOOST_REQUIRE_MESSAGE(refused != nullptr, op_name(op));
      BOOST_TEST(refused->reason == "the CUDA backend has no " + std::string(op_name(op)) +
                                        " kernel (it has kernels for " + cuda_ops() + ")");
      continue;
    }
    if (!is_plain(op)) continue;
    for (DType dtype : {DType::F32, DType::F64, DType::I64}) {
      if (dtype == DType::I64 && !claims(op, dtype)) continue;  // the op table refuses it
      const Graph g = f_graph(op, dtype, Shape{4}, Shape{4});
      const KernelSelection s = cuda_backend().select_kernel(g, only_node(g));
      if (!claims(op, dtype)) {
        const auto* refused = std::get_if<KernelUnsupported>(&s);
        BOOST_REQUIRE_MESSAGE(refused != nullptr, op_name(op));
        BOOST_TEST(refused->reason == "no " + std::string(dtype_name(dtype)) + " kernel for " +
                                          std::string(op_name(op)) +
                                          " (supported: " + claimed_dtypes(op) + ")");
        continue;
      }
      const auto* choice = std::get_if<KernelChoice>(&s);
      BOOST_REQUIRE_MESSAGE(choice != nullptr, op_name(op));
      BOOST_TEST(choice->variant == plain_variant(op, dtype));
      BOOST_TEST(kernel_determinism_name(choice->determinism) == "bit-exact");
      // An integer Div or Mod checks its divisors in a word of workspace.
      const bool checks = (op == OpKind::Div || op == OpKind::Mod) && dtype == DType::I64;
      BOOST_TEST(choice->workspace_bytes == (checks ? 8 : 0), op_name(op));
      BOOST_TEST(choice->worker_scratch_bytes == 0);
      BOOST_TEST(choice->impl != nullptr);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(planning)

// The planner's R-MISSING-KERNEL, exactly as a user reads it.
BOOST_AUTO_TEST_CASE(an_op_without_a_kernel_is_refused_at_compile_time) {
  // Every op has a kernel; attributes a kernel does not take are refused the same way.
  const Graph lp =
      single_op_graph(OpKind::LpPool, {TypeInfo{DType::F32, Shape{1, 1, 4, 4}}},
                      {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"p", int64_t{3}}});
  expect_error([&] { compile(lp, cuda_backend(), DeterminismMode::Strict); },
               ErrorCode::MissingKernel,
               "node 'op' (LpPool) on backend 'cuda' has no kernel: no CUDA kernel for LpPool with "
               "p 3 (supported: p 1 and 2; the CPU's std::pow for other p has no bit-equal device "
               "counterpart). Volta never falls back to another backend.");
  // Seven alternating broadcast dims: more than the kernels merge into.
  const Graph pow =
      f_graph(OpKind::Pow, DType::F64, Shape{2, 1, 2, 1, 2, 1, 2}, Shape{1, 2, 1, 2, 1, 2, 1});
  expect_error([&] { compile(pow, cuda_backend(), DeterminismMode::Strict); },
               ErrorCode::MissingKernel,
               "node 'op' (Pow) on backend 'cuda' has no kernel: Pow of [2,1,2,1,2,1,2] and "
               "[1,2,1,2,1,2,1] broadcasts over 7 dims that cannot be merged; the CUDA kernels "
               "take at most 6. Volta never falls back to another backend.");
}

// Planning needs no device: a strict plan records the variant of every step.
BOOST_AUTO_TEST_CASE(a_supported_graph_compiles_strict_without_a_device) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{3, 1});
  const ValueId b = g.add_input("b", DType::F32, Shape{4});
  const ValueId same = g.add_input("same", DType::F32, Shape{3, 4});
  const ValueId e = g.add(OpKind::Exp, {x}, {}, "exp");
  const ValueId s = g.add(OpKind::Add, {e, b}, {}, "add");
  const ValueId m = g.add(OpKind::Mul, {s, same}, {}, "mul");
  g.set_outputs({g.add(OpKind::Sigmoid, {m}, {}, "sigmoid")});
  const ExecutionPlan plan = compile(g, cuda_backend(), DeterminismMode::Strict);
  std::string variants;
  for (const PlannedStep& step : plan.steps) {
    variants += (variants.empty() ? "" : " ") + step.kernel.variant;
  }
  BOOST_TEST(variants ==
             "f32_exp_cuda f32_add_cuda_broadcast f32_mul_cuda_contiguous f32_sigmoid_cuda");
  BOOST_TEST(plan.backend == "cuda");
}

// Constant folding runs the folded node on the plan's own backend: without a device a graph
// with a constant subexpression cannot be planned for CUDA (R-NO-DEVICE), and it is never
// folded on the CPU instead.
BOOST_AUTO_TEST_CASE(constant_folding_needs_the_device) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{4});
  const ValueId c = g.add_parameter("c", test::filled(DType::F32, {4}, {0, 1, 2, 3}));
  const ValueId e = g.add(OpKind::Exp, {c}, {}, "exp");
  g.set_outputs({g.add(OpKind::Add, {x, e}, {}, "add")});
  const std::string unavailable = cuda_report().unavailable;
  if (unavailable.empty()) {
    BOOST_TEST(compile(g, cuda_backend(), DeterminismMode::Strict).steps.size() == 1u);
    return;
  }
  expect_error([&] { compile(g, cuda_backend(), DeterminismMode::Strict); },
               ErrorCode::DeviceUnavailable,
               "the CUDA backend cannot run on this machine: " + unavailable);
  BOOST_TEST(
      compile(g, cuda_backend(), DeterminismMode::Strict, {.optimize = false}).steps.size() == 2u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(broadcast)

using cuda::broadcast_geometry;
using cuda::merge_broadcast;
using cuda::MergedBroadcast;

std::string str(const std::vector<int64_t>& v) { return Shape(v).str(); }

std::string describe(const MergedBroadcast& m) {
  return "dims " + str(m.dims) + " a " + str(m.a_strides) + " b " + str(m.b_strides);
}

std::string merged(const Shape& a, const Shape& b) {
  return describe(merge_broadcast(*broadcast_shapes(a, b), a, b));
}

BOOST_AUTO_TEST_CASE(dims_merge_where_both_operands_walk_them_as_one) {
  BOOST_TEST(merged({2, 3}, {2, 3}) == "dims [6] a [1] b [1]");
  BOOST_TEST(merged({1, 6}, {1, 1, 6}) == "dims [6] a [1] b [1]");  // leading 1s
  BOOST_TEST(merged({2, 3}, {}) == "dims [6] a [1] b [0]");         // a scalar
  BOOST_TEST(merged({}, {}) == "dims [1] a [1] b [1]");             // one element
  BOOST_TEST(merged({2, 3, 4}, {4}) == "dims [6,4] a [4,1] b [0,1]");
  BOOST_TEST(merged({2, 3, 4}, {3, 4}) == "dims [2,12] a [12,1] b [0,1]");
  BOOST_TEST(merged({4, 1, 3}, {5, 1}) == "dims [4,5,3] a [3,0,1] b [0,1,0]");
  BOOST_TEST(merged({3, 1}, {1, 4}) == "dims [3,4] a [1,0] b [0,1]");
}

BOOST_AUTO_TEST_CASE(the_kernel_geometry_counts_elements_and_spots_the_contiguous_case) {
  const auto same = broadcast_geometry(merge_broadcast({5, 7}, {5, 7}, {5, 7}));
  BOOST_REQUIRE(same.has_value());
  BOOST_TEST(same->contiguous());
  BOOST_TEST(same->numel == 35);
  const auto row = broadcast_geometry(merge_broadcast({5, 7}, {5, 7}, {7}));
  BOOST_REQUIRE(row.has_value());
  BOOST_TEST(!row->contiguous());
  BOOST_TEST(row->rank == 2);
  BOOST_TEST(row->numel == 35);
  const auto empty = broadcast_geometry(merge_broadcast({2, 0, 3}, {2, 0, 3}, {3}));
  BOOST_REQUIRE(empty.has_value());
  BOOST_TEST(empty->numel == 0);
}

// Seven alternating broadcast dims cannot merge: more than the kernels take.
BOOST_AUTO_TEST_CASE(too_many_unmergeable_dims_are_refused_naming_the_shapes) {
  const Shape a{2, 1, 2, 1, 2, 1, 2};
  const Shape b{1, 2, 1, 2, 1, 2, 1};
  BOOST_TEST(!broadcast_geometry(merge_broadcast(*broadcast_shapes(a, b), a, b)).has_value());
  const Graph g = f_graph(OpKind::Add, DType::F32, a, b);
  const KernelSelection s = cuda_backend().select_kernel(g, only_node(g));
  const auto* refused = std::get_if<KernelUnsupported>(&s);
  BOOST_REQUIRE(refused != nullptr);
  BOOST_TEST(refused->reason ==
             "Add of [2,1,2,1,2,1,2] and [1,2,1,2,1,2,1] broadcasts over 7 dims that cannot be "
             "merged; the CUDA kernels take at most 6");
  // Six are fine.
  const Graph six = f_graph(OpKind::Add, DType::F32, {2, 1, 2, 1, 2, 1}, {1, 2, 1, 2, 1, 2});
  const KernelSelection ok = cuda_backend().select_kernel(six, only_node(six));
  BOOST_TEST(std::get<KernelChoice>(ok).variant == "f32_add_cuda_broadcast");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(discovery)

using cuda::CudaProbe;
using cuda::unavailable_reason;

CudaProbe probe_with_device(int major, int minor) {
  CudaProbe p;
  p.runtime_version = 13000;
  p.driver_version = 13000;
  p.architectures = "sm_80, sm_90 machine code; compute_90 PTX";
  p.devices.push_back({0, "NVIDIA Test GPU", major, minor, 100, int64_t{80} << 30});
  return p;
}

// What a run on cuda records as its device (volta-audit appends it to the run's machine).
BOOST_AUTO_TEST_CASE(the_device_summary_names_device_0_its_driver_and_toolkit) {
  CudaReport report;
  report.runtime_version = 13000;
  report.driver_version = 12040;
  BOOST_TEST(cuda_device_summary(report).empty());
  report.devices.push_back({0, "NVIDIA H100 80GB HBM3", 9, 0, 132, int64_t{80} << 30});
  report.devices.push_back({1, "NVIDIA A100", 8, 0, 108, int64_t{40} << 30});
  BOOST_TEST(cuda_device_summary(report) ==
             "NVIDIA H100 80GB HBM3 (compute capability 9.0, 132 SMs; driver CUDA 12.4, "
             "toolkit 13.0)");
}

BOOST_AUTO_TEST_CASE(architectures_are_named_as_nvcc_builds_them) {
  BOOST_TEST(cuda::architectures_text("80-real;90-real;90-virtual") ==
             "sm_80, sm_90 machine code; compute_90 PTX");
  BOOST_TEST(cuda::architectures_text("80-real,90-real,90-virtual") ==
             "sm_80, sm_90 machine code; compute_90 PTX");
  BOOST_TEST(cuda::architectures_text("86") == "sm_86 machine code; compute_86 PTX");
  BOOST_TEST(cuda::architectures_text("native") == "native");
  BOOST_TEST(cuda::architectures_text("") == "none");
}

BOOST_AUTO_TEST_CASE(each_missing_piece_is_named) {
  CudaProbe none = probe_with_device(9, 0);
  none.devices.clear();
  none.driver_version = 0;
  none.count = CudaProbe::Count::InsufficientDriver;
  BOOST_TEST(unavailable_reason(none) ==
             "no NVIDIA driver: libcuda.so.1 is not installed or cannot be loaded (this binary's "
             "CUDA 13.0 runtime is linked in and needs only the driver)");

  CudaProbe old_driver = none;
  old_driver.driver_version = 12040;
  BOOST_TEST(unavailable_reason(old_driver) ==
             "the NVIDIA driver (CUDA 12.4) is older than this binary's CUDA 13.0 runtime: "
             "install a driver for CUDA 13.0 or newer, or build Volta with the nvcc that "
             "matches this driver");

  CudaProbe no_device = none;
  no_device.driver_version = 13000;
  no_device.count = CudaProbe::Count::NoDevice;
  BOOST_TEST(unavailable_reason(no_device) ==
             "no CUDA device: the NVIDIA driver (CUDA 13.0) reports none");
  no_device.visible_devices = "7";
  BOOST_TEST(unavailable_reason(no_device) ==
             "no CUDA device: the NVIDIA driver (CUDA 13.0) reports none "
             "(CUDA_VISIBLE_DEVICES=7)");

  CudaProbe failed = no_device;
  failed.count = CudaProbe::Count::Failed;
  failed.count_error = "cudaErrorInitializationError (initialization error)";
  BOOST_TEST(unavailable_reason(failed) ==
             "CUDA could not be initialised: cudaErrorInitializationError (initialization error)");

  BOOST_TEST(unavailable_reason(probe_with_device(7, 5)) ==
             "CUDA device 0 (NVIDIA Test GPU) has compute capability 7.5; the CUDA backend "
             "needs 8.0 or newer (this build: sm_80, sm_90 machine code; compute_90 PTX)");

  CudaProbe no_image = probe_with_device(8, 6);
  no_image.architectures = "sm_90 machine code";
  no_image.kernel_image = false;
  no_image.kernel_image_error =
      "cudaErrorNoKernelImageForDevice (no kernel image is available for execution on the "
      "device)";
  BOOST_TEST(unavailable_reason(no_image) ==
             "CUDA device 0 (NVIDIA Test GPU) has compute capability 8.6, for which this build "
             "has no kernel code (this build: sm_90 machine code; "
             "cudaErrorNoKernelImageForDevice (no kernel image is available for execution on "
             "the device)): configure with -DVOLTA_CUDA_ARCHITECTURES=86-real added");

  BOOST_TEST(unavailable_reason(probe_with_device(8, 0)).empty());
  BOOST_TEST(unavailable_reason(probe_with_device(9, 0)).empty());
  BOOST_TEST(unavailable_reason(probe_with_device(12, 0)).empty());
}

// What a user of this machine sees: a context where the driver and a device are usable, the
// reason otherwise (on a machine without the driver, the exact text).
BOOST_AUTO_TEST_CASE(this_machine) {
  const CudaReport report = cuda_report();
  BOOST_TEST(report.runtime_version >= 12000);
  BOOST_TEST(report.architectures == cuda::architectures_text(VOLTA_TEST_CUDA_ARCHITECTURES));
  if (report.unavailable.empty()) {
    BOOST_TEST_MESSAGE("CUDA device 0: " << report.devices.at(0).name);
    const std::unique_ptr<ExecutionContext> ctx = cuda_backend().make_context({});
    const CudaContext& cuda = cuda_context(*ctx);
    BOOST_TEST(cuda.device().compute_major >= 8);
    BOOST_TEST(cuda.transfers().host_to_device_bytes == 0);
    return;
  }
  BOOST_TEST_MESSAGE("no usable CUDA device: " << report.unavailable);
  expect_error([] { cuda_backend().make_context({}); }, ErrorCode::DeviceUnavailable,
               "the CUDA backend cannot run on this machine: " + report.unavailable);
  if (report.driver_version == 0) {
    BOOST_TEST(report.devices.empty());
    BOOST_TEST(report.unavailable ==
               "no NVIDIA driver: libcuda.so.1 is not installed or cannot be loaded (this "
               "binary's CUDA " +
                   cuda_version_text(report.runtime_version) +
                   " runtime is linked in and needs only the driver)");
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(contexts)

BOOST_AUTO_TEST_CASE(options_are_checked_before_the_device) {
  expect_error([] { cuda_backend().make_context({.threads = 0}); }, ErrorCode::InvalidArgument,
               "threads must be in [1, 1024], got 0");
  ContextOptions bad_scale;
  bad_scale.schedule.chunk_scale = 0.0;
  expect_error([&] { cuda_backend().make_context(bad_scale); }, ErrorCode::InvalidArgument,
               "chunk_scale must be positive and finite, got 0.000000");
}

BOOST_AUTO_TEST_CASE(a_context_of_another_backend_is_refused) {
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  const std::unique_ptr<ExecutionContext> ctx = cpu->make_context({});
  const std::string message =
      "an execution context made by backend 'cpu' given to the CUDA backend: make one with its "
      "make_context()";
  expect_error([&] { cuda_backend().arena(*ctx, 64); }, ErrorCode::BackendMismatch, message);
  expect_error([&] { cuda_backend().synchronize(*ctx); }, ErrorCode::BackendMismatch, message);
  expect_error([&] { cuda_context(*ctx); }, ErrorCode::BackendMismatch, message);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(linalg)

KernelSelection select_only(const Graph& g) {
  return cuda_backend().select_kernel(g, only_node(g));
}

std::string variant_of(const KernelSelection& s) {
  const auto* choice = std::get_if<KernelChoice>(&s);
  if (choice == nullptr) return "refused: " + std::get<KernelUnsupported>(s).reason;
  BOOST_TEST(choice->workspace_bytes == 0);
  BOOST_TEST(choice->worker_scratch_bytes == 0);
  BOOST_TEST(kernel_determinism_name(choice->determinism) == "bit-exact");
  return choice->variant;
}

Graph fused(DType dtype, const std::string& activation) {
  return single_op_graph(
      OpKind::FusedMatMul,
      {TypeInfo{dtype, Shape{2, 3, 4}}, TypeInfo{dtype, Shape{4, 5}}, TypeInfo{dtype, Shape{5}}},
      {{"activation", activation}});
}

BOOST_AUTO_TEST_CASE(each_op_has_a_kernel_per_float_dtype) {
  for (DType dtype : {DType::F32, DType::F64}) {
    const std::string prefix(dtype_name(dtype));
    const Graph matmul = single_op_graph(
        OpKind::MatMul, {TypeInfo{dtype, Shape{2, 1, 3, 4}}, TypeInfo{dtype, Shape{5, 4, 6}}});
    BOOST_TEST(variant_of(select_only(matmul)) == prefix + "_matmul_cuda");
    const Graph gemm = single_op_graph(
        OpKind::Gemm,
        {TypeInfo{dtype, Shape{4, 3}}, TypeInfo{dtype, Shape{6, 4}}, TypeInfo{dtype, Shape{6}}},
        {{"transA", int64_t{1}}, {"transB", int64_t{1}}});
    BOOST_TEST(variant_of(select_only(gemm)) == prefix + "_gemm_cuda");
    BOOST_TEST(variant_of(select_only(fused(dtype, "none"))) == prefix + "_fused_matmul_cuda+bias");
    BOOST_TEST(variant_of(select_only(fused(dtype, "relu"))) ==
               prefix + "_fused_matmul_cuda+bias_relu");
    for (const std::string activation : {"gelu", "gelu_tanh"}) {
      BOOST_TEST(variant_of(select_only(fused(dtype, activation))) ==
                 "refused: no CUDA kernel for FusedMatMul with activation '" + activation +
                     "' (supported: none, relu)");
    }
  }
}

BOOST_AUTO_TEST_CASE(batch_dims_that_cannot_merge_into_six_are_refused) {
  const Graph g =
      single_op_graph(OpKind::MatMul, {TypeInfo{DType::F32, Shape{2, 1, 2, 1, 2, 1, 2, 3, 4}},
                                       TypeInfo{DType::F32, Shape{1, 2, 1, 2, 1, 2, 1, 4, 5}}});
  BOOST_TEST(variant_of(select_only(g)) ==
             "refused: MatMul of [2,1,2,1,2,1,2,3,4] and [1,2,1,2,1,2,1,4,5] broadcasts over 7 "
             "batch dims that cannot be merged; the CUDA kernel takes at most 6");
  // Six merge: accepted.
  const Graph six =
      single_op_graph(OpKind::MatMul, {TypeInfo{DType::F32, Shape{2, 1, 2, 1, 2, 1, 3, 4}},
                                       TypeInfo{DType::F32, Shape{1, 2, 1, 2, 1, 2, 4, 5}}});
  BOOST_TEST(variant_of(select_only(six)) == "f32_matmul_cuda");
}

// The pass fuses MatMul -> Add(bias) -> Relu for a CUDA plan, since the backend runs the result.
BOOST_AUTO_TEST_CASE(a_cuda_plan_fuses_the_gemm_epilogue) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{8, 16});
  const ValueId w = g.add_input("w", DType::F32, Shape{16, 32});
  const ValueId b = g.add_input("b", DType::F32, Shape{32});
  const ValueId mm = g.add(OpKind::MatMul, {x, w}, {}, "mm");
  const ValueId add = g.add(OpKind::Add, {mm, b}, {}, "add");
  g.set_outputs({g.add(OpKind::Relu, {add}, {}, "relu")});
  const ExecutionPlan plan = compile(g, cuda_backend(), DeterminismMode::Strict);
  BOOST_REQUIRE_EQUAL(plan.steps.size(), 1u);
  BOOST_TEST(plan.steps[0].kernel.variant == "f32_fused_matmul_cuda+bias_relu");
}

// The order the CUDA claims name (gemm_reference.h) is the CPU backend's on this machine: its
// AVX-512 micro-kernels fold K in slices of kGemmSlice (f32 512, f64 256), its AVX2 ones in
// slices of 256. Checked here, without a device, on whichever the CPU runs.
template <class T>
void check_cpu_order(DType dtype) {
  constexpr int64_t m = 19, k = 1100, n = 37;
  const Tensor a = random_tensor(dtype, Shape{3, m, k}, 1, -1.0, 1.0);
  const Tensor b = random_tensor(dtype, Shape{k, n}, 2, -1.0, 1.0);
  const Tensor bt = random_tensor(dtype, Shape{n, k}, 3, -1.0, 1.0);
  const Tensor c = random_tensor(dtype, Shape{m, 1}, 4, -1.0, 1.0);
  const Graph matmul =
      single_op_graph(OpKind::MatMul, {TypeInfo{dtype, a.shape()}, TypeInfo{dtype, b.shape()}});
  static const std::unique_ptr<Backend> cpu = make_backend("cpu");
  const std::string variant = compile(matmul, *cpu, DeterminismMode::Strict, {.optimize = false})
                                  .steps.at(0)
                                  .kernel.variant;
  // Every CPU micro-kernel (AVX-512, AVX2, generic) folds K in the same slices with FMA.
  const int64_t slice = cuda::kGemmSlice<T>;
  const Tensor y = test::run_cpu(matmul, {a, b}, 3)[0];
  BOOST_TEST(y.bit_equal(test::reference_matmul<T>(a, b, slice)), variant);

  const Tensor a0 = random_tensor(dtype, Shape{m, k}, 5, -1.0, 1.0);
  const Graph gemm = single_op_graph(
      OpKind::Gemm,
      {TypeInfo{dtype, a0.shape()}, TypeInfo{dtype, bt.shape()}, TypeInfo{dtype, c.shape()}},
      {{"alpha", 0.75}, {"beta", -1.5}, {"transB", int64_t{1}}});
  const Tensor gy = test::run_cpu(gemm, {a0, bt, c}, 3)[0];
  BOOST_TEST(gy.bit_equal(test::reference_gemm_op<T>(a0, bt, c, 0.75, -1.5, false, true, slice)),
             variant);
}

BOOST_AUTO_TEST_CASE(the_claimed_order_is_the_cpu_backends) {
  check_cpu_order<float>(DType::F32);
  check_cpu_order<double>(DType::F64);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace volta

// ---- Reductions and normalizations: geometry and selection, on the host ----
namespace volta {
namespace {

using cuda::ReduceExtents;
using cuda::ReduceGeometry;
using Ints = std::vector<int64_t>;

Attributes reduce_attrs(const Ints& axes, int64_t keepdims = 0) {
  return {{"axes", axes}, {"keepdims", keepdims}};
}

ReduceAxes axes_of(const Ints& axes, int rank) {
  Node node;
  node.op = OpKind::ReduceSum;
  node.attrs = reduce_attrs(axes);
  return resolve_reduce_axes(AttrReader(node), rank);
}

// "size:stride size:stride" of one side of a geometry.
std::string extents(const ReduceExtents& e) {
  std::string out;
  for (int d = 0; d < e.rank; ++d) {
    out += (d == 0 ? "" : " ") + std::to_string(e.sizes[d]) + ":" + std::to_string(e.strides[d]);
  }
  return out;
}

KernelSelection select_single(OpKind op, const std::vector<std::optional<TypeInfo>>& inputs,
                              Attributes attrs = {}, int outputs = 1) {
  const Graph g = single_op_graph(op, inputs, std::move(attrs), outputs);
  return cuda_backend().select_kernel(g, only_node(g));
}

KernelChoice chosen(const KernelSelection& s) {
  const auto* choice = std::get_if<KernelChoice>(&s);
  if (choice == nullptr) BOOST_FAIL(std::get<KernelUnsupported>(s).reason);
  return *choice;
}

std::string refusal(const KernelSelection& s) {
  const auto* refused = std::get_if<KernelUnsupported>(&s);
  BOOST_REQUIRE(refused != nullptr);
  return refused->reason;
}

BOOST_AUTO_TEST_SUITE(reduction_geometry)

// Rows as the CPU's ReduceLayout visits them: kept and reduced extents outermost first, size-1
// axes dropped, neighbours of the same kind merged.
BOOST_AUTO_TEST_CASE(rows_follow_the_cpu_layout) {
  const auto g = [](const Shape& s, const Ints& axes) {
    const std::optional<ReduceGeometry> r = cuda::reduce_geometry(s, axes_of(axes, s.rank()));
    BOOST_REQUIRE(r.has_value());
    return *r;
  };
  ReduceGeometry r = g({2, 3, 4}, {1});
  BOOST_TEST(extents(r.kept) == "2:12 4:1");
  BOOST_TEST(extents(r.reduced) == "3:4");
  BOOST_TEST(r.outputs == 8);
  BOOST_TEST(r.row_length == 3);
  r = g({2, 3, 4}, {0, 2});  // non-contiguous reduced axes: row-major over both
  BOOST_TEST(extents(r.kept) == "3:4");
  BOOST_TEST(extents(r.reduced) == "2:12 4:1");
  BOOST_TEST(r.row_length == 8);
  r = g({2, 3, 4}, {});  // everything: one contiguous row
  BOOST_TEST(extents(r.kept).empty());
  BOOST_TEST(extents(r.reduced) == "24:1");
  BOOST_TEST(r.outputs == 1);
  r = g({2, 1, 3}, {0, 2});  // the size-1 axis between them drops, so they merge
  BOOST_TEST(extents(r.reduced) == "6:1");
  BOOST_TEST(r.outputs == 1);
  r = g({5, 1}, {1});  // only a size-1 axis reduced: rows of one element
  BOOST_TEST(extents(r.kept) == "5:1");
  BOOST_TEST(r.reduced.rank == 0);
  BOOST_TEST(r.row_length == 1);
  r = g({3, 0, 2}, {1});  // empty rows
  BOOST_TEST(r.outputs == 6);
  BOOST_TEST(r.row_length == 0);
  BOOST_TEST(r.leaves() == 1);
  BOOST_TEST(g({2, 8193}, {1}).leaves() == 3);
  BOOST_TEST(g({2, 8192}, {1}).leaves() == 2);
}

BOOST_AUTO_TEST_CASE(too_many_alternations_are_refused_naming_the_shape) {
  const Shape alternating{2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2};
  const Ints odd = {1, 3, 5, 7, 9, 11, 13, 15, 17};
  BOOST_TEST(!cuda::reduce_geometry(alternating, axes_of(odd, alternating.rank())).has_value());
  const Shape sixteen{2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2};
  const Ints eight = {1, 3, 5, 7, 9, 11, 13, 15};  // and eight kept runs
  BOOST_TEST(cuda::reduce_geometry(sixteen, axes_of(eight, sixteen.rank())).has_value());
  BOOST_TEST(refusal(select_single(OpKind::ReduceSum, {TypeInfo{DType::F32, alternating}},
                                   reduce_attrs(odd))) ==
             "ReduceSum of " + alternating.str() +
                 " alternates kept and reduced axes more than 8 times; the CUDA kernels take at "
                 "most 8 runs of each");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(reduction_and_normalization_selection)

// Rows of more than one leaf keep a partial per (leaf, output) in the planned workspace, in
// the op's accumulator: f32, double for ReduceL2 (Wide) and f64, 16 bytes for ReduceProd.
BOOST_AUTO_TEST_CASE(reductions_declare_the_leaf_partials_as_workspace) {
  const TypeInfo long_rows{DType::F32, Shape{3, 2 * 4096 + 1}};
  const std::vector<std::pair<OpKind, int64_t>> bytes = {
      {OpKind::ReduceSum, 4}, {OpKind::ReduceMean, 4},      {OpKind::ReduceMax, 4},
      {OpKind::ReduceMin, 4}, {OpKind::ReduceSumSquare, 4}, {OpKind::ReduceL1, 4},
      {OpKind::ReduceL2, 8},  {OpKind::ReduceProd, 16}};
  for (const auto& [op, partial] : bytes) {
    const KernelChoice c = chosen(select_single(op, {long_rows}, reduce_attrs({1})));
    BOOST_TEST(c.variant == "f32_" +
                                std::string(op == OpKind::ReduceSum         ? "reduce_sum"
                                            : op == OpKind::ReduceMean      ? "reduce_mean"
                                            : op == OpKind::ReduceMax       ? "reduce_max"
                                            : op == OpKind::ReduceMin       ? "reduce_min"
                                            : op == OpKind::ReduceSumSquare ? "reduce_sum_square"
                                            : op == OpKind::ReduceL1        ? "reduce_l1"
                                            : op == OpKind::ReduceL2        ? "reduce_l2"
                                                                            : "reduce_prod") +
                                "_cuda_tree4096x8");
    BOOST_TEST(c.workspace_bytes == 3 * 3 * partial, op_name(op));
    BOOST_TEST(kernel_determinism_name(c.determinism) == "bit-exact");
    // One leaf per row (4096 elements): finished in place, no workspace.
    const TypeInfo one_leaf{DType::F32, Shape{3, 4096}};
    BOOST_TEST(chosen(select_single(op, {one_leaf}, reduce_attrs({1}))).workspace_bytes == 0);
  }
  const KernelChoice f64 = chosen(
      select_single(OpKind::ReduceSum, {TypeInfo{DType::F64, Shape{10000}}}, reduce_attrs({})));
  BOOST_TEST(f64.variant == "f64_reduce_sum_cuda_tree4096x8");
  BOOST_TEST(f64.workspace_bytes == 3 * 8);
}

BOOST_AUTO_TEST_CASE(dtypes_pick_their_kernel_and_the_rest_are_refused_in_the_cpu_words) {
  const KernelChoice i64 = chosen(
      select_single(OpKind::ReduceProd, {TypeInfo{DType::I64, Shape{2, 5000}}}, reduce_attrs({1})));
  BOOST_TEST(i64.variant == "i64_reduce_prod_cuda_tree4096x8");
  BOOST_TEST(i64.workspace_bytes == 2 * 2 * 8);  // wrapping products: partials in i64
  BOOST_TEST(chosen(select_single(OpKind::ReduceSum, {TypeInfo{DType::I32, Shape{5000}}},
                                  reduce_attrs({})))
                 .workspace_bytes == 2 * 4);
  BOOST_TEST(chosen(select_single(OpKind::Softmax, {TypeInfo{DType::F64, Shape{2, 3}}},
                                  {{"axis", int64_t{-1}}}))
                 .variant == "f64_softmax_cuda_tree4096x8");
  const TypeInfo x{DType::F32, Shape{4, 6, 8}};
  BOOST_TEST(
      chosen(select_single(OpKind::LayerNormalization,
                           {x, TypeInfo{DType::F32, Shape{8}}, TypeInfo{DType::F32, Shape{6, 1}}},
                           {{"axis", int64_t{1}}}))
          .variant == "f32_layernorm_cuda_tree4096x8");
  const Shape eight{2, 2, 2, 2, 2, 2, 2, 2};
  const Shape alternating{2, 1, 2, 1, 2, 1, 2, 1};
  BOOST_TEST(refusal(select_single(
                 OpKind::LayerNormalization,
                 {TypeInfo{DType::F32, eight}, TypeInfo{DType::F32, alternating}, std::nullopt},
                 {{"axis", int64_t{0}}})) ==
             "LayerNormalization of " + eight.str() + " with Scale " + alternating.str() +
                 " broadcasts over more dims than the CUDA kernel takes (6 once merged)");
  const KernelChoice ln =
      chosen(select_single(OpKind::LayerNormalization,
                           {TypeInfo{DType::F64, Shape{4, 6, 8}}, TypeInfo{DType::F64, Shape{6, 8}},
                            TypeInfo{DType::F64, Shape{6, 8}}},
                           {{"axis", int64_t{1}}}, 3));
  BOOST_TEST(ln.variant == "f64_layernorm_cuda_tree4096x8");
  BOOST_TEST(ln.workspace_bytes == 0);
  BOOST_TEST(chosen(select_single(OpKind::Softmax, {x}, {{"axis", int64_t{1}}})).variant ==
             "f32_softmax_cuda_tree4096x8");
}

// A transformer block's reductions and normalizations plan for CUDA without a device, the
// reductions' workspace placed by the planner.
BOOST_AUTO_TEST_CASE(a_graph_of_them_compiles_strict_without_a_device) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{16, 32, 64});
  const ValueId scale = g.add_input("scale", DType::F32, Shape{64});
  const ValueId ln =
      g.add_node(OpKind::LayerNormalization, {x, scale}, {{"axis", int64_t{-1}}}, "ln")[0];
  const ValueId sm = g.add(OpKind::Softmax, {ln}, {{"axis", int64_t{-1}}}, "softmax");
  const ValueId big = g.add_input("big", DType::F32, Shape{3, 10000});
  g.set_outputs({g.add(OpKind::ReduceMean, {sm}, reduce_attrs({0, 2}, 1), "mean"),
                 g.add(OpKind::ReduceSum, {big}, reduce_attrs({1}), "sum")});
  const ExecutionPlan plan = compile(g, cuda_backend(), DeterminismMode::Strict);
  std::string variants;
  int64_t workspace = 0;
  for (const PlannedStep& step : plan.steps) {
    variants += (variants.empty() ? "" : " ") + step.kernel.variant;
    workspace += step.kernel.workspace_bytes;
  }
  BOOST_TEST(variants ==
             "f32_layernorm_cuda_tree4096x8 f32_softmax_cuda_tree4096x8 "
             "f32_reduce_mean_cuda_tree4096x8 f32_reduce_sum_cuda_tree4096x8");
  BOOST_TEST(workspace == 3 * 3 * 4);
}

BOOST_AUTO_TEST_SUITE_END()

// ---- Elementwise, activation and movement coverage (issue #18) ----

// The variant an exact node gets, or the refusal's text prefixed "refused: ".
std::string selection_of(const Graph& g) {
  const KernelSelection s = cuda_backend().select_kernel(g, only_node(g));
  if (const auto* refused = std::get_if<KernelUnsupported>(&s))
    return "refused: " + refused->reason;
  return std::get<KernelChoice>(s).variant;
}

BOOST_AUTO_TEST_SUITE(conversion_and_movement)

// Float to integer casts declare a word of workspace for their check of the values.
BOOST_AUTO_TEST_CASE(cast_takes_every_pair_and_checks_float_to_integer) {
  auto cast = [](DType from, DType to) {
    const Graph g = single_op_graph(OpKind::Cast, {TypeInfo{from, Shape{3}}},
                                    {{"to", std::string(dtype_name(to))}});
    const KernelSelection s = cuda_backend().select_kernel(g, only_node(g));
    const KernelChoice& choice = std::get<KernelChoice>(s);
    return choice.variant + " " + std::to_string(choice.workspace_bytes);
  };
  BOOST_TEST(cast(DType::F32, DType::F64) == "f32_cast_f64_cuda 0");
  BOOST_TEST(cast(DType::I64, DType::F32) == "i64_cast_f32_cuda 0");
  BOOST_TEST(cast(DType::F64, DType::Bool) == "f64_cast_bool_cuda 0");
  BOOST_TEST(cast(DType::Bool, DType::I32) == "bool_cast_i32_cuda 0");
  BOOST_TEST(cast(DType::F32, DType::I64) == "f32_cast_i64_cuda 8");
  BOOST_TEST(cast(DType::F64, DType::I32) == "f64_cast_i32_cuda 8");
}

BOOST_AUTO_TEST_CASE(where_and_movement_kernels_go_by_element_size) {
  for (const auto& [dtype, prefix] :
       {std::pair{DType::Bool, "x8"}, std::pair{DType::F32, "x32"}, std::pair{DType::I32, "x32"},
        std::pair{DType::F64, "x64"}, std::pair{DType::I64, "x64"}}) {
    const Graph where =
        single_op_graph(OpKind::Where, {TypeInfo{DType::Bool, Shape{2, 1}},
                                        TypeInfo{dtype, Shape{3}}, TypeInfo{dtype, Shape{2, 3}}});
    BOOST_TEST(selection_of(where) == std::string(prefix) + "_where_cuda");
    const Graph transpose = single_op_graph(OpKind::Transpose, {TypeInfo{dtype, Shape{2, 3, 4}}},
                                            {{"perm", std::vector<int64_t>{2, 0, 1}}});
    BOOST_TEST(selection_of(transpose) == std::string(prefix) + "_transpose_cuda_strided");
  }
}

// Gather declares one word of workspace, where the device leaves the first bad index's
// position.
BOOST_AUTO_TEST_CASE(gather_checks_its_indices_in_a_word_of_workspace) {
  const Graph g = single_op_graph(
      OpKind::Gather, {TypeInfo{DType::F32, Shape{10, 4}}, TypeInfo{DType::I64, Shape{2, 3}}});
  const KernelSelection s = cuda_backend().select_kernel(g, only_node(g));
  const auto* choice = std::get_if<KernelChoice>(&s);
  BOOST_REQUIRE(choice != nullptr);
  BOOST_TEST(choice->variant == "x32_gather_i64_indices_cuda");
  BOOST_TEST(choice->workspace_bytes == 8);
  const Graph i32 = single_op_graph(
      OpKind::Gather, {TypeInfo{DType::Bool, Shape{10}}, TypeInfo{DType::I32, Shape{3}}});
  BOOST_TEST(selection_of(i32) == "x8_gather_i32_indices_cuda");
}

BOOST_AUTO_TEST_CASE(logical_kernels_take_the_cpus_dtypes) {
  auto binary = [](OpKind op, DType dtype) {
    return single_op_graph(op, {TypeInfo{dtype, Shape{2, 3}}, TypeInfo{dtype, Shape{3}}});
  };
  BOOST_TEST(selection_of(binary(OpKind::Equal, DType::Bool)) == "bool_equal_cuda");
  BOOST_TEST(selection_of(binary(OpKind::Less, DType::I64)) == "i64_less_cuda");
  BOOST_TEST(selection_of(binary(OpKind::GreaterOrEqual, DType::F64)) ==
             "f64_greater_or_equal_cuda");
  BOOST_TEST(selection_of(binary(OpKind::Xor, DType::Bool)) == "bool_xor_cuda");
  BOOST_TEST(selection_of(single_op_graph(OpKind::IsInf, {TypeInfo{DType::F32, Shape{4}}})) ==
             "f32_isinf_cuda");
  BOOST_TEST(selection_of(single_op_graph(OpKind::Not, {TypeInfo{DType::Bool, Shape{4}}})) ==
             "bool_not_cuda");
}

BOOST_AUTO_TEST_CASE(copies_past_eight_unmergeable_axes_are_refused) {
  const Graph g =
      single_op_graph(OpKind::Transpose, {TypeInfo{DType::F32, Shape{2, 2, 2, 2, 2, 2, 2, 2, 2}}},
                      {{"perm", std::vector<int64_t>{8, 7, 6, 5, 4, 3, 2, 1, 0}}});
  BOOST_TEST(selection_of(g) ==
             "refused: Transpose of [2,2,2,2,2,2,2,2,2] walks 9 axes that cannot be "
             "merged; the CUDA kernel takes at most 8");
}

// The tiny transformer's inference graph has a CUDA kernel for every node, and its optimized
// plan compiles strict without a device: the fusion pass fuses only what the backend runs
// (FusedMatMul with a bias or Relu; a Gelu after the bias stays its own node).
BOOST_AUTO_TEST_CASE(the_tiny_transformer_compiles_for_cuda) {
  const Graph g = model::inference_graph(model::kTinyTransformer, 2).graph;
  std::string missing;
  for (const Node& node : g.nodes()) {
    if (std::holds_alternative<KernelUnsupported>(cuda_backend().select_kernel(g, node))) {
      missing += (missing.empty() ? "" : ", ") + std::string(op_name(node.op));
    }
  }
  BOOST_TEST(missing.empty(), "without a CUDA kernel: " << missing);
  const ExecutionPlan plan = compile(g, cuda_backend(), DeterminismMode::Strict);
  std::string variants = kernel_variants(plan);
  BOOST_TEST(variants.find("f32_fused_matmul_cuda+bias") != std::string::npos, variants);
  BOOST_TEST(variants.find("f32_gelu_erf_cuda") != std::string::npos, variants);
}

BOOST_AUTO_TEST_SUITE_END()

// ---- Indexing (kernels/indexing_ops.cpp) ----

BOOST_AUTO_TEST_SUITE(indexing)

// The variant and workspace an exact node gets: "x32_gatherelements_i64_indices_cuda 8".
std::string chosen(const Graph& g) {
  const KernelSelection s = cuda_backend().select_kernel(g, only_node(g));
  if (const auto* refused = std::get_if<KernelUnsupported>(&s))
    return "refused: " + refused->reason;
  const auto& choice = std::get<KernelChoice>(s);
  BOOST_TEST(choice.worker_scratch_bytes == 0);
  BOOST_TEST(kernel_determinism_name(choice.determinism) == "bit-exact");
  return choice.variant + " " + std::to_string(choice.workspace_bytes);
}

BOOST_AUTO_TEST_CASE(the_claims_take_the_cpus_dtypes) {
  std::string claims;
  for (const CudaOpClaim& c : cuda_op_claims()) {
    if (op_schema(c.op).family != OpFamily::Indexing) continue;
    claims += std::string(op_name(c.op)) + " " + c.dtypes.str() + " " +
              std::string(cross_backend_exactness_name(c.exactness)) + "; ";
  }
  BOOST_TEST(claims ==
             "GatherElements {f32,f64,i64,i32,bool} bitwise; "
             "GatherND {f32,f64,i64,i32,bool} bitwise; "
             "ScatterElements {f32,f64,i64,i32,bool} bitwise-except-nan-payload; "
             "ScatterND {f32,f64,i64,i32,bool} bitwise-except-nan-payload; "
             "TopK {f32,f64,i64,i32} bitwise; OneHot {f32,f64,i64,i32,bool} bitwise; "
             "Trilu {f32,f64,i64,i32,bool} bitwise; ");
}

// Index checks take one word of workspace; the gathers, Trilu and OneHot go by element size,
// the scatters by dtype (their reductions are arithmetic).
BOOST_AUTO_TEST_CASE(kernels_go_by_element_size_or_dtype_and_index_type) {
  const TypeInfo f32{DType::F32, Shape{4, 5}};
  const TypeInfo bool_data{DType::Bool, Shape{4, 5}};
  const TypeInfo i64_indices{DType::I64, Shape{2, 5}};
  const TypeInfo i32_indices{DType::I32, Shape{2, 5}};
  BOOST_TEST(chosen(single_op_graph(OpKind::GatherElements, {f32, i64_indices})) ==
             "x32_gatherelements_i64_indices_cuda 8");
  BOOST_TEST(chosen(single_op_graph(OpKind::GatherElements, {bool_data, i32_indices})) ==
             "x8_gatherelements_i32_indices_cuda 8");
  BOOST_TEST(chosen(single_op_graph(OpKind::GatherND, {TypeInfo{DType::F64, Shape{4, 5}},
                                                       TypeInfo{DType::I32, Shape{3, 2}}})) ==
             "x64_gathernd_i32_indices_cuda 8");
  BOOST_TEST(chosen(single_op_graph(OpKind::ScatterElements,
                                    {TypeInfo{DType::I32, Shape{4, 5}}, i64_indices,
                                     TypeInfo{DType::I32, Shape{2, 5}}},
                                    {{"reduction", std::string("add")}})) ==
             "i32_scatterelements_i64_indices_cuda_by_line 8");
  BOOST_TEST(
      chosen(single_op_graph(OpKind::ScatterND, {bool_data, TypeInfo{DType::I32, Shape{3, 1}},
                                                 TypeInfo{DType::Bool, Shape{3, 5}}})) ==
      "bool_scatternd_i32_indices_cuda_by_column 8");
  BOOST_TEST(chosen(single_op_graph(OpKind::Trilu, {TypeInfo{DType::I64, Shape{3, 3}}})) ==
             "x64_trilu_cuda 0");
  BOOST_TEST(chosen(single_op_graph(
                 OpKind::OneHot, {TypeInfo{DType::F64, Shape{3}}, TypeInfo{DType::Bool, Shape{2}}},
                 {{"depth", int64_t{4}}})) == "x8_onehot_f64_indices_cuda 0");
  BOOST_TEST(chosen(single_op_graph(OpKind::TopK, {TypeInfo{DType::I32, Shape{3, 9}}},
                                    {{"k", int64_t{2}}}, 2)) == "i32_topk_cuda_rank_count 0");
}

// Reduction "none" with more than 64 updates in a row per thread finds each element's last
// update by an integer atomicMax over a table of 8 bytes per target in the workspace.
BOOST_AUTO_TEST_CASE(long_runs_of_none_go_by_last_writer) {
  const TypeInfo data{DType::F32, Shape{4, 100}};
  auto elements = [&](int64_t length, const std::string& reduction) {
    return chosen(single_op_graph(
        OpKind::ScatterElements,
        {data, TypeInfo{DType::I64, Shape{4, length}}, TypeInfo{DType::F32, Shape{4, length}}},
        {{"axis", int64_t{1}}, {"reduction", reduction}}));
  };
  BOOST_TEST(elements(64, "none") == "f32_scatterelements_i64_indices_cuda_by_line 8");
  BOOST_TEST(elements(65, "none") ==
             "x32_scatterelements_i64_indices_cuda_last_writer " + std::to_string(8 + 400 * 8));
  BOOST_TEST(elements(65, "add") == "f32_scatterelements_i64_indices_cuda_by_line 8");
  auto nd = [&](int64_t tuples, const std::string& reduction) {
    return chosen(single_op_graph(
        OpKind::ScatterND,
        {TypeInfo{DType::Bool, Shape{4, 100}}, TypeInfo{DType::I32, Shape{tuples, 1}},
         TypeInfo{DType::Bool, Shape{tuples, 100}}},
        {{"reduction", reduction}}));
  };
  BOOST_TEST(nd(64, "none") == "bool_scatternd_i32_indices_cuda_by_column 8");
  BOOST_TEST(nd(65, "none") ==
             "x8_scatternd_i32_indices_cuda_last_writer " + std::to_string(8 + 4 * 8));
}

BOOST_AUTO_TEST_CASE(data_past_eight_axes_is_refused_naming_the_shape) {
  const Shape nine{1, 2, 1, 2, 1, 2, 1, 2, 3};
  BOOST_TEST(chosen(single_op_graph(OpKind::GatherElements,
                                    {TypeInfo{DType::F32, nine}, TypeInfo{DType::I64, nine}})) ==
             "refused: GatherElements of data [1,2,1,2,1,2,1,2,3] (rank 9): the CUDA kernel "
             "takes data of rank at most 8");
  BOOST_TEST(chosen(single_op_graph(OpKind::ScatterND,
                                    {TypeInfo{DType::F32, nine}, TypeInfo{DType::I64, Shape{2, 1}},
                                     TypeInfo{DType::F32, Shape{2, 2, 1, 2, 1, 2, 1, 2, 3}}})) ==
             "refused: ScatterND of data [1,2,1,2,1,2,1,2,3] (rank 9): the CUDA kernel takes data "
             "of rank at most 8");
}

// A graph of every indexing op plans strict for CUDA without a device, each index check's word
// placed by the planner.
BOOST_AUTO_TEST_CASE(a_graph_of_them_compiles_strict_without_a_device) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{6, 8});
  const ValueId idx = g.add_input("idx", DType::I64, Shape{6, 3});
  const ValueId tuples = g.add_input("tuples", DType::I32, Shape{4, 1});
  const ValueId rows = g.add_input("rows", DType::F32, Shape{4, 8});
  const ValueId labels = g.add_input("labels", DType::I64, Shape{6});
  const ValueId values = g.add_input("values", DType::F32, Shape{2});
  const ValueId gathered = g.add(OpKind::GatherElements, {x, idx}, {{"axis", int64_t{1}}}, "ge");
  const ValueId scattered = g.add(OpKind::ScatterElements, {x, idx, gathered},
                                  {{"axis", int64_t{1}}, {"reduction", std::string("add")}}, "se");
  const ValueId nd = g.add(OpKind::ScatterND, {scattered, tuples, rows}, {}, "snd");
  const ValueId lower = g.add(OpKind::Trilu, {nd}, {{"upper", int64_t{0}}}, "trilu");
  const std::vector<ValueId> top =
      g.add_node(OpKind::TopK, {lower}, {{"k", int64_t{3}}}, "topk", 2);
  const ValueId hot = g.add(OpKind::OneHot, {labels, values}, {{"depth", int64_t{5}}}, "onehot");
  const ValueId picked = g.add(OpKind::GatherND, {x, tuples}, {}, "gnd");
  g.set_outputs({top[0], top[1], hot, picked});
  const ExecutionPlan plan = compile(g, cuda_backend(), DeterminismMode::Strict);
  std::string variants;
  int64_t workspace = 0;
  for (const PlannedStep& step : plan.steps) {
    variants += (variants.empty() ? "" : " ") + step.kernel.variant;
    workspace += step.kernel.workspace_bytes;
  }
  BOOST_TEST(variants ==
             "x32_gatherelements_i64_indices_cuda f32_scatterelements_i64_indices_cuda_by_line "
             "f32_scatternd_i32_indices_cuda_by_column x32_trilu_cuda f32_topk_cuda_rank_count "
             "x32_onehot_i64_indices_cuda x32_gathernd_i32_indices_cuda");
  BOOST_TEST(workspace == 4 * 8);
}

BOOST_AUTO_TEST_SUITE_END()

// ---- Loss (kernels/loss_ops.cpp) ----

BOOST_AUTO_TEST_SUITE(loss)

std::string loss_choice(OpKind op, DType dtype, const std::string& reduction, int outputs,
                        const Shape& input = Shape{4, 3, 5}) {
  std::vector<int64_t> samples = input.dims();
  samples.erase(samples.begin() + 1);
  const Graph g =
      single_op_graph(op, {TypeInfo{dtype, input}, TypeInfo{DType::I64, Shape(samples)}},
                      {{"reduction", reduction}}, outputs);
  const KernelSelection s = cuda_backend().select_kernel(g, only_node(g));
  if (const auto* refused = std::get_if<KernelUnsupported>(&s))
    return "refused: " + refused->reason;
  const auto& choice = std::get<KernelChoice>(s);
  return choice.variant + " " + std::to_string(choice.workspace_bytes);
}

// The check word; "sum" and "mean" add three 8-byte partials per 4096-sample leaf; a
// SoftmaxCrossEntropyLoss without its log_prob output keeps the log-probabilities in the
// workspace.
BOOST_AUTO_TEST_CASE(losses_declare_the_check_word_partials_and_log_prob) {
  using K = OpKind;
  BOOST_TEST(loss_choice(K::NegativeLogLikelihoodLoss, DType::F32, "none", 1) ==
             "f32_nll_loss_cuda_tree4096x8 8");
  BOOST_TEST(loss_choice(K::NegativeLogLikelihoodLoss, DType::F64, "mean", 1) ==
             "f64_nll_loss_cuda_tree4096x8 32");
  BOOST_TEST(loss_choice(K::NegativeLogLikelihoodLoss, DType::F32, "sum", 1, Shape{3, 2, 4097}) ==
             "f32_nll_loss_cuda_tree4096x8 104");  // 12291 samples: 4 leaves
  BOOST_TEST(loss_choice(K::SoftmaxCrossEntropyLoss, DType::F32, "mean", 2) ==
             "f32_sce_loss_cuda_log_softmax_tree4096x8 32");
  BOOST_TEST(loss_choice(K::SoftmaxCrossEntropyLoss, DType::F64, "none", 1) ==
             "f64_sce_loss_cuda_log_softmax_tree4096x8 " + std::to_string(8 + 60 * 8));
}

BOOST_AUTO_TEST_CASE(the_claims_say_which_loss_has_the_cpus_bits) {
  std::string claims;
  for (const CudaOpClaim& c : cuda_op_claims()) {
    if (op_schema(c.op).family != OpFamily::Loss) continue;
    claims += std::string(op_name(c.op)) + " " + c.dtypes.str() + " " +
              std::string(cross_backend_exactness_name(c.exactness)) + "; ";
  }
  BOOST_TEST(claims ==
             "SoftmaxCrossEntropyLoss {f32,f64} not-claimed; "
             "NegativeLogLikelihoodLoss {f32,f64} bitwise-except-nan-payload; ");
}

BOOST_AUTO_TEST_SUITE_END()

// ---- Math kernels: libm-backed ops, f64 activations, LogSoftmax, LRN, ReduceLogSumExp ----

BOOST_AUTO_TEST_SUITE(math_selection)

// Variants name the dtype, and for Pow the broadcast walk, as the other binary ops do.
BOOST_AUTO_TEST_CASE(math_ops_pick_their_dtype_and_walk) {
  auto variant = [](OpKind op, const std::vector<std::optional<TypeInfo>>& inputs,
                    Attributes attrs = {}) {
    return chosen(select_single(op, inputs, std::move(attrs))).variant;
  };
  const TypeInfo f64{DType::F64, Shape{2, 3}};
  const TypeInfo f32_row{DType::F32, Shape{3}};
  BOOST_TEST(variant(OpKind::Pow, {f64, f64}) == "f64_pow_cuda_libm_contiguous");
  BOOST_TEST(variant(OpKind::Pow, {TypeInfo{DType::F32, Shape{2, 3}}, f32_row}) ==
             "f32_pow_cuda_libm_broadcast");
  BOOST_TEST(variant(OpKind::Atanh, {f64}) == "f64_atanh_cuda_libm");
  BOOST_TEST(variant(OpKind::Gelu, {f64}, {{"approximate", std::string("tanh")}}) ==
             "f64_gelu_tanh_cuda");
  BOOST_TEST(
      variant(OpKind::PRelu, {TypeInfo{DType::I32, Shape{2, 3}}, TypeInfo{DType::I32, Shape{3}}}) ==
      "i32_prelu_cuda_broadcast");
  BOOST_TEST(variant(OpKind::LogSoftmax, {f64}, {{"axis", int64_t{0}}}) ==
             "f64_logsoftmax_cuda_tree4096x8");
  BOOST_TEST(variant(OpKind::LRN, {TypeInfo{DType::F32, Shape{1, 4, 2, 2}}},
                     {{"size", int64_t{3}}}) == "f32_lrn_cuda_channel_window");
}

// ReduceLogSumExp keeps each row's max (256-byte aligned), then the leaf partials both of its
// passes use, when rows span more than one leaf.
BOOST_AUTO_TEST_CASE(log_sum_exp_declares_its_maxima_and_partials) {
  const KernelChoice long_rows = chosen(select_single(
      OpKind::ReduceLogSumExp, {TypeInfo{DType::F32, Shape{3, 2 * 4096 + 1}}}, reduce_attrs({1})));
  BOOST_TEST(long_rows.variant == "f32_reduce_log_sum_exp_cuda_2pass_tree4096x8");
  BOOST_TEST(long_rows.workspace_bytes == 256 + 3 * 3 * 4);
  const KernelChoice one_leaf = chosen(select_single(
      OpKind::ReduceLogSumExp, {TypeInfo{DType::F64, Shape{70, 4096}}}, reduce_attrs({1})));
  BOOST_TEST(one_leaf.variant == "f64_reduce_log_sum_exp_cuda_2pass_tree4096x8");
  BOOST_TEST(one_leaf.workspace_bytes == 768);  // 70 maxima of 8 bytes, rounded up
  const Shape alternating{2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2};
  BOOST_TEST(refusal(select_single(OpKind::ReduceLogSumExp, {TypeInfo{DType::F64, alternating}},
                                   reduce_attrs({1, 3, 5, 7, 9, 11, 13, 15, 17}))) ==
             "ReduceLogSumExp of " + alternating.str() +
                 " alternates kept and reduced axes more than 8 times; the CUDA kernels take at "
                 "most 8 runs of each");
}

// Claims that leave f64 out reach the capabilities the parity suite and the docs read.
BOOST_AUTO_TEST_CASE(libm_f64_kernels_are_left_out_of_the_claims) {
  const Capabilities caps = cuda_backend().capabilities();
  const OpCapability& exp = caps[static_cast<size_t>(op_index(OpKind::Exp))];
  BOOST_TEST(exp.dtypes.str() == "{f32,f64}");
  BOOST_TEST(cross_backend_exactness_name(exp.cpu_exactness) == "bitwise-except-nan-payload");
  BOOST_TEST(exp.cpu_tolerance_dtypes.str() == "{f64}");
  const OpCapability& softmax = caps[static_cast<size_t>(op_index(OpKind::Softmax))];
  BOOST_TEST(cross_backend_exactness_name(softmax.cpu_exactness) == "bitwise");
  BOOST_TEST(softmax.cpu_tolerance_dtypes.str() == "{f64}");
  const OpCapability& shrink = caps[static_cast<size_t>(op_index(OpKind::Shrink))];
  BOOST_TEST(shrink.dtypes.str() == "{f32,f64}");
  BOOST_TEST(shrink.cpu_tolerance_dtypes.empty());
  for (OpKind op :
       {OpKind::Pow, OpKind::Sin, OpKind::LogSoftmax, OpKind::LRN, OpKind::ReduceLogSumExp}) {
    const OpCapability& c = caps[static_cast<size_t>(op_index(op))];
    BOOST_TEST(c.dtypes.str() == "{f32,f64}", op_name(op));
    BOOST_TEST(cross_backend_exactness_name(c.cpu_exactness) == "not-claimed", op_name(op));
  }
}

BOOST_AUTO_TEST_SUITE_END()

// ---- Layout and resampling ----

BOOST_AUTO_TEST_SUITE(layout_and_resampling)

KernelChoice choice_for(const Graph& g) {
  const KernelSelection s = cuda_backend().select_kernel(g, only_node(g));
  BOOST_REQUIRE_MESSAGE(std::holds_alternative<KernelChoice>(s), selection_of(g));
  return std::get<KernelChoice>(s);
}

BOOST_AUTO_TEST_CASE(layout_kernels_go_by_element_size) {
  for (const auto& [dtype, prefix] :
       {std::pair{DType::Bool, "x8"}, std::pair{DType::F32, "x32"}, std::pair{DType::I32, "x32"},
        std::pair{DType::F64, "x64"}, std::pair{DType::I64, "x64"}}) {
    const std::string p(prefix);
    const TypeInfo nchw{dtype, Shape{1, 8, 2, 2}};
    BOOST_TEST(selection_of(single_op_graph(OpKind::Tile, {nchw},
                                            {{"repeats", std::vector<int64_t>{1, 2, 1, 3}}})) ==
               p + "_tile_cuda");
    BOOST_TEST(
        selection_of(single_op_graph(OpKind::Pad, {nchw},
                                     {{"pads", std::vector<int64_t>{0, 0, 1, -1, 0, 0, 2, 0}},
                                      {"mode", std::string("reflect")}})) == p + "_pad_cuda");
    BOOST_TEST(
        selection_of(single_op_graph(OpKind::DepthToSpace, {nchw}, {{"blocksize", int64_t{2}}})) ==
        p + "_depthtospace_dcr_cuda");
    BOOST_TEST(
        selection_of(single_op_graph(OpKind::DepthToSpace, {nchw},
                                     {{"blocksize", int64_t{2}}, {"mode", std::string("CRD")}})) ==
        p + "_depthtospace_crd_cuda");
    BOOST_TEST(
        selection_of(single_op_graph(OpKind::SpaceToDepth, {nchw}, {{"blocksize", int64_t{2}}})) ==
        p + "_spacetodepth_cuda");
    const Graph constant = single_op_graph(OpKind::Constant, {}, {{"value", Tensor(dtype, {2})}});
    BOOST_TEST(selection_of(constant) == "constant_upload_cuda");
    BOOST_TEST(choice_for(constant).workspace_bytes == 0);
  }
}

// ReverseSequence, like Gather, checks its lengths in one word of workspace.
BOOST_AUTO_TEST_CASE(reverse_sequence_checks_its_lengths_in_a_word_of_workspace) {
  for (const auto& [lengths, variant] :
       {std::pair{DType::I64, "x64_reversesequence_i64_lens_cuda"},
        std::pair{DType::I32, "x64_reversesequence_i32_lens_cuda"}}) {
    const Graph g = single_op_graph(OpKind::ReverseSequence, {TypeInfo{DType::F64, Shape{5, 3, 2}},
                                                              TypeInfo{lengths, Shape{3}}});
    const KernelChoice choice = choice_for(g);
    BOOST_TEST(choice.variant == variant);
    BOOST_TEST(choice.workspace_bytes == 8);
  }
}

// Axes of length 1 never move Tile's read position, so only the others count against the
// kernel's eight; every axis counts for Pad (index 0 of a padded axis may read the border).
BOOST_AUTO_TEST_CASE(layouts_past_eight_axes_are_refused_naming_the_shape) {
  const Shape nine{2, 1, 2, 1, 2, 1, 2, 1, 2};
  BOOST_TEST(selection_of(single_op_graph(OpKind::Tile, {TypeInfo{DType::F32, nine}},
                                          {{"repeats", std::vector<int64_t>(9, 1)}})) ==
             "x32_tile_cuda");
  BOOST_TEST(selection_of(single_op_graph(OpKind::Tile, {TypeInfo{DType::F32, nine}},
                                          {{"repeats", std::vector<int64_t>(9, 2)}})) ==
             "refused: Tile of [2,1,2,1,2,1,2,1,2] walks 9 axes; the CUDA kernel takes at most 8");
  BOOST_TEST(selection_of(single_op_graph(OpKind::Pad, {TypeInfo{DType::I64, nine}},
                                          {{"pads", std::vector<int64_t>(18, 0)}})) ==
             "refused: Pad of [2,1,2,1,2,1,2,1,2] walks 9 axes; the CUDA kernel takes at most 8");
}

Graph resize_graph(DType dtype, const Shape& in, const Shape& out, const std::string& mode) {
  return single_op_graph(OpKind::Resize, {TypeInfo{dtype, in}},
                         {{"sizes", out.dims()}, {"mode", mode}});
}

BOOST_AUTO_TEST_CASE(resize_has_a_kernel_per_mode_and_dtype_it_takes) {
  for (DType dtype : {DType::F32, DType::F64, DType::I64, DType::I32, DType::Bool}) {
    BOOST_TEST(selection_of(resize_graph(dtype, Shape{1, 3, 4}, Shape{1, 6, 2}, "nearest")) ==
               std::string(dtype_name(dtype)) + "_resize_nearest_cuda");
  }
  for (const std::string mode : {"linear", "cubic"}) {
    BOOST_TEST(selection_of(resize_graph(DType::F64, Shape{4}, Shape{9}, mode)) ==
               "f64_resize_" + mode + "_cuda");
  }
  const Shape nine{1, 1, 1, 1, 1, 1, 1, 2, 2};
  BOOST_TEST(selection_of(resize_graph(DType::F32, nine, nine, "linear")) ==
             "refused: Resize of rank 9 has no CUDA kernel (at most 8 axes)");
}

BOOST_AUTO_TEST_CASE(grid_sample_has_a_kernel_per_mode_and_float_dtype) {
  for (DType dtype : {DType::F32, DType::F64}) {
    for (const std::string mode : {"nearest", "bilinear", "bicubic"}) {
      const Graph g =
          single_op_graph(OpKind::GridSample,
                          {TypeInfo{dtype, Shape{1, 2, 3, 4}}, TypeInfo{dtype, Shape{1, 5, 6, 2}}},
                          {{"mode", mode}, {"padding_mode", std::string("reflection")}});
      BOOST_TEST(selection_of(g) ==
                 std::string(dtype_name(dtype)) + "_grid_sample_" + mode + "_cuda");
    }
  }
}

// Det factors a copy of every matrix in its workspace, one thread per matrix.
BOOST_AUTO_TEST_CASE(det_declares_a_copy_of_its_matrices_as_workspace) {
  for (const auto& [dtype, variant] : {std::pair{DType::F32, "f32_det_lu_partial_pivot_cuda"},
                                       std::pair{DType::F64, "f64_det_lu_partial_pivot_cuda"}}) {
    const KernelChoice choice =
        choice_for(single_op_graph(OpKind::Det, {TypeInfo{dtype, Shape{2, 3, 5, 5}}}));
    BOOST_TEST(choice.variant == variant);
    BOOST_TEST(choice.workspace_bytes == 150 * static_cast<int64_t>(dtype_size(dtype)));
  }
}

// Einsum chooses as the CPU does: two float operands on the packed GEMM (packed A, packed B
// and, when the product is not in the output's order, the product in the workspace), anything
// else on the label loop.
BOOST_AUTO_TEST_CASE(einsum_packs_two_float_operands_for_the_gemm_and_loops_otherwise) {
  auto einsum = [](DType dtype, const std::vector<Shape>& shapes, const std::string& equation) {
    std::vector<std::optional<TypeInfo>> types;
    types.reserve(shapes.size());
    for (const Shape& s : shapes) types.emplace_back(TypeInfo{dtype, s});
    const KernelChoice choice =
        choice_for(single_op_graph(OpKind::Einsum, types, {{"equation", equation}}));
    return choice.variant + " " + std::to_string(choice.workspace_bytes);
  };
  // [2,3] and [3,5] packed as they are: 6 and 15 floats, each part 256-byte aligned.
  BOOST_TEST(einsum(DType::F32, {{2, 3}, {3, 5}}, "ij,jk->ik") == "f32_einsum_pack_gemm_cuda 512");
  // The product [k, i] is transposed into the output [i, k]: a third part.
  BOOST_TEST(einsum(DType::F64, {{2, 3}, {3, 5}}, "ij,jk->ki") == "f64_einsum_pack_gemm_cuda 768");
  BOOST_TEST(einsum(DType::I64, {{2, 3}, {3, 5}}, "ij,jk->ik") == "i64_einsum_label_loop_cuda 0");
  BOOST_TEST(einsum(DType::F32, {{4, 4}}, "ii->i") == "f32_einsum_label_loop_cuda 0");
  BOOST_TEST(einsum(DType::F32, {{2}, {3}, {4}}, "i,j,k->ijk") == "f32_einsum_label_loop_cuda 0");
  BOOST_TEST(selection_of(single_op_graph(OpKind::Einsum,
                                          {TypeInfo{DType::I32, Shape{1, 1, 1, 1, 1, 1, 1, 1, 1}}},
                                          {{"equation", std::string("abcdefghi->abcdefghi")}})) ==
             "refused: Einsum with 9 output axes has no CUDA kernel (at most 8)");
}

// A graph of them plans strict without a device (Constant kept as a node: no folding).
BOOST_AUTO_TEST_CASE(a_graph_of_them_compiles_strict_without_a_device) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{1, 4, 3, 3});
  const ValueId lens = g.add_input("lens", DType::I64, Shape{1});
  const ValueId c =
      g.add(OpKind::Constant, {}, {{"value", test::filled(DType::F32, {}, {0.5})}}, "constant");
  const ValueId p =
      g.add(OpKind::Pad, {x, c}, {{"pads", std::vector<int64_t>{0, 0, 1, 1, 0, 0, 1, 1}}}, "pad");
  const ValueId d = g.add(OpKind::DepthToSpace, {p}, {{"blocksize", int64_t{2}}}, "d2s");
  const ValueId r = g.add(
      OpKind::Resize, {d},
      {{"sizes", std::vector<int64_t>{1, 1, 7, 7}}, {"mode", std::string("cubic")}}, "resize");
  const ValueId t =
      g.add(OpKind::Tile, {r}, {{"repeats", std::vector<int64_t>{1, 2, 1, 1}}}, "tile");
  const ValueId s = g.add(OpKind::ReverseSequence, {t, lens},
                          {{"batch_axis", int64_t{0}}, {"time_axis", int64_t{1}}}, "reverse");
  g.set_outputs({g.add(OpKind::SpaceToDepth, {s}, {{"blocksize", int64_t{7}}}, "s2d")});
  const ExecutionPlan plan =
      compile(g, cuda_backend(), DeterminismMode::Strict, {.optimize = false});
  BOOST_TEST(kernel_variants(plan) ==
             "constant_upload_cuda,x32_pad_cuda,x32_depthtospace_dcr_cuda,f32_resize_cubic_cuda,"
             "x32_tile_cuda,x32_reversesequence_i64_lens_cuda,x32_spacetodepth_cuda");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace volta
