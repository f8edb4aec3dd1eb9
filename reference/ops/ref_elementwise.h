#pragma once
// Internal to the reference engine: the element maps its elementwise, activation and logical
// kernels share (ops/elementwise.cpp, ops/activation.cpp, ops/logical.cpp). Operands are
// broadcast to the output shape (materialized) first, so each kernel is one flat loop over
// equal-shaped tensors: floats in double, rounded once when stored; integers in int64, wrapped.

#include <string_view>
#include <vector>

#include "ref_util.h"

namespace volta::reference {

template <class Fn>
Tensor map_float(const Tensor& x, Fn fn) {
  Tensor y(x.dtype(), x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) y.set_double(i, fn(x.get_double(i)));
  return y;
}

template <class Fn>
Tensor map_int(const Tensor& x, Fn fn) {
  Tensor y(x.dtype(), x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) y.set_int(i, fn(x.get_int(i)));
  return y;
}

template <class FloatFn, class IntFn>
Tensor map_numeric(const Tensor& x, FloatFn on_float, IntFn on_int) {
  return is_floating(x.dtype()) ? map_float(x, on_float) : map_int(x, on_int);
}

// y = fn(a, b) with a and b broadcast to out.shape; floats read as double, the rest as int64.
template <class FloatFn, class IntFn>
Tensor zip_numeric(const Tensor& a, const Tensor& b, const TypeInfo& out, FloatFn on_float,
                   IntFn on_int) {
  const Tensor wide_a = broadcast_to(a, out.shape);
  const Tensor wide_b = broadcast_to(b, out.shape);
  const bool floating = is_floating(a.dtype());
  Tensor y(out.dtype, out.shape);
  for (int64_t i = 0; i < y.numel(); ++i) {
    if (floating) {
      y.set_double(i, on_float(wide_a.get_double(i), wide_b.get_double(i)));
    } else {
      y.set_int(i, on_int(wide_a.get_int(i), wide_b.get_int(i)));
    }
  }
  return y;
}

template <class FloatFn>
Tensor zip_float(const Tensor& a, const Tensor& b, const TypeInfo& out, FloatFn on_float) {
  return zip_numeric(a, b, out, on_float, [](int64_t, int64_t) -> int64_t {
    kernel_fail("this op is defined for floating-point inputs only (f32, f64)");
  });
}

// y[i] = fn(x[i]) in double.
template <class Fn>
std::vector<Tensor> map_double(const Tensor& x, Fn fn) {
  Tensor y(x.dtype(), x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) y.set_double(i, fn(x.get_double(i)));
  return {y};
}

// Both operands broadcast to the output's shape.
struct Operands {
  Tensor a, b;
};
inline Operands broadcast_pair(RefInputs in, const TypeInfo& out) {
  return {broadcast_to(*in[0], out.shape), broadcast_to(*in[1], out.shape)};
}

inline double float_attr(const Node& node, std::string_view name) {
  return AttrReader(node).get_float(name);
}

}  // namespace volta::reference
