// Reference MatMul and Gemm: textbook triple loops, every dot product accumulated in double
// in index order and rounded once when stored.

#include <array>
#include <string>

#include "ref_util.h"

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

}  // namespace

void register_linalg(RefTable& table) {
  register_kernel(table, OpKind::MatMul, matmul);
  register_kernel(table, OpKind::Gemm, gemm);
  register_kernel(table, OpKind::FusedMatMul, fused_matmul);
}

}  // namespace volta::reference
