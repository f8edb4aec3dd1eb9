// VJP rules of the reduction family: the output's gradient is broadcast back over the reduced
// axes (kept as size 1 first when the node dropped them); CumSum's is a running sum the other way.

#include <vector>

#include "vjp.h"

namespace volta::autograd {
namespace {

// The reduced axes of the node, normalized; empty means every axis (unless
// noop_with_empty_axes, when the node is an identity).
std::vector<int64_t> reduced_axes(const VjpBuilder& b) {
  const int rank = b.shape(b.input(0)).rank();
  std::vector<int64_t> axes = b.attrs().get_ints("axes");
  if (axes.empty()) {
    if (b.attrs().get_int("noop_with_empty_axes") != 0) return {};
    for (int a = 0; a < rank; ++a) axes.push_back(a);
  }
  for (int64_t& a : axes) a = a < 0 ? a + rank : a;
  return axes;
}

// `v` (of the output's shape: g, y) broadcast to the input's shape.
ValueId spread(VjpBuilder& b, ValueId v) {
  const Shape& in = b.shape(b.input(0));
  std::vector<int64_t> kept = in.dims();
  for (int64_t a : reduced_axes(b)) kept[static_cast<size_t>(a)] = 1;
  ValueId g = v;
  if (b.shape(g) != Shape(kept)) g = b.add(OpKind::Reshape, {g}, {{"shape", kept}});
  if (b.shape(g) == in) return g;
  return b.add(OpKind::Expand, {g}, {{"shape", in.dims()}});
}

ValueId spread(VjpBuilder& b) { return spread(b, b.grad()); }

void reduce_sum_vjp(VjpBuilder& b) { b.set(0, spread(b)); }

void reduce_mean_vjp(VjpBuilder& b) {
  const Shape& in = b.shape(b.input(0));
  int64_t count = 1;
  for (int64_t a : reduced_axes(b)) count *= in[static_cast<int>(a)];
  b.set(0, b.mul(spread(b), b.scalar(1.0 / static_cast<double>(count))));
}

// y = sum x^2: dx = 2 x g.
void reduce_sum_square_vjp(VjpBuilder& b) {
  b.set(0, b.mul(spread(b), b.mul(b.input(0), b.scalar(2.0))));
}

// y = sum |x|: dx = g * sign(x) (0 at 0).
void reduce_l1_vjp(VjpBuilder& b) { b.set(0, b.mul(spread(b), b.add(OpKind::Sign, {b.input(0)}))); }

// y = sqrt(sum x^2): dx = g * x / y (NaN where y = 0, where the norm has no gradient).
void reduce_l2_vjp(VjpBuilder& b) {
  b.set(0, b.mul(spread(b), b.div(b.input(0), spread(b, b.output()))));
}

// y = log sum exp x: dx = g * exp(x - y).
void reduce_log_sum_exp_vjp(VjpBuilder& b) {
  const ValueId p = b.add(OpKind::Exp, {b.sub(b.input(0), spread(b, b.output()))});
  b.set(0, b.mul(spread(b), p));
}

// ReduceMax / ReduceMin: the gradient is shared equally by the elements equal to the result
// (one element unless there are ties).
void reduce_extremum_vjp(VjpBuilder& b) {
  const ValueId hit = b.add(OpKind::Equal, {b.input(0), spread(b, b.output())});
  const ValueId ones = b.add(OpKind::Cast, {hit}, {{"to", std::string(dtype_name(b.dtype()))}});
  Attributes sum_attrs = {{"axes", reduced_axes(b)}, {"keepdims", int64_t{1}}};
  const ValueId count = b.add(OpKind::ReduceSum, {ones}, std::move(sum_attrs));
  b.set(0, b.div(b.mul(spread(b), ones), count));
}

// ReduceProd: dx[j] = g * the product of the other reduced elements, in O(R) per row and
// without dividing by a zero. With p = the product of the row's nonzero elements and z its
// count of zeros: no zero, dx[j] = g * p / x[j]; one zero, the zero element takes g * p and
// the others 0; more, every element 0.
void reduce_prod_vjp(VjpBuilder& b) {
  const ValueId x = b.input(0);
  const Attributes keep = {{"axes", reduced_axes(b)}, {"keepdims", int64_t{1}}};
  const ValueId is_zero = b.add(OpKind::Equal, {x, b.scalar(0.0)});
  const ValueId nonzero = b.add(OpKind::Where, {is_zero, b.scalar(1.0), x});
  const ValueId product = b.add(OpKind::ReduceProd, {nonzero}, keep);
  const ValueId zeros =
      b.add(OpKind::ReduceSum,
            {b.add(OpKind::Cast, {is_zero}, {{"to", std::string(dtype_name(b.dtype()))}})}, keep);
  const ValueId none = b.add(OpKind::Equal, {zeros, b.scalar(0.0)});
  const ValueId only_this =
      b.add(OpKind::And, {is_zero, b.add(OpKind::Equal, {zeros, b.scalar(1.0)})});
  const ValueId others = b.add(
      OpKind::Where,
      {none, b.div(product, nonzero), b.add(OpKind::Where, {only_this, product, b.scalar(0.0)})});
  b.set(0, b.mul(spread(b), others));
}

// CumSum: y[i] = sum of x[j] for j <= i (j < i exclusive; j >= i, j > i reversed), so x[j]
// reaches every y[i] on the other side: dx is the running sum of g in the opposite direction,
// with the same exclusivity.
void cum_sum_vjp(VjpBuilder& b) {
  const AttrReader at = b.attrs();
  b.set(0, b.add(OpKind::CumSum, {b.grad()},
                 {{"axis", at.get_int("axis")},
                  {"exclusive", at.get_int("exclusive")},
                  {"reverse", int64_t{at.get_int("reverse") != 0 ? 0 : 1}}}));
}

// noop_with_empty_axes with no axes: the node is the identity (it does not even apply |x| or
// x^2, like the kernels), and so is its gradient; otherwise `Rule`.
template <void (*Rule)(VjpBuilder&)>
void unless_identity(VjpBuilder& b) {
  if (b.attrs().get_ints("axes").empty() && b.attrs().get_int("noop_with_empty_axes") != 0) {
    b.set(0, b.grad());
    return;
  }
  Rule(b);
}

}  // namespace

void register_reduction_vjps(VjpTable& t) {
  const auto add = [&t](OpKind op, VjpRule rule) {
    t[static_cast<size_t>(op_index(op))] = {rule, 0b1};
  };
  add(OpKind::ReduceSum, &unless_identity<&reduce_sum_vjp>);
  add(OpKind::ReduceMean, &unless_identity<&reduce_mean_vjp>);
  add(OpKind::ReduceSumSquare, &unless_identity<&reduce_sum_square_vjp>);
  add(OpKind::ReduceL1, &unless_identity<&reduce_l1_vjp>);
  add(OpKind::ReduceL2, &unless_identity<&reduce_l2_vjp>);
  add(OpKind::ReduceLogSumExp, &unless_identity<&reduce_log_sum_exp_vjp>);
  add(OpKind::ReduceMax, &unless_identity<&reduce_extremum_vjp>);
  add(OpKind::ReduceMin, &unless_identity<&reduce_extremum_vjp>);
  add(OpKind::ReduceProd, &unless_identity<&reduce_prod_vjp>);
  add(OpKind::CumSum, &cum_sum_vjp);
}

}  // namespace volta::autograd
