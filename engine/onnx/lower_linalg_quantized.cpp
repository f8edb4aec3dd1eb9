// Lowerings of ONNX MatMulInteger and QLinearMatMul as compositions of exact internal ops
// (lower_quantize.h): the zero-point differences in f64, an f64 MatMul that sums them exactly,
// wrapped to ONNX's int32 accumulator; QLinearMatMul then scales by
// (a_scale * b_scale) / y_scale, computed in the scales' dtype as ONNX's reference does, and
// requantizes (the zero point added before rounding, as there).

#include <string>

#include "lower_quantize.h"

namespace volta::onnx {
namespace {

// A per-row parameter of A [.., M, K] (a zero point or scale: scalar or [M]) as [M, 1]; a
// per-column one of B [.., K, N] ([N]) stays as it is; an N-D one (MatMulInteger's
// [D1, D2, M, 1] and [D1, D2, 1, N]) broadcasts as given.
ValueId per_row(LoweringContext& ctx, int i, const Shape& a, std::string_view what) {
  const Shape p = ctx.input_type(i).shape;
  if (p.rank() != 1 || p.numel() == 1) return ctx.input(i);
  if (a.rank() < 2 || p[0] != a[a.rank() - 2]) {
    ctx.invalid(std::string(what) + " " + p.str() + " must be a scalar or hold one entry per " +
                "row of " + a.str());
  }
  return ctx.add(OpKind::Reshape, {ctx.input(i)}, {{"shape", Ints{p[0], 1}}});
}

ValueId per_column(LoweringContext& ctx, int i, const Shape& b, std::string_view what) {
  const Shape p = ctx.input_type(i).shape;
  if (p.rank() == 1 && p.numel() != 1 && p[0] != b[b.rank() - 1]) {
    ctx.invalid(std::string(what) + " " + p.str() + " must be a scalar or hold one entry per " +
                "column of " + b.str());
  }
  return ctx.input(i);
}

std::optional<ValueId> optional_input(LoweringContext& ctx, int i, DType want,
                                      std::string_view what, bool row, const Shape& of) {
  if (!ctx.has_input(i)) return std::nullopt;
  if (ctx.input_type(i).dtype != want) {
    ctx.invalid(std::string(what) + " is " + std::string(dtype_name(ctx.input_type(i).dtype)) +
                " but its tensor is " + std::string(dtype_name(want)));
  }
  return row ? per_row(ctx, i, of, what) : per_column(ctx, i, of, what);
}

// The exact int32 product of (A - a_zero_point) and (B - b_zero_point); inputs A, B at
// positions a, b and their zero points at za, zb.
ValueId integer_product(LoweringContext& ctx, int a, int za, int b, int zb) {
  const TypeInfo& ta = ctx.input_type(a);
  const TypeInfo& tb = ctx.input_type(b);
  check_exact_sum(ctx, ta.shape.rank() == 0 ? 1 : ta.shape[ta.shape.rank() - 1]);
  const ValueId wa = minus_zero_point(
      ctx, ctx.input(a), optional_input(ctx, za, ta.dtype, "the zero point of A", true, ta.shape),
      DType::F64);
  const ValueId wb = minus_zero_point(
      ctx, ctx.input(b), optional_input(ctx, zb, tb.dtype, "the zero point of B", false, tb.shape),
      DType::F64);
  return int32_accumulator(ctx, ctx.add(OpKind::MatMul, {wa, wb}));
}

void lower_matmul_integer(LoweringContext& ctx) {
  require_eight_bit(ctx, 0, "A");
  require_eight_bit(ctx, 1, "B");
  ctx.set_output(0, integer_product(ctx, 0, 2, 1, 3));
}

// QLinearMatMul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point).
void lower_qlinear_matmul(LoweringContext& ctx) {
  require_eight_bit(ctx, 0, "a");
  require_eight_bit(ctx, 3, "b");
  const Shape& a = ctx.input_type(0).shape;
  const Shape& b = ctx.input_type(3).shape;
  require_scales(ctx, {1, 4, 6}, scale_types(ctx, 21));
  const ValueId acc = integer_product(ctx, 0, 2, 3, 5);
  const ValueId ab =
      ctx.add(OpKind::Mul, {per_row(ctx, 1, a, "a_scale"), per_column(ctx, 4, b, "b_scale")});
  const ValueId multiplier = ctx.add(OpKind::Div, {ab, per_row(ctx, 6, a, "y_scale")});
  const bool has_zero_point = ctx.has_input(7);
  ctx.set_output(0, requantize(ctx, acc, multiplier,
                               has_zero_point ? std::optional(per_row(ctx, 7, a, "y_zero_point"))
                                              : std::nullopt,
                               ctx.input_type(has_zero_point ? 7 : 0).dtype));
}

}  // namespace

void register_linalg_quantized_lowerings(LoweringTable& table) {
  table.add_composite("MatMulInteger", OpFamily::Linalg, 10, &lower_matmul_integer);
  table.add_composite("QLinearMatMul", OpFamily::Linalg, 10, &lower_qlinear_matmul);
}

}  // namespace volta::onnx
