// Lowerings of the optimizer ops of ONNX's training preview domain (ai.onnx.preview.training,
// opset 1): Adagrad, Adam and Momentum, each one update step of n tensors, as compositions of
// elementwise ops in the order of the spec's formulas (and ONNX's reference). The per-step
// scalars (the decayed or bias-corrected learning rate, Momentum's first-step beta) are
// computed from R and T in f64 and rounded once to the tensors' dtype; the tensor arithmetic
// is in that dtype.
//
// Inputs: R (learning rate), T (update count, int64), then n tensors of each operand in turn
// (X..., G..., then H... or V... [, H...]); outputs: the n new tensors of each updated operand.

#include <string>

#include "lower_elementwise.h"

namespace volta::onnx {
namespace {

// The n of a node whose inputs after R and T are `operands` groups of n tensors.
int tensors_per_operand(LoweringContext& ctx, int operands, int results) {
  const int n = (ctx.num_inputs() - 2) / operands;
  if (n < 1 || 2 + n * operands != ctx.num_inputs()) {
    ctx.invalid("takes R, T and " + std::to_string(operands) + " groups of n tensors; got " +
                std::to_string(ctx.num_inputs()) + " inputs");
  }
  if (ctx.num_outputs() != n * results) {
    ctx.invalid("gives " + std::to_string(results) + " groups of n = " + std::to_string(n) +
                " tensors; the node declares " + std::to_string(ctx.num_outputs()) + " outputs");
  }
  const TypeInfo& r = ctx.input_type(0);
  const TypeInfo& t = ctx.input_type(1);
  if (!kFloatTypes.contains(r.dtype) || r.shape.numel() != 1) {
    ctx.unsupported("R " + type_text(r) + "; supported: one f32 or f64 learning rate");
  }
  if (t.dtype != DType::I64 || t.shape.numel() != 1) {
    ctx.invalid("T " + type_text(t) + " must be one int64 update count");
  }
  for (int i = 2; i < ctx.num_inputs(); ++i) {
    const DType d = ctx.input_type(i).dtype;
    if (!kFloatTypes.contains(d) || d != ctx.input_type(2).dtype) {
      ctx.unsupported("tensor input " + std::to_string(i) + " of dtype " +
                      std::string(dtype_name(d)) + "; supported: all f32 or all f64");
    }
  }
  return n;
}

struct Step {
  LoweringContext& ctx;
  DType dtype;  // the tensors'

  ValueId scalar(double v) const { return scalar_constant(ctx, dtype, v); }
  ValueId add(ValueId a, ValueId b) const { return ctx.add(OpKind::Add, {a, b}); }
  ValueId sub(ValueId a, ValueId b) const { return ctx.add(OpKind::Sub, {a, b}); }
  ValueId mul(ValueId a, ValueId b) const { return ctx.add(OpKind::Mul, {a, b}); }
  ValueId div(ValueId a, ValueId b) const { return ctx.add(OpKind::Div, {a, b}); }
  // norm_coefficient * X + G: the gradient of 0.5 * norm_coefficient * ||X||^2 added.
  ValueId regularized(double norm, ValueId x, ValueId g) const {
    return add(mul(scalar(norm), x), g);
  }
  // R and T in f64, as one-element scalars.
  ValueId r64() const { return as_dtype(ctx, flat(0), DType::F64); }
  ValueId t64() const { return as_dtype(ctx, flat(1), DType::F64); }
  ValueId t_positive() const {
    return ctx.add(OpKind::Greater, {flat(1), scalar_constant(ctx, DType::I64, 0.0)});
  }
  ValueId flat(int i) const {
    return ctx.add(OpKind::Reshape, {ctx.input(i)}, {{"shape", Ints{}}});
  }
};

// r = R / (1 + T * decay_factor); G' = norm * X + G; H' = H + G' * G';
// X' = X - r * G' / (sqrt(H') + epsilon).
void lower_adagrad(LoweringContext& ctx) {
  const int n = tensors_per_operand(ctx, 3, 2);
  const double decay = ctx.attr_float("decay_factor", 0.0);
  const double epsilon = ctx.attr_float("epsilon", f32(1e-6));
  const double norm = ctx.attr_float("norm_coefficient", 0.0);
  const Step s{ctx, ctx.input_type(2).dtype};
  const ValueId one = scalar_constant(ctx, DType::F64, 1.0);
  const ValueId r64 = ctx.add(
      OpKind::Div,
      {s.r64(),
       ctx.add(OpKind::Add,
               {one, ctx.add(OpKind::Mul, {s.t64(), scalar_constant(ctx, DType::F64, decay)})})});
  const ValueId r = as_dtype(ctx, r64, s.dtype);
  for (int i = 0; i < n; ++i) {
    const ValueId x = ctx.input(2 + i);
    const ValueId g = s.regularized(norm, x, ctx.input(2 + n + i));
    const ValueId h = s.add(ctx.input(2 + 2 * n + i), s.mul(g, g));
    const ValueId root = s.add(ctx.add(OpKind::Sqrt, {h}), s.scalar(epsilon));
    ctx.set_output(i, s.sub(x, s.div(s.mul(r, g), root)));
    ctx.set_output(n + i, h);
  }
}

// G' = norm * X + G; V' = alpha * V + (1 - alpha) * G'; H' = beta * H + (1 - beta) * G'^2;
// r = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R;
// X' = (1 - norm_post) * (X - r * (V' / (sqrt(H') + epsilon))).
void lower_adam(LoweringContext& ctx) {
  const int n = tensors_per_operand(ctx, 4, 3);
  const double alpha = ctx.attr_float("alpha", f32(0.9));
  const double beta = ctx.attr_float("beta", f32(0.999));
  const double epsilon = ctx.attr_float("epsilon", f32(1e-6));
  const double norm = ctx.attr_float("norm_coefficient", 0.0);
  const double norm_post = ctx.attr_float("norm_coefficient_post", 0.0);
  const Step s{ctx, ctx.input_type(2).dtype};
  const ValueId one = scalar_constant(ctx, DType::F64, 1.0);
  const ValueId t = s.t64();
  auto one_minus_power = [&](double base) {
    return ctx.add(OpKind::Sub,
                   {one, ctx.add(OpKind::Pow, {scalar_constant(ctx, DType::F64, base), t})});
  };
  const ValueId corrected = ctx.add(
      OpKind::Div, {ctx.add(OpKind::Mul, {s.r64(), ctx.add(OpKind::Sqrt, {one_minus_power(beta)})}),
                    one_minus_power(alpha)});
  const ValueId r =
      as_dtype(ctx, ctx.add(OpKind::Where, {s.t_positive(), corrected, s.r64()}), s.dtype);
  for (int i = 0; i < n; ++i) {
    const ValueId x = ctx.input(2 + i);
    const ValueId g = s.regularized(norm, x, ctx.input(2 + n + i));
    const ValueId v =
        s.add(s.mul(s.scalar(alpha), ctx.input(2 + 2 * n + i)), s.mul(s.scalar(1.0 - alpha), g));
    const ValueId h = s.add(s.mul(s.scalar(beta), ctx.input(2 + 3 * n + i)),
                            s.mul(s.scalar(1.0 - beta), s.mul(g, g)));
    const ValueId root = s.add(ctx.add(OpKind::Sqrt, {h}), s.scalar(epsilon));
    const ValueId stepped = s.sub(x, s.mul(r, s.div(v, root)));
    ctx.set_output(i, s.mul(s.scalar(1.0 - norm_post), stepped));
    ctx.set_output(n + i, v);
    ctx.set_output(2 * n + i, h);
  }
}

// G' = norm * X + G; V' = alpha * V + (T > 0 ? beta : 1) * G';
// standard: X' = X - R * V'; nesterov: X' = X - R * (G' + alpha * V').
void lower_momentum(LoweringContext& ctx) {
  const int n = tensors_per_operand(ctx, 3, 2);
  const double alpha = ctx.attr_float("alpha", std::nullopt);
  const double beta = ctx.attr_float("beta", std::nullopt);
  const double norm = ctx.attr_float("norm_coefficient", std::nullopt);
  const std::string mode = ctx.attr_string("mode", std::nullopt);
  if (mode != "standard" && mode != "nesterov") {
    ctx.unsupported("mode '" + mode + "'; supported: standard, nesterov");
  }
  const Step s{ctx, ctx.input_type(2).dtype};
  const ValueId beta_now = ctx.add(OpKind::Where, {s.t_positive(), s.scalar(beta), s.scalar(1.0)});
  const ValueId r = as_dtype(ctx, s.flat(0), s.dtype);
  for (int i = 0; i < n; ++i) {
    const ValueId x = ctx.input(2 + i);
    const ValueId g = s.regularized(norm, x, ctx.input(2 + n + i));
    const ValueId v = s.add(s.mul(s.scalar(alpha), ctx.input(2 + 2 * n + i)), s.mul(beta_now, g));
    const ValueId direction = mode == "standard" ? v : s.add(g, s.mul(s.scalar(alpha), v));
    ctx.set_output(i, s.sub(x, s.mul(r, direction)));
    ctx.set_output(n + i, v);
  }
}

}  // namespace

void register_elementwise_optimizer_lowerings(LoweringTable& table) {
  table.add_preview_composite(kTrainingDomain, "Adagrad", OpFamily::Elementwise, &lower_adagrad);
  table.add_preview_composite(kTrainingDomain, "Adam", OpFamily::Elementwise, &lower_adam);
  table.add_preview_composite(kTrainingDomain, "Momentum", OpFamily::Elementwise, &lower_momentum);
}

}  // namespace volta::onnx
