// VJP rules of the pooling family. Windowed pools send each output's gradient back over its
// window with a ConvTranspose of ones (window_adjoint_sum, vjp_window.h), MaxPool to the
// element its Indices name with an in-order ScatterElements add; global pools broadcast it back
// over the plane. Every sum has a fixed order, so gradients are thread-count invariant.

#include <string>
#include <vector>

#include "vjp_window.h"

namespace volta::autograd {
namespace {

WindowAttrs pool_window(const VjpBuilder& b) {
  return read_window(b.attrs(), b.attrs().get_ints("kernel_shape"));
}

// [N, C, S...] viewed as [N * C, S0 * S1 * ...]: one row per plane.
std::vector<int64_t> plane_rows(const Shape& s) {
  return {s[0] * s[1], s[0] * s[1] == 0 ? 0 : s.numel() / (s[0] * s[1])};
}

// MaxPool: each output's gradient goes to the one input element its Indices output names: the
// first maximum in window order (ties: that first one; a NaN: the first NaN). An element that
// is the maximum of several overlapping windows receives their sum. The forward's Indices are
// used when it has them in row-major numbering; else a MaxPool with Indices is recomputed. The
// flat indices become positions within their (n, c) plane, and ScatterElements adds each
// plane's updates into zeros in index order (one line per plane: no atomics).
void max_pool_vjp(VjpBuilder& b) {
  const Shape& xs = b.shape(b.input(0));
  ValueId indices;
  if (b.node().outputs.size() > 1 && b.attrs().get_int("storage_order") == 0) {
    indices = b.output(1);
  } else {
    Attributes attrs = b.node().attrs;
    attrs["storage_order"] = int64_t{0};
    indices = b.add_outputs(OpKind::MaxPool, {b.input(0)}, std::move(attrs), 2)[1];
  }
  const std::vector<int64_t> rows = plane_rows(xs);
  Tensor plane_size(DType::I64, Shape{});
  plane_size.set_int(0, std::max<int64_t>(rows[1], 1));
  const ValueId within = b.add(OpKind::Mod, {indices, b.constant(std::move(plane_size))});
  const std::vector<int64_t> out_rows = plane_rows(b.shape(b.grad()));
  const ValueId index_rows = b.add(OpKind::Reshape, {within}, {{"shape", out_rows}});
  const ValueId grad_rows = b.add(OpKind::Reshape, {b.grad()}, {{"shape", out_rows}});
  const ValueId zeros = b.add(OpKind::Expand, {b.scalar(0.0)}, {{"shape", rows}});
  const ValueId scattered = b.add(OpKind::ScatterElements, {zeros, index_rows, grad_rows},
                                  {{"axis", int64_t{1}}, {"reduction", std::string("add")}});
  b.set(0, b.add(OpKind::Reshape, {scattered}, {{"shape", xs.dims()}}));
}

// The number of taps of output o's window along one axis that the average divides by: those
// inside the input, or with count_include_pad those inside the padded input (a ceil_mode
// window's taps past the end padding never count).
int64_t counted_taps(const WindowAttrs& w, int a, int64_t o, int64_t size, bool include_pad) {
  const int64_t lo = include_pad ? -w.pad_begin(a) : 0;
  const int64_t hi = include_pad ? size + w.pad_end(a) : size;
  int64_t count = 0;
  for (int64_t k = 0; k < w.kernel[static_cast<size_t>(a)]; ++k) {
    const int64_t pos = o * w.stride(a) - w.pad_begin(a) + k * w.dilation(a);
    count += pos >= lo && pos < hi ? 1 : 0;
  }
  return count;
}

// AveragePool: y[o] = sum over the window / count[o], so dx = window_adjoint_sum(g / count).
// count depends on the shape alone: a constant over the output's spatial dims.
void average_pool_vjp(VjpBuilder& b) {
  const WindowAttrs w = pool_window(b);
  const std::vector<int64_t> in = spatial_dims(b.shape(b.input(0)));
  const std::vector<int64_t> out = spatial_dims(b.shape(b.grad()));
  const bool include_pad = b.attrs().get_int("count_include_pad") != 0;
  Tensor count(b.dtype(), Shape(out));
  const std::vector<int64_t> strides = Shape(out).strides();
  for (int64_t flat = 0; flat < count.numel(); ++flat) {
    int64_t n = 1;
    for (int a = 0; a < w.spatial(); ++a) {
      const auto i = static_cast<size_t>(a);
      const int64_t o = flat / strides[i] % out[i];
      n *= counted_taps(w, a, o, in[i], include_pad);
    }
    count.set_double(flat, static_cast<double>(n));
  }
  const ValueId scaled = b.div(b.grad(), b.constant(std::move(count)));
  b.set(0, window_adjoint_sum(b, scaled, w, in));
}

// d/dx of (sum |x|^p)^(1/p) with the sum's g already divided by y^(p-1): sign(x) * |x|^(p-1).
// p = 1 and p = 2 are exact (sign(x), x); at x = 0 the factor is 0.
ValueId lp_local_factor(VjpBuilder& b, int64_t p) {
  const ValueId x = b.input(0);
  if (p == 1) return b.add(OpKind::Sign, {x});
  if (p == 2) return x;
  const ValueId magnitude =
      b.add(OpKind::Pow, {b.add(OpKind::Abs, {x}), b.scalar(static_cast<double>(p - 1))});
  return b.mul(b.add(OpKind::Sign, {x}), magnitude);
}

// g / y^(p-1): NaN or infinite where y = 0 (as ReduceL2's gradient: the norm has none there).
ValueId lp_scaled_grad(VjpBuilder& b, int64_t p) {
  if (p == 1) return b.grad();
  const ValueId y = b.output();
  const ValueId power = p == 2 ? y : b.add(OpKind::Pow, {y, b.scalar(static_cast<double>(p - 1))});
  return b.div(b.grad(), power);
}

// LpPool: y[o] = (sum over the window of |x|^p)^(1/p); dx = sign(x) |x|^(p-1) *
// window_adjoint_sum(g / y^(p-1)). Padding holds no elements, as in the forward.
void lp_pool_vjp(VjpBuilder& b) {
  const int64_t p = b.attrs().get_int("p");
  const ValueId spread = window_adjoint_sum(b, lp_scaled_grad(b, p), pool_window(b),
                                            spatial_dims(b.shape(b.input(0))));
  b.set(0, b.mul(spread, lp_local_factor(b, p)));
}

ValueId expand_to_input(VjpBuilder& b, ValueId v) {
  return b.add(OpKind::Expand, {v}, {{"shape", b.shape(b.input(0)).dims()}});
}

// GlobalMaxPool: as ReduceMax over the spatial axes, the gradient is shared equally by the
// elements equal to the maximum (one element unless there are ties; a NaN plane gives NaN).
void global_max_pool_vjp(VjpBuilder& b) {
  const ValueId hit = b.add(OpKind::Equal, {b.input(0), expand_to_input(b, b.output())});
  const ValueId ones = b.add(OpKind::Cast, {hit}, {{"to", std::string(dtype_name(b.dtype()))}});
  std::vector<int64_t> axes;
  for (int a = 2; a < b.shape(b.input(0)).rank(); ++a) axes.push_back(a);
  const ValueId count =
      b.add(OpKind::ReduceSum, {ones}, {{"axes", axes}, {"keepdims", int64_t{1}}});
  b.set(0, b.mul(expand_to_input(b, b.div(b.grad(), count)), ones));
}

// GlobalLpPool: dx = sign(x) |x|^(p-1) * g / y^(p-1), g and y broadcast over the plane.
void global_lp_pool_vjp(VjpBuilder& b) {
  const int64_t p = b.attrs().get_int("p");
  b.set(0, b.mul(expand_to_input(b, lp_scaled_grad(b, p)), lp_local_factor(b, p)));
}

void global_average_pool_vjp(VjpBuilder& b) {
  const Shape& in = b.shape(b.input(0));
  int64_t plane = 1;
  for (int a = 2; a < in.rank(); ++a) plane *= in[a];
  b.set(0, b.mul(expand_to_input(b, b.grad()), b.scalar(1.0 / static_cast<double>(plane))));
}

}  // namespace

void register_pooling_vjps(VjpTable& t) {
  t[static_cast<size_t>(op_index(OpKind::MaxPool))] = {&max_pool_vjp, 0b1};
  t[static_cast<size_t>(op_index(OpKind::AveragePool))] = {&average_pool_vjp, 0b1};
  t[static_cast<size_t>(op_index(OpKind::LpPool))] = {&lp_pool_vjp, 0b1};
  t[static_cast<size_t>(op_index(OpKind::GlobalAveragePool))] = {&global_average_pool_vjp, 0b1};
  t[static_cast<size_t>(op_index(OpKind::GlobalMaxPool))] = {&global_max_pool_vjp, 0b1};
  t[static_cast<size_t>(op_index(OpKind::GlobalLpPool))] = {&global_lp_pool_vjp, 0b1};
}

}  // namespace volta::autograd
