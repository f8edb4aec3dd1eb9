#include <array>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_check.h"
#include "cuda_context.h"
#include "cuda_discovery.h"
#include "cuda_kernel.h"
#include "volta/backends/cuda.h"
#include "volta/runtime/registry.h"

namespace volta {
namespace cuda {
namespace {

struct FamilyOps {
  OpFamily family;
  std::span<const CudaOpKernels> (*ops)();
};
constexpr FamilyOps kFamilies[] = {
    {OpFamily::Elementwise, elementwise_op_kernels},
    {OpFamily::Elementwise, conversion_op_kernels},
    {OpFamily::Activation, activation_op_kernels},
    {OpFamily::Linalg, linalg_op_kernels},
    {OpFamily::Normalization, normalization_op_kernels},
    {OpFamily::Reduction, reduction_op_kernels},
    {OpFamily::Logical, logical_op_kernels},
    {OpFamily::Movement, movement_op_kernels},
    {OpFamily::Pooling, pooling_op_kernels},
    {OpFamily::Convolution, convolution_op_kernels},
    {OpFamily::Indexing, indexing_op_kernels},
    {OpFamily::Loss, loss_op_kernels},
    {OpFamily::Elementwise, elementwise_math_op_kernels},
    {OpFamily::Movement, layout_op_kernels},
    {OpFamily::Resampling, resampling_op_kernels},
    {OpFamily::Linalg, linalg_det_op_kernels},
    {OpFamily::Linalg, linalg_einsum_op_kernels},
};

using KernelTable = std::array<const CudaOpKernels*, kOpCount>;

// Indexed by OpKind. Throws std::logic_error when a family's list names an op of another
// family, or an op twice: a wiring error of this backend, caught by its first use.
KernelTable build_table() {
  KernelTable table{};
  for (const FamilyOps& f : kFamilies) {
    for (const CudaOpKernels& k : f.ops()) {
      const OpSchema& schema = op_schema(k.claim.op);
      if (schema.family != f.family) {
        throw std::logic_error("CUDA kernels: " + std::string(schema.name) + " (family " +
                               std::string(op_family_name(schema.family)) +
                               ") is listed by kernels/" + std::string(op_family_name(f.family)) +
                               "_ops.cpp");
      }
      const auto index = static_cast<size_t>(op_index(k.claim.op));
      if (table[index] != nullptr) {
        throw std::logic_error("CUDA kernels: " + std::string(schema.name) + " is listed twice");
      }
      table[index] = &k;
    }
  }
  return table;
}

const KernelTable& kernel_table() {
  static const KernelTable kTable = build_table();
  return kTable;
}

// "Add, Sub, ..." in OpKind order.
std::string supported_op_names() {
  std::string out;
  for (const CudaOpKernels* k : kernel_table()) {
    if (k != nullptr) out += (out.empty() ? "" : ", ") + std::string(op_name(k->claim.op));
  }
  return out;
}

void check_device(const Node& node, std::string_view role, size_t index, const void* data,
                  MemorySpace space) {
  if (data == nullptr || space == MemorySpace::Device) return;  // absent optional input
  fail(ErrorCode::MemorySpaceMismatch,
       node_ref(node, kCudaBackend) + ": " + std::string(role) + " " + std::to_string(index) +
           " is a view of " + std::string(memory_space_name(space)) +
           " memory; the CUDA backend's kernels read device memory only");
}

void check_device_value(const ConstTensorView& value, std::string_view what) {
  if (value.space != MemorySpace::Device) {
    fail(ErrorCode::MemorySpaceMismatch,
         "the CUDA backend " + std::string(what) + " device memory only, got a view of " +
             std::string(memory_space_name(value.space)) + " memory");
  }
}

// The options every backend validates alike; the CUDA kernels' launch geometry is fixed by
// the problem, so the thread count and schedule variations do not change what they do.
void check_options(const ContextOptions& options) {
  if (options.threads < 1 || options.threads > 1024) {
    fail(ErrorCode::InvalidArgument,
         "threads must be in [1, 1024], got " + std::to_string(options.threads));
  }
  if (!(options.schedule.chunk_scale > 0.0) || !std::isfinite(options.schedule.chunk_scale)) {
    fail(ErrorCode::InvalidArgument, "chunk_scale must be positive and finite, got " +
                                         std::to_string(options.schedule.chunk_scale));
  }
}

class CudaBackend final : public Backend {
 public:
  std::string_view name() const override { return kCudaBackend; }

  Capabilities capabilities() const override {
    Capabilities caps{};
    for (size_t i = 0; i < caps.size(); ++i) {
      if (const CudaOpKernels* k = kernel_table()[i]) {
        caps[i] = {true, k->claim.dtypes, KernelDeterminism::BitExact, k->claim.exactness,
                   k->claim.tolerance_dtypes};
      }
    }
    return caps;
  }

  KernelSelection select_kernel(const Graph& graph, const Node& node) const override {
    const CudaOpKernels* k = kernel_table()[static_cast<size_t>(op_index(node.op))];
    if (k == nullptr) {
      return KernelUnsupported{"the CUDA backend has no " + std::string(op_name(node.op)) +
                               " kernel (it has kernels for " + supported_op_names() + ")"};
    }
    std::vector<std::optional<TypeInfo>> inputs;
    for (ValueId v : node.inputs) {
      inputs.push_back(v.valid() ? std::optional<TypeInfo>(graph.value(v).type()) : std::nullopt);
    }
    std::vector<TypeInfo> outputs;
    for (ValueId v : node.outputs) outputs.push_back(graph.value(v).type());
    // The CUDA kernels cover the first release's dtypes; f16, bf16 and the narrow integers
    // have none yet, whatever an op's element-size dispatch could move.
    std::vector<DType> dtypes;
    for (const auto& t : inputs) {
      if (t) dtypes.push_back(t->dtype);
    }
    for (const TypeInfo& t : outputs) dtypes.push_back(t.dtype);
    for (DType d : dtypes) {
      if (!kCoreTypes.contains(d)) {
        return KernelUnsupported{"the CUDA backend has no " + std::string(dtype_name(d)) +
                                 " kernels yet (it covers " + kCoreTypes.str() + ")"};
      }
    }
    return k->select(CudaKernelQuery{node, inputs, outputs});
  }

  std::unique_ptr<ExecutionContext> make_context(const ContextOptions& options) const override {
    check_options(options);
    const CudaProbe& probe = probe_cuda();
    if (std::string why = unavailable_reason(probe); !why.empty()) {
      fail(ErrorCode::DeviceUnavailable, "the CUDA backend cannot run on this machine: " + why);
    }
    return std::make_unique<CudaContextImpl>(options, probe.devices.at(0));
  }

  MemoryRegion arena(ExecutionContext& ctx, int64_t bytes) const override {
    CudaContextImpl& cuda = cuda_context_impl(ctx);
    const MemoryRegion region = cuda.arena(bytes);
    if (const std::optional<std::byte> poison = ctx.poison(); poison && bytes > 0) {
      check_cuda(cudaMemsetAsync(region.data, static_cast<int>(*poison), static_cast<size_t>(bytes),
                                 cuda.stream()),
                 "poisoning the arena");
    }
    return region;
  }

  void reserve_worker_scratch(ExecutionContext& ctx, int64_t bytes) const override {
    cuda_context_impl(ctx);
    if (bytes != 0) {
      fail(ErrorCode::InvalidArgument, "the CUDA backend has no per-worker scratch, asked for " +
                                           std::to_string(bytes) + " bytes");
    }
  }

  ConstTensorView import_tensor(ExecutionContext& ctx, const Tensor& host) const override {
    CudaContextImpl& cuda = cuda_context_impl(ctx);
    const auto bytes = static_cast<int64_t>(host.nbytes());
    std::byte* device = cuda.next_input_slot(bytes);
    cuda.copy_to_device(device, host.data(), bytes);
    return {host.dtype(), host.shape(), device, MemorySpace::Device};
  }

  ConstTensorView import_parameter(ExecutionContext& ctx,
                                   const std::shared_ptr<const Tensor>& data) const override {
    const std::byte* device = cuda_context_impl(ctx).resident_parameter(data);
    return {data->dtype(), data->shape(), device, MemorySpace::Device};
  }

  TensorView bind_state(ExecutionContext& ctx, Tensor& state) const override {
    CudaContextImpl& cuda = cuda_context_impl(ctx);
    const auto bytes = static_cast<int64_t>(state.nbytes());
    std::byte* device = cuda.next_state_slot(bytes);
    cuda.copy_to_device(device, state.data(), bytes);
    return {state.dtype(), state.shape(), device, MemorySpace::Device};
  }

  void store_state(ExecutionContext& ctx, const ConstTensorView& bound,
                   Tensor& state) const override {
    check_device_value(bound, "stores states from");
    if (bound.dtype != state.dtype() || bound.shape != state.shape()) {
      fail(ErrorCode::InvalidArgument, "a state bound as " + std::string(dtype_name(bound.dtype)) +
                                           " " + bound.shape.str() + " stored into " +
                                           std::string(dtype_name(state.dtype())) + " " +
                                           state.shape().str());
    }
    cuda_context_impl(ctx).copy_to_host(state.data(), bound.data,
                                        static_cast<int64_t>(state.nbytes()));
  }

  Tensor export_tensor(ExecutionContext& ctx, const ConstTensorView& value) const override {
    check_device_value(value, "exports");
    Tensor t(value.dtype, value.shape);
    cuda_context_impl(ctx).copy_to_host(t.data(), value.data, static_cast<int64_t>(t.nbytes()));
    return t;
  }

  void synchronize(ExecutionContext& ctx) const override { cuda_context_impl(ctx).synchronize(); }

  void run_kernel(const KernelChoice& kernel, const Node& node,
                  std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs,
                  MemoryRegion workspace, ExecutionContext& ctx) const override {
    CudaContextImpl& cuda = cuda_context_impl(ctx);
    for (size_t i = 0; i < inputs.size(); ++i) {
      check_device(node, "input", i, inputs[i].data, inputs[i].space);
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      check_device(node, "output", i, outputs[i].data, outputs[i].space);
    }
    if (workspace.bytes > 0) check_device(node, "workspace", 0, workspace.data, workspace.space);
    const auto* k = static_cast<const CudaKernel*>(kernel.impl);
    RunGraphs& graphs = cuda.graphs();
    if (ctx.step_observer() || exchanges_with_host(kernel)) {
      // This step cannot wait for the end of the run (run_graphs.h): what was kept before it
      // goes first, then the step itself.
      graphs.launch_eagerly(cuda.stream());
      k->fn(CudaKernelArgs{node, inputs, outputs, cuda.stream(), workspace, &cuda});
      return;
    }
    graphs.defer({k,
                  &node,
                  {inputs.begin(), inputs.end()},
                  {outputs.begin(), outputs.end()},
                  workspace,
                  &cuda});
  }
};

std::unique_ptr<Backend> make_cuda_backend() { return std::make_unique<CudaBackend>(); }

VOLTA_REGISTER_BACKEND(kCudaBackend,
                       "the CUDA engine: one stream, a device arena, deterministic kernels",
                       make_cuda_backend);

}  // namespace

std::optional<KernelUnsupported> refuse_dtype(const CudaKernelQuery& query, DTypeSet supported) {
  const DType dtype = query.inputs[0]->dtype;
  if (supported.contains(dtype)) return std::nullopt;
  return KernelUnsupported{"no " + std::string(dtype_name(dtype)) + " kernel for " +
                           std::string(op_name(query.node.op)) + " (supported: " + supported.str() +
                           ")"};
}

void check_launch(cudaError_t status, const Node& node) {
  if (status == cudaSuccess) return;
  fail(ErrorCode::DeviceFailure, "launching the kernel of node '" + node.name + "' (" +
                                     std::string(op_name(node.op)) +
                                     ") failed: " + cuda_error_text(status));
}

}  // namespace cuda

std::span<const CudaOpClaim> cuda_op_claims() {
  static const std::vector<CudaOpClaim> kClaims = [] {
    std::vector<CudaOpClaim> out;
    for (const cuda::CudaOpKernels* k : cuda::kernel_table()) {
      if (k != nullptr) out.push_back(k->claim);
    }
    return out;
  }();
  return kClaims;
}

}  // namespace volta
