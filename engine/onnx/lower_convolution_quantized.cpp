// Lowerings of ONNX ConvInteger and QLinearConv as compositions of exact internal ops
// (lower_quantize.h): X and W minus their zero points in f64 (padding then holds 0, as in
// ONNX's reference, where X is padded after the subtraction), an f64 Conv that sums exactly,
// wrapped to ONNX's int32 accumulator; QLinearConv adds its int32 bias in that sum, scales by
// (x_scale * w_scale) / y_scale in the scales' dtype and requantizes (the zero point added
// before rounding, as in ONNX's reference).

#include <string>

#include "lower_quantize.h"
#include "lower_window.h"

namespace volta::onnx {
namespace {

// Input i (a zero point or scale of W) as a scalar, or [M] per output channel placed on `axis`
// of a rank-`rank` tensor ([M, 1, ...] against W, [1, M, 1, ...] against Y).
ValueId per_channel(LoweringContext& ctx, int i, int64_t channels, int axis, int rank,
                    std::string_view what) {
  const Shape p = ctx.input_type(i).shape;
  if (p.numel() == 1) return ctx.add(OpKind::Reshape, {ctx.input(i)}, {{"shape", Ints{}}});
  if (p.rank() != 1 || p[0] != channels) {
    ctx.invalid(std::string(what) + " " + p.str() + " must be a scalar or hold one entry per " +
                "output channel (" + std::to_string(channels) + ")");
  }
  Ints dims(static_cast<size_t>(rank), 1);
  dims[static_cast<size_t>(axis)] = channels;
  return ctx.add(OpKind::Reshape, {ctx.input(i)}, {{"shape", dims}});
}

// A per-tensor zero point or scale: a scalar or one element.
ValueId per_tensor(LoweringContext& ctx, int i, std::string_view what) {
  const Shape p = ctx.input_type(i).shape;
  if (p.numel() != 1) {
    ctx.invalid(std::string(what) + " " + p.str() + " must be a scalar (per-tensor)");
  }
  return ctx.add(OpKind::Reshape, {ctx.input(i)}, {{"shape", Ints{}}});
}

void require_same_dtype(LoweringContext& ctx, int zero_point, int tensor, std::string_view what) {
  if (ctx.input_type(zero_point).dtype != ctx.input_type(tensor).dtype) {
    ctx.invalid(std::string(what) + " is " +
                std::string(dtype_name(ctx.input_type(zero_point).dtype)) + " but its tensor is " +
                std::string(dtype_name(ctx.input_type(tensor).dtype)));
  }
}

// The exact int32 Conv of (X - x_zero_point) and (W - w_zero_point), plus `bias` (f64) when
// given; X and W at inputs x and w, their zero points at zx and zw.
ValueId integer_conv(LoweringContext& ctx, int x, int zx, int w, int zw,
                     std::optional<ValueId> bias) {
  require_eight_bit(ctx, x, "x");
  require_eight_bit(ctx, w, "w");
  const int spatial = spatial_dims(ctx);
  const Shape& ws = ctx.input_type(w).shape;
  if (ws.rank() != spatial + 2) {
    ctx.invalid("w " + ws.str() + " must have rank " + std::to_string(spatial + 2));
  }
  check_exact_sum(ctx, ws.numel() / std::max<int64_t>(ws[0], 1) + 1);  // + 1: the bias
  std::optional<ValueId> x_zero_point;
  if (ctx.has_input(zx)) {
    require_same_dtype(ctx, zx, x, "x_zero_point");
    x_zero_point = per_tensor(ctx, zx, "x_zero_point");
  }
  std::optional<ValueId> w_zero_point;
  if (ctx.has_input(zw)) {
    require_same_dtype(ctx, zw, w, "w_zero_point");
    w_zero_point = per_channel(ctx, zw, ws[0], 0, ws.rank(), "w_zero_point");
  }
  std::vector<ValueId> inputs = {minus_zero_point(ctx, ctx.input(x), x_zero_point, DType::F64),
                                 minus_zero_point(ctx, ctx.input(w), w_zero_point, DType::F64)};
  if (bias) inputs.push_back(*bias);
  return int32_accumulator(
      ctx, ctx.add(OpKind::Conv, std::move(inputs), conv_attributes(ctx, spatial, w)));
}

void lower_conv_integer(LoweringContext& ctx) {
  ctx.set_output(0, integer_conv(ctx, 0, 2, 1, 3, std::nullopt));
}

// QLinearConv(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B).
void lower_qlinear_conv(LoweringContext& ctx) {
  std::optional<ValueId> bias;
  if (ctx.has_input(8)) {
    if (ctx.input_type(8).dtype != DType::I32) {
      ctx.invalid("B is " + std::string(dtype_name(ctx.input_type(8).dtype)) +
                  "; QLinearConv's bias is int32");
    }
    bias = as_dtype(ctx, ctx.input(8), DType::F64);
  }
  require_scales(ctx, {1, 4, 6}, DTypeSet{DType::F32});
  const ValueId acc = integer_conv(ctx, 0, 2, 3, 5, bias);
  const int rank = ctx.type_of(acc).shape.rank();
  const int64_t channels = ctx.input_type(3).shape[0];
  const ValueId xw = ctx.add(OpKind::Mul, {per_tensor(ctx, 1, "x_scale"),
                                           per_channel(ctx, 4, channels, 1, rank, "w_scale")});
  const ValueId multiplier = ctx.add(OpKind::Div, {xw, per_tensor(ctx, 6, "y_scale")});
  const bool has_zero_point = ctx.has_input(7);
  ctx.set_output(0, requantize(ctx, acc, multiplier,
                               has_zero_point ? std::optional(per_tensor(ctx, 7, "y_zero_point"))
                                              : std::nullopt,
                               ctx.input_type(has_zero_point ? 7 : 0).dtype));
}

}  // namespace

void register_convolution_quantized_lowerings(LoweringTable& table) {
  table.add_composite("ConvInteger", OpFamily::Convolution, 10, &lower_conv_integer);
  table.add_composite("QLinearConv", OpFamily::Convolution, 10, &lower_qlinear_conv);
}

}  // namespace volta::onnx
