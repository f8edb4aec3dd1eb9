// FusedMatMul on the CPU: the GEMM of MatMul(A, B) with B one [K,N] matrix (A's rows stacked into
// one tall problem, exactly as the MatMul kernel runs it), and the bias and activation applied to
// each output tile by the GEMM's post-tile epilogue, after the tile's full K sum, while the tile
// is in cache.
//
// Bit for bit the unfused graph: every element is the same GEMM sum, then the same `y + bias`
// (or `bias + y`, the Add's operand order) the Add kernel computes, then the same activation
// functor the Relu and Gelu kernels run (activation_functors.h).

#include <span>
#include <string>
#include <type_traits>

#include "activation_functors.h"
#include "cpu_kernel.h"
#include "elementwise_common.h"
#include "linalg_gemm.h"

namespace volta::cpu {
namespace {

template <class T>
struct NoActivation {
  T operator()(T x) const { return x; }
};

template <class T>
struct BiasEpilogue {
  const T* bias = nullptr;
  bool bias_first = false;
};

// The Add, then the activation, row by row of the tile. Each is the same row loop the standalone
// kernels run (map_row over the same functor and operand kinds, compiled with the same flags), so
// even NaN signs and payloads match theirs.
template <class T, class Act>
void bias_activation_tile(const void* context, T* tile, int64_t row_stride, int64_t /*row0*/,
                          int64_t col0, int64_t rows, int64_t cols) {
  const auto& epilogue = *static_cast<const BiasEpilogue<T>*>(context);
  const Run<T> bias{epilogue.bias + col0};
  for (int64_t r = 0; r < rows; ++r) {
    T* const row = tile + r * row_stride;
    if (epilogue.bias_first) {
      map_row(
          row, cols, [](T b, T y) { return b + y; }, bias, Run<T>{row});
    } else {
      map_row(
          row, cols, [](T y, T b) { return y + b; }, Run<T>{row}, bias);
    }
    if constexpr (!std::is_same_v<Act, NoActivation<T>>) map_row(row, cols, Act{}, Run<T>{row});
  }
}

template <class T, class Act>
void fused_matmul_kernel(const KernelArgs& args) {
  const TensorView& y = args.outputs[0];
  if (y.numel() == 0) return;
  const ConstTensorView& a = args.inputs[0];
  const ConstTensorView& b = args.inputs[1];
  const int64_t k = a.shape[a.shape.rank() - 1];
  const int64_t n = b.shape[1];
  const BiasEpilogue<T> epilogue{args.inputs[2].as<T>(), args.attrs.get_int("bias_first") != 0};
  const GemmProblem<T> p{.m = y.numel() / n,
                         .n = n,
                         .k = k,
                         .a = a.as<T>(),
                         .a_row_stride = k,
                         .a_col_stride = 1,
                         .b = b.as<T>(),
                         .b_row_stride = n,
                         .b_col_stride = 1,
                         .y = y.as<T>(),
                         .y_row_stride = n,
                         .post_tile = &bias_activation_tile<T, Act>,
                         .post_tile_context = &epilogue};
  gemm<T>(gemm_micro_kernel<T>(best_gemm_isa()), std::span(&p, 1), args.pool, args.workspace);
}

// The variant names the GEMM micro-kernel (the one MatMul runs on this CPU) and the epilogue.
template <class T, class Act>
const CpuKernel& fused_kernel(std::string_view epilogue) {
  static const CpuKernel kernel{
      &fused_matmul_kernel<T, Act>,
      std::string(gemm_micro_kernel<T>(best_gemm_isa()).name) + "+" + std::string(epilogue)};
  return kernel;
}

template <class T>
const CpuKernel& kernel_for(const std::string& activation) {
  if (activation == "relu") return fused_kernel<T, Relu<T>>("bias_relu");
  if (activation == "gelu") return fused_kernel<T, Gelu<T>>("bias_gelu_erf");
  if (activation == "gelu_tanh") return fused_kernel<T, GeluTanh<T>>("bias_gelu_tanh");
  return fused_kernel<T, NoActivation<T>>("bias");
}

// One GEMM problem: every row of Y (A's leading dims flattened) by B's columns.
template <class T>
KernelSelection select_for(const KernelQuery& query, const std::string& activation) {
  const Shape& y = query.outputs[0].shape;
  const int64_t n = query.inputs[1]->shape[1];
  const Shape& a = query.inputs[0]->shape;
  const int64_t k = a[a.rank() - 1];
  const GemmScratch scratch =
      gemm_scratch(gemm_micro_kernel<T>(best_gemm_isa()), n == 0 ? 0 : y.numel() / n, n, k, 1, k);
  return choice_of(kernel_for<T>(activation), scratch.shared_bytes, scratch.task_bytes);
}

KernelSelection select_fused_matmul(const KernelQuery& query) {
  const std::string& activation = AttrReader(query.node).get_string("activation");
  const DType dtype = query.outputs[0].dtype;
  if (dtype == DType::F32) return select_for<float>(query, activation);
  if (dtype == DType::F64) return select_for<double>(query, activation);
  return KernelUnsupported{"no " + std::string(dtype_name(dtype)) +
                           " kernel for FusedMatMul (supported: f32, f64)"};
}

}  // namespace

void register_linalg_fused_matmul_kernels(KernelTable& table) {
  table[static_cast<size_t>(op_index(OpKind::FusedMatMul))] = {&select_fused_matmul, kFloatTypes,
                                                               KernelDeterminism::BitExact};
}

}  // namespace volta::cpu
