// Lowerings of ONNX Conv and ConvTranspose onto the internal ops, whose window attributes are
// explicit (lower_window.h), of CausalConvWithState as a composite around Conv, and of Col2Im as
// a scatter-add of the columns into the padded image.
//
// Attributes are read only in the versions that define them, so one a version lacks is left
// unread and reported by the importer.

#include <algorithm>
#include <optional>
#include <string>

#include "lower_window.h"

namespace volta::onnx {
namespace {

// X, W and B when given.
std::vector<ValueId> conv_inputs(LoweringContext& ctx) {
  std::vector<ValueId> inputs = {ctx.input(0), ctx.input(1)};
  if (ctx.has_input(2)) inputs.push_back(ctx.input(2));
  return inputs;
}

void lower_conv(LoweringContext& ctx) {
  ctx.set_output(0,
                 ctx.add(OpKind::Conv, conv_inputs(ctx), conv_attributes(ctx, spatial_rank(ctx))));
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

// CausalConvWithState 27: a depthwise Conv1d over [past_state (zeros when absent), input], with
// an optional fused SiLU; present_state is the last k - 1 positions of that padded sequence.
void lower_causal_conv_with_state(LoweringContext& ctx) {
  const TypeInfo& x = ctx.input_type(0);
  const TypeInfo& w = ctx.input_type(1);
  require_dtype(ctx, OpKind::Conv, x.dtype);
  const std::string activation = ctx.attr_string("activation", "none");
  if (activation != "none" && activation != "silu" && activation != "swish") {
    ctx.unsupported("activation '" + activation + "'; supported: none, silu, swish");
  }
  if (x.shape.rank() != 3) {
    ctx.invalid("input " + x.shape.str() + " must be rank 3 (batch, channels, length)");
  }
  const int64_t batch = x.shape[0];
  const int64_t channels = x.shape[1];
  const int64_t length = x.shape[2];
  if (w.shape.rank() != 3 || w.shape[0] != channels || w.shape[1] != 1 || w.shape[2] < 1) {
    ctx.invalid("weight " + w.shape.str() + " must be (channels, 1, k) with channels " +
                std::to_string(channels));
  }
  const int64_t carry = w.shape[2] - 1;
  const Ints state_shape = {batch, channels, carry};
  ValueId padded = ctx.input(0);
  if (ctx.num_inputs() > 3 && ctx.has_input(3)) {
    if (ctx.input_type(3).shape.dims() != state_shape) {
      ctx.invalid("past_state " + ctx.input_type(3).shape.str() + " must be " +
                  Shape(state_shape).str());
    }
    if (carry > 0) padded = ctx.add(OpKind::Concat, {ctx.input(3), padded}, {{"axis", int64_t{2}}});
  } else if (carry > 0) {
    const ValueId zeros = ctx.constant(Tensor(x.dtype, Shape(state_shape)));
    padded = ctx.add(OpKind::Concat, {zeros, padded}, {{"axis", int64_t{2}}});
  }
  std::vector<ValueId> inputs = {padded, ctx.input(1)};
  if (ctx.has_input(2)) inputs.push_back(ctx.input(2));
  ValueId y = ctx.add(OpKind::Conv, inputs,
                      {{"kernel_shape", Ints{carry + 1}},
                       {"strides", Ints{1}},
                       {"dilations", Ints{1}},
                       {"pads", Ints{0, 0}},
                       {"group", channels}});
  if (activation != "none") y = ctx.add(OpKind::Mul, {y, ctx.add(OpKind::Sigmoid, {y})});
  ctx.set_output(0, y);
  if (!ctx.has_output(1)) return;
  if (carry == 0) return ctx.set_output_constant(1, Tensor(x.dtype, Shape(state_shape)));
  ctx.set_output(
      1, ctx.add(OpKind::Slice, {padded},
                 {{"starts", Ints{length}}, {"ends", Ints{length + carry}}, {"axes", Ints{2}}}));
}

// Col2Im (18): input [N, C * prod(block), L], image_shape and block_shape known at import. Column
// element (c, k, l) belongs at padded position l * stride + k * dilation (per axis; k and l
// row-major over the block and the grid of L block positions): one ScatterElements "add" of the
// columns into the flat padded image, in column order, with those positions as constant indices;
// then the padding is cut off.
void lower_col2im(LoweringContext& ctx) {
  const TypeInfo& x = ctx.input_type(0);
  require_dtype(ctx, OpKind::ScatterElements, x.dtype);
  const Ints image = ctx.constant_ints(1, "image_shape");
  const Ints block = ctx.constant_ints(2, "block_shape");
  const auto spatial = static_cast<int>(image.size());
  if (spatial == 0 || block.size() != image.size()) {
    ctx.invalid("image_shape " + Shape(image).str() + " and block_shape " + Shape(block).str() +
                " must have one entry per spatial axis, at least one");
  }
  const Ints strides = per_axis(ctx, "strides", spatial, 1);
  const Ints dilations = per_axis(ctx, "dilations", spatial, 1);
  const Ints pads = per_axis(ctx, "pads", spatial, 0, 2);
  const Ints grid = window_positions(ctx, image, block, strides, dilations, pads);
  Ints padded(image.size());
  for (size_t a = 0; a < image.size(); ++a) padded[a] = image[a] + pads[a] + pads[a + image.size()];
  const int64_t block_size = Shape(block).numel();
  const int64_t positions = Shape(grid).numel();
  if (x.shape.rank() != 3 || x.shape[1] % block_size != 0 || x.shape[2] != positions) {
    ctx.invalid("input " + x.shape.str() + " must be [N, C * " + std::to_string(block_size) + ", " +
                std::to_string(positions) + "] for block " + Shape(block).str() + " over image " +
                Shape(image).str());
  }
  const int64_t batch = x.shape[0];
  const int64_t channels = x.shape[1] / block_size;
  const int64_t columns = block_size * positions;
  const int64_t image_size = Shape(padded).numel();
  check_constant_size(ctx, Shape{batch, channels, columns});

  // The flat padded position of column element (k, l), for k then l in row-major order.
  Tensor where(DType::I64, Shape{1, 1, columns});
  for (int64_t k = 0; k < block_size; ++k) {
    for (int64_t l = 0; l < positions; ++l) {
      int64_t flat = 0;
      int64_t k_rest = k;
      int64_t l_rest = l;
      int64_t stride = 1;
      for (int d = spatial - 1; d >= 0; --d) {
        const auto a = static_cast<size_t>(d);
        const int64_t at = (l_rest % grid[a]) * strides[a] + (k_rest % block[a]) * dilations[a];
        flat += at * stride;
        stride *= padded[a];
        k_rest /= block[a];
        l_rest /= grid[a];
      }
      where.set_int(k * positions + l, flat);
    }
  }
  const Ints flat_shape = {batch, channels, columns};
  const ValueId indices =
      ctx.add(OpKind::Expand, {ctx.constant(std::move(where))}, {{"shape", flat_shape}});
  const ValueId zeros = ctx.add(OpKind::Expand, {scalar_constant(ctx, x.dtype, 0.0)},
                                {{"shape", Ints{batch, channels, image_size}}});
  const ValueId columns_flat = ctx.add(OpKind::Reshape, {ctx.input(0)}, {{"shape", flat_shape}});
  const ValueId summed = ctx.add(OpKind::ScatterElements, {zeros, indices, columns_flat},
                                 {{"axis", int64_t{2}}, {"reduction", std::string("add")}});
  Ints image_dims = {batch, channels};
  image_dims.insert(image_dims.end(), padded.begin(), padded.end());
  ValueId y = ctx.add(OpKind::Reshape, {summed}, {{"shape", image_dims}});
  Ints starts, ends, axes;
  for (int d = 0; d < spatial; ++d) {
    const auto a = static_cast<size_t>(d);
    if (pads[a] == 0 && pads[a + image.size()] == 0) continue;
    starts.push_back(pads[a]);
    ends.push_back(pads[a] + image[a]);
    axes.push_back(d + 2);
  }
  if (!axes.empty()) {
    y = ctx.add(OpKind::Slice, {y}, {{"starts", starts}, {"ends", ends}, {"axes", axes}});
  }
  ctx.set_output(0, y);
}

}  // namespace

Attributes conv_attributes(LoweringContext& ctx, int spatial, int w_input) {
  const Ints kernel = weight_kernel(ctx, spatial, w_input);
  const Ints strides = per_axis(ctx, "strides", spatial, 1);
  const Ints dilations = per_axis(ctx, "dilations", spatial, 1);
  const Ints pads = resolve_pads(ctx, read_auto_pad(ctx), kernel, strides, dilations);
  return {{"kernel_shape", kernel},
          {"strides", strides},
          {"dilations", dilations},
          {"pads", pads},
          {"group", ctx.attr_int("group", 1)}};
}

void register_convolution_lowerings(LoweringTable& table) {
  table.add("Conv", OpKind::Conv, 1, &lower_conv);
  table.add_composite("CausalConvWithState", OpFamily::Convolution, 27,
                      &lower_causal_conv_with_state);
  table.add("ConvTranspose", OpKind::ConvTranspose, 1, &lower_conv_transpose);
  table.add_composite("Col2Im", OpFamily::Convolution, 18, &lower_col2im);
}

}  // namespace volta::onnx
