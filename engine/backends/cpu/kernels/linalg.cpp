// MatMul and Gemm on the CPU. Both are lowered onto the GEMM core (linalg_gemm.h). Each registered
// kernel is bound at compile time to one GEMM micro-kernel and reports that micro-kernel's name
// as its variant, so the plan records exactly the code that runs. register_linalg_kernels also
// registers the family's other files: linalg_einsum.cpp, linalg_det.cpp, linalg_fused_matmul.cpp
// and linalg_permuted_matmul.cpp.

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "cpu_kernel.h"
#include "linalg_gemm.h"

namespace volta::cpu {
namespace {

// numpy matmul: the dims before the last two (before the last one for a 1-D operand).
Shape batch_dims(const Shape& s) {
  const int matrix_rank = std::min(s.rank(), 2);
  return Shape(std::vector<int64_t>(s.dims().begin(), s.dims().end() - matrix_rank));
}

// The shapes of a MatMul's GEMMs: `count` problems of m x n x k. A 1-D A is a [1,K] row and a
// 1-D B a [K,1] column; Y's layout is the same whether or not the promoted dim is kept. When
// every batch multiplies the same B, A's batches stack into one tall problem, whose tiles are
// fuller and pack B fewer times; elements get the same bits either way.
struct MatmulDims {
  int64_t m = 0, n = 0, k = 0, count = 0;
  bool stacked = false;
};

MatmulDims matmul_dims(const Shape& a, const Shape& b) {
  MatmulDims d;
  d.k = a[a.rank() - 1];
  d.m = a.rank() >= 2 ? a[a.rank() - 2] : 1;
  d.n = b.rank() >= 2 ? b[b.rank() - 1] : 1;
  const Shape batch_a = batch_dims(a);
  const Shape batch_b = batch_dims(b);
  d.stacked = batch_b.numel() == 1;
  d.count = d.stacked ? 1 : broadcast_shapes(batch_a, batch_b)->numel();
  return d;
}

// The GEMMs of a MatMul, one per batch of Y (or one stacked problem, see MatmulDims).
template <class T>
std::vector<GemmProblem<T>> matmul_problems(const ConstTensorView& a, const ConstTensorView& b,
                                            const TensorView& y) {
  const MatmulDims dims = matmul_dims(a.shape, b.shape);
  const int64_t m = dims.m, n = dims.n, k = dims.k;
  GemmProblem<T> matrix{.m = m,
                        .n = n,
                        .k = k,
                        .a = a.as<T>(),
                        .a_row_stride = k,
                        .a_col_stride = 1,
                        .b = b.as<T>(),
                        .b_row_stride = n,
                        .b_col_stride = 1,
                        .y = y.as<T>(),
                        .y_row_stride = n};
  const Shape batch_a = batch_dims(a.shape);
  const Shape batch_b = batch_dims(b.shape);
  if (dims.stacked) {
    matrix.m = batch_a.numel() * m;
    return {matrix};
  }
  const Shape batch_y = *broadcast_shapes(batch_a, batch_b);
  const std::vector<int64_t> a_strides = broadcast_strides(batch_a, batch_y);
  const std::vector<int64_t> b_strides = broadcast_strides(batch_b, batch_y);
  std::vector<GemmProblem<T>> problems;
  problems.reserve(static_cast<size_t>(batch_y.numel()));
  for (int64_t batch = 0; batch < batch_y.numel(); ++batch) {
    int64_t rest = batch, a_matrix = 0, b_matrix = 0;
    for (int axis = batch_y.rank() - 1; axis >= 0; --axis) {
      const int64_t index = rest % batch_y[axis];
      rest /= batch_y[axis];
      a_matrix += index * a_strides[static_cast<size_t>(axis)];
      b_matrix += index * b_strides[static_cast<size_t>(axis)];
    }
    GemmProblem<T> p = matrix;
    p.a += a_matrix * m * k;
    p.b += b_matrix * k * n;
    p.y += batch * m * n;
    problems.push_back(p);
  }
  return problems;
}

template <class T>
void run_matmul(const GemmMicroKernel<T>& micro, const KernelArgs& args) {
  const TensorView& y = args.outputs[0];
  if (y.numel() == 0) return;
  const std::vector<GemmProblem<T>> problems =
      matmul_problems<T>(args.inputs[0], args.inputs[1], y);
  gemm<T>(micro, problems, args.pool, args.workspace);
}

// Y = alpha * op(A) @ op(B) + beta * C: A is stored [M,K] ([K,M] with transA), B [K,N]
// ([N,K] with transB); C, when given, broadcasts to [M,N].
template <class T>
void run_gemm(const GemmMicroKernel<T>& micro, const KernelArgs& args) {
  const TensorView& y = args.outputs[0];
  if (y.numel() == 0) return;
  const ConstTensorView& a = args.inputs[0];
  const ConstTensorView& b = args.inputs[1];
  const bool trans_a = args.attrs.get_int("transA") != 0;
  const bool trans_b = args.attrs.get_int("transB") != 0;
  const int64_t m = y.shape[0];
  const int64_t n = y.shape[1];
  const int64_t k = trans_a ? a.shape[0] : a.shape[1];
  GemmProblem<T> p{.m = m,
                   .n = n,
                   .k = k,
                   .a = a.as<T>(),
                   .a_row_stride = trans_a ? 1 : k,
                   .a_col_stride = trans_a ? m : 1,
                   .b = b.as<T>(),
                   .b_row_stride = trans_b ? 1 : n,
                   .b_col_stride = trans_b ? k : 1,
                   .y = y.as<T>(),
                   .y_row_stride = n,
                   .alpha = static_cast<T>(args.attrs.get_float("alpha")),
                   .beta = static_cast<T>(args.attrs.get_float("beta"))};
  if (args.inputs.size() > 2 && args.inputs[2].data != nullptr) {
    const ConstTensorView& c = args.inputs[2];
    const std::vector<int64_t> c_strides = broadcast_strides(c.shape, y.shape);
    p.c = c.as<T>();
    p.c_row_stride = c_strides[0];
    p.c_col_stride = c_strides[1];
  }
  gemm<T>(micro, std::span(&p, 1), args.pool, args.workspace);
}

template <OpKind Op, class T, GemmIsa Isa>
void linalg_kernel(const KernelArgs& args) {
  const GemmMicroKernel<T>& micro = gemm_micro_kernel<T>(Isa);
  if constexpr (Op == OpKind::MatMul) {
    run_matmul(micro, args);
  } else {
    static_assert(Op == OpKind::Gemm);
    run_gemm(micro, args);
  }
}

template <OpKind Op, class T, GemmIsa Isa>
const CpuKernel& linalg_cpu_kernel() {
  static const CpuKernel kernel{&linalg_kernel<Op, T, Isa>,
                                std::string(gemm_micro_kernel<T>(Isa).name)};
  return kernel;
}

template <OpKind Op, class T>
const CpuKernel& fastest_linalg_kernel() {
  switch (best_gemm_isa()) {
    case GemmIsa::Generic:
      return linalg_cpu_kernel<Op, T, GemmIsa::Generic>();
    case GemmIsa::Avx2Fma:
      return linalg_cpu_kernel<Op, T, GemmIsa::Avx2Fma>();
    case GemmIsa::Avx512:
      return linalg_cpu_kernel<Op, T, GemmIsa::Avx512>();
  }
  return linalg_cpu_kernel<Op, T, GemmIsa::Generic>();  // unreachable: the switch is exhaustive
}

// The GEMM scratch of the exact node: MatMul's batches (or its stacked problem), Gemm's one
// problem of Y's shape.
template <OpKind Op, class T>
KernelChoice linalg_choice(const KernelQuery& query) {
  const GemmMicroKernel<T>& micro = gemm_micro_kernel<T>(best_gemm_isa());
  const Shape& a = query.inputs[0]->shape;
  const Shape& y = query.outputs[0].shape;
  GemmScratch scratch;
  if constexpr (Op == OpKind::MatMul) {
    const MatmulDims d = matmul_dims(a, query.inputs[1]->shape);
    const int64_t rows = d.stacked ? batch_dims(a).numel() * d.m : d.m;
    scratch = gemm_scratch(micro, rows, d.n, d.k, d.count, d.k);
  } else {
    const bool trans_a = AttrReader(query.node).get_int("transA") != 0;
    scratch = gemm_scratch(micro, y[0], y[1], trans_a ? a[0] : a[1], 1, trans_a ? 0 : a[1]);
  }
  return choice_of(fastest_linalg_kernel<Op, T>(), scratch.shared_bytes, scratch.task_bytes);
}

template <OpKind Op>
KernelSelection select_linalg_kernel(const KernelQuery& query) {
  const DType dtype = query.outputs[0].dtype;
  if (dtype == DType::F32) return linalg_choice<Op, float>(query);
  if (dtype == DType::F64) return linalg_choice<Op, double>(query);
  return KernelUnsupported{"no " + std::string(dtype_name(dtype)) + " kernel for " +
                           std::string(op_name(Op)) + " (supported: f32, f64)"};
}

}  // namespace

void register_linalg_kernels(KernelTable& table) {
  table[static_cast<size_t>(op_index(OpKind::MatMul))] = {&select_linalg_kernel<OpKind::MatMul>,
                                                          kFloatTypes, KernelDeterminism::BitExact};
  table[static_cast<size_t>(op_index(OpKind::Gemm))] = {&select_linalg_kernel<OpKind::Gemm>,
                                                        kFloatTypes, KernelDeterminism::BitExact};
  register_linalg_einsum_kernels(table);
  register_linalg_det_kernels(table);
  register_linalg_fused_matmul_kernels(table);
  register_linalg_permuted_matmul_kernels(table);
}

}  // namespace volta::cpu
