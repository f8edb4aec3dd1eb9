#pragma once
// Per-op, per-dtype kernel tables shared by the CPU kernel families: each op gets one kernel
// per dtype it covers; a selector picks by the dtype of the op's primary operand.

#include <array>
#include <string>
#include <string_view>
#include <type_traits>

#include "cpu_kernel.h"

namespace volta::cpu {

// The kernels of one op, by dtype (of its primary operand), and the set they cover.
struct DTypeKernels {
  std::array<CpuKernel, kDTypeCount> by_dtype;  // fn == nullptr: not covered
  DTypeSet dtypes;
};
// A family file's kernels, indexed by op_index.
using OpDTypeKernels = std::array<DTypeKernels, kOpCount>;

constexpr size_t dtype_index(DType dtype) { return static_cast<size_t>(dtype); }

template <class... Ts>
struct TypeList {};
template <class A, class B>
struct ConcatLists;
template <class... As, class... Bs>
struct ConcatLists<TypeList<As...>, TypeList<Bs...>> {
  using type = TypeList<As..., Bs...>;
};
template <class A, class B>
using ConcatTypes = typename ConcatLists<A, B>::type;

// The type lists of the dtype sets (volta/ir/dtype.h) of the same names.
using FloatTypes = TypeList<float, double>;
using HalfTypes = TypeList<Float16, BFloat16>;
using NumericTypes = TypeList<float, double, int32_t, int64_t>;
using NarrowIntegerTypes = TypeList<int8_t, uint8_t, int16_t, uint16_t, uint32_t, uint64_t>;
using EveryNumericType = ConcatTypes<ConcatTypes<NumericTypes, NarrowIntegerTypes>, HalfTypes>;
using IntegerTypes = ConcatTypes<TypeList<int32_t, int64_t>, NarrowIntegerTypes>;
using SignedNumericTypes = ConcatTypes<NumericTypes, TypeList<int8_t, int16_t, Float16, BFloat16>>;
using CoreTypes = TypeList<float, double, int32_t, int64_t, bool>;
using AllTypes = ConcatTypes<EveryNumericType, TypeList<bool>>;

// The kernels make(TypeTag<T>{}) for each T of the list.
template <class... Ts, class Make>
DTypeKernels make_kernels(TypeList<Ts...>, const Make& make) {
  DTypeKernels kernels;
  ((kernels.by_dtype[dtype_index(dtype_of<Ts>())] = make(TypeTag<Ts>{})), ...);
  kernels.dtypes = DTypeSet{dtype_of<Ts>()...};
  return kernels;
}

// "f32_add_sse2": dtype, op, and how it is computed: the ISA its loop is vectorized for, or
// "scalar" / "libm" where it is not.
std::string kernel_variant(DType dtype, std::string_view op, std::string_view impl);

// The kernels Kernel<T>::run for each T of the list, named "<dtype>_<what>".
template <template <class> class Kernel, class... Ts>
DTypeKernels kernels_for(TypeList<Ts...> types, std::string_view what) {
  return make_kernels(types, [what]<class T>(TypeTag<T>) {
    return CpuKernel{&Kernel<T>::run,
                     std::string(dtype_name(dtype_of<T>())) + "_" + std::string(what)};
  });
}

// The kernel of `kernels` for `dtype`, or an answer naming the dtypes that are covered.
KernelSelection select_by_dtype(const DTypeKernels& kernels, const Node& node, DType dtype);

// Points the backend table at `select` for every op that has a kernel in `kernels`.
void register_family(KernelTable& table, const OpDTypeKernels& kernels, KernelSelector select);

}  // namespace volta::cpu
