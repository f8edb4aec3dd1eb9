// Reference comparisons, boolean logic and the NaN/Inf classifiers: a bool per element
// (element maps: ref_elementwise.h).

#include <cmath>

#include "ref_elementwise.h"

namespace volta::reference {
namespace {

// Comparisons and Xor: a bool per broadcast pair. Comparisons with NaN are false (IEEE).
template <class Compare>
std::vector<Tensor> compare(RefInputs in, RefOutputTypes out, Compare compare_values) {
  const Operands x = broadcast_pair(in, out[0]);
  const int64_t flip = order_flip(x.a.dtype());
  Tensor y(DType::Bool, out[0].shape);
  for (int64_t i = 0; i < y.numel(); ++i) {
    const bool result = is_floating(x.a.dtype())
                            ? compare_values(x.a.get_double(i), x.b.get_double(i))
                            : compare_values(x.a.get_int(i) ^ flip, x.b.get_int(i) ^ flip);
    y.set_int(i, result ? 1 : 0);
  }
  return {y};
}

std::vector<Tensor> equal(const Node&, RefInputs in, RefOutputTypes out) {
  return compare(in, out, [](auto a, auto b) { return a == b; });
}

std::vector<Tensor> less(const Node&, RefInputs in, RefOutputTypes out) {
  return compare(in, out, [](auto a, auto b) { return a < b; });
}

std::vector<Tensor> greater(const Node&, RefInputs in, RefOutputTypes out) {
  return compare(in, out, [](auto a, auto b) { return a > b; });
}

std::vector<Tensor> logical_not(const Node&, RefInputs in, RefOutputTypes) {
  return {map_int(*in[0], [](int64_t x) { return x == 0 ? int64_t{1} : int64_t{0}; })};
}

std::vector<Tensor> logical_and(const Node&, RefInputs in, RefOutputTypes out) {
  return compare(in, out, [](auto a, auto b) { return a != 0 && b != 0; });
}

std::vector<Tensor> logical_or(const Node&, RefInputs in, RefOutputTypes out) {
  return compare(in, out, [](auto a, auto b) { return a != 0 || b != 0; });
}

std::vector<Tensor> logical_xor(const Node&, RefInputs in, RefOutputTypes out) {
  return compare(in, out, [](auto a, auto b) { return (a != 0) != (b != 0); });
}

std::vector<Tensor> less_or_equal(const Node&, RefInputs in, RefOutputTypes out) {
  return compare(in, out, [](auto a, auto b) { return a <= b; });
}

std::vector<Tensor> greater_or_equal(const Node&, RefInputs in, RefOutputTypes out) {
  return compare(in, out, [](auto a, auto b) { return a >= b; });
}

template <class Predicate>
std::vector<Tensor> classify(const Tensor& x, Predicate predicate) {
  Tensor y(DType::Bool, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) y.set_int(i, predicate(x.get_double(i)) ? 1 : 0);
  return {y};
}

std::vector<Tensor> is_nan(const Node&, RefInputs in, RefOutputTypes) {
  return classify(*in[0], [](double x) { return std::isnan(x); });
}

std::vector<Tensor> is_inf(const Node& node, RefInputs in, RefOutputTypes) {
  const AttrReader attrs(node);
  const bool positive = attrs.get_int("detect_positive") != 0;
  const bool negative = attrs.get_int("detect_negative") != 0;
  return classify(*in[0], [positive, negative](double x) {
    return std::isinf(x) && (x > 0.0 ? positive : negative);
  });
}

}  // namespace

void register_logical(RefTable& table) {
  using K = OpKind;
  register_kernel(table, K::Equal, equal);
  register_kernel(table, K::Less, less);
  register_kernel(table, K::Greater, greater);
  register_kernel(table, K::Not, logical_not);
  register_kernel(table, K::And, logical_and);
  register_kernel(table, K::Or, logical_or);
  register_kernel(table, K::Xor, logical_xor);
  register_kernel(table, K::LessOrEqual, less_or_equal);
  register_kernel(table, K::GreaterOrEqual, greater_or_equal);
  register_kernel(table, K::IsNaN, is_nan);
  register_kernel(table, K::IsInf, is_inf);
}

}  // namespace volta::reference
