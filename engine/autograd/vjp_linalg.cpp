// VJP rules of the linalg family: MatMul (numpy semantics: batched, batch dims broadcast, 1-D
// operands promoted), Gemm (transposes, alpha, beta, broadcast C), the fused MatMul epilogue,
// the MatMul with folded Transposes, Einsum (each operand's gradient is an Einsum of g with the
// other operands) and Det (through cofactors, so singular matrices have their gradient too).

#include <algorithm>
#include <array>
#include <numeric>
#include <string>
#include <vector>

#include "vjp.h"
#include "volta/ir/einsum.h"
#include "volta/ir/op_helpers.h"

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

// FusedMatMul = activation(MatMul(A, B) + bias), B [K, N], bias [N]: the activation's own rule
// on the recomputed pre-activation z gives dz, then MatMul's rule gives dA and dB (Y has the
// product's shape, which is all that rule reads of its output), and dbias is dz summed over
// every axis but the last. bias_first only orders the forward's Add: it changes no gradient.
void fused_matmul_vjp(VjpBuilder& b) {
  const ValueId a = b.input(0), bb = b.input(1), bias = b.input(2), y = b.output();
  const std::string& activation = b.attrs().get_string("activation");
  ValueId dz = b.grad();
  if (activation != "none") {
    const ValueId z = b.sum(b.add(OpKind::MatMul, {a, bb}), bias);
    if (activation == "relu") {
      dz = b.chain(OpKind::Relu, {z}, {}, y, dz, 0);
    } else {
      Attributes gelu;
      if (activation == "gelu_tanh") gelu["approximate"] = std::string("tanh");
      dz = b.chain(OpKind::Gelu, {z}, std::move(gelu), y, dz, 0);
    }
  }
  for (int i = 0; i < 2; ++i) {
    if (b.wants(i)) b.set(i, b.chain(OpKind::MatMul, {a, bb}, {}, y, dz, i));
  }
  if (b.wants(2)) b.set(2, b.sum_to(dz, b.shape(bias)));
}

// The permutation that undoes `perm`: Transpose's adjoint.
std::vector<int64_t> inverse_perm(const std::vector<int>& perm) {
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = int64_t(i);
  return inverse;
}

ValueId transposed(VjpBuilder& b, ValueId v, const std::vector<int>& perm) {
  return b.add(OpKind::Transpose, {v}, {{"perm", std::vector<int64_t>(perm.begin(), perm.end())}});
}

// PermutedMatMul = Transpose(MatMul(A', B'), perm_y) with A' = Transpose(A, perm_a) and B' =
// Transpose(B, perm_b): g goes back through the perm_y Transpose, MatMul's rule gives dA' and
// dB', and each goes back through its operand's Transpose. MatMul's rule reads its output's
// shape only, which the product's gradient has.
void permuted_matmul_vjp(VjpBuilder& b) {
  const ValueId a = b.input(0), bb = b.input(1);
  const MatMulPerms perms = resolve_matmul_perms(b.attrs(), b.shape(a).rank(), b.shape(bb).rank());
  const ValueId factor_a = transposed(b, a, perms.a);
  const ValueId factor_b = transposed(b, bb, perms.b);
  const ValueId g = b.add(OpKind::Transpose, {b.grad()}, {{"perm", inverse_perm(perms.y)}});
  const std::array<const std::vector<int>*, 2> operand_perms = {&perms.a, &perms.b};
  for (int i = 0; i < 2; ++i) {
    if (!b.wants(i)) continue;
    const ValueId d_factor = b.chain(OpKind::MatMul, {factor_a, factor_b}, {}, g, g, i);
    b.set(i, b.add(OpKind::Transpose, {d_factor},
                   {{"perm", inverse_perm(*operand_perms[static_cast<size_t>(i)])}}));
  }
}

char einsum_letter(int label) {
  return static_cast<char>(label < 26 ? 'a' + label : 'A' + (label - 26));
}

// `g` (of `shape`) where each axis has the index of the first axis with its label (first_axis),
// 0 elsewhere: the diagonal that a label repeated within an operand reads.
ValueId on_diagonals(VjpBuilder& b, ValueId g, const Shape& shape,
                     const std::vector<int>& first_axis) {
  Tensor mask(b.dtype(), shape);
  const std::vector<int64_t> strides = shape.strides();
  for (int64_t p = 0; p < mask.numel(); ++p) {
    bool on = true;
    for (size_t x = 0; x < first_axis.size() && on; ++x) {
      const auto f = static_cast<size_t>(first_axis[x]);
      on = p / strides[x] % shape[static_cast<int>(x)] ==
           p / strides[f] % shape[static_cast<int>(f)];
    }
    mask.set_double(p, on ? 1.0 : 0.0);
  }
  return b.mul(g, b.constant(std::move(mask)));
}

// Einsum: d operand i = Einsum of g (its term: the output's labels) with the other operands
// (their own terms) into operand i's labels; each product of the forward appears once in it.
// The parsed labels are spelled as letters, the ellipsis ones included. An axis of extent 1
// that a label broadcast against a larger extent is squeezed out of its operand (there it is
// the operand lacking the label), and left out of operand i's result, which sums over it. A
// label of operand i alone (summed in the forward, read by no other term) is left out of the
// result and its gradient broadcast back along it. A label repeated within operand i (the
// forward reads a diagonal) appears once in the result, which is broadcast along the repeats
// and kept on the diagonal only (on_diagonals).
void einsum_vjp(VjpBuilder& b) {
  std::vector<Shape> shapes;
  shapes.reserve(static_cast<size_t>(b.num_inputs()));
  for (int i = 0; i < b.num_inputs(); ++i) shapes.push_back(b.shape(b.input(i)));
  const EinsumEquation eq = parse_einsum_equation(b.attrs().get_string("equation"), shapes);
  if (eq.label_extent.size() > 52) {
    fail(ErrorCode::InvalidArgument, "no VJP rule yet for Einsum node '" + b.node().name +
                                         "' with " + std::to_string(eq.label_extent.size()) +
                                         " indices (supported: up to 52)");
  }
  const auto broadcast_axis = [&](int operand, int axis) {
    const int label = eq.operand_axes[static_cast<size_t>(operand)][static_cast<size_t>(axis)];
    return shapes[static_cast<size_t>(operand)][axis] == 1 &&
           eq.label_extent[static_cast<size_t>(label)] != 1;
  };
  for (int i = 0; i < b.num_inputs(); ++i) {
    if (!b.wants(i)) continue;
    const std::vector<int>& own = eq.operand_axes[static_cast<size_t>(i)];
    std::string equation;
    std::vector<char> available(eq.label_extent.size(), 0);
    for (int label : eq.output_labels) {
      equation += einsum_letter(label);
      available[static_cast<size_t>(label)] = 1;
    }
    std::vector<ValueId> operands = {b.grad()};
    for (int j = 0; j < b.num_inputs(); ++j) {
      if (j == i) continue;
      std::vector<int64_t> squeezed;
      equation += ',';
      const std::vector<int>& labels = eq.operand_axes[static_cast<size_t>(j)];
      for (size_t x = 0; x < labels.size(); ++x) {
        if (broadcast_axis(j, static_cast<int>(x))) {
          squeezed.push_back(static_cast<int64_t>(x));
          continue;
        }
        equation += einsum_letter(labels[x]);
        available[static_cast<size_t>(labels[x])] = 1;
      }
      const ValueId operand = b.input(j);
      operands.push_back(
          squeezed.empty() ? operand : b.add(OpKind::Squeeze, {operand}, {{"axes", squeezed}}));
    }
    equation += "->";
    std::vector<int64_t> kept_shape;  // operand i's shape with the left-out axes as 1
    std::vector<int> first_axis;      // per axis: the first axis of operand i with its label
    for (size_t x = 0; x < own.size(); ++x) {
      first_axis.push_back(
          static_cast<int>(std::find(own.begin(), own.end(), own[x]) - own.begin()));
      const bool kept = first_axis.back() == static_cast<int>(x) &&
                        !broadcast_axis(i, static_cast<int>(x)) &&
                        available[static_cast<size_t>(own[x])];
      if (kept) equation += einsum_letter(own[x]);
      kept_shape.push_back(kept ? shapes[static_cast<size_t>(i)][static_cast<int>(x)] : 1);
    }
    ValueId gi = b.add(OpKind::Einsum, operands, {{"equation", equation}});
    if (b.shape(gi) != Shape(kept_shape)) {
      gi = b.add(OpKind::Reshape, {gi}, {{"shape", kept_shape}});
    }
    const Shape& target = shapes[static_cast<size_t>(i)];
    if (b.shape(gi) != target) gi = b.add(OpKind::Expand, {gi}, {{"shape", target.dims()}});
    for (size_t x = 0; x < own.size(); ++x) {
      if (first_axis[x] != static_cast<int>(x)) {
        gi = on_diagonals(b, gi, target, first_axis);
        break;
      }
    }
    b.set(i, gi);
  }
}

// Det: d det(X) / dX[i, j] is the cofactor (-1)^(i + j) det(X without row i and column j), so
// dX = g * the cofactor matrix: exact for singular X too, where det * inverse(X)^T is not
// defined. The minors come from two Gathers of constant row / column lists, their determinants
// from Det itself (M^2 determinants of (M - 1) x (M - 1) matrices). M = 1: dX = g; M = 0: empty.
void det_vjp(VjpBuilder& b) {
  const Shape x = b.shape(b.input(0));
  const int rank = x.rank();
  const int64_t m = x[rank - 1];
  std::vector<int64_t> g_as_matrix(x.dims().begin(), x.dims().end() - 2);
  g_as_matrix.insert(g_as_matrix.end(), {1, 1});
  const ValueId g = b.add(OpKind::Reshape, {b.grad()}, {{"shape", g_as_matrix}});
  if (m <= 1) {
    b.set(0, b.add(OpKind::Expand, {g}, {{"shape", x.dims()}}));
    return;
  }
  Tensor others(DType::I64, Shape{m, m - 1});  // row i: every index but i
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t k = 0; k < m - 1; ++k) others.set_int(i * (m - 1) + k, k < i ? k : k + 1);
  }
  const ValueId keep = b.constant(std::move(others));
  // [..., M, M] -> rows [..., i, r, M] -> minors [..., i, r, j, c] -> [..., i, j, r, c].
  const ValueId rows = b.add(OpKind::Gather, {b.input(0), keep}, {{"axis", int64_t{rank - 2}}});
  const ValueId minors = b.add(OpKind::Gather, {rows, keep}, {{"axis", int64_t{rank}}});
  std::vector<int64_t> perm;
  for (int64_t a = 0; a < rank - 2; ++a) perm.push_back(a);
  const int64_t i = rank - 2;
  perm.insert(perm.end(), {i, i + 2, i + 1, i + 3});
  const ValueId minor_dets =
      b.add(OpKind::Det, {b.add(OpKind::Transpose, {minors}, {{"perm", perm}})});
  Tensor signs(b.dtype(), Shape{m, m});
  for (int64_t k = 0; k < m * m; ++k) signs.set_double(k, (k / m + k % m) % 2 == 0 ? 1.0 : -1.0);
  b.set(0, b.mul(g, b.mul(minor_dets, b.constant(std::move(signs)))));
}

}  // namespace

void register_linalg_vjps(VjpTable& t) {
  t[static_cast<size_t>(op_index(OpKind::MatMul))] = {&matmul_vjp, 0b11};
  t[static_cast<size_t>(op_index(OpKind::Gemm))] = {&gemm_vjp, 0b111};
  t[static_cast<size_t>(op_index(OpKind::FusedMatMul))] = {&fused_matmul_vjp, 0b111};
  t[static_cast<size_t>(op_index(OpKind::PermutedMatMul))] = {&permuted_matmul_vjp, 0b11};
  t[static_cast<size_t>(op_index(OpKind::Einsum))] = {&einsum_vjp, kAllInputs};
  t[static_cast<size_t>(op_index(OpKind::Det))] = {&det_vjp, 0b1};
}

}  // namespace volta::autograd
