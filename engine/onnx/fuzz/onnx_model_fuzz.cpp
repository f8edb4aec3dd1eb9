// Fuzz target: ONNX model bytes through every stage a user's model goes through: parse and
// check (the ONNX checker and Volta's static check), import for zero inputs when every input
// shape is static and small, compile on the CPU backend and run. Every refusal must be a
// VoltaError; anything else escaping (another exception, a crash, a sanitizer report) is a
// finding.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "volta/error.h"
#include "volta/ir/host_memory.h"
#include "volta/onnx/model.h"
#include "volta/onnx/session.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace {

// Inputs larger than this are not made, and allocations over the host limit below are refused
// (R-OUT-OF-MEMORY) as they would be past a machine's memory: the target is after crashes, and
// libFuzzer counts an allocation over 2 GiB as one.
constexpr int64_t kMaxInputElements = int64_t{1} << 16;
constexpr int64_t kHostAllocationLimit = int64_t{256} << 20;

// Zeros for every model input, or nullopt when an input's type or shape is not static.
std::optional<std::vector<volta::Tensor>> zero_inputs(const volta::onnx::Model& model) {
  std::vector<volta::Tensor> inputs;
  for (const volta::onnx::ValueSpec& spec : model.inputs()) {
    if (!spec.dtype || !spec.has_shape) return std::nullopt;
    int64_t elements = 1;
    for (int64_t d : spec.dims) {
      if (d < 0 || (d > 0 && elements > kMaxInputElements / d)) return std::nullopt;
      elements *= d;
    }
    inputs.emplace_back(*spec.dtype, volta::Shape(spec.dims));
  }
  return inputs;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::unique_ptr<volta::Backend> backend = [] {
    volta::set_host_allocation_limit(kHostAllocationLimit);
    return volta::make_backend("cpu");
  }();
  try {
    const volta::onnx::Model model = volta::onnx::Model::parse(
        std::string_view(reinterpret_cast<const char*>(data), size), "<fuzz input>");
    volta::onnx::ImportOptions options;
    options.evaluator = volta::make_backend_evaluator(*backend, volta::DeterminismMode::Strict);
    if (!model.check(options).empty()) return 0;
    const std::optional<std::vector<volta::Tensor>> inputs = zero_inputs(model);
    if (!inputs) return 0;
    volta::onnx::Session session(model, *backend, volta::DeterminismMode::Strict);
    session.run(*inputs);
  } catch (const volta::VoltaError&) {
    // A refusal with a diagnostic code: the expected outcome for most inputs.
  }
  return 0;
}
