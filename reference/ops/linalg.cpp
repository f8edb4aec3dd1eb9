// Reference MatMul, Gemm, FusedMatMul, PermutedMatMul, Einsum and Det: textbook loops, every dot
// product accumulated in double in index order and rounded once when stored; Det factors each
// matrix, in double, with Gaussian elimination and partial pivoting.

#include <array>
#include <cmath>
#include <limits>
#include <string>

#include "ref_util.h"
#include "volta/ir/einsum.h"
#include "volta/ir/op_helpers.h"

namespace volta::reference {
namespace {

// The batch axes of a matrix stack: every axis but the last two.
Shape batch_shape_of(const Shape& matrices) {
  return Shape(std::vector<int64_t>(matrices.dims().begin(), matrices.dims().end() - 2));
}

// Numpy matmul. A 1-D A is promoted to a row [1,K] and a 1-D B to a column [K,1]; the
// promoted axis is dropped from the result, which leaves its row-major layout unchanged, so
// the result is computed as the stack [batch..., M, N] and stored under the output shape.
std::vector<Tensor> matmul(const Node&, RefInputs in, RefOutputTypes out) {
  const Tensor& a = *in[0];
  const Tensor& b = *in[1];
  const Shape a_stack = a.shape().rank() == 1 ? Shape{1, a.shape()[0]} : a.shape();
  const Shape b_stack = b.shape().rank() == 1 ? Shape{b.shape()[0], 1} : b.shape();
  const int64_t m_size = a_stack[a_stack.rank() - 2];
  const int64_t k_size = a_stack[a_stack.rank() - 1];
  const int64_t n_size = b_stack[b_stack.rank() - 1];
  const Shape a_batch = batch_shape_of(a_stack);
  const Shape b_batch = batch_shape_of(b_stack);
  const Shape batch = *broadcast_shapes(a_batch, b_batch);

  Tensor y(out[0].dtype, out[0].shape);
  for_each_index(batch, [&](const std::vector<int64_t>& index, int64_t batch_flat) {
    const int64_t a_base = broadcast_offset(index, a_batch) * m_size * k_size;
    const int64_t b_base = broadcast_offset(index, b_batch) * k_size * n_size;
    const int64_t y_base = batch_flat * m_size * n_size;
    for (int64_t m = 0; m < m_size; ++m) {
      for (int64_t n = 0; n < n_size; ++n) {
        double dot = 0.0;
        for (int64_t k = 0; k < k_size; ++k) {
          dot += a.get_double(a_base + m * k_size + k) * b.get_double(b_base + k * n_size + n);
        }
        y.set_double(y_base + m * n_size + n, dot);
      }
    }
  });
  return {y};
}

// Y = alpha * op(A) @ op(B) + beta * C, with op() the optional transpose and C (optional)
// broadcast to [M, N].
std::vector<Tensor> gemm(const Node& node, RefInputs in, RefOutputTypes out) {
  const AttrReader attrs(node);
  const double alpha = attrs.get_float("alpha");
  const double beta = attrs.get_float("beta");
  const bool trans_a = attrs.get_int("transA") != 0;
  const bool trans_b = attrs.get_int("transB") != 0;
  const Tensor& a = *in[0];
  const Tensor& b = *in[1];
  const Tensor* c = optional_input(in, 2);
  const int64_t a_cols = a.shape()[1];
  const int64_t b_cols = b.shape()[1];
  const int64_t k_size = trans_a ? a.shape()[0] : a.shape()[1];
  auto op_a = [&](int64_t m, int64_t k) {
    return a.get_double(trans_a ? k * a_cols + m : m * a_cols + k);
  };
  auto op_b = [&](int64_t k, int64_t n) {
    return b.get_double(trans_b ? n * b_cols + k : k * b_cols + n);
  };

  Tensor y(out[0].dtype, out[0].shape);
  for_each_index(y.shape(), [&](const std::vector<int64_t>& index, int64_t flat) {
    double dot = 0.0;
    for (int64_t k = 0; k < k_size; ++k) dot += op_a(index[0], k) * op_b(k, index[1]);
    double value = alpha * dot;
    if (c != nullptr) value += beta * c->get_double(broadcast_offset(index, c->shape()));
    y.set_double(flat, value);
  });
  return {y};
}

// FusedMatMul is defined as the ops it replaces: MatMul, then Add (in the order bias_first
// says), then the activation, each rounded to the dtype as the unfused graph would store it.
// So the reference runs exactly those ops' reference kernels in turn.
std::vector<Tensor> fused_matmul(const Node& node, RefInputs in, RefOutputTypes out) {
  const AttrReader attrs(node);
  const std::string& activation = attrs.get_string("activation");
  const bool bias_first = attrs.get_int("bias_first") != 0;
  Node step;
  step.op = OpKind::MatMul;
  const std::array<const Tensor*, 2> factors = {in[0], in[1]};
  const Tensor product = reference_kernel(OpKind::MatMul)(step, factors, out).at(0);
  step.op = OpKind::Add;
  const std::array<const Tensor*, 2> terms = bias_first
                                                 ? std::array<const Tensor*, 2>{in[2], &product}
                                                 : std::array<const Tensor*, 2>{&product, in[2]};
  std::vector<Tensor> sum = reference_kernel(OpKind::Add)(step, terms, out);
  if (activation == "none") return sum;
  if (activation == "relu") {
    step.op = OpKind::Relu;
  } else {
    step.op = OpKind::Gelu;
    step.attrs = {{"approximate", std::string(activation == "gelu_tanh" ? "tanh" : "none")}};
  }
  const std::array<const Tensor*, 1> x = {&sum.at(0)};
  return reference_kernel(step.op)(step, x, out);
}

// PermutedMatMul is defined as the ops it replaces: Transposes of A and B by perm_a and perm_b,
// MatMul, and a Transpose of the product by perm_y. So the reference runs those ops' reference
// kernels in turn.
std::vector<Tensor> permuted_matmul(const Node& node, RefInputs in, RefOutputTypes out) {
  const AttrReader attrs(node);
  const MatMulPerms perms =
      resolve_matmul_perms(attrs, in[0]->shape().rank(), in[1]->shape().rank());
  const auto transposed = [](const Tensor& x, const std::vector<int>& perm) {
    Node step;
    step.op = OpKind::Transpose;
    step.attrs = {{"perm", std::vector<int64_t>(perm.begin(), perm.end())}};
    const std::array<const Tensor*, 1> data = {&x};
    const std::array<TypeInfo, 1> type = {TypeInfo{x.dtype(), permute_shape(x.shape(), perm)}};
    return reference_kernel(OpKind::Transpose)(step, data, type).at(0);
  };
  const Tensor a = transposed(*in[0], perms.a);
  const Tensor b = transposed(*in[1], perms.b);
  // The product's shape is Y's with perm_y undone.
  Shape product_shape = out[0].shape;
  for (size_t i = 0; i < perms.y.size(); ++i) {
    product_shape[perms.y[i]] = out[0].shape[static_cast<int>(i)];
  }
  Node step;
  step.op = OpKind::MatMul;
  const std::array<const Tensor*, 2> factors = {&a, &b};
  const std::array<TypeInfo, 1> type = {TypeInfo{out[0].dtype, product_shape}};
  return {transposed(reference_kernel(OpKind::MatMul)(step, factors, type).at(0), perms.y)};
}

// Einsum: for every output index, the sum over every index of the summed labels of the product
// of the operands at those labels. Floats multiply and add in double; integers wrap in int64
// (the same bits as wrapping in their own width once stored).
std::vector<Tensor> einsum(const Node& node, RefInputs in, RefOutputTypes out) {
  std::vector<Shape> shapes;
  for (const Tensor* t : in) shapes.push_back(t->shape());
  const EinsumEquation eq = parse_einsum_equation(AttrReader(node).get_string("equation"), shapes);
  std::vector<int64_t> summed_dims;
  for (int l : eq.summed_labels) summed_dims.push_back(eq.label_extent[static_cast<size_t>(l)]);
  const Shape summed(summed_dims);
  const bool integer = is_integer(out[0].dtype);
  Tensor y(out[0].dtype, out[0].shape);

  std::vector<int64_t> label_index(eq.label_extent.size(), 0);
  // Operand k's element at the current label indices; an axis of extent 1 broadcasts.
  const auto offset_of = [&](size_t k) {
    const std::vector<int>& axes = eq.operand_axes[k];
    std::vector<int64_t> index(axes.size());
    for (size_t a = 0; a < axes.size(); ++a) {
      index[a] =
          shapes[k][static_cast<int>(a)] == 1 ? 0 : label_index[static_cast<size_t>(axes[a])];
    }
    return flat_offset(index, shapes[k]);
  };
  for_each_index(y.shape(), [&](const std::vector<int64_t>& out_index, int64_t flat) {
    for (size_t a = 0; a < out_index.size(); ++a) {
      label_index[static_cast<size_t>(eq.output_labels[a])] = out_index[a];
    }
    double sum = 0.0;
    int64_t int_sum = 0;
    for_each_index(summed, [&](const std::vector<int64_t>& summed_index, int64_t) {
      for (size_t s = 0; s < summed_index.size(); ++s) {
        label_index[static_cast<size_t>(eq.summed_labels[s])] = summed_index[s];
      }
      double product = 1.0;
      int64_t int_product = 1;
      for (size_t k = 0; k < in.size(); ++k) {
        const int64_t at = offset_of(k);
        if (integer) {
          int_product = wrapping_mul(int_product, in[k]->get_int(at));
        } else {
          product *= in[k]->get_double(at);
        }
      }
      sum += product;
      int_sum = wrapping_add(int_sum, int_product);
    });
    if (integer) {
      y.set_int(flat, int_sum);
    } else {
      y.set_double(flat, sum);
    }
  });
  return {y};
}

// Gaussian elimination with partial pivoting: det = (-1)^swaps * product of the pivots. A
// column that is zero from the diagonal down makes the product 0. Any NaN entry makes the
// determinant NaN.
double determinant(std::vector<double> a, int64_t m) {
  for (double v : a) {
    if (std::isnan(v)) return std::numeric_limits<double>::quiet_NaN();
  }
  double det = 1.0;
  for (int64_t k = 0; k < m; ++k) {
    int64_t p = k;
    for (int64_t i = k + 1; i < m; ++i) {
      if (std::fabs(a[static_cast<size_t>(i * m + k)]) >
          std::fabs(a[static_cast<size_t>(p * m + k)])) {
        p = i;
      }
    }
    if (p != k) {
      for (int64_t j = 0; j < m; ++j) {
        std::swap(a[static_cast<size_t>(k * m + j)], a[static_cast<size_t>(p * m + j)]);
      }
      det = -det;
    }
    const double pivot = a[static_cast<size_t>(k * m + k)];
    det *= pivot;
    if (pivot == 0.0) continue;
    for (int64_t i = k + 1; i < m; ++i) {
      const double f = a[static_cast<size_t>(i * m + k)] / pivot;
      for (int64_t j = k + 1; j < m; ++j) {
        a[static_cast<size_t>(i * m + j)] -= f * a[static_cast<size_t>(k * m + j)];
      }
    }
  }
  return det;
}

std::vector<Tensor> det(const Node& /*node*/, RefInputs in, RefOutputTypes out) {
  const Tensor& x = *in[0];
  const int64_t m = x.shape()[x.shape().rank() - 1];
  Tensor y(out[0].dtype, out[0].shape);
  for (int64_t b = 0; b < y.numel(); ++b) {
    std::vector<double> a(static_cast<size_t>(m * m));
    for (int64_t e = 0; e < m * m; ++e) a[static_cast<size_t>(e)] = x.get_double(b * m * m + e);
    y.set_double(b, determinant(std::move(a), m));
  }
  return {y};
}

}  // namespace

void register_linalg(RefTable& table) {
  register_kernel(table, OpKind::MatMul, matmul);
  register_kernel(table, OpKind::Gemm, gemm);
  register_kernel(table, OpKind::FusedMatMul, fused_matmul);
  register_kernel(table, OpKind::PermutedMatMul, permuted_matmul);
  register_kernel(table, OpKind::Einsum, einsum);
  register_kernel(table, OpKind::Det, det);
}

}  // namespace volta::reference
