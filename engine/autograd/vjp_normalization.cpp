// VJP rules of the normalization family: Softmax and LogSoftmax along their axis,
// LayerNormalization over its trailing axes, inference BatchNormalization, InstanceNormalization,
// MeanVarianceNormalization and LRN. Statistics a rule needs are recomputed from x.

#include <vector>

#include "vjp.h"

namespace volta::autograd {
namespace {

ValueId sum_along_axis(VjpBuilder& b, ValueId v) {
  return b.add(
      OpKind::ReduceSum, {v},
      {{"axes", std::vector<int64_t>{b.attrs().get_int("axis")}}, {"keepdims", int64_t{1}}});
}

// y = softmax(x): dx = y * (g - sum(g * y)).
void softmax_vjp(VjpBuilder& b) {
  const ValueId y = b.output();
  const ValueId dot = sum_along_axis(b, b.mul(b.grad(), y));
  b.set(0, b.mul(y, b.sub(b.grad(), dot)));
}

// y = log_softmax(x): dx = g - exp(y) * sum(g).
void log_softmax_vjp(VjpBuilder& b) {
  const ValueId total = sum_along_axis(b, b.grad());
  b.set(0, b.sub(b.grad(), b.mul(b.add(OpKind::Exp, {b.output()}), total)));
}

// x normalized over `axes` as LayerNormalization and InstanceNormalization do, recomputed from x
// in the forward's order of operations: centered = x - mean, inv = 1 / sqrt(var + epsilon),
// xhat = centered * inv (means over `axes`, kept).
struct Normalized {
  std::vector<int64_t> axes;
  ValueId centered, inv, xhat;

  ValueId mean(VjpBuilder& b, ValueId v) const {
    return b.add(OpKind::ReduceMean, {v}, {{"axes", axes}, {"keepdims", int64_t{1}}});
  }
  // The gradient of x through xhat given d = dL/dxhat:
  // inv * (d - mean(d) - xhat * mean(d * xhat)).
  ValueId input_gradient(VjpBuilder& b, ValueId d) const {
    return b.mul(inv, b.sub(b.sub(d, mean(b, d)), b.mul(xhat, mean(b, b.mul(d, xhat)))));
  }
};

Normalized normalize(VjpBuilder& b, ValueId x, std::vector<int64_t> axes) {
  Normalized z{std::move(axes), kNoValue, kNoValue, kNoValue};
  z.centered = b.sub(x, z.mean(b, x));
  const ValueId variance = z.mean(b, b.mul(z.centered, z.centered));
  const ValueId epsilon = b.scalar(b.attrs().get_float("epsilon"));
  z.inv = b.add(OpKind::Reciprocal, {b.add(OpKind::Sqrt, {b.sum(variance, epsilon)})});
  z.xhat = b.mul(z.centered, z.inv);
  return z;
}

// LayerNormalization over axes [axis, rank): with xhat = (x - mean) * inv, inv = 1 /
// sqrt(var + epsilon) (mean and var over those axes, recomputed here from x in the forward's
// order of operations), y = xhat * scale + bias:
//   dscale = sum of g * xhat and dbias = sum of g, over the axes scale broadcast along;
//   dx = inv * (d - mean(d) - xhat * mean(d * xhat)) with d = g * scale.
void layer_normalization_vjp(VjpBuilder& b) {
  const ValueId x = b.input(0), scale = b.input(1), g = b.grad();
  const int rank = b.shape(x).rank();
  int64_t axis = b.attrs().get_int("axis");
  if (axis < 0) axis += rank;
  std::vector<int64_t> axes;
  for (int64_t a = axis; a < rank; ++a) axes.push_back(a);
  const Normalized z = normalize(b, x, axes);
  // Mean and InvStdDev (outputs 1 and 2, shaped like the statistics) may carry gradients too:
  // d mean / dx = 1 / n and d inv / dx = -inv^3 (x - mean) / n over the normalized axes.
  const auto output_grad = [&](int o) {
    return static_cast<int>(b.node().outputs.size()) > o ? b.grad(o) : kNoValue;
  };
  const ValueId g_mean = output_grad(1), g_inv = output_grad(2);
  int64_t n = 1;
  for (const int64_t a : axes) n *= b.shape(x)[static_cast<int>(a)];
  const ValueId per_element = b.scalar(1.0 / static_cast<double>(n));
  if (b.wants(0)) {
    ValueId dx = kNoValue;
    const auto accumulate = [&](ValueId term) { dx = dx.valid() ? b.sum(dx, term) : term; };
    if (g.valid()) accumulate(z.input_gradient(b, b.mul(g, scale)));
    if (g_inv.valid()) {
      const ValueId inv_cubed = b.mul(z.inv, b.mul(z.inv, z.inv));
      accumulate(b.neg(b.mul(b.mul(g_inv, inv_cubed), b.mul(z.centered, per_element))));
    }
    if (g_mean.valid()) {
      const ValueId spread =
          b.add(OpKind::Expand, {b.mul(g_mean, per_element)}, {{"shape", b.shape(x).dims()}});
      accumulate(spread);
    }
    b.set(0, dx);
  }
  // Scale and B reach only Y: without Y's gradient theirs is 0.
  const auto through_y = [&](ValueId v, ValueId like) {
    return g.valid() ? b.sum_to(v, b.shape(like)) : b.constant(Tensor(b.dtype(), b.shape(like)));
  };
  if (b.wants(1)) b.set(1, through_y(g.valid() ? b.mul(g, z.xhat) : kNoValue, scale));
  if (b.num_inputs() > 2 && b.input(2).valid() && b.wants(2)) {
    b.set(2, through_y(g, b.input(2)));
  }
}

ValueId reshape(VjpBuilder& b, ValueId v, std::vector<int64_t> shape) {
  if (b.shape(v) == Shape(shape)) return v;
  return b.add(OpKind::Reshape, {v}, {{"shape", std::move(shape)}});
}

// A per-channel [C] value shaped to broadcast along axis 1 of an [N, C, D...] value.
ValueId per_channel(VjpBuilder& b, ValueId v) {
  std::vector<int64_t> shape(static_cast<size_t>(b.shape(b.input(0)).rank() - 1), 1);
  shape[0] = b.shape(v)[0];
  return reshape(b, v, shape);
}

// An [N, C, D...] value summed over every axis but the channels: [C].
ValueId sum_per_channel(VjpBuilder& b, ValueId v) {
  std::vector<int64_t> axes = {0};
  for (int a = 2; a < b.shape(v).rank(); ++a) axes.push_back(a);
  return b.add(OpKind::ReduceSum, {v}, {{"axes", axes}, {"keepdims", int64_t{0}}});
}

// Inference BatchNormalization: y = (x - mean) * inv * scale + B per channel, inv = 1 /
// sqrt(var + epsilon), the statistics being inputs like any other (no rule for a training-mode
// BatchNormalization, which the op table does not have):
//   dx = g * scale * inv;  dscale = sum of g * (x - mean) * inv;  dB = sum of g;
//   dmean = -dB * scale * inv;  dvar = -sum of g * (x - mean) * scale * inv^3 / 2.
void batch_normalization_vjp(VjpBuilder& b) {
  const ValueId x = b.input(0), scale = b.input(1), mean = b.input(3), g = b.grad();
  const ValueId inv =
      b.add(OpKind::Reciprocal,
            {b.add(OpKind::Sqrt, {b.sum(b.input(4), b.scalar(b.attrs().get_float("epsilon")))})});
  const ValueId scaled_inv = b.mul(scale, inv);
  if (b.wants(0)) b.set(0, b.mul(g, per_channel(b, scaled_inv)));
  const bool wants_centered_sum = b.wants(1) || b.wants(4);
  const ValueId centered_sum =
      wants_centered_sum ? sum_per_channel(b, b.mul(g, b.sub(x, per_channel(b, mean)))) : kNoValue;
  if (b.wants(1)) b.set(1, b.mul(centered_sum, inv));
  const ValueId g_sum = b.wants(2) || b.wants(3) ? sum_per_channel(b, g) : kNoValue;
  if (b.wants(2)) b.set(2, g_sum);
  if (b.wants(3)) b.set(3, b.neg(b.mul(g_sum, scaled_inv)));
  if (b.wants(4)) {
    const ValueId cubed = b.mul(scaled_inv, b.mul(inv, inv));
    b.set(4, b.mul(b.mul(centered_sum, cubed), b.scalar(-0.5)));
  }
}

// Elements per [n, c] plane of [N, C, D...] (counted from the dims, so an empty batch keeps it).
int64_t spatial_size(const Shape& s) {
  int64_t size = 1;
  for (int d = 2; d < s.rank(); ++d) size *= s[d];
  return size;
}

// InstanceNormalization: each [n, c] plane normalized by its own statistics (LayerNormalization
// over the plane, recomputed from x), then * scale[c] + B[c]. Planes are viewed as [N, C, P] so
// that a plane of one element (no spatial dims) needs no special case: its xhat is 0.
//   dx = inv * (d - mean(d) - xhat * mean(d * xhat)) with d = g * scale[c];
//   dscale = sum of g * xhat and dB = sum of g, over n and the plane.
void instance_normalization_vjp(VjpBuilder& b) {
  const Shape& xs = b.shape(b.input(0));
  const std::vector<int64_t> view = {xs[0], xs[1], spatial_size(xs)};
  const ValueId x = reshape(b, b.input(0), view), g = reshape(b, b.grad(), view);
  const Normalized z = normalize(b, x, {2});
  const auto plane_sum = [&](ValueId v) {
    return b.add(OpKind::ReduceSum, {v},
                 {{"axes", std::vector<int64_t>{0, 2}}, {"keepdims", int64_t{0}}});
  };
  if (b.wants(0)) {
    const ValueId d = b.mul(g, reshape(b, b.input(1), {xs[1], 1}));
    b.set(0, reshape(b, z.input_gradient(b, d), xs.dims()));
  }
  if (b.wants(1)) b.set(1, plane_sum(b.mul(g, z.xhat)));
  if (b.wants(2)) b.set(2, plane_sum(g));
}

// MeanVarianceNormalization: y = c / D over `axes`, c = x - mean(x), D = sigma + epsilon,
// sigma = sqrt(mean(c^2)) (recomputed from x). With the means over the same axes:
//   dx = (g - mean(g)) / D - c * mean(g * c) / (D^2 * sigma)
// (NaN where sigma = 0: a constant group has no gradient through its standard deviation).
void mean_variance_normalization_vjp(VjpBuilder& b) {
  const ValueId x = b.input(0), g = b.grad();
  const std::vector<int64_t> axes = b.attrs().get_ints("axes");
  if (axes.empty()) {
    // Groups of one element: the output is 0 / epsilon whatever x is, so no gradient flows
    // (g * 0 keeps a NaN or infinite g visible).
    b.set(0, b.mul(g, b.scalar(0.0)));
    return;
  }
  const auto mean = [&](ValueId v) {
    return b.add(OpKind::ReduceMean, {v}, {{"axes", axes}, {"keepdims", int64_t{1}}});
  };
  const ValueId centered = b.sub(x, mean(x));
  const ValueId sigma = b.add(OpKind::Sqrt, {mean(b.mul(centered, centered))});
  const ValueId d = b.sum(sigma, b.scalar(b.attrs().get_float("epsilon")));
  const ValueId direct = b.div(b.sub(g, mean(g)), d);
  const ValueId through_sigma =
      b.div(b.mul(centered, mean(b.mul(g, centered))), b.mul(b.mul(d, d), sigma));
  b.set(0, b.sub(direct, through_sigma));
}

// LRN along the channels of [N, C, D...]: the sum, at each channel c, of v over channels
// [c - before, c - before + size), those that exist. One Conv over x viewed as [N, 1, C, P]
// with a [size, 1] kernel of ones, padded by `before` in front and size - 1 - before behind.
ValueId channel_window_sum(VjpBuilder& b, ValueId v, int64_t size, int64_t before) {
  const Shape& s = b.shape(v);
  const std::vector<int64_t> view = {s[0], 1, s[1], spatial_size(s)};
  Tensor ones(b.dtype(), Shape{1, 1, size, 1});
  for (int64_t i = 0; i < size; ++i) ones.set_double(i, 1.0);
  const ValueId sums = b.add(OpKind::Conv, {reshape(b, v, view), b.constant(std::move(ones))},
                             {{"pads", std::vector<int64_t>{before, 0, size - 1 - before, 0}}});
  return reshape(b, sums, s.dims());
}

// LRN: y_c = x_c * den_c^-beta, den_c = bias + alpha / size * (sum of x^2 over c's window
// [c - (size-1)/2, c + size/2]). Channel j is in the windows of c in [j - size/2,
// j + (size-1)/2], so
//   dx_j = g_j den_j^-beta - 2 alpha beta / size * x_j * sum over those c of g_c x_c den_c^-beta-1.
void lrn_vjp(VjpBuilder& b) {
  const AttrReader at = b.attrs();
  const double alpha = at.get_float("alpha"), beta = at.get_float("beta");
  const int64_t size = at.get_int("size");
  const ValueId x = b.input(0), g = b.grad();
  const ValueId squares = channel_window_sum(b, b.mul(x, x), size, (size - 1) / 2);
  const ValueId den = b.sum(b.scalar(at.get_float("bias")),
                            b.mul(squares, b.scalar(alpha / static_cast<double>(size))));
  const ValueId den_pow = b.add(OpKind::Pow, {den, b.scalar(-beta)});
  const ValueId weighted = b.div(b.mul(g, b.mul(x, den_pow)), den);
  const ValueId spread = channel_window_sum(b, weighted, size, size / 2);
  const ValueId factor = b.scalar(-2.0 * alpha * beta / static_cast<double>(size));
  b.set(0, b.sum(b.mul(g, den_pow), b.mul(b.mul(x, spread), factor)));
}

}  // namespace

void register_normalization_vjps(VjpTable& t) {
  t[static_cast<size_t>(op_index(OpKind::Softmax))] = {&softmax_vjp, 0b1};
  t[static_cast<size_t>(op_index(OpKind::LogSoftmax))] = {&log_softmax_vjp, 0b1};
  t[static_cast<size_t>(op_index(OpKind::LayerNormalization))] = {&layer_normalization_vjp, 0b111};
  t[static_cast<size_t>(op_index(OpKind::BatchNormalization))] = {&batch_normalization_vjp,
                                                                  0b11111};
  t[static_cast<size_t>(op_index(OpKind::InstanceNormalization))] = {&instance_normalization_vjp,
                                                                     0b111};
  t[static_cast<size_t>(op_index(OpKind::MeanVarianceNormalization))] = {
      &mean_variance_normalization_vjp, 0b1};
  t[static_cast<size_t>(op_index(OpKind::LRN))] = {&lrn_vjp, 0b1};
}

}  // namespace volta::autograd
