// VJP rules of the normalization family: Softmax and LogSoftmax along their axis,
// LayerNormalization over its trailing axes.

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
  const auto mean = [&](ValueId v) {
    return b.add(OpKind::ReduceMean, {v}, {{"axes", axes}, {"keepdims", int64_t{1}}});
  };
  const ValueId centered = b.sub(x, mean(x));
  const ValueId variance = mean(b.mul(centered, centered));
  const ValueId inv =
      b.add(OpKind::Reciprocal,
            {b.add(OpKind::Sqrt, {b.sum(variance, b.scalar(b.attrs().get_float("epsilon")))})});
  const ValueId xhat = b.mul(centered, inv);
  if (b.wants(0)) {
    const ValueId d = b.mul(g, scale);
    const ValueId inner = b.sub(b.sub(d, mean(d)), b.mul(xhat, mean(b.mul(d, xhat))));
    b.set(0, b.mul(inv, inner));
  }
  if (b.wants(1)) b.set(1, b.sum_to(b.mul(g, xhat), b.shape(scale)));
  if (b.num_inputs() > 2 && b.input(2).valid() && b.wants(2)) {
    b.set(2, b.sum_to(g, b.shape(b.input(2))));
  }
}

}  // namespace

void register_normalization_vjps(VjpTable& t) {
  t[static_cast<size_t>(op_index(OpKind::Softmax))] = {&softmax_vjp, 0b1};
  t[static_cast<size_t>(op_index(OpKind::LogSoftmax))] = {&log_softmax_vjp, 0b1};
  t[static_cast<size_t>(op_index(OpKind::LayerNormalization))] = {&layer_normalization_vjp, 0b111};
}

}  // namespace volta::autograd
