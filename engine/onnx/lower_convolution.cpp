// Lowerings of ONNX Conv and ConvTranspose onto the internal ops, whose window attributes are
// explicit (lower_window.h).
//
// Attributes are read only in the versions that define them, so one a version lacks is left
// unread and reported by the importer.

#include <algorithm>
#include <optional>
#include <string>

#include "lower_window.h"

namespace volta::onnx {
namespace {

// The kernel's spatial dims from W, checked against kernel_shape when that is given.
Ints weight_kernel(LoweringContext& ctx, int spatial) {
  const Shape& w = ctx.input_type(1).shape;
  if (w.rank() != spatial + 2) {
    ctx.invalid("W " + w.str() + " must have rank " + std::to_string(spatial + 2));
  }
  Ints kernel(w.dims().begin() + 2, w.dims().end());
  if (ctx.has_attr("kernel_shape") && ctx.attr_ints("kernel_shape", std::nullopt) != kernel) {
    ctx.invalid("kernel_shape differs from W's spatial dims " + Shape(kernel).str());
  }
  return kernel;
}

// X, W and B when given.
std::vector<ValueId> conv_inputs(LoweringContext& ctx) {
  std::vector<ValueId> inputs = {ctx.input(0), ctx.input(1)};
  if (ctx.has_input(2)) inputs.push_back(ctx.input(2));
  return inputs;
}

void lower_conv(LoweringContext& ctx) {
  const int spatial = spatial_rank(ctx);
  const Ints kernel = weight_kernel(ctx, spatial);
  const Ints strides = per_axis(ctx, "strides", spatial, 1);
  const Ints dilations = per_axis(ctx, "dilations", spatial, 1);
  const Ints pads = resolve_pads(ctx, read_auto_pad(ctx), kernel, strides, dilations);
  ctx.set_output(0, ctx.add(OpKind::Conv, conv_inputs(ctx),
                            {{"kernel_shape", kernel},
                             {"strides", strides},
                             {"dilations", dilations},
                             {"pads", pads},
                             {"group", ctx.attr_int("group", 1)}}));
}

// Output size = stride * (in - 1) + output_padding + dilated kernel - pads. Given an output
// shape (output_shape, or in * stride for SAME_*), the pads it implies are split as auto_pad
// says; an output larger than the unpadded one grows output_padding instead (pads >= 0).
void lower_conv_transpose(LoweringContext& ctx) {
  const int spatial = spatial_rank(ctx);
  const Ints kernel = weight_kernel(ctx, spatial);
  const Ints strides = per_axis(ctx, "strides", spatial, 1);
  const Ints dilations = per_axis(ctx, "dilations", spatial, 1);
  Ints output_padding = per_axis(ctx, "output_padding", spatial, 0);
  const AutoPad mode = read_auto_pad(ctx);
  const Shape& x = ctx.input_type(0).shape;
  std::optional<Ints> out;
  Ints pads(static_cast<size_t>(2 * spatial), 0);
  if (ctx.has_attr("output_shape")) {
    out = ctx.attr_ints("output_shape", std::nullopt);
    if (out->size() != static_cast<size_t>(spatial)) {
      ctx.unsupported("output_shape " + Shape(*out).str() +
                      "; supported: one size per spatial dim (" + std::to_string(spatial) + ")");
    }
    if (ctx.has_attr("pads")) ctx.consume_attr("pads");  // the spec ignores them here
  } else if (mode == AutoPad::NotSet) {
    pads = per_axis(ctx, "pads", spatial, 0, 2);
  } else if (ctx.has_attr("pads")) {
    ctx.invalid("pads cannot be given together with auto_pad");
  } else if (mode != AutoPad::Valid) {
    out = Ints(static_cast<size_t>(spatial));
    for (size_t a = 0; a < out->size(); ++a) (*out)[a] = x[static_cast<int>(a) + 2] * strides[a];
  }
  if (out) {
    for (size_t a = 0; a < kernel.size(); ++a) {
      const int64_t full = strides[a] * (x[static_cast<int>(a) + 2] - 1) + output_padding[a] +
                           (kernel[a] - 1) * dilations[a] + 1;
      const int64_t total = full - (*out)[a];
      if (total < 0) output_padding[a] -= total;
      split_padding(pads, a, std::max<int64_t>(total, 0), mode);
    }
  }
  ctx.set_output(0, ctx.add(OpKind::ConvTranspose, conv_inputs(ctx),
                            {{"kernel_shape", kernel},
                             {"strides", strides},
                             {"dilations", dilations},
                             {"pads", pads},
                             {"output_padding", output_padding},
                             {"group", ctx.attr_int("group", 1)}}));
}

}  // namespace

void register_convolution_lowerings(LoweringTable& table) {
  table.add("Conv", OpKind::Conv, 1, &lower_conv);
  table.add("ConvTranspose", OpKind::ConvTranspose, 1, &lower_conv_transpose);
}

}  // namespace volta::onnx
