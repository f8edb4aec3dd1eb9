#pragma once
// What every cuda_device_*_test shares: whether this machine has a usable CUDA device (and
// why not), the skip that CTest reads, the two backends each test holds against each other, and
// how an output is held to its op's claim against the CPU backend.
//
// Without a usable device a test binary prints "SKIPPED: <reason>" once (its CTest
// SKIP_REGULAR_EXPRESSION), and every case under the device_available precondition is
// skipped: never a pass without a device. Each binary declares the fixture once:
//   using cuda_test::DeviceOrSkip;
//   BOOST_TEST_GLOBAL_FIXTURE(DeviceOrSkip);  // the macro pastes the name: no qualifier

#include <boost/test/unit_test.hpp>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "volta/backends/cuda.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta::cuda_test {

// Why the CUDA backend cannot run here; empty when device 0 runs its kernels.
inline const std::string& unavailable() {
  static const std::string why = cuda_report().unavailable;
  return why;
}

struct DeviceOrSkip {
  DeviceOrSkip() {
    if (unavailable().empty()) return;
    std::printf("SKIPPED: no usable CUDA device: %s\n", unavailable().c_str());
    std::fflush(stdout);
  }
};

// The precondition of every case that needs the device.
inline boost::test_tools::assertion_result device_available(boost::unit_test::test_unit_id) {
  boost::test_tools::assertion_result result(unavailable().empty());
  result.message() << "no usable CUDA device: " << unavailable();
  return result;
}

inline const Backend& cpu() {
  static const std::unique_ptr<Backend> backend = make_backend("cpu");
  return *backend;
}
inline const Backend& gpu() {
  static const std::unique_ptr<Backend> backend = make_backend("cuda");
  return *backend;
}

// The graph compiled as it stands (Strict, no passes) and run once, the arena poisoned with
// `poison` when given, so an element a kernel leaves unwritten cannot pass by luck.
inline std::vector<Tensor> run_on(const Backend& backend, const Graph& graph,
                                  const std::vector<Tensor>& inputs,
                                  std::optional<std::byte> poison = std::nullopt) {
  const ExecutionPlan plan = compile(graph, backend, DeterminismMode::Strict, {.optimize = false});
  const std::unique_ptr<ExecutionContext> ctx = backend.make_context({.threads = 4});
  ctx->set_poison(poison);
  return execute(plan, backend, *ctx, inputs);
}

// One node of `op` over graph inputs of `inputs`' types, its outputs the graph's.
inline Graph op_graph(OpKind op, const std::vector<TypeInfo>& inputs, Attributes attrs = {},
                      int num_outputs = 1) {
  Graph g;
  std::vector<ValueId> ids;
  for (size_t i = 0; i < inputs.size(); ++i) {
    ids.push_back(g.add_input("in" + std::to_string(i), inputs[i].dtype, inputs[i].shape));
  }
  g.set_outputs(g.add_node(op, ids, std::move(attrs), "op", num_outputs));
  return g;
}

// The error a run fails with, code and message, the backend's name in it written as "<backend>"
// so the two backends' errors compare equal when they say the same; empty when it runs.
inline std::string error_of(const Backend& backend, const Graph& graph,
                            const std::vector<Tensor>& inputs) {
  try {
    run_on(backend, graph, inputs);
  } catch (const VoltaError& e) {
    std::string message = std::string(error_code_name(e.code())) + ": " + e.message();
    const std::string name = "backend '" + std::string(backend.name()) + "'";
    if (const size_t at = message.find(name); at != std::string::npos) {
      message.replace(at, name.size(), "backend '<backend>'");
    }
    return message;
  }
  return {};
}

// The claim the CUDA backend makes for `op` against the CPU backend.
inline CrossBackendExactness claim_of(OpKind op) {
  for (const CudaOpClaim& c : cuda_op_claims()) {
    if (c.op == op) return c.exactness;
  }
  BOOST_FAIL("no CUDA claim for " << op_name(op));
  return CrossBackendExactness::Bitwise;
}

inline bool is_nan_at(const Tensor& t, int64_t i) {
  if (t.dtype() != DType::F32 && t.dtype() != DType::F64) return false;
  const double v = t.get_double(i);
  return v != v;
}

// The first element where `got` breaks a claim of bits against `want`, or empty.
inline std::string first_breach(CrossBackendExactness claim, const Tensor& got,
                                const Tensor& want) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    return "type " + std::string(dtype_name(got.dtype())) + got.shape().str() + " vs " +
           std::string(dtype_name(want.dtype())) + want.shape().str();
  }
  const size_t size = dtype_size(got.dtype());
  const auto* g = static_cast<const std::byte*>(got.data());
  const auto* w = static_cast<const std::byte*>(want.data());
  for (int64_t i = 0; i < got.numel(); ++i) {
    const auto at = static_cast<size_t>(i) * size;
    if (std::memcmp(g + at, w + at, size) == 0) continue;
    if (claim == CrossBackendExactness::BitwiseExceptNanPayload && is_nan_at(got, i) &&
        is_nan_at(want, i)) {
      continue;
    }
    return "element " + std::to_string(i) + ": cuda " + std::to_string(got.get_double(i)) +
           ", cpu " + std::to_string(want.get_double(i));
  }
  return {};
}

// Runs `graph` (one op node) on both backends and checks every output against the op's claim;
// the GPU's arena is poisoned, so an element a kernel leaves unwritten cannot pass by luck.
inline void check_against_cpu(const Graph& graph, const std::vector<Tensor>& inputs,
                              const std::string& what) {
  const OpKind op = graph.node(0).op;
  const CrossBackendExactness claim = claim_of(op);
  const std::vector<Tensor> want = run_on(cpu(), graph, inputs);
  const std::vector<Tensor> got = run_on(gpu(), graph, inputs, std::byte{0xff});
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    const std::string breach = first_breach(claim, got[k], want[k]);
    BOOST_CHECK_MESSAGE(breach.empty(), std::string(op_name(op))
                                            << " (" << cross_backend_exactness_name(claim)
                                            << ") on " << what << ", output " << k << ": "
                                            << breach);
  }
}

}  // namespace volta::cuda_test
