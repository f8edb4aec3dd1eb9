// Parity cases of the pools: 1-D, 2-D and 3-D windows, dilations, strides, asymmetric pads,
// ceil_mode, count_include_pad, Indices with ties, pooling work blocks (64 outputs) and the
// reduction tree's leaves.

#include <cmath>
#include <limits>
#include <vector>

#include "case_list.h"
#include "volta/ir/random.h"

namespace volta::conformance::cases {
namespace {

using Ints = std::vector<int64_t>;

TypeInfo f64(Shape s) { return {DType::F64, std::move(s)}; }

// Integers in [-2, 2] as floats: pooling windows full of ties, so Indices pin the tie rule.
Tensor small_integers(const Shape& shape, uint64_t seed) {
  Tensor t = random_tensor(DType::F32, shape, seed, -2.0, 3.0);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_double(i, std::floor(t.get_double(i)));
  return t;
}

// MaxPool, AveragePool and LpPool share windows: each gets the whole window grid.
void window_pool_cases(CaseList& cases, OpKind op, const Attributes& extra) {
  auto with = [&extra](Attributes attrs) {
    for (const auto& [name, value] : extra) attrs.emplace(name, value);
    return attrs;
  };
  cases.add(op, {f32({2, 3, 20})}, with({{"kernel_shape", Ints{3}}, {"strides", Ints{2}}}));
  cases.add(op, {f32({1, 2, 2200})},
            with({{"kernel_shape", Ints{20}},
                  {"dilations", Ints{10}},
                  {"strides", Ints{10}},
                  {"pads", Ints{10, 10}}}));
  cases.add(
      op, {f32({1, 3, 9, 9})},
      with({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}));
  cases.add(op, {f32({1, 2, 7, 8})},
            with({{"kernel_shape", Ints{2, 3}}, {"pads", Ints{1, 0, 0, 2}}}));
  cases.add(
      op, {f32({1, 2, 8, 8})},
      with({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t{1}}}));
  cases.add(op, {f32({1, 2, 7, 9})},
            with({{"kernel_shape", Ints{2, 2}},
                  {"strides", Ints{2, 3}},
                  {"pads", Ints{1, 1, 1, 1}},
                  {"ceil_mode", int64_t{1}}}));
  cases.add(
      op, {f32({1, 2, 6, 7})},
      with({{"kernel_shape", Ints{2, 2}}, {"dilations", Ints{2, 3}}, {"pads", Ints{0, 1, 1, 1}}}));
  cases.add(op, {f32({2, 3, 40, 70})}, with({{"kernel_shape", Ints{2, 2}}}));
  cases.add(op, {f32({1, 2, 5, 6, 7})},
            with({{"kernel_shape", Ints{2, 3, 2}},
                  {"strides", Ints{2, 1, 2}},
                  {"pads", Ints{1, 0, 1, 0, 1, 1}}}));
  cases.add(op, {f32({1, 1, 1, 1})}, with({{"kernel_shape", Ints{1, 1}}}));
  cases.add(op, {f32({0, 3, 4, 4})}, with({{"kernel_shape", Ints{2, 2}}}));
  cases.add(
      op, {f64({2, 3, 7, 6})},
      with({{"kernel_shape", Ints{3, 2}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 0}}}));
}

void max_pool_cases(CaseList& cases) {
  window_pool_cases(cases, K::MaxPool, {});
  const Attributes window = {
      {"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 1}}, {"pads", Ints{1, 1, 1, 1}}};
  // Indices, with ties everywhere: the first maximum in window order wins.
  for (int64_t order : {0, 1}) {
    Attributes attrs = window;
    attrs["storage_order"] = order;
    cases.add(K::MaxPool, {f32({2, 3, 7, 6})}, attrs, 2, {small_integers(Shape{2, 3, 7, 6}, 5)});
    cases.add(
        K::MaxPool, {f32({1, 2, 4, 5, 6})},
        {{"kernel_shape", Ints{2, 2, 3}}, {"storage_order", order}, {"strides", Ints{1, 2, 2}}}, 2,
        {small_integers(Shape{1, 2, 4, 5, 6}, 6)});
  }
  cases.add(K::MaxPool, {f32({2, 2, 9})}, {{"kernel_shape", Ints{3}}, {"dilations", Ints{2}}}, 2);
  cases.add(K::MaxPool, {f64({1, 2, 5, 5})}, {{"kernel_shape", Ints{2, 2}}}, 2);
  // NaN propagates, and Indices reports the first NaN of the window.
  Tensor with_nan = small_integers(Shape{1, 1, 5, 5}, 7);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  with_nan.set_double(7, nan);
  with_nan.set_double(13, nan);
  cases.add(K::MaxPool, {f32({1, 1, 5, 5})}, {{"kernel_shape", Ints{3, 3}}}, 2, {with_nan});
}

}  // namespace

void pooling_cases(CaseList& cases) {
  max_pool_cases(cases);
  window_pool_cases(cases, K::AveragePool, {});
  window_pool_cases(cases, K::AveragePool, {{"count_include_pad", int64_t{1}}});
  window_pool_cases(cases, K::LpPool, {});
  for (int64_t p : {1, 3}) {
    cases.add(K::LpPool, {f32({1, 3, 9, 9})},
              {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}, {"p", p}});
  }
  for (OpKind op : {K::GlobalAveragePool, K::GlobalMaxPool, K::GlobalLpPool}) {
    for (const Shape& shape : {Shape{2, 3, 5, 5}, Shape{1, 4, 7}, Shape{1, 2, 3, 4, 5},
                               Shape{1, 2, kLeaf + 1}, Shape{3, 2, 1, 1}, Shape{0, 3, 4, 4}}) {
      cases.add(op, {f32(shape)});
    }
    cases.add(op, {f64({2, 3, 4, 4})});
  }
  for (int64_t p : {1, 3}) cases.add(K::GlobalLpPool, {f32({2, 3, 6, 6})}, {{"p", p}});
  Tensor with_nan = random_tensor(DType::F32, Shape{1, 2, 3, 3}, 8, -3.0, 3.0);
  with_nan.set_double(4, std::numeric_limits<double>::quiet_NaN());
  cases.add(K::GlobalMaxPool, {f32({1, 2, 3, 3})}, {}, 1, {with_nan});
}

}  // namespace volta::conformance::cases
