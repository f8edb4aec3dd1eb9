#include "cpu_kernel.h"
#include "volta/backends/cpu.h"
#include "volta/runtime/runtime.h"

namespace volta {
namespace cpu {
namespace {

const KernelTable& kernel_table() {
  static const KernelTable kTable = [] {
    KernelTable t{};
    register_elementwise_kernels(t);
    register_linalg_kernels(t);
    register_normalization_kernels(t);
    register_reduction_kernels(t);
    register_movement_kernels(t);
    register_math_kernels(t);
    register_conv_kernels(t);
    register_pooling_kernels(t);
    register_loss_kernels(t);
    register_einsum_kernels(t);
    register_indexing_kernels(t);
    register_layout_kernels(t);
    register_resize_kernels(t);
    register_det_kernels(t);
    register_grid_sample_kernels(t);
    register_fused_matmul_kernels(t);
    return t;
  }();
  return kTable;
}

class CpuBackend final : public Backend {
 public:
  std::string_view name() const override { return "cpu"; }

  Capabilities capabilities() const override {
    Capabilities caps{};
    for (int i = 0; i < kOpCount; ++i) {
      const OpKernels& k = kernel_table()[static_cast<size_t>(i)];
      caps[static_cast<size_t>(i)] = {k.select != nullptr, k.dtypes, k.determinism};
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

  void run_kernel(const KernelChoice& kernel, const Node& node,
                  std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs,
                  ExecutionContext& ctx) const override {
    const auto* k = static_cast<const CpuKernel*>(kernel.impl);
    k->fn(KernelArgs{node, AttrReader(node), inputs, outputs, ctx.pool()});
  }
};

}  // namespace
}  // namespace cpu

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<cpu::CpuBackend>(); }

}  // namespace volta
