#include <cstdlib>
#include <cstring>
#include <iterator>
#include <stdexcept>
#include <string>

#include "cpu_kernel.h"
#include "volta/backends/cpu.h"
#include "volta/ir/host_memory.h"
#include "volta/runtime/registry.h"

namespace volta {
namespace cpu {
namespace {

// One registrar per family, in OpFamily order.
constexpr KernelFamilyFile kFamilyFiles[] = {
    {OpFamily::Elementwise, register_elementwise_kernels},
    {OpFamily::Activation, register_activation_kernels},
    {OpFamily::Logical, register_logical_kernels},
    {OpFamily::Linalg, register_linalg_kernels},
    {OpFamily::Normalization, register_normalization_kernels},
    {OpFamily::Reduction, register_reduction_kernels},
    {OpFamily::Movement, register_movement_kernels},
    {OpFamily::Convolution, register_convolution_kernels},
    {OpFamily::Pooling, register_pooling_kernels},
    {OpFamily::Indexing, register_indexing_kernels},
    {OpFamily::Loss, register_loss_kernels},
    {OpFamily::Resampling, register_resampling_kernels},
};
static_assert(std::size(kFamilyFiles) == kOpFamilyCount, "one CPU kernel registrar per family");

std::string registrar_of(OpFamily family) {
  return "register_" + std::string(op_family_name(family)) + "_kernels";
}

const KernelTable& kernel_table() {
  static const KernelTable kTable = build_kernel_table(kFamilyFiles);
  return kTable;
}

// A kernel reads and writes host memory only: a view of another space is a wiring error of
// whoever built it, caught before the kernel dereferences it.
void check_host(const Node& node, std::string_view role, size_t index, MemorySpace space) {
  if (space == MemorySpace::Host) return;
  fail(ErrorCode::MemorySpaceMismatch,
       "node '" + node.name + "' (" + std::string(op_name(node.op)) +
           ") on backend 'cpu': " + std::string(role) + " " + std::to_string(index) +
           " is a view of " + std::string(memory_space_name(space)) +
           " memory; the CPU backend's kernels read host "
           "memory only");
}

class CpuBackend final : public Backend {
 public:
  std::string_view name() const override { return kCpuBackend; }

  Capabilities capabilities() const override {
    Capabilities caps{};
    for (int i = 0; i < kOpCount; ++i) {
      const OpKernels& k = kernel_table()[static_cast<size_t>(i)];
      caps[static_cast<size_t>(i)] = {
          k.select != nullptr, k.dtypes, k.determinism,
          k.select != nullptr ? CrossBackendExactness::Bitwise : CrossBackendExactness::NotClaimed};
    }
    return caps;
  }

  KernelSelection select_kernel(const Graph& graph, const Node& node) const override {
    const OpKernels& k = kernel_table()[static_cast<size_t>(op_index(node.op))];
    if (k.select == nullptr) {
      return KernelUnsupported{"the CPU backend has no " + std::string(op_name(node.op)) +
                               " kernel"};
    }
    std::vector<std::optional<TypeInfo>> inputs;
    for (ValueId v : node.inputs) {
      inputs.push_back(v.valid() ? std::optional<TypeInfo>(graph.value(v).type()) : std::nullopt);
    }
    std::vector<TypeInfo> outputs;
    for (ValueId v : node.outputs) outputs.push_back(graph.value(v).type());
    return k.select(KernelQuery{node, inputs, outputs});
  }

  std::unique_ptr<ExecutionContext> make_context(const ContextOptions& options) const override {
    return std::make_unique<CpuContext>(options);
  }

  MemoryRegion arena(ExecutionContext& ctx, int64_t bytes) const override {
    CpuContext& cpu = cpu_context(ctx);
    const MemoryRegion region = cpu.arena(bytes);
    if (const std::optional<std::byte> poison = ctx.poison(); poison && bytes > 0) {
      std::memset(region.data, static_cast<int>(*poison), static_cast<size_t>(bytes));
    }
    return region;
  }

  void reserve_worker_scratch(ExecutionContext& ctx, int64_t bytes) const override {
    cpu_context(ctx).pool().reserve_worker_scratch(bytes);
  }

  // Host tensors are read where they are: no copy.
  ConstTensorView import_tensor(ExecutionContext& /*ctx*/, const Tensor& host) const override {
    return {host.dtype(), host.shape(), host.data(), MemorySpace::Host};
  }

  // States are updated where they are: the kernels write the caller's tensor itself.
  TensorView bind_state(ExecutionContext& /*ctx*/, Tensor& state) const override {
    return {state.dtype(), state.shape(), state.data(), MemorySpace::Host};
  }
  void store_state(ExecutionContext& /*ctx*/, const ConstTensorView& bound,
                   Tensor& state) const override {
    if (bound.data != state.data()) {
      fail(ErrorCode::MemorySpaceMismatch, "a CPU state was bound elsewhere than its own storage");
    }
  }

  Tensor export_tensor(ExecutionContext& /*ctx*/, const ConstTensorView& value) const override {
    check_host_value(value);
    return Tensor::copy_of(value);
  }

  void synchronize(ExecutionContext& /*ctx*/) const override {}  // kernels return when done

  void run_kernel(const KernelChoice& kernel, const Node& node,
                  std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs,
                  MemoryRegion workspace, ExecutionContext& ctx) const override {
    for (size_t i = 0; i < inputs.size(); ++i) check_host(node, "input", i, inputs[i].space);
    for (size_t i = 0; i < outputs.size(); ++i) check_host(node, "output", i, outputs[i].space);
    if (workspace.bytes > 0) check_host(node, "workspace", 0, workspace.space);
    const auto* k = static_cast<const CpuKernel*>(kernel.impl);
    k->fn(KernelArgs{node, AttrReader(node), inputs, outputs,
                     std::span(workspace.data, static_cast<size_t>(workspace.bytes)),
                     cpu_context(ctx).pool()});
  }

 private:
  static void check_host_value(const ConstTensorView& value) {
    if (value.space != MemorySpace::Host) {
      fail(ErrorCode::MemorySpaceMismatch,
           "the CPU backend exports host memory only, got a view of " +
               std::string(memory_space_name(value.space)) + " memory");
    }
  }
};

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

VOLTA_REGISTER_BACKEND(kCpuBackend,
                       "the CPU engine: multithreaded kernels, bit-identical at any thread count",
                       make_cpu_backend);

}  // namespace

KernelTable build_kernel_table(std::span<const KernelFamilyFile> files) {
  KernelTable table{};
  for (const KernelFamilyFile& file : files) {
    KernelTable part{};
    file.add(part);
    for (size_t i = 0; i < part.size(); ++i) {
      if (part[i].select == nullptr) continue;
      const OpSchema& schema = op_schema(static_cast<OpKind>(i));
      if (schema.family != file.family) {
        throw std::logic_error("CPU kernels: " + std::string(schema.name) + " (family " +
                               std::string(op_family_name(schema.family)) + ") is registered by " +
                               registrar_of(file.family) + " (kernels/" +
                               std::string(op_family_name(file.family)) + "[_<part>].cpp)");
      }
      if (table[i].select != nullptr) {
        throw std::logic_error("CPU kernels: " + std::string(schema.name) +
                               " is registered twice, the second time by " +
                               registrar_of(file.family));
      }
      table[i] = part[i];
    }
  }
  return table;
}

}  // namespace cpu

void CpuContext::Free::operator()(std::byte* p) const { std::free(p); }

CpuContext::CpuContext(const ContextOptions& options)
    : ExecutionContext(std::string(kCpuBackend), options),
      pool_(options.threads, options.schedule) {}

MemoryRegion CpuContext::arena(int64_t bytes) {
  if (bytes > arena_bytes_) {
    arena_.reset(allocate_host(bytes, kTensorAlignment, [] { return "the plan's arena"; }));
    arena_bytes_ = bytes;
  }
  return {arena_.get(), bytes, MemorySpace::Host};
}

CpuContext& cpu_context(ExecutionContext& ctx) {
  auto* cpu = dynamic_cast<CpuContext*>(&ctx);
  if (cpu == nullptr) {
    fail(ErrorCode::BackendMismatch, "an execution context made by backend '" + ctx.backend() +
                                         "' given to the CPU backend: make one with its "
                                         "make_context()");
  }
  return *cpu;
}

}  // namespace volta
