// ONNX lowerings of the activations onto the internal ops of the same names (shared helpers:
// lower_elementwise.h).

#include <string>

#include "lower_elementwise.h"

namespace volta::onnx {
namespace {

using K = OpKind;

void lower_leaky_relu(LoweringContext& ctx) { lower_unary_alpha<K::LeakyRelu>(ctx, f32(0.01)); }

void lower_elu(LoweringContext& ctx) { lower_unary_alpha<K::Elu>(ctx, 1.0); }

void lower_celu(LoweringContext& ctx) { lower_unary_alpha<K::Celu>(ctx, 1.0); }

void lower_thresholded_relu(LoweringContext& ctx) {
  lower_unary_alpha<K::ThresholdedRelu>(ctx, 1.0);
}

// Version 6 changed the defaults to the f32 values of the exact constants.
void lower_selu(LoweringContext& ctx) {
  drop_consumed_inputs(ctx);
  const bool v1 = ctx.since_version() < 6;
  const double alpha = ctx.attr_float("alpha", v1 ? f32(1.6732) : f32(1.67326319217681884765625));
  const double gamma = ctx.attr_float("gamma", v1 ? f32(1.0507) : f32(1.05070102214813232421875));
  ctx.set_output(0, add_op(ctx, K::Selu, {ctx.input(0)}, {{"alpha", alpha}, {"gamma", gamma}}));
}

void lower_hard_sigmoid(LoweringContext& ctx) {
  drop_consumed_inputs(ctx);
  const double alpha = ctx.attr_float("alpha", f32(0.2));
  const double beta = ctx.attr_float("beta", 0.5);
  ctx.set_output(0,
                 add_op(ctx, K::HardSigmoid, {ctx.input(0)}, {{"alpha", alpha}, {"beta", beta}}));
}

void lower_shrink(LoweringContext& ctx) {
  const double bias = ctx.attr_float("bias", 0.0);
  const double lambd = ctx.attr_float("lambd", 0.5);
  ctx.set_output(0, add_op(ctx, K::Shrink, {ctx.input(0)}, {{"bias", bias}, {"lambd", lambd}}));
}

// Gelu (20): approximate "none" or "tanh", as the internal op.
void lower_gelu(LoweringContext& ctx) {
  const std::string approximate = ctx.attr_string("approximate", "none");
  if (approximate != "none" && approximate != "tanh") {
    ctx.unsupported("approximate \"" + approximate + "\"; supported: \"none\", \"tanh\"");
  }
  ctx.set_output(0, add_op(ctx, K::Gelu, {ctx.input(0)}, {{"approximate", approximate}}));
}

// Mish (18): x * tanh(softplus(x)), ONNX's function body.
void lower_mish(LoweringContext& ctx) {
  const ValueId x = ctx.input(0);
  const ValueId tanh_softplus = add_op(ctx, K::Tanh, {add_op(ctx, K::Softplus, {x})});
  ctx.set_output(0, add_op(ctx, K::Mul, {x, tanh_softplus}));
}

// Swish (24): x * sigmoid(alpha * x), alpha (an f32 attribute) in x's type as the function
// body's CastLike makes it. alpha 1 multiplies by nothing: x * 1 is x. f16 and bf16 round each
// op's result once, as the body's ops do in those types.
ValueId swish(LoweringContext& ctx) {
  const DType dtype = ctx.input_type(0).dtype;
  if (!kFloatTypes.contains(dtype) && !kHalfTypes.contains(dtype)) {
    ctx.unsupported("input 0 is " + onnx_name(dtype) +
                    "; supported: FLOAT, DOUBLE, FLOAT16, BFLOAT16");
  }
  const double alpha = ctx.attr_float("alpha", 1.0);
  const ValueId x = ctx.input(0);
  const ValueId scaled =
      alpha == 1.0 ? x : add_op(ctx, K::Mul, {scalar_constant(ctx, dtype, alpha), x});
  return add_op(ctx, K::Mul, {x, add_op(ctx, K::Sigmoid, {scaled})});
}

void lower_swish(LoweringContext& ctx) { ctx.set_output(0, swish(ctx)); }

// SwiGLU (28): Swish_alpha(A) * B, its function body; A and B of one shape, no broadcasting.
void lower_swiglu(LoweringContext& ctx) {
  const TypeInfo& a = ctx.input_type(0);
  const TypeInfo& b = ctx.input_type(1);
  if (a.dtype != b.dtype || a.shape != b.shape) {
    ctx.invalid("A (" + onnx_name(a.dtype) + " " + a.shape.str() + ") and B (" +
                onnx_name(b.dtype) + " " + b.shape.str() + ") must have one dtype and shape");
  }
  ctx.set_output(0, add_op(ctx, K::Mul, {swish(ctx), ctx.input(1)}));
}

// From version 7 the slope broadcasts to X (numpy rules, one direction). Before, a 1-D slope
// of X's channel count (dim 1) holds one slope per channel, as Caffe2 and PyTorch export it:
// it is reshaped to [C, 1, ...] so that it lines up with dim 1.
void lower_prelu(LoweringContext& ctx) {
  drop_consumed_inputs(ctx);
  const ValueId x = ctx.input(0);
  ValueId slope = ctx.input(1);
  const Shape sx = ctx.input_type(0).shape;
  const Shape ss = ctx.input_type(1).shape;
  if (ctx.since_version() < 7 && ss.rank() == 1 && sx.rank() >= 2 && ss[0] == sx[1] && ss[0] != 1) {
    std::vector<int64_t> dims(static_cast<size_t>(sx.rank() - 1), 1);
    dims[0] = ss[0];
    slope = ctx.add(K::Reshape, {slope}, {{"shape", dims}});
  }
  ctx.set_output(0, add_op(ctx, K::PRelu, {x, slope}));
}

}  // namespace

void register_activation_lowerings(LoweringTable& table) {
  table.add("Erf", K::Erf, 9, &lower_unary<K::Erf>);
  table.add("Tanh", K::Tanh, 1, &lower_unary<K::Tanh>);
  table.add("Sigmoid", K::Sigmoid, 1, &lower_unary<K::Sigmoid>);
  table.add("Relu", K::Relu, 1, &lower_unary<K::Relu>);
  table.add("Gelu", K::Gelu, 20, &lower_gelu);
  table.add("LeakyRelu", K::LeakyRelu, 1, &lower_leaky_relu);
  table.add("Elu", K::Elu, 1, &lower_elu);
  table.add("Selu", K::Selu, 1, &lower_selu);
  table.add("Celu", K::Celu, 12, &lower_celu);
  table.add("HardSigmoid", K::HardSigmoid, 1, &lower_hard_sigmoid);
  table.add("HardSwish", K::HardSwish, 14, &lower_unary<K::HardSwish>);
  table.add("Softplus", K::Softplus, 1, &lower_unary<K::Softplus>);
  table.add("Softsign", K::Softsign, 1, &lower_unary<K::Softsign>);
  table.add("PRelu", K::PRelu, 1, &lower_prelu);
  table.add("ThresholdedRelu", K::ThresholdedRelu, 10, &lower_thresholded_relu);
  table.add("Shrink", K::Shrink, 9, &lower_shrink);
  table.add_composite("Mish", OpFamily::Activation, 18, &lower_mish);
  table.add_composite("Swish", OpFamily::Activation, 24, &lower_swish);
  table.add_composite("SwiGLU", OpFamily::Activation, 28, &lower_swiglu);
}

}  // namespace volta::onnx
