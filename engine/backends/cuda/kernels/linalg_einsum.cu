// Einsum's label loop, one thread per output element: the CPU's loop (cpu/kernels/
// linalg_einsum.cpp, EinsumKernel) for that element, the same products in the same order, no
// FMA (-fmad=false). Integers multiply and add unsigned, so overflow wraps as on the CPU.

#include <type_traits>

#include "map.cuh"

namespace volta::cuda {
namespace {

template <class T>
struct ArithOf {
  using type = T;
};
template <>
struct ArithOf<int32_t> {
  using type = uint32_t;
};
template <>
struct ArithOf<int64_t> {
  using type = uint64_t;
};

template <class T>
__global__ void einsum_loop_kernel(EinsumLoop g, T* y) {
  using A = typename ArithOf<T>::type;
  for (int64_t e = first_index(); e < g.numel; e += grid_stride()) {
    int64_t at[kMaxEinsumOperands] = {};
    int64_t rest = e;
    for (int a = g.out_rank - 1; a >= 0; --a) {
      const int64_t index = rest % g.out_dims[a];
      rest /= g.out_dims[a];
      for (int k = 0; k < g.operands; ++k) at[k] += index * g.out_strides[k][a];
    }
    int64_t pick[kMaxEinsumLabels] = {};
    A acc{0};
    for (int64_t s = 0; s < g.summed_count; ++s) {
      A product = static_cast<A>(static_cast<const T*>(g.data[0])[at[0]]);
      for (int k = 1; k < g.operands; ++k) {
        product = product * static_cast<A>(static_cast<const T*>(g.data[k])[at[k]]);
      }
      acc = acc + product;
      for (int d = g.summed - 1; d >= 0; --d) {  // odometer, the last summed label first
        for (int k = 0; k < g.operands; ++k) at[k] += g.summed_strides[k][d];
        if (++pick[d] < g.summed_extents[d]) break;
        for (int k = 0; k < g.operands; ++k) at[k] -= g.summed_strides[k][d] * g.summed_extents[d];
        pick[d] = 0;
      }
    }
    y[e] = static_cast<T>(acc);
  }
}

template <class T>
cudaError_t launch_typed(const EinsumLoop& loop, void* y, cudaStream_t stream) {
  einsum_loop_kernel<T>
      <<<blocks_for(loop.numel), kThreadsPerBlock, 0, stream>>>(loop, static_cast<T*>(y));
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_einsum_loop(ElementType type, const EinsumLoop& loop, void* y,
                               cudaStream_t stream) {
  switch (type) {
    case ElementType::F32:
      return launch_typed<float>(loop, y, stream);
    case ElementType::F64:
      return launch_typed<double>(loop, y, stream);
    case ElementType::I32:
      return launch_typed<int32_t>(loop, y, stream);
    case ElementType::I64:
      return launch_typed<int64_t>(loop, y, stream);
    case ElementType::Bool:
      break;
  }
  return cudaErrorInvalidValue;
}

}  // namespace volta::cuda
