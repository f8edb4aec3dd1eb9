#pragma once

#include <array>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "volta/ir/graph.h"
#include "volta/plan/execution_plan.h"
#include "volta/runtime/determinism.h"

namespace volta {

class ExecutionContext;

// A backend's answer for one exact node: the kernel it would run, or why it cannot.
struct KernelUnsupported {
  std::string reason;  // e.g. "no f64 kernel for MatMul (supported: f32)"
};
using KernelSelection = std::variant<KernelChoice, KernelUnsupported>;

// Per-op summary used by docs matrices and `volta doctor`.
struct OpCapability {
  bool supported = false;
  DTypeSet dtypes;
  KernelDeterminism determinism = KernelDeterminism::BitExact;
};
using Capabilities = std::array<OpCapability, kOpCount>;

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  virtual Capabilities capabilities() const = 0;
  // supports(node): the kernel for this exact node (op, dtypes, shapes, attributes).
  virtual KernelSelection select_kernel(const Graph& graph, const Node& node) const = 0;
  // Runs one step. Inputs for absent optional operands have data == nullptr.
  virtual void run_kernel(const KernelChoice& kernel, const Node& node,
                          std::span<const ConstTensorView> inputs,
                          std::span<const TensorView> outputs, ExecutionContext& ctx) const = 0;
};

}  // namespace volta
