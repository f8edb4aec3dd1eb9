// Comparison, boolean and selection kernels: Equal Less Greater, Not And Or, Where.
// Bool tensors hold one byte per element; any nonzero byte reads as true, and results are
// written as 0 or 1. Comparisons with NaN are false, so Equal(NaN, NaN) is false.

#include <type_traits>

#include "elementwise_common.h"

namespace volta::cpu {
namespace {

using Bool = uint8_t;

template <class T>
struct Equal {
  Bool operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, Bool>)
      return (a != 0) == (b != 0);
    else
      return a == b;
  }
};
template <class T>
struct Less {
  Bool operator()(T a, T b) const { return a < b; }
};
template <class T>
struct Greater {
  Bool operator()(T a, T b) const { return a > b; }
};

struct Not {
  Bool operator()(Bool x) const { return x == 0; }
};
struct And {
  Bool operator()(Bool a, Bool b) const { return (a != 0) & (b != 0); }
};
struct Or {
  Bool operator()(Bool a, Bool b) const { return (a | b) != 0; }
};

template <class T>
struct Where {
  T operator()(Bool condition, T x, T y) const { return condition != 0 ? x : y; }
};

template <class T, class Op>
void compare_kernel(const KernelArgs& args) {
  map_broadcast<Bool, T, T>(args, Op{});
}

void not_kernel(const KernelArgs& args) { map_broadcast<Bool, Bool>(args, Not{}); }
void and_kernel(const KernelArgs& args) { map_broadcast<Bool, Bool, Bool>(args, And{}); }
void or_kernel(const KernelArgs& args) { map_broadcast<Bool, Bool, Bool>(args, Or{}); }

template <class T>
void where_kernel(const KernelArgs& args) {
  map_broadcast<T, Bool, T, T>(args, Where<T>{});
}

template <template <class> class Op, class List>
DTypeKernels compare_kernels(List types, std::string_view name) {
  return make_kernels(types, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return CpuKernel{&compare_kernel<T, Op<T>>, kernel_variant(dtype_of<T>(), name, simd_isa())};
  });
}

DTypeKernels bool_kernel(KernelFn fn, std::string_view name) {
  return make_kernels(TypeList<Bool>{}, [&](auto) {
    return CpuKernel{fn, kernel_variant(DType::Bool, name, simd_isa())};
  });
}

const OpDTypeKernels& logical_kernels() {
  static const OpDTypeKernels kKernels = [] {
    using K = OpKind;
    OpDTypeKernels t{};
    auto at = [&t](OpKind op) -> DTypeKernels& { return t[static_cast<size_t>(op_index(op))]; };
    at(K::Equal) = compare_kernels<Equal>(AllTypes{}, "equal");
    at(K::Less) = compare_kernels<Less>(NumericTypes{}, "less");
    at(K::Greater) = compare_kernels<Greater>(NumericTypes{}, "greater");
    at(K::Not) = bool_kernel(&not_kernel, "not");
    at(K::And) = bool_kernel(&and_kernel, "and");
    at(K::Or) = bool_kernel(&or_kernel, "or");
    at(K::Where) = make_kernels(AllTypes{}, [](auto tag) {
      using T = typename decltype(tag)::type;
      return CpuKernel{&where_kernel<T>, kernel_variant(dtype_of<T>(), "where", simd_isa())};
    });
    return t;
  }();
  return kKernels;
}

// Kernels are chosen by the dtype of the compared operands; for Where, of X and Y.
KernelSelection select_logical(const KernelQuery& query) {
  const size_t key_input = query.node.op == OpKind::Where ? 1 : 0;
  return select_by_dtype(logical_kernels()[static_cast<size_t>(op_index(query.node.op))],
                         query.node, query.inputs[key_input]->dtype);
}

}  // namespace

void register_logical_kernels(KernelTable& table) {
  register_family(table, logical_kernels(), &select_logical);
}

}  // namespace volta::cpu
