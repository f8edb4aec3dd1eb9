// The op table's part for family Linalg: MatMul, Gemm, Einsum, Det, and the internal FusedMatMul
// and PermutedMatMul that the gemm-epilogue-fusion and matmul-transpose-folding passes make.

#include <array>
#include <optional>
#include <string>

#include "op_table_builders.h"
#include "volta/ir/einsum.h"
#include "volta/ir/op_helpers.h"

namespace volta::op_table {
namespace {

// FusedMatMul: a MatMul whose B is one matrix [K,N], plus a bias [N] along Y's last axis.
std::vector<TypeInfo> fused_matmul_shape(const InferContext& ctx) {
  const Shape& b = ctx.input(1).shape;
  const Shape& bias = ctx.input(2).shape;
  if (b.rank() != 2) {
    throw ShapeError("B must be one matrix [K,N], got " + b.str());
  }
  if (bias.rank() != 1 || bias[0] != b[1]) {
    throw ShapeError("bias must be [" + std::to_string(b[1]) + "] (B's columns), got " +
                     bias.str());
  }
  return shape_fn::matmul(ctx);
}

// PermutedMatMul: MatMul(Transpose(A, perm_a), Transpose(B, perm_b)), transposed by perm_y.
std::vector<TypeInfo> permuted_matmul_shape(const InferContext& ctx) {
  const TypeInfo& a = ctx.input(0);
  const TypeInfo& b = ctx.input(1);
  const MatMulPerms perms = resolve_matmul_perms(ctx.attrs, a.shape.rank(), b.shape.rank());
  const std::array<std::optional<TypeInfo>, 2> factors = {
      TypeInfo{a.dtype, permute_shape(a.shape, perms.a)},
      TypeInfo{b.dtype, permute_shape(b.shape, perms.b)}};
  const InferContext product_ctx{
      .node = ctx.node, .inputs = factors, .num_outputs = 1, .attrs = ctx.attrs};
  TypeInfo product = shape_fn::matmul(product_ctx).at(0);
  product.shape = permute_shape(product.shape, perms.y);
  return {product};
}

std::vector<TypeInfo> einsum_shape(const InferContext& ctx) {
  std::vector<Shape> shapes;
  for (size_t i = 0; i < ctx.inputs.size(); ++i)
    shapes.push_back(ctx.input(static_cast<int>(i)).shape);
  const EinsumEquation eq = parse_einsum_equation(ctx.attrs.get_string("equation"), shapes);
  return {{ctx.input(0).dtype, eq.output_shape()}};
}

std::vector<TypeInfo> det_shape(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  if (x.rank() < 2 || x[x.rank() - 1] != x[x.rank() - 2]) {
    throw ShapeError("Det needs square matrices [..., M, M], got " + x.str());
  }
  return {{ctx.input(0).dtype, Shape(std::vector<int64_t>(x.dims().begin(), x.dims().end() - 2))}};
}

}  // namespace

void add_linalg_schemas(std::vector<OpSchema>& t) {
  using K = OpKind;
  using F = OpFamily;

  t.push_back(OpSchema{.kind = K::MatMul,
                       .name = "MatMul",
                       .family = F::Linalg,
                       .inputs = {{"A", 'T', D::Differentiable}, {"B", 'T', D::Differentiable}},
                       .outputs = {{"Y", 'T'}},
                       .type_params = {{'T', kFloatTypes}},
                       .infer = shape_fn::matmul,
                       .summary = "numpy matmul: batched, batch dims broadcast, 1-D promoted",
                       .accumulator = Accumulator::InputType});
  t.push_back(OpSchema{.kind = K::Gemm,
                       .name = "Gemm",
                       .family = F::Linalg,
                       .inputs = {{"A", 'T', D::Differentiable},
                                  {"B", 'T', D::Differentiable},
                                  {"C", 'T', D::Differentiable, true}},
                       .outputs = {{"Y", 'T'}},
                       .type_params = {{'T', kFloatTypes}},
                       .attrs = {{"alpha", AttrType::Float, AttrValue{1.0}},
                                 {"beta", AttrType::Float, AttrValue{1.0}},
                                 flag("transA", 0),
                                 flag("transB", 0)},
                       .infer = shape_fn::gemm,
                       .summary = "alpha * op(A) @ op(B) + beta * C, C broadcast to [M,N]",
                       .accumulator = Accumulator::InputType});
  // Internal: what the gemm-epilogue-fusion pass makes of MatMul -> Add(bias) [-> activation].
  t.push_back(OpSchema{
      .kind = K::FusedMatMul,
      .name = "FusedMatMul",
      .family = F::Linalg,
      .inputs = {{"A", 'T', D::Differentiable},
                 {"B", 'T', D::Differentiable},
                 {"bias", 'T', D::Differentiable}},
      .outputs = {{"Y", 'T'}},
      .type_params = {{'T', kFloatTypes}},
      .attrs = {{"activation",
                 AttrType::String,
                 AttrValue{std::string("none")},
                 std::nullopt,
                 std::nullopt,
                 {"none", "relu", "gelu", "gelu_tanh"}},
                flag("bias_first", 0)},
      .infer = fused_matmul_shape,
      .summary = "activation(MatMul(A, B) + bias) with B [K,N] and bias [N], bit for bit the "
                 "unfused ops (bias_first: the Add read bias as its first operand); internal, "
                 "made by the gemm-epilogue-fusion pass",
      .accumulator = Accumulator::InputType,
      .no_onnx_lowering = "internal: made by the gemm-epilogue-fusion pass, never imported"});
  // Internal: what the matmul-transpose-folding pass makes of Transposes around a MatMul.
  t.push_back(OpSchema{
      .kind = K::PermutedMatMul,
      .name = "PermutedMatMul",
      .family = F::Linalg,
      .inputs = {{"A", 'T', D::Differentiable}, {"B", 'T', D::Differentiable}},
      .outputs = {{"Y", 'T'}},
      .type_params = {{'T', kFloatTypes}},
      .attrs = {required("perm_a", AttrType::Ints), required("perm_b", AttrType::Ints),
                required("perm_y", AttrType::Ints)},
      .infer = permuted_matmul_shape,
      .summary = "Transpose(MatMul(Transpose(A, perm_a), Transpose(B, perm_b)), perm_y) with A "
                 "and B of rank >= 2 and perm_y keeping the last axis last, bit for bit those "
                 "ops; internal, made by the matmul-transpose-folding pass",
      .accumulator = Accumulator::InputType,
      .no_onnx_lowering = "internal: made by the matmul-transpose-folding pass, never imported"});
  t.push_back(OpSchema{.kind = K::Einsum,
                       .name = "Einsum",
                       .family = F::Linalg,
                       .inputs = {{"Inputs", 'T', D::Differentiable, false, true}},
                       .outputs = {{"Output", 'T'}},
                       .type_params = {{'T', kNumericTypes}},
                       .attrs = {required("equation", AttrType::String)},
                       .infer = einsum_shape,
                       .summary = "Einstein summation (numpy grammar: implicit or explicit output, "
                                  "diagonals, ellipsis broadcasting)",
                       .accumulator = Accumulator::InputType});
  t.push_back(OpSchema{.kind = K::Det,
                       .name = "Det",
                       .family = F::Linalg,
                       .inputs = {{"X", 'T', D::Differentiable}},
                       .outputs = {{"Y", 'T'}},
                       .type_params = {{'T', kFloatTypes}},
                       .infer = det_shape,
                       .summary = "determinant of each square matrix [..., M, M] (LU with partial "
                                  "pivoting; M = 0 gives 1)",
                       .accumulator = Accumulator::InputType});
}

}  // namespace volta::op_table
