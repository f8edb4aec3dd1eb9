// Comparison, boolean and classification kernels: Equal Less Greater, Not And Or, and those
// added for ONNX import, IsNaN IsInf Xor LessOrEqual GreaterOrEqual. Bool tensors are C++ bools,
// one byte holding 0 or 1 (every way in, ONNX data included, stores 0 or 1). Comparisons with
// NaN are false, so Equal(NaN, NaN) is false; the 16-bit floats compare as their f32 values.

#include <limits>
#include <type_traits>

#include "elementwise_common.h"

namespace volta::cpu {
namespace {

using Bool = bool;

template <class T>
struct Equal {
  Bool operator()(T a, T b) const { return a == b; }
};
template <class T>
struct Less {
  Bool operator()(T a, T b) const { return a < b; }
};
template <class T>
struct Greater {
  Bool operator()(T a, T b) const { return a > b; }
};
template <class T>
struct LessOrEqual {
  Bool operator()(T a, T b) const { return a <= b; }
};
template <class T>
struct GreaterOrEqual {
  Bool operator()(T a, T b) const { return a >= b; }
};

struct Not {
  Bool operator()(Bool x) const { return !x; }
};
struct And {
  Bool operator()(Bool a, Bool b) const { return a && b; }
};
struct Or {
  Bool operator()(Bool a, Bool b) const { return a || b; }
};
struct Xor {
  Bool operator()(Bool a, Bool b) const { return a != b; }
};

template <class T>
struct IsNaN {
  Bool operator()(T x) const { return x != x; }
};

// Each detected infinity is a value to match; an undetected one is replaced by NaN, which
// matches nothing.
template <class T>
struct IsInf {
  T positive, negative;
  explicit IsInf(const AttrReader& attrs)
      : positive(attrs.get_int("detect_positive") != 0 ? std::numeric_limits<T>::infinity()
                                                       : std::numeric_limits<T>::quiet_NaN()),
        negative(attrs.get_int("detect_negative") != 0 ? -std::numeric_limits<T>::infinity()
                                                       : std::numeric_limits<T>::quiet_NaN()) {}
  Bool operator()(T x) const { return (x == positive) | (x == negative); }
};

template <class T, class Op>
void compare_kernel(const KernelArgs& args) {
  map_broadcast<Bool, T, T>(args, Op{});
}

void not_kernel(const KernelArgs& args) { map_broadcast<Bool, Bool>(args, Not{}); }
void and_kernel(const KernelArgs& args) { map_broadcast<Bool, Bool, Bool>(args, And{}); }
void or_kernel(const KernelArgs& args) { map_broadcast<Bool, Bool, Bool>(args, Or{}); }
void xor_kernel(const KernelArgs& args) { map_broadcast<Bool, Bool, Bool>(args, Xor{}); }

template <class T, class Op>
void classify_kernel(const KernelArgs& args) {
  map_broadcast<Bool, T>(args, make_op<Op>(args));
}

template <template <class> class Op, class List>
DTypeKernels compare_kernels(List types, std::string_view name) {
  return make_kernels(types, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return CpuKernel{&compare_kernel<T, KernelOp<T, Op>>,
                     kernel_variant(dtype_of<T>(), name, impl_of<KernelOp<T, Op>>())};
  });
}

template <template <class> class Op>
DTypeKernels classify_kernels(std::string_view name) {
  return make_kernels(ConcatTypes<FloatTypes, HalfTypes>{}, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return CpuKernel{&classify_kernel<T, KernelOp<T, Op>>,
                     kernel_variant(dtype_of<T>(), name, impl_of<KernelOp<T, Op>>())};
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
    at(K::Less) = compare_kernels<Less>(EveryNumericType{}, "less");
    at(K::Greater) = compare_kernels<Greater>(EveryNumericType{}, "greater");
    at(K::Not) = bool_kernel(&not_kernel, "not");
    at(K::And) = bool_kernel(&and_kernel, "and");
    at(K::Or) = bool_kernel(&or_kernel, "or");
    at(K::IsNaN) = classify_kernels<IsNaN>("isnan");
    at(K::IsInf) = classify_kernels<IsInf>("isinf");
    at(K::Xor) = bool_kernel(&xor_kernel, "xor");
    at(K::LessOrEqual) = compare_kernels<LessOrEqual>(EveryNumericType{}, "less_or_equal");
    at(K::GreaterOrEqual) = compare_kernels<GreaterOrEqual>(EveryNumericType{}, "greater_or_equal");
    return t;
  }();
  return kKernels;
}

// Kernels are chosen by the dtype of input 0: the compared or classified operand.
KernelSelection select_logical(const KernelQuery& query) {
  return select_by_dtype(logical_kernels()[static_cast<size_t>(op_index(query.node.op))],
                         query.node, query.inputs[0]->dtype);
}

}  // namespace

void register_logical_kernels(KernelTable& table) {
  register_family(table, logical_kernels(), &select_logical);
}

}  // namespace volta::cpu
