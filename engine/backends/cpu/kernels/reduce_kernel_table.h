#pragma once
// Per-dtype kernel tables for the reduction and normalization families: each op gets one
// kernel per dtype it covers, named "<dtype>_<what>", and a selector that picks by the dtype
// of input 0 (the op's primary type parameter).

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "cpu_kernel.h"

namespace volta::cpu {

// One op's kernels, indexed by DType; fn is null for a dtype the op has no kernel for.
struct KernelsByDType {
  DTypeSet dtypes;
  std::array<CpuKernel, kDTypeCount> by_dtype{};
};
using KernelsByOp = std::array<KernelsByDType, kOpCount>;

// Instantiates Kernel<T>::run for each T in Ts; `what` names the algorithm in the variant.
template <template <class> class Kernel, class... Ts>
KernelsByDType kernels_for(std::string_view what) {
  KernelsByDType k;
  k.dtypes = DTypeSet{dtype_of<Ts>()...};
  ((k.by_dtype[static_cast<size_t>(dtype_of<Ts>())] =
        CpuKernel{&Kernel<Ts>::run,
                  std::string(dtype_name(dtype_of<Ts>())) + "_" + std::string(what)}),
   ...);
  return k;
}
template <template <class> class Kernel>
KernelsByDType float_kernels(std::string_view what) {
  return kernels_for<Kernel, float, double>(what);
}
template <template <class> class Kernel>
KernelsByDType numeric_kernels(std::string_view what) {
  return kernels_for<Kernel, float, double, int32_t, int64_t>(what);
}

// The kernel of `family` for the query's op and input dtype. `family` must have static
// storage duration: the choice points into it.
inline KernelSelection select_by_input_dtype(const KernelsByOp& family, const KernelQuery& query) {
  const KernelsByDType& kernels = family[static_cast<size_t>(op_index(query.node.op))];
  const DType dtype = query.inputs[0]->dtype;
  const CpuKernel& kernel = kernels.by_dtype[static_cast<size_t>(dtype)];
  if (kernel.fn == nullptr) {
    return KernelUnsupported{"no " + std::string(dtype_name(dtype)) + " kernel for " +
                             std::string(op_name(query.node.op)) +
                             " (supported: " + kernels.dtypes.str() + ")"};
  }
  return choice_of(kernel);
}

// Registers `select` for each op in `ops`, with the dtypes `family` covers for it.
inline void register_ops(KernelTable& table, const KernelsByOp& family,
                         std::initializer_list<OpKind> ops, KernelSelector select) {
  for (OpKind op : ops) {
    const auto index = static_cast<size_t>(op_index(op));
    table[index] = OpKernels{select, family[index].dtypes, KernelDeterminism::BitExact};
  }
}

}  // namespace volta::cpu
