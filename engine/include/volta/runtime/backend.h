#pragma once
// The backend contract: what the planner asks a backend (a kernel for an exact node, with the
// scratch it needs) and what the runtime asks it to do (make a context, hold the plan's arena
// in its own memory, import inputs, run kernels, export outputs). It depends on the IR alone:
// plan/ and runtime/ build on it, never the other way round.

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "volta/ir/graph.h"
#include "volta/runtime/determinism.h"

namespace volta {

// The kernel a backend chose for one node. `impl` is opaque to everything but that backend.
struct KernelChoice {
  std::string variant;  // e.g. "f32_gemm_avx2_6x16"; recorded with every result
  KernelDeterminism determinism = KernelDeterminism::BitExact;
  const void* impl = nullptr;
  // Scratch the kernel needs for this exact node, in bytes: the memory planner places it in
  // the arena for the step, so no kernel allocates while a plan runs.
  int64_t workspace_bytes = 0;
  // Scratch each worker thread needs while it runs one of the kernel's tasks (a GEMM tile's
  // packed panels): the context holds one such buffer per worker, grown by
  // Backend::reserve_worker_scratch before a plan runs. Not in the arena: a task's buffer
  // belongs to the thread that runs it, and the plan does not depend on the thread count.
  int64_t worker_scratch_bytes = 0;
};

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
  // Against the CPU backend's kernels; the parity suite checks every claim (bit for bit).
  CrossBackendExactness cpu_exactness = CrossBackendExactness::NotClaimed;
  // The op's dtypes that cpu_exactness does not cover: there the kernels agree with the CPU
  // backend's within the tolerance table only (the CPU's kernel calls libm, which another
  // backend's math library does not reproduce bit for bit).
  DTypeSet cpu_tolerance_dtypes = {};
};
using Capabilities = std::array<OpCapability, kOpCount>;

// How a context hands out work. The determinism contract says results never depend on it: the
// determinism suite's configuration matrix runs its corpus under each variation. Production
// code keeps the defaults.
struct ScheduleOptions {
  bool reverse_task_order = false;  // claim tasks from the last to the first
  // Scales the chunk of element-parallel loops (whose chunking is not part of any result);
  // tasks that define reduction leaves are never rescaled.
  double chunk_scale = 1.0;
};

struct ContextOptions {
  int threads = 1;  // CPU worker threads (a device backend has its own parallelism)
  ScheduleOptions schedule = {};
};

// A contiguous region of a backend's memory: an arena, a kernel's workspace.
struct MemoryRegion {
  std::byte* data = nullptr;
  int64_t bytes = 0;
  MemorySpace space = MemorySpace::Host;
};

// Sees every step's outputs right after its kernel ran (before later steps may reuse their
// memory): how the determinism suite traces a hash per node output.
using StepObserver =
    std::function<void(int step_index, const Node& node, const KernelChoice& kernel,
                       std::span<const TensorView> outputs)>;

// Per-caller execution state, made by a backend (Backend::make_context) and used with that
// backend only: the CPU's holds its thread pool and arena, a device backend's its device,
// stream and device arena.
class ExecutionContext {
 public:
  virtual ~ExecutionContext() = default;
  ExecutionContext(const ExecutionContext&) = delete;
  ExecutionContext& operator=(const ExecutionContext&) = delete;

  const std::string& backend() const { return backend_; }  // the backend that made it
  const ContextOptions& options() const { return options_; }
  // Fill the arena with `pattern` before every run, so an element a kernel never writes
  // shows up in its output (the conformance harness runs each case with two patterns).
  void set_poison(std::optional<std::byte> pattern) { poison_ = pattern; }
  std::optional<std::byte> poison() const { return poison_; }
  // Called after every step of every run on this context; empty: none (the default).
  void set_step_observer(StepObserver observer) { observer_ = std::move(observer); }
  const StepObserver& step_observer() const { return observer_; }

 protected:
  ExecutionContext(std::string backend, ContextOptions options)
      : backend_(std::move(backend)), options_(options) {}

 private:
  std::string backend_;
  ContextOptions options_;
  std::optional<std::byte> poison_;
  StepObserver observer_;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  virtual Capabilities capabilities() const = 0;
  // supports(node): the kernel for this exact node (op, dtypes, shapes, attributes), with the
  // workspace it needs.
  virtual KernelSelection select_kernel(const Graph& graph, const Node& node) const = 0;

  // Throws VoltaError(InvalidArgument) for options it cannot honour.
  virtual std::unique_ptr<ExecutionContext> make_context(const ContextOptions& options) const = 0;
  // The context's arena, at least `bytes` long, in this backend's memory; filled with the
  // context's poison pattern when it has one. Valid until the next call on the context.
  virtual MemoryRegion arena(ExecutionContext& ctx, int64_t bytes) const = 0;
  // Makes every worker's scratch at least `bytes` long (ExecutionPlan::worker_scratch_bytes)
  // before a run; a backend without per-worker scratch accepts only 0.
  virtual void reserve_worker_scratch(ExecutionContext& ctx, int64_t bytes) const = 0;
  // A host tensor as this backend's kernels read it: the tensor itself on the CPU, a copy in
  // device memory the context owns until the next run otherwise.
  virtual ConstTensorView import_tensor(ExecutionContext& ctx, const Tensor& host) const = 0;
  // A parameter's data (immutable, shared by the graphs and plans that hold it) as this
  // backend's kernels read it. By default import_tensor; a device backend keeps one copy per
  // parameter for the context's life, uploaded on first use and shared by every plan the
  // context runs.
  virtual ConstTensorView import_parameter(ExecutionContext& ctx,
                                           const std::shared_ptr<const Tensor>& data) const {
    return import_tensor(ctx, *data);
  }
  // A state (Graph::add_state) as this backend's kernels read and update it in place during a
  // run: the tensor itself on the CPU, or a copy in the context's memory that store_state
  // writes back after synchronize(). The caller keeps the state's storage across runs.
  virtual TensorView bind_state(ExecutionContext& ctx, Tensor& state) const = 0;
  virtual void store_state(ExecutionContext& ctx, const ConstTensorView& bound,
                           Tensor& state) const = 0;
  // A value of this backend's memory copied into a host tensor (after synchronize()).
  virtual Tensor export_tensor(ExecutionContext& ctx, const ConstTensorView& value) const = 0;
  // Waits until every kernel launched on the context has finished.
  virtual void synchronize(ExecutionContext& ctx) const = 0;
  // Runs one step. Inputs for absent optional operands have data == nullptr; `workspace` is
  // the kernel's planned scratch (KernelChoice::workspace_bytes long).
  virtual void run_kernel(const KernelChoice& kernel, const Node& node,
                          std::span<const ConstTensorView> inputs,
                          std::span<const TensorView> outputs, MemoryRegion workspace,
                          ExecutionContext& ctx) const = 0;
};

// How an error names a step: "node 'NAME' (OP) on backend 'BACKEND'".
std::string node_ref(const Node& node, std::string_view backend);

}  // namespace volta
