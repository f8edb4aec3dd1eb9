#include "dtype_kernels.h"

namespace volta::cpu {

std::string kernel_variant(DType dtype, std::string_view op, std::string_view impl) {
  std::string name(dtype_name(dtype));
  name += '_';
  name += op;
  name += '_';
  name += impl;
  return name;
}

KernelSelection select_by_dtype(const DTypeKernels& kernels, const Node& node, DType dtype) {
  const CpuKernel& kernel = kernels.by_dtype[dtype_index(dtype)];
  if (kernel.fn != nullptr) return choice_of(kernel);
  return KernelUnsupported{"no " + std::string(dtype_name(dtype)) + " kernel for " +
                           std::string(op_name(node.op)) + " (supported: " + kernels.dtypes.str() +
                           ")"};
}

void register_family(KernelTable& table, const OpDTypeKernels& kernels, KernelSelector select) {
  for (size_t op = 0; op < kernels.size(); ++op) {
    if (kernels[op].dtypes.empty()) continue;
    table[op] = OpKernels{select, kernels[op].dtypes, KernelDeterminism::BitExact};
  }
}

}  // namespace volta::cpu
