// The op table's part for family Convolution: Conv, ConvTranspose, and the backward-only
// ConvGradFilter their VJP rules use (window attributes: op_table_window.h).

#include <string>
#include <vector>

#include "op_table_window.h"

namespace volta::op_table {
namespace {

// The kernel's spatial dims from W, checked against kernel_shape when that is given.
std::vector<int64_t> conv_kernel(const AttrReader& attrs, const Shape& w) {
  std::vector<int64_t> kernel(w.dims().begin() + 2, w.dims().end());
  const std::vector<int64_t>& given = attrs.get_ints("kernel_shape");
  if (!given.empty() && given != kernel) {
    shape_fail("kernel_shape " + ints_str(given) + " differs from the spatial dims " +
               ints_str(kernel) + " of W " + w.str());
  }
  return kernel;
}

void check_weights(const Shape& x, const Shape& w, std::string_view w_layout) {
  if (w.rank() != x.rank()) {
    shape_fail("W " + w.str() + " must have the input's rank " + std::to_string(x.rank()) + " (" +
               std::string(w_layout) + ")");
  }
}

// `w_in` is the input channel count W implies, `out` the output's.
void check_channels(const Shape& x, const Shape& w, int64_t group, int64_t w_in, int64_t out,
                    std::string_view w_layout) {
  if (x[1] % group != 0 || out % group != 0) {
    shape_fail("group " + std::to_string(group) + " must divide the input channels " +
               std::to_string(x[1]) + " and the output channels " + std::to_string(out));
  }
  if (w_in != x[1]) {
    shape_fail("W " + w.str() + " (" + std::string(w_layout) + ") does not match " +
               std::to_string(x[1]) + " input channels with group " + std::to_string(group));
  }
}

void check_bias(const InferContext& ctx, int64_t channels_out) {
  if (ctx.has_input(2) && ctx.input(2).shape != Shape{channels_out}) {
    shape_fail("B " + ctx.input(2).shape.str() + " must be [" + std::to_string(channels_out) +
               "], one value per output channel");
  }
}

std::vector<TypeInfo> conv_shape(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  const Shape& w = ctx.input(1).shape;
  const int spatial = spatial_rank(x, "Conv");
  const int64_t group = ctx.attrs.get_int("group");
  check_weights(x, w, "[M, C/group, k...]");
  check_channels(x, w, group, w[1] * group, w[0], "[M, C/group, k...]");
  check_bias(ctx, w[0]);
  const Window win = read_window(ctx.attrs, conv_kernel(ctx.attrs, w));
  Shape out = x;
  out[1] = w[0];
  for (int a = 0; a < spatial; ++a) {
    const int64_t padded = x[a + 2] + win.pad_begin(a) + win.pad_end(a);
    if (padded < win.extent(a)) {
      shape_fail("spatial axis " + std::to_string(a) + ": the dilated kernel spans " +
                 std::to_string(win.extent(a)) + " but the padded input has " +
                 std::to_string(padded));
    }
    out[a + 2] = (padded - win.extent(a)) / win.strides[static_cast<size_t>(a)] + 1;
  }
  return {{ctx.input(0).dtype, out}};
}

std::vector<TypeInfo> conv_transpose_shape(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  const Shape& w = ctx.input(1).shape;
  const int spatial = spatial_rank(x, "ConvTranspose");
  const int64_t group = ctx.attrs.get_int("group");
  check_weights(x, w, "[C, M/group, k...]");
  const int64_t channels_out = w[1] * group;
  check_channels(x, w, group, w[0], channels_out, "[C, M/group, k...]");
  check_bias(ctx, channels_out);
  const Window win = read_window(ctx.attrs, conv_kernel(ctx.attrs, w));
  const std::vector<int64_t> output_padding = per_axis(ctx.attrs, "output_padding", spatial, 0);
  Shape out = x;
  out[1] = channels_out;
  for (int a = 0; a < spatial; ++a) {
    const auto i = static_cast<size_t>(a);
    if (x[a + 2] < 1) shape_fail("ConvTranspose needs non-empty spatial dims, got " + x.str());
    out[a + 2] = win.strides[i] * (x[a + 2] - 1) + output_padding[i] + win.extent(a) -
                 win.pad_begin(a) - win.pad_end(a);
    if (out[a + 2] < 0) {
      shape_fail("spatial axis " + std::to_string(a) + ": pads " + ints_str(win.pads) +
                 " remove more than the full output of " +
                 std::to_string(out[a + 2] + win.pad_begin(a) + win.pad_end(a)));
    }
  }
  return {{ctx.input(0).dtype, out}};
}

// ConvGradFilter(X, dY) -> dW [M, C/group, k...]: X [N, C, D...] is read through the window as
// Conv reads it, dY [N, M, O...] holds one value per window position. dY may cover fewer
// positions than fit on the padded X, never more: ConvTranspose's filter gradient passes its
// output gradient as X, whose output_padding can leave the tail unread.
std::vector<TypeInfo> conv_grad_filter_shape(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  const Shape& dy = ctx.input(1).shape;
  const int spatial = spatial_rank(x, "ConvGradFilter");
  const int64_t group = ctx.attrs.get_int("group");
  if (dy.rank() != x.rank() || dy[0] != x[0]) {
    shape_fail("dY " + dy.str() + " must be [N, M, O...] with X " + x.str() + "'s rank and batch");
  }
  if (x[1] % group != 0 || dy[1] % group != 0) {
    shape_fail("group " + std::to_string(group) + " must divide X's channels " +
               std::to_string(x[1]) + " and dY's channels " + std::to_string(dy[1]));
  }
  std::vector<int64_t> kernel = ctx.attrs.get_ints("kernel_shape");
  if (std::ssize(kernel) != spatial) {
    shape_fail("kernel_shape " + ints_str(kernel) + " must have one entry per spatial dim of X " +
               x.str());
  }
  const Window win = read_window(ctx.attrs, kernel);
  for (int a = 0; a < spatial; ++a) {
    const int64_t padded = x[a + 2] + win.pad_begin(a) + win.pad_end(a);
    const int64_t positions =
        padded < win.extent(a) ? 0
                               : (padded - win.extent(a)) / win.strides[static_cast<size_t>(a)] + 1;
    if (dy[a + 2] > positions) {
      shape_fail("spatial axis " + std::to_string(a) + ": dY " + dy.str() + " has " +
                 std::to_string(dy[a + 2]) + " window positions, the padded X " + x.str() +
                 " fits " + std::to_string(positions));
    }
  }
  std::vector<int64_t> dw = {dy[1], x[1] / group};
  dw.insert(dw.end(), kernel.begin(), kernel.end());
  return {{ctx.input(0).dtype, Shape(dw)}};
}

AttrSpec group_attr() { return {"group", AttrType::Int, AttrValue{int64_t{1}}, 1.0}; }

OpSchema conv_like(OpKind kind, std::string_view name, std::vector<AttrSpec> attrs, ShapeFn infer,
                   std::string_view summary) {
  return OpSchema{.kind = kind,
                  .name = name,
                  .family = OpFamily::Convolution,
                  .inputs = {{"X", 'T', D::Differentiable},
                             {"W", 'T', D::Differentiable},
                             {"B", 'T', D::Differentiable, true}},
                  .outputs = {{"Y", 'T'}},
                  .type_params = {{'T', kFloatTypes}},
                  .attrs = std::move(attrs),
                  .infer = infer,
                  .summary = summary,
                  .accumulator = Accumulator::InputType};
}

}  // namespace

void add_convolution_schemas(std::vector<OpSchema>& t) {
  using K = OpKind;
  std::vector<AttrSpec> conv_attrs = window_attrs(false);
  conv_attrs.push_back(group_attr());
  t.push_back(conv_like(K::Conv, "Conv", conv_attrs, conv_shape,
                        "N-D convolution (cross-correlation), NCHW, 1-3 spatial dims: groups, "
                        "strides, dilations, pads [begin..., end...], optional bias"));
  conv_attrs.push_back(ints_min("output_padding", 0.0));
  t.push_back(conv_like(K::ConvTranspose, "ConvTranspose", conv_attrs, conv_transpose_shape,
                        "transposed convolution (the gradient of Conv w.r.t. its input): W is "
                        "[C, M/group, k...]; pads trim the full output, output_padding extends "
                        "its end"));
  std::vector<AttrSpec> grad_attrs = window_attrs(true);
  grad_attrs.push_back(group_attr());
  t.push_back(OpSchema{
      .kind = K::ConvGradFilter,
      .name = "ConvGradFilter",
      .family = OpFamily::Convolution,
      .inputs = {{"X", 'T', D::Differentiable}, {"dY", 'T', D::Differentiable}},
      .outputs = {{"dW", 'T'}},
      .type_params = {{'T', kFloatTypes}},
      .attrs = std::move(grad_attrs),
      .infer = conv_grad_filter_shape,
      .summary = "backward-only: Conv's filter gradient dW [M, C/group, k...] of X [N, C, D...] "
                 "and dY [N, M, O...] with Conv's window and groups, summed over images and "
                 "window positions (ConvTranspose's, with X and dY swapped)",
      .accumulator = Accumulator::InputType,
      .no_onnx_lowering = "backward-only: made by the Conv and ConvTranspose VJP rules, never "
                          "imported"});
}

}  // namespace volta::op_table
