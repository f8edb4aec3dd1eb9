// Where: the element of X where the condition is true, else the element of Y, all three
// broadcast. The condition is a bool tensor, one byte per element; any nonzero byte reads as
// true.

#include "elementwise_common.h"

namespace volta::cpu {
namespace {

using Bool = uint8_t;

template <class T>
struct Where {
  T operator()(Bool condition, T x, T y) const { return condition != 0 ? x : y; }
};

template <class T>
void where_kernel(const KernelArgs& args) {
  map_broadcast<T, Bool, T, T>(args, Where<T>{});
}

const DTypeKernels& where_kernels() {
  static const DTypeKernels kKernels = make_kernels(AllTypes{}, [](auto tag) {
    using T = typename decltype(tag)::type;
    return CpuKernel{&where_kernel<T>, kernel_variant(dtype_of<T>(), "where", simd_isa())};
  });
  return kKernels;
}

// Kernels are chosen by the dtype of X and Y (input 0 is the condition).
KernelSelection select_where(const KernelQuery& query) {
  return select_by_dtype(where_kernels(), query.node, query.inputs[1]->dtype);
}

}  // namespace

void register_elementwise_where_kernels(KernelTable& table) {
  table[static_cast<size_t>(op_index(OpKind::Where))] =
      OpKernels{&select_where, where_kernels().dtypes, KernelDeterminism::BitExact};
}

}  // namespace volta::cpu
