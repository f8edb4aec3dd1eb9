// VJP rules of the linalg family: MatMul (numpy semantics: batched, batch dims broadcast, 1-D
// operands promoted) and Gemm (transposes, alpha, beta, broadcast C).

#include <numeric>
#include <vector>

#include "vjp.h"

namespace volta::autograd {
namespace {

// Swaps the last two axes.
ValueId transpose_matrices(VjpBuilder& b, ValueId v) {
  const int rank = b.shape(v).rank();
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  std::iota(perm.begin(), perm.end(), int64_t{0});
  std::swap(perm[static_cast<size_t>(rank - 1)], perm[static_cast<size_t>(rank - 2)]);
  return b.add(OpKind::Transpose, {v}, {{"perm", perm}});
}

ValueId reshape(VjpBuilder& b, ValueId v, const Shape& shape) {
  if (b.shape(v) == shape) return v;
  return b.add(OpKind::Reshape, {v}, {{"shape", shape.dims()}});
}

// Y = A @ B with A [..., M, K], B [..., K, N]: dA = g @ B^T, dB = A^T @ g, each summed over
// the batch dims it was broadcast along (for a 2-D B under a batched A, one GEMM over the batch
// rows). A 1-D A is the row [1, K], a 1-D B the column [K, 1];
// Y then lacks that axis, so g is reshaped to the promoted product's shape first.
void matmul_vjp(VjpBuilder& b) {
  const ValueId a = b.input(0), bb = b.input(1);
  const Shape& sa = b.shape(a);
  const Shape& sb = b.shape(bb);
  const ValueId a2 = sa.rank() == 1 ? reshape(b, a, Shape{1, sa[0]}) : a;
  const ValueId b2 = sb.rank() == 1 ? reshape(b, bb, Shape{sb[0], 1}) : bb;
  std::vector<int64_t> y2 = b.shape(b.output()).dims();
  if (sa.rank() == 1) y2.insert(y2.end() - (sb.rank() == 1 ? 0 : 1), 1);
  if (sb.rank() == 1) y2.push_back(1);
  const ValueId g2 = reshape(b, b.grad(), Shape(y2));
  if (b.wants(0)) {
    const ValueId ga = b.add(OpKind::MatMul, {g2, transpose_matrices(b, b2)});
    b.set(0, reshape(b, b.sum_to(ga, b.shape(a2)), sa));
  }
  if (b.wants(1)) {
    if (b.shape(b2).rank() == 2 && b.shape(a2).rank() > 2) {
      // B is shared by every batch: one GEMM whose reduction runs over all the batch rows, not
      // a batched product and then a sum over the batch (a strided reduction, far slower).
      const Shape batched = b.shape(a2);
      int64_t rows = 1;
      for (int d = 0; d + 1 < batched.rank(); ++d) rows *= batched[d];
      const int64_t n = b.shape(b2)[1];
      const ValueId a_rows = reshape(b, a2, Shape{rows, batched[batched.rank() - 1]});
      const ValueId g_rows = reshape(b, g2, Shape{rows, n});
      const ValueId gb = b.add(OpKind::Gemm, {a_rows, g_rows},
                               {{"alpha", 1.0}, {"transA", int64_t{1}}, {"transB", int64_t{0}}});
      b.set(1, reshape(b, gb, sb));
    } else {
      const ValueId gb = b.add(OpKind::MatMul, {transpose_matrices(b, a2), g2});
      b.set(1, reshape(b, b.sum_to(gb, b.shape(b2)), sb));
    }
  }
}

// Y = alpha * op(A) @ op(B) + beta * C. With op(X) = X or X^T:
// d op(A) = alpha * g @ op(B)^T and d op(B) = alpha * op(A)^T @ g, transposed back when the
// operand was; dC = beta * g summed to C's shape. Each product is itself a Gemm.
void gemm_vjp(VjpBuilder& b) {
  const AttrReader at = b.attrs();
  const int64_t ta = at.get_int("transA"), tb = at.get_int("transB");
  const double alpha = at.get_float("alpha");
  const ValueId a = b.input(0), bb = b.input(1), g = b.grad();
  const auto gemm = [&](ValueId x, ValueId y, int64_t trans_x, int64_t trans_y) {
    return b.add(OpKind::Gemm, {x, y},
                 {{"alpha", alpha}, {"transA", trans_x}, {"transB", trans_y}});
  };
  if (b.wants(0)) b.set(0, ta ? gemm(bb, g, tb, 1) : gemm(g, bb, 0, 1 - tb));
  if (b.wants(1)) b.set(1, tb ? gemm(g, a, 1, ta) : gemm(a, g, 1 - ta, 0));
  if (b.num_inputs() > 2 && b.wants(2)) {
    const ValueId scaled = b.mul(g, b.scalar(at.get_float("beta")));
    b.set(2, b.sum_to(scaled, b.shape(b.input(2))));
  }
}

}  // namespace

void register_linalg_vjps(VjpTable& t) {
  t[static_cast<size_t>(op_index(OpKind::MatMul))] = {&matmul_vjp, 0b11};
  t[static_cast<size_t>(op_index(OpKind::Gemm))] = {&gemm_vjp, 0b111};
}

}  // namespace volta::autograd
