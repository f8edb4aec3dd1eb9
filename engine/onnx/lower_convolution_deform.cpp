// DeformConv (opset 19) as a composite: each kernel tap samples X bilinearly at its offset
// position (GridSample, align_corners, zero padding: a position outside the padded input reads
// zero), the samples are scaled by the mask, and a grouped MatMul with W sums them, as ONNX's
// reference defines the op through GridSample. Volta lowers 2-D DeformConv (X of rank 4), the
// form the reference implements.

#include <string>

#include "lower_window.h"

namespace volta::onnx {
namespace {

// The input position, in pixels, that kernel tap (a, b) reads for output (i, j) before its
// offset: [kH, kW, oH, oW, 2] holding (x, y), the order GridSample's grid takes.
Tensor base_positions(DType dtype, const Ints& kernel, const Ints& out, const Ints& strides,
                      const Ints& dilations, const Ints& pads) {
  Tensor t(dtype, Shape{kernel[0], kernel[1], out[0], out[1], 2});
  int64_t at = 0;
  for (int64_t a = 0; a < kernel[0]; ++a) {
    for (int64_t b = 0; b < kernel[1]; ++b) {
      for (int64_t i = 0; i < out[0]; ++i) {
        for (int64_t j = 0; j < out[1]; ++j) {
          t.set_double(at++, static_cast<double>(j * strides[1] + b * dilations[1] - pads[1]));
          t.set_double(at++, static_cast<double>(i * strides[0] + a * dilations[0] - pads[0]));
        }
      }
    }
  }
  return t;
}

void lower_deform_conv(LoweringContext& ctx) {
  const TypeInfo& x = ctx.input_type(0);
  if (x.shape.rank() != 4) {
    ctx.unsupported("X of rank " + std::to_string(x.shape.rank()) +
                    "; supported: rank 4 (2-D DeformConv, as ONNX's reference implements it)");
  }
  require_dtype(ctx, OpKind::GridSample, x.dtype);
  require_dtype(ctx, OpKind::MatMul, x.dtype);
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    if (ctx.has_input(i) && ctx.input_type(i).dtype != x.dtype) {
      ctx.invalid("input " + std::to_string(i) + " has dtype " +
                  std::string(dtype_name(ctx.input_type(i).dtype)) + "; X has " +
                  std::string(dtype_name(x.dtype)) + " and every input takes X's dtype");
    }
  }
  const int64_t batch = x.shape[0];
  const int64_t channels = x.shape[1];
  const Ints image = {x.shape[2], x.shape[3]};
  const Shape& w = ctx.input_type(1).shape;
  const Ints kernel = weight_kernel(ctx, 2);
  const int64_t group = ctx.attr_int("group", 1);
  const int64_t offset_group = ctx.attr_int("offset_group", 1);
  const int64_t out_channels = w[0];
  if (group < 1 || offset_group < 1 || channels != w[1] * group || out_channels % group != 0 ||
      channels % offset_group != 0) {
    ctx.invalid("X " + x.shape.str() + ", W " + w.str() + ", group " + std::to_string(group) +
                " and offset_group " + std::to_string(offset_group) +
                " do not fit: C must be W's dim 1 times group, oC a multiple of group, C a "
                "multiple of offset_group");
  }
  const Ints strides = per_axis(ctx, "strides", 2, 1);
  const Ints dilations = per_axis(ctx, "dilations", 2, 1);
  const Ints pads = per_axis(ctx, "pads", 2, 0, 2);
  const Ints out = window_positions(ctx, image, kernel, strides, dilations, pads);
  // GridSample's align_corners maps -1 and 1 to the first and last pixel: one pixel has none.
  for (size_t a = 0; a < 2; ++a) {
    if (image[a] < 2) {
      ctx.unsupported("an input of " + std::to_string(image[a]) + " pixel along spatial axis " +
                      std::to_string(a) +
                      "; supported: at least 2 (ONNX's reference divides by the size minus 1)");
    }
  }
  const int64_t taps = kernel[0] * kernel[1];
  const Shape want_offset{batch, offset_group * taps * 2, out[0], out[1]};
  if (ctx.input_type(2).shape != want_offset) {
    ctx.invalid("offset " + ctx.input_type(2).shape.str() + " must be " + want_offset.str() +
                " for X " + x.shape.str() + ", kernel " + Shape(kernel).str() + ", offset_group " +
                std::to_string(offset_group) + ", strides, dilations and pads");
  }
  const bool has_bias = ctx.has_input(3);
  if (has_bias && ctx.input_type(3).shape != Shape{out_channels}) {
    ctx.invalid("B " + ctx.input_type(3).shape.str() + " must be [" + std::to_string(out_channels) +
                "] (one per output channel)");
  }
  const bool has_mask = ctx.has_input(4);
  const Shape want_mask{batch, offset_group * taps, out[0], out[1]};
  if (has_mask && ctx.input_type(4).shape != want_mask) {
    ctx.invalid("mask " + ctx.input_type(4).shape.str() + " must be " + want_mask.str());
  }
  const DType dtype = x.dtype;
  const int64_t positions = out[0] * out[1];
  check_constant_size(ctx, Shape{taps, positions, 2});

  // The sampling grid [N * offset_group, kH * kW * oH, oW, 2]: base position plus offset, in
  // pixels, then normalized as the reference does: p / (size - 1) * 2 - 1.
  const ValueId offset =
      ctx.add(OpKind::Reshape, {ctx.input(2)},
              {{"shape", Ints{batch, offset_group, kernel[0], kernel[1], 2, out[0], out[1]}}});
  const ValueId offset_yx =
      ctx.add(OpKind::Transpose, {offset}, {{"perm", Ints{0, 1, 2, 3, 5, 6, 4}}});
  const ValueId offset_xy =
      ctx.add(OpKind::Gather, {offset_yx, ctx.constant(Tensor::from<int64_t>(Shape{2}, {1, 0}))},
              {{"axis", int64_t{6}}});
  const ValueId base = ctx.constant(base_positions(dtype, kernel, out, strides, dilations, pads));
  const ValueId at = ctx.add(OpKind::Add, {base, offset_xy});
  Tensor last_pixel(dtype, Shape{2});  // (x, y): W - 1, H - 1
  last_pixel.set_double(0, static_cast<double>(image[1] - 1));
  last_pixel.set_double(1, static_cast<double>(image[0] - 1));
  const ValueId scaled = ctx.add(OpKind::Div, {at, ctx.constant(std::move(last_pixel))});
  const ValueId normalized =
      ctx.add(OpKind::Sub, {ctx.add(OpKind::Mul, {scaled, scalar_constant(ctx, dtype, 2.0)}),
                            scalar_constant(ctx, dtype, 1.0)});
  const ValueId grid = ctx.add(OpKind::Reshape, {normalized},
                               {{"shape", Ints{batch * offset_group, taps * out[0], out[1], 2}}});

  // Each offset group's channels sampled on its grid: [N, og, C / og, kH * kW, oH * oW].
  const ValueId x_groups =
      ctx.add(OpKind::Reshape, {ctx.input(0)},
              {{"shape", Ints{batch * offset_group, channels / offset_group, image[0], image[1]}}});
  const ValueId sampled = ctx.add(OpKind::GridSample, {x_groups, grid},
                                  {{"align_corners", int64_t{1}},
                                   {"mode", std::string("bilinear")},
                                   {"padding_mode", std::string("zeros")}});
  ValueId columns =
      ctx.add(OpKind::Reshape, {sampled},
              {{"shape", Ints{batch, offset_group, channels / offset_group, taps, positions}}});
  if (has_mask) {
    const ValueId mask = ctx.add(OpKind::Reshape, {ctx.input(4)},
                                 {{"shape", Ints{batch, offset_group, 1, taps, positions}}});
    columns = ctx.add(OpKind::Mul, {columns, mask});
  }

  // The grouped product: W [g, oC / g, C / g * kH * kW] @ columns [N, g, C / g * kH * kW, oH * oW].
  const int64_t reduced = channels / group * taps;
  const ValueId by_group =
      ctx.add(OpKind::Reshape, {columns}, {{"shape", Ints{batch, group, reduced, positions}}});
  const ValueId weights = ctx.add(OpKind::Reshape, {ctx.input(1)},
                                  {{"shape", Ints{group, out_channels / group, reduced}}});
  const ValueId product = ctx.add(OpKind::MatMul, {weights, by_group});
  ValueId y =
      ctx.add(OpKind::Reshape, {product}, {{"shape", Ints{batch, out_channels, out[0], out[1]}}});
  if (has_bias) {
    y = ctx.add(OpKind::Add, {y, ctx.add(OpKind::Reshape, {ctx.input(3)},
                                         {{"shape", Ints{out_channels, 1, 1}}})});
  }
  ctx.set_output(0, y);
}

}  // namespace

void register_convolution_deform_lowerings(LoweringTable& table) {
  table.add_composite("DeformConv", OpFamily::Convolution, 19, &lower_deform_conv);
}

}  // namespace volta::onnx
