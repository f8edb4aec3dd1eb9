// VJP rules of the reduction family: the output's gradient is broadcast back over the reduced
// axes (kept as size 1 first when the node dropped them); CumSum's is a running sum the other way.

#include <algorithm>
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

// ReduceProd: dx[j] = g * the product of the other reduced elements, formed directly (never
// y / x[j], which a zero would make NaN): the reduced axes are flattened to a row of R elements
// and each row repeated R times with element j of repeat j replaced by 1, then each repeat's
// product taken. O(R^2) per row.
void reduce_prod_vjp(VjpBuilder& b) {
  const Shape in = b.shape(b.input(0));
  const std::vector<int64_t> axes = reduced_axes(b);
  if (axes.empty()) {
    b.set(0, b.add(OpKind::Identity, {b.grad()}));
    return;
  }
  std::vector<int64_t> perm, moved;
  int64_t rows = 1, row = 1;
  for (int a = 0; a < in.rank(); ++a) {
    if (std::find(axes.begin(), axes.end(), a) == axes.end()) {
      perm.push_back(a);
      rows *= in[a];
    }
  }
  for (int64_t a : axes) {
    perm.push_back(a);
    row *= in[static_cast<int>(a)];
  }
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    moved.push_back(in[static_cast<int>(perm[i])]);
    inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  }
  const ValueId transposed = b.add(OpKind::Transpose, {b.input(0)}, {{"perm", perm}});
  const ValueId flat =
      b.add(OpKind::Reshape, {transposed}, {{"shape", std::vector<int64_t>{rows, 1, row}}});
  Tensor diagonal(DType::Bool, Shape{row, row});
  for (int64_t i = 0; i < row; ++i) diagonal.set_int(i * row + i, 1);
  const ValueId others =
      b.add(OpKind::Where, {b.constant(std::move(diagonal)), b.scalar(1.0), flat});
  const ValueId products = b.add(OpKind::ReduceProd, {others},
                                 {{"axes", std::vector<int64_t>{2}}, {"keepdims", int64_t{0}}});
  const ValueId unflat = b.add(OpKind::Reshape, {products}, {{"shape", moved}});
  const ValueId back = b.add(OpKind::Transpose, {unflat}, {{"perm", inverse}});
  b.set(0, b.mul(spread(b), back));
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
