// VJP rules of the elementwise family. Binary ops broadcast, so each gradient is summed back to
// its input's shape (sum_to). Non-smooth points take the subgradient written beside each rule.

#include "vjp.h"

namespace volta::autograd {
namespace {

void add_vjp(VjpBuilder& b) {
  for (int i = 0; i < 2; ++i) {
    if (b.wants(i)) b.set(i, b.sum_to(b.grad(), b.shape(b.input(i))));
  }
}

void sub_vjp(VjpBuilder& b) {
  if (b.wants(0)) b.set(0, b.sum_to(b.grad(), b.shape(b.input(0))));
  if (b.wants(1)) b.set(1, b.sum_to(b.neg(b.grad()), b.shape(b.input(1))));
}

void mul_vjp(VjpBuilder& b) {
  if (b.wants(0)) b.set(0, b.sum_to(b.mul(b.grad(), b.input(1)), b.shape(b.input(0))));
  if (b.wants(1)) b.set(1, b.sum_to(b.mul(b.grad(), b.input(0)), b.shape(b.input(1))));
}

// y = a / b: da = g / b, db = -g * y / b.
void div_vjp(VjpBuilder& b) {
  const ValueId g_over_b = b.div(b.grad(), b.input(1));
  if (b.wants(0)) b.set(0, b.sum_to(g_over_b, b.shape(b.input(0))));
  if (b.wants(1)) {
    b.set(1, b.sum_to(b.neg(b.mul(g_over_b, b.output())), b.shape(b.input(1))));
  }
}

// y = a ^ p: da = g * p * a^(p - 1), dp = g * y * log(a) (NaN for a < 0, as the forward's
// derivative in p is undefined there).
void pow_vjp(VjpBuilder& b) {
  const ValueId a = b.input(0), p = b.input(1);
  if (b.wants(0)) {
    const ValueId a_pow = b.add(OpKind::Pow, {a, b.sub(p, b.scalar(1.0))});
    b.set(0, b.sum_to(b.mul(b.grad(), b.mul(p, a_pow)), b.shape(a)));
  }
  if (b.wants(1)) {
    const ValueId dp = b.mul(b.grad(), b.mul(b.output(), b.add(OpKind::Log, {a})));
    b.set(1, b.sum_to(dp, b.shape(p)));
  }
}

void neg_vjp(VjpBuilder& b) { b.set(0, b.neg(b.grad())); }

// Abs' subgradient at 0 is 0 (Sign(0) = 0).
void abs_vjp(VjpBuilder& b) { b.set(0, b.mul(b.grad(), b.add(OpKind::Sign, {b.input(0)}))); }

// y = sqrt(x): dx = g / (2 y) = 0.5 * g / y.
void sqrt_vjp(VjpBuilder& b) { b.set(0, b.div(b.mul(b.grad(), b.scalar(0.5)), b.output())); }

// y = 1 / x: dx = -g * y * y.
void reciprocal_vjp(VjpBuilder& b) {
  b.set(0, b.neg(b.mul(b.grad(), b.mul(b.output(), b.output()))));
}

void exp_vjp(VjpBuilder& b) { b.set(0, b.mul(b.grad(), b.output())); }

void log_vjp(VjpBuilder& b) { b.set(0, b.div(b.grad(), b.input(0))); }

void sin_vjp(VjpBuilder& b) { b.set(0, b.mul(b.grad(), b.add(OpKind::Cos, {b.input(0)}))); }

void cos_vjp(VjpBuilder& b) { b.set(0, b.neg(b.mul(b.grad(), b.add(OpKind::Sin, {b.input(0)})))); }

// Where(c, x, y): x gets g where c holds, y where it does not.
void where_vjp(VjpBuilder& b) {
  const ValueId c = b.input(0);
  if (b.wants(1)) b.set(1, b.sum_to(b.where(c, b.grad()), b.shape(b.input(1))));
  if (b.wants(2)) {
    const ValueId not_c = b.add(OpKind::Not, {c});
    b.set(2, b.sum_to(b.where(not_c, b.grad()), b.shape(b.input(2))));
  }
}

// Clip(x) to [min, max]: g passes where min <= x <= max (the bounds included: the identity
// side's subgradient), 0 where x was clipped.
void clip_vjp(VjpBuilder& b) {
  const ValueId x = b.input(0);
  const ValueId above_min =
      b.add(OpKind::GreaterOrEqual, {x, b.scalar(b.attrs().get_float("min"))});
  const ValueId below_max = b.add(OpKind::LessOrEqual, {x, b.scalar(b.attrs().get_float("max"))});
  b.set(0, b.where(b.add(OpKind::And, {above_min, below_max}), b.grad()));
}

ValueId one_minus_square(VjpBuilder& b, ValueId v) { return b.sub(b.scalar(1.0), b.mul(v, v)); }

// y = tan(x): dx = g * (1 + y^2).
void tan_vjp(VjpBuilder& b) {
  b.set(0, b.mul(b.grad(), b.sum(b.scalar(1.0), b.mul(b.output(), b.output()))));
}

// asin: g / sqrt(1 - x^2); acos: its negation; atan: g / (1 + x^2).
void asin_vjp(VjpBuilder& b) {
  b.set(0, b.div(b.grad(), b.add(OpKind::Sqrt, {one_minus_square(b, b.input(0))})));
}
void acos_vjp(VjpBuilder& b) {
  b.set(0, b.neg(b.div(b.grad(), b.add(OpKind::Sqrt, {one_minus_square(b, b.input(0))}))));
}
void atan_vjp(VjpBuilder& b) {
  const ValueId x = b.input(0);
  b.set(0, b.div(b.grad(), b.sum(b.scalar(1.0), b.mul(x, x))));
}

void sinh_vjp(VjpBuilder& b) { b.set(0, b.mul(b.grad(), b.add(OpKind::Cosh, {b.input(0)}))); }
void cosh_vjp(VjpBuilder& b) { b.set(0, b.mul(b.grad(), b.add(OpKind::Sinh, {b.input(0)}))); }

// asinh: g / sqrt(x^2 + 1); acosh: g / sqrt(x^2 - 1); atanh: g / (1 - x^2).
void asinh_vjp(VjpBuilder& b) {
  const ValueId x = b.input(0);
  b.set(0, b.div(b.grad(), b.add(OpKind::Sqrt, {b.sum(b.mul(x, x), b.scalar(1.0))})));
}
void acosh_vjp(VjpBuilder& b) {
  const ValueId x = b.input(0);
  b.set(0, b.div(b.grad(), b.add(OpKind::Sqrt, {b.sub(b.mul(x, x), b.scalar(1.0))})));
}
void atanh_vjp(VjpBuilder& b) { b.set(0, b.div(b.grad(), one_minus_square(b, b.input(0)))); }

// Min / Max of broadcasting inputs: the gradient goes to the input the forward picked, the
// first one on ties (the forward's rule); a NaN result sends it nowhere.
void extremum_vjp(VjpBuilder& b) {
  ValueId taken = kNoValue;
  for (int i = 0; i < b.num_inputs(); ++i) {
    const ValueId equal = b.add(OpKind::Equal, {b.input(i), b.output()});
    const ValueId mine =
        taken.valid() ? b.add(OpKind::And, {equal, b.add(OpKind::Not, {taken})}) : equal;
    if (b.wants(i)) b.set(i, b.sum_to(b.where(mine, b.grad()), b.shape(b.input(i))));
    taken = taken.valid() ? b.add(OpKind::Or, {taken, equal}) : equal;
  }
}

// Cast between float types: the gradient cast back.
void cast_vjp(VjpBuilder& b) {
  b.set(0, b.add(OpKind::Cast, {b.grad()},
                 {{"to", std::string(dtype_name(b.value(b.input(0)).dtype))}}));
}

// Mod: A - B * floor(A / B) (fmod = 0) or A - B * trunc(A / B) (fmod = 1) has slope 1 in A
// between the jumps where A / B crosses an integer; at a jump the gradient is taken as 1 too
// (the side the forward's value is continuous with). B gets none (not differentiable, as ONNX).
void mod_vjp(VjpBuilder& b) { b.set(0, b.sum_to(b.grad(), b.shape(b.input(0)))); }

}  // namespace

void register_elementwise_vjps(VjpTable& t) {
  const auto add = [&](OpKind op, VjpRule rule, uint32_t inputs) {
    t[static_cast<size_t>(op_index(op))] = {rule, inputs};
  };
  add(OpKind::Add, &add_vjp, 0b11);
  add(OpKind::Sub, &sub_vjp, 0b11);
  add(OpKind::Mul, &mul_vjp, 0b11);
  add(OpKind::Div, &div_vjp, 0b11);
  add(OpKind::Pow, &pow_vjp, 0b11);
  add(OpKind::Neg, &neg_vjp, 0b1);
  add(OpKind::Abs, &abs_vjp, 0b1);
  add(OpKind::Sqrt, &sqrt_vjp, 0b1);
  add(OpKind::Reciprocal, &reciprocal_vjp, 0b1);
  add(OpKind::Exp, &exp_vjp, 0b1);
  add(OpKind::Log, &log_vjp, 0b1);
  add(OpKind::Sin, &sin_vjp, 0b1);
  add(OpKind::Cos, &cos_vjp, 0b1);
  add(OpKind::Where, &where_vjp, 0b110);
  add(OpKind::Clip, &clip_vjp, 0b1);
  add(OpKind::Tan, &tan_vjp, 0b1);
  add(OpKind::Asin, &asin_vjp, 0b1);
  add(OpKind::Acos, &acos_vjp, 0b1);
  add(OpKind::Atan, &atan_vjp, 0b1);
  add(OpKind::Sinh, &sinh_vjp, 0b1);
  add(OpKind::Cosh, &cosh_vjp, 0b1);
  add(OpKind::Asinh, &asinh_vjp, 0b1);
  add(OpKind::Acosh, &acosh_vjp, 0b1);
  add(OpKind::Atanh, &atanh_vjp, 0b1);
  add(OpKind::Min, &extremum_vjp, kAllInputs);
  add(OpKind::Max, &extremum_vjp, kAllInputs);
  add(OpKind::Cast, &cast_vjp, 0b1);
  add(OpKind::Mod, &mod_vjp, 0b1);
}

}  // namespace volta::autograd
