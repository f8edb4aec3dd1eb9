#pragma once
// What every cuda_device_*_test shares: whether this machine has a usable CUDA device (and
// why not), the skip that CTest reads, and the two backends each test holds against each other.
//
// Without a usable device a test binary prints "SKIPPED: <reason>" once (its CTest
// SKIP_REGULAR_EXPRESSION), and every case under the device_available precondition is
// skipped: never a pass without a device. Each binary declares the fixture once:
//   using cuda_test::DeviceOrSkip;
//   BOOST_TEST_GLOBAL_FIXTURE(DeviceOrSkip);  // the macro pastes the name: no qualifier

#include <boost/test/unit_test.hpp>
#include <cstddef>
#include <cstdio>
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

}  // namespace volta::cuda_test
