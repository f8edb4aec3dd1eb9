// VJP rules of the convolution family: each of Conv and ConvTranspose is the other's input
// gradient, a filter gradient is the backward-only ConvGradFilter (ConvTranspose's with its
// input and output gradient in swapped roles), and a bias gradient is a ReduceSum.
// ConvGradFilter, linear in both inputs, has Conv and ConvTranspose as its gradients. Their
// kernels fix every sum's order, so the gradients are bit-identical at any thread count.

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

// The filter gradient of a window correlation between `a` [N, Ca, Sa...] (read through the
// window) and `g` [N, Cb, Sb...] (one entry per window position) in `group` groups:
// ConvGradFilter(a, g) with the node's window, [Cb, Ca/group, kernel...].
ValueId filter_gradient(VjpBuilder& b, ValueId a, ValueId g, const WindowAttrs& w, int64_t group) {
  return b.add(OpKind::ConvGradFilter, {a, g},
               {{"kernel_shape", w.kernel},
                {"strides", w.strides},
                {"dilations", w.dilations},
                {"pads", w.pads},
                {"group", group}});
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
  const auto volume = [](const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (const int64_t d : dims) n *= d;
    return n;
  };
  if (volume(spatial_dims(b.shape(x))) == 0 || volume(spatial_dims(b.shape(dy))) == 0) {
    // No window position, so no product: both gradients are 0 (and neither Conv nor
    // ConvTranspose takes empty spatial dims).
    if (b.wants(0)) b.set(0, b.constant(Tensor(b.dtype(), b.shape(x))));
    if (b.wants(1)) b.set(1, b.constant(Tensor(b.dtype(), b.shape(dy))));
    return;
  }
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
