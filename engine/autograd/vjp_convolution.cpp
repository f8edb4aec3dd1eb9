// VJP rules of the convolution family, built from the forward ops themselves: each of Conv and
// ConvTranspose is the other's input gradient, a filter gradient is a Conv of the input against
// the output gradient with strides and dilations swapped (groups carried as Conv groups), and a
// bias gradient is a ReduceSum. ConvGradFilter, linear in both inputs, has Conv and
// ConvTranspose as its gradients. Their kernels fix every sum's order, so the gradients are
// bit-identical at any thread count.

#include <numeric>
#include <vector>

#include "vjp_window.h"

namespace volta::autograd {
namespace {

WindowAttrs node_window(const VjpBuilder& b) {
  return read_window(b.attrs(), spatial_dims(b.shape(b.input(1))));
}

// The gradient of a Conv's input of spatial dims `in` from its output gradient `g` through
// `filter` [M, C/group, k...]: a ConvTranspose trimmed or extended to `in` (input positions no
// window read get 0).
ValueId conv_input_gradient(VjpBuilder& b, ValueId g, ValueId filter, const WindowAttrs& w,
                            const std::vector<int64_t>& in, int64_t group) {
  return b.add(OpKind::ConvTranspose, {g, filter},
               transposed_window(w, in, spatial_dims(b.shape(g)), group));
}

// Conv(input, filter) over the window, cut to the spatial dims of `target` where the window fits
// more positions (ConvTranspose's output_padding of a stride or more gives extra ones).
ValueId conv_cut_to(VjpBuilder& b, ValueId input, ValueId filter, const WindowAttrs& w,
                    int64_t group, const Shape& target) {
  const ValueId y = b.add(
      OpKind::Conv, {input, filter},
      {{"strides", w.strides}, {"dilations", w.dilations}, {"pads", w.pads}, {"group", group}});
  if (b.shape(y) == target) return y;
  std::vector<int64_t> axes(static_cast<size_t>(w.spatial()));
  std::iota(axes.begin(), axes.end(), int64_t{2});
  return b.add(OpKind::Slice, {y},
               {{"starts", std::vector<int64_t>(axes.size(), 0)},
                {"ends", spatial_dims(target)},
                {"axes", axes}});
}

std::vector<int64_t> with_batch_and_channels(int64_t n, int64_t c, std::vector<int64_t> dims) {
  dims.insert(dims.begin(), {n, c});
  return dims;
}

// Swaps axes 0 and 1.
ValueId swap_leading_axes(VjpBuilder& b, ValueId v) {
  std::vector<int64_t> perm(static_cast<size_t>(b.shape(v).rank()));
  std::iota(perm.begin(), perm.end(), int64_t{0});
  std::swap(perm[0], perm[1]);
  return b.add(OpKind::Transpose, {v}, {{"perm", perm}});
}

// The filter gradient of a window correlation between `a` [N, Ca, Sa...] (the side read through
// the window: padded, strided, dilated) and `g` [N, Cb, Sb...] (one entry per window position)
// in `group` groups:
//   dW[cb, ca', k] = sum over n, o of g[n, cb, o] * a[n, group(cb) * Ca/group + ca',
//                                                    o * stride - pad_begin + k * dilation],
// [Cb, Ca/group, kernel...]. It is one Conv whose batch is a's channels within a group, whose
// input channels are (group, image) pairs and whose weights are g's planes: windows step by
// the dilation and taps by the stride. Its end pad makes the output exactly the kernel; where
// no window reaches a's tail, the tail is sliced off instead.
ValueId filter_gradient(VjpBuilder& b, ValueId a, ValueId g, const WindowAttrs& w, int64_t group) {
  const Shape& sa = b.shape(a);
  const Shape& sg = b.shape(g);
  const int spatial = w.spatial();
  const int64_t batch = sa[0], per_group = sa[1] / group;
  std::vector<int64_t> sizes = spatial_dims(sa);
  std::vector<int64_t> pads(2 * static_cast<size_t>(spatial));
  std::vector<int64_t> crop_ends, crop_axes;
  for (int a_i = 0; a_i < spatial; ++a_i) {
    const auto i = static_cast<size_t>(a_i);
    const int64_t weight_span = (sg[a_i + 2] - 1) * w.stride(a_i) + 1;
    const int64_t needed = (w.kernel[i] - 1) * w.dilation(a_i) + weight_span - w.pad_begin(a_i);
    if (needed <= 0) {  // every tap reads the begin padding: no weight sees an input element
      std::vector<int64_t> dw_shape = {sg[1], per_group};
      dw_shape.insert(dw_shape.end(), w.kernel.begin(), w.kernel.end());
      return b.add(OpKind::Expand, {b.scalar(0.0)}, {{"shape", dw_shape}});
    }
    pads[i] = w.pad_begin(a_i);
    if (needed < sizes[i]) {
      crop_ends.push_back(needed);
      crop_axes.push_back(a_i + 2);
      sizes[i] = needed;
    }
    pads[i + static_cast<size_t>(spatial)] = needed - sizes[i];
  }
  ValueId input = a;
  if (!crop_axes.empty()) {
    input = b.add(OpKind::Slice, {a},
                  {{"starts", std::vector<int64_t>(crop_axes.size(), 0)},
                   {"ends", crop_ends},
                   {"axes", crop_axes}});
  }
  // [N, Ca, S...] -> [N, group, Ca/group, S...] -> [Ca/group, group, N, S...] -> [Ca/group,
  // group * N, S...]: input channel j * N + n of the Conv is image n of group j.
  std::vector<int64_t> split = with_batch_and_channels(batch, group, sizes);
  split.insert(split.begin() + 2, per_group);
  std::vector<int64_t> perm = {2, 1, 0};
  for (int a_i = 0; a_i < spatial; ++a_i) perm.push_back(a_i + 3);
  const ValueId grouped = b.add(
      OpKind::Transpose, {b.add(OpKind::Reshape, {input}, {{"shape", split}})}, {{"perm", perm}});
  const ValueId batched =
      b.add(OpKind::Reshape, {grouped},
            {{"shape", with_batch_and_channels(per_group, group * batch, sizes)}});
  const ValueId weights = swap_leading_axes(b, g);  // [Cb, N, Sb...]
  const ValueId dw = b.add(OpKind::Conv, {batched, weights},
                           {{"strides", w.dilations},
                            {"dilations", w.strides},
                            {"pads", pads},
                            {"group", group}});  // [Ca/group, Cb, kernel...]
  return swap_leading_axes(b, dw);
}

// The bias gradient: g summed over the batch and spatial axes.
ValueId bias_gradient(VjpBuilder& b) {
  std::vector<int64_t> axes = {0};
  for (int a = 2; a < b.shape(b.grad()).rank(); ++a) axes.push_back(a);
  return b.add(OpKind::ReduceSum, {b.grad()}, {{"axes", axes}, {"keepdims", int64_t{0}}});
}

bool wants_bias(const VjpBuilder& b) {
  return b.num_inputs() > 2 && b.input(2).valid() && b.wants(2);
}

// Y = Conv(X, W) + B. dX: the ConvTranspose of g with the same W and window, trimmed or
// extended to X's dims (input positions no window read get 0). dW: filter_gradient(X, g).
void conv_vjp(VjpBuilder& b) {
  const ValueId x = b.input(0), w = b.input(1), g = b.grad();
  const WindowAttrs win = node_window(b);
  const int64_t group = b.attrs().get_int("group");
  if (b.wants(0)) b.set(0, conv_input_gradient(b, g, w, win, spatial_dims(b.shape(x)), group));
  if (b.wants(1)) b.set(1, filter_gradient(b, x, g, win, group));
  if (wants_bias(b)) b.set(2, bias_gradient(b));
}

// Y = ConvTranspose(X, W) + B, where X[n, c, i] reaches Y at i * stride - pad_begin + k *
// dilation. dX: the Conv of g with the same W and window (an output_padding of a stride or
// more gives extra rows, sliced off). dW: filter_gradient(g, X), the roles of Conv's swapped.
void conv_transpose_vjp(VjpBuilder& b) {
  const ValueId x = b.input(0), w = b.input(1), g = b.grad();
  const WindowAttrs win = node_window(b);
  const int64_t group = b.attrs().get_int("group");
  if (b.wants(0)) b.set(0, conv_cut_to(b, g, w, win, group, b.shape(x)));
  if (b.wants(1)) b.set(1, filter_gradient(b, g, x, win, group));
  if (wants_bias(b)) b.set(2, bias_gradient(b));
}

// dW = ConvGradFilter(X, dY) is linear in each input; with its gradient G [M, C/group, k...] as
// a filter, dX is Conv's input gradient of dY through G and d(dY) is Conv(X, G) at dY's positions.
void conv_grad_filter_vjp(VjpBuilder& b) {
  const ValueId x = b.input(0), dy = b.input(1), g = b.grad();
  const WindowAttrs win = read_window(b.attrs(), b.attrs().get_ints("kernel_shape"));
  const int64_t group = b.attrs().get_int("group");
  if (b.wants(0)) {
    b.set(0, conv_input_gradient(b, dy, g, win, spatial_dims(b.shape(x)), group));
  }
  if (b.wants(1)) b.set(1, conv_cut_to(b, x, g, win, group, b.shape(dy)));
}

}  // namespace

void register_convolution_vjps(VjpTable& t) {
  t[static_cast<size_t>(op_index(OpKind::Conv))] = {&conv_vjp, 0b111};
  t[static_cast<size_t>(op_index(OpKind::ConvTranspose))] = {&conv_transpose_vjp, 0b111};
  t[static_cast<size_t>(op_index(OpKind::ConvGradFilter))] = {&conv_grad_filter_vjp, 0b11};
}

}  // namespace volta::autograd
