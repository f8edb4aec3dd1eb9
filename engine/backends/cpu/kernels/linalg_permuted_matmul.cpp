// PermutedMatMul on the CPU: MatMul's GEMMs with the Transposes around it folded into strides.
// Each batch's op(A) and op(B) are strided views of A and B as stored, and its Y rows land where
// perm_y puts them, so the GEMM packs straight from the inputs and writes the permuted layout:
// no copy before or after (attention's heads split and merge).
//
// Bit for bit Transpose -> MatMul -> Transpose: the same micro-kernel as MatMul on this CPU
// (which the variant names), the same problems m x n x k, and a GEMM's element is its sums over
// K in an order fixed by the shape alone, whatever the operands' strides.

#include <span>
#include <string>
#include <vector>

#include "cpu_kernel.h"
#include "linalg_gemm.h"
#include "volta/ir/op_helpers.h"

namespace volta::cpu {
namespace {

// An operand of the product as a strided view of its stored tensor: its shape and each axis's
// stride there.
struct StridedOperand {
  Shape shape;
  std::vector<int64_t> strides;
};

// Transpose(x, perm) without moving data: axis i is x's axis perm[i].
StridedOperand permuted_view(const Shape& stored, const std::vector<int>& perm) {
  const std::vector<int64_t> strides = stored.strides();
  StridedOperand view{permute_shape(stored, perm), {}};
  for (int axis : perm) view.strides.push_back(strides[static_cast<size_t>(axis)]);
  return view;
}

// The product Y' whose Transpose by perm_y is Y as stored: Y's axis i is Y' axis perm_y[i], so
// Y' axis perm_y[i] steps by Y's stride i.
StridedOperand product_view(const Shape& stored, const std::vector<int>& perm_y) {
  const std::vector<int64_t> strides = stored.strides();
  StridedOperand view{stored, strides};  // every axis is overwritten: perm_y is a permutation
  for (size_t i = 0; i < perm_y.size(); ++i) {
    const auto axis = static_cast<size_t>(perm_y[i]);
    view.shape[static_cast<int>(axis)] = stored[static_cast<int>(i)];
    view.strides[axis] = strides[i];
  }
  return view;
}

// The offset of batch `index` (Y's batch axes, right-aligned with the operand's) in an operand
// whose batch axes of size 1 broadcast.
int64_t batch_offset(const std::vector<int64_t>& index, const StridedOperand& x) {
  const int batch_axes = x.shape.rank() - 2;
  const size_t skipped = index.size() - static_cast<size_t>(batch_axes);
  int64_t offset = 0;
  for (int axis = 0; axis < batch_axes; ++axis) {
    if (x.shape[axis] != 1) {
      offset += index[skipped + static_cast<size_t>(axis)] * x.strides[static_cast<size_t>(axis)];
    }
  }
  return offset;
}

// One GEMM per batch of the product: count m x n x k each.
struct PermutedProblems {
  StridedOperand a, b, y;
  int64_t count = 0;
};

PermutedProblems permuted_problems(const Node& node, const Shape& a, const Shape& b,
                                   const Shape& y) {
  const MatMulPerms perms = resolve_matmul_perms(AttrReader(node), a.rank(), b.rank());
  PermutedProblems p{permuted_view(a, perms.a), permuted_view(b, perms.b),
                     product_view(y, perms.y)};
  p.count = 1;
  for (int axis = 0; axis < p.y.shape.rank() - 2; ++axis) p.count *= p.y.shape[axis];
  return p;
}

template <class T>
void run_permuted_matmul(const KernelArgs& args) {
  const TensorView& y = args.outputs[0];
  if (y.numel() == 0) return;
  const PermutedProblems p =
      permuted_problems(args.node, args.inputs[0].shape, args.inputs[1].shape, y.shape);
  const int ra = p.a.shape.rank(), rb = p.b.shape.rank(), ry = p.y.shape.rank();
  const GemmProblem<T> matrix{.m = p.y.shape[ry - 2],
                              .n = p.y.shape[ry - 1],
                              .k = p.a.shape[ra - 1],
                              .a = args.inputs[0].as<T>(),
                              .a_row_stride = p.a.strides[static_cast<size_t>(ra - 2)],
                              .a_col_stride = p.a.strides[static_cast<size_t>(ra - 1)],
                              .b = args.inputs[1].as<T>(),
                              .b_row_stride = p.b.strides[static_cast<size_t>(rb - 2)],
                              .b_col_stride = p.b.strides[static_cast<size_t>(rb - 1)],
                              .y = y.as<T>(),
                              .y_row_stride = p.y.strides[static_cast<size_t>(ry - 2)]};
  std::vector<GemmProblem<T>> problems;
  problems.reserve(static_cast<size_t>(p.count));
  std::vector<int64_t> index(static_cast<size_t>(ry - 2), 0);
  for (int64_t batch = 0; batch < p.count; ++batch) {
    int64_t rest = batch;
    for (int axis = ry - 3; axis >= 0; --axis) {
      index[static_cast<size_t>(axis)] = rest % p.y.shape[axis];
      rest /= p.y.shape[axis];
    }
    GemmProblem<T> problem = matrix;
    problem.a += batch_offset(index, p.a);
    problem.b += batch_offset(index, p.b);
    problem.y += batch_offset(index, p.y);
    problems.push_back(problem);
  }
  gemm<T>(gemm_micro_kernel<T>(best_gemm_isa()), problems, args.pool, args.workspace);
}

// The variant is MatMul's on this CPU: the GEMM micro-kernel's name.
template <class T>
const CpuKernel& permuted_kernel() {
  static const CpuKernel kernel{&run_permuted_matmul<T>,
                                std::string(gemm_micro_kernel<T>(best_gemm_isa()).name)};
  return kernel;
}

template <class T>
KernelSelection select_for(const KernelQuery& query) {
  const PermutedProblems p = permuted_problems(query.node, query.inputs[0]->shape,
                                               query.inputs[1]->shape, query.outputs[0].shape);
  const int ry = p.y.shape.rank();
  const GemmScratch scratch =
      gemm_scratch(gemm_micro_kernel<T>(best_gemm_isa()), p.y.shape[ry - 2], p.y.shape[ry - 1],
                   p.a.shape[p.a.shape.rank() - 1], p.count);
  return choice_of(permuted_kernel<T>(), scratch.shared_bytes, scratch.task_bytes);
}

KernelSelection select_permuted_matmul(const KernelQuery& query) {
  const DType dtype = query.outputs[0].dtype;
  if (dtype == DType::F32) return select_for<float>(query);
  if (dtype == DType::F64) return select_for<double>(query);
  return KernelUnsupported{"no " + std::string(dtype_name(dtype)) +
                           " kernel for PermutedMatMul (supported: f32, f64)"};
}

}  // namespace

void register_linalg_permuted_matmul_kernels(KernelTable& table) {
  table[static_cast<size_t>(op_index(OpKind::PermutedMatMul))] = {
      &select_permuted_matmul, kFloatTypes, KernelDeterminism::BitExact};
}

}  // namespace volta::cpu
