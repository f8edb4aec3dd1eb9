// Parity cases of Conv, ConvTranspose and the pools: 1-D, 2-D and 3-D, groups (depthwise
// too), dilations, strides, asymmetric pads, ceil_mode, count_include_pad, channel and
// output counts around the GEMM's register tiles (6 x 16) and blocks (kc 256, mc 168,
// nc 512), pooling work blocks (64 outputs) and the reduction tree's leaves.

#include <cmath>
#include <limits>

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

void conv_cases(CaseList& cases) {
  const auto conv = K::Conv;
  // 1-D.
  cases.add(conv, {f32({2, 4, 10}), f32({5, 4, 3}), f32({5})});
  cases.add(conv, {f32({2, 4, 10}), f32({5, 4, 3}), f32({5})},
            {{"strides", Ints{2}}, {"pads", Ints{1, 2}}, {"dilations", Ints{2}}});
  cases.add(conv, {f32({1, 4, 1}), f32({4, 4, 5}), f32({4})}, {{"pads", Ints{2, 2}}});
  // 2-D: pads, strides, asymmetric pads, dilations, no bias.
  cases.add(conv, {f32({1, 3, 7, 7}), f32({4, 3, 3, 3}), f32({4})}, {{"pads", Ints{1, 1, 1, 1}}});
  cases.add(conv, {f32({2, 3, 7, 5}), f32({4, 3, 3, 2}), f32({4})},
            {{"strides", Ints{2, 2}}, {"pads", Ints{1, 0, 2, 1}}});
  cases.add(conv, {f32({2, 3, 8, 8}), f32({2, 3, 3, 3}), f32({2})},
            {{"dilations", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}});
  cases.add(conv, {f32({1, 3, 9, 8}), f32({5, 3, 2, 3}), std::nullopt},
            {{"dilations", Ints{3, 1}}, {"strides", Ints{1, 3}}, {"kernel_shape", Ints{2, 3}}});
  // Groups: two groups, depthwise, depthwise with a channel multiplier.
  cases.add(conv, {f32({2, 4, 6, 5}), f32({6, 2, 3, 2}), f32({6})}, {{"group", int64_t{2}}});
  cases.add(conv, {f32({1, 8, 9, 9}), f32({8, 1, 3, 3}), f32({8})},
            {{"group", int64_t{8}}, {"pads", Ints{1, 1, 1, 1}}});
  cases.add(conv, {f32({2, 4, 6, 6}), f32({8, 1, 3, 3}), f32({8})},
            {{"group", int64_t{4}}, {"strides", Ints{2, 2}}});
  // 3-D.
  cases.add(
      conv, {f32({1, 2, 5, 6, 7}), f32({3, 2, 2, 3, 2}), f32({3})},
      {{"strides", Ints{1, 2, 1}}, {"pads", Ints{0, 1, 1, 1, 0, 1}}, {"dilations", Ints{2, 1, 1}}});
  cases.add(conv, {f32({2, 4, 4, 5, 4}), f32({6, 2, 3, 3, 3}), std::nullopt},
            {{"group", int64_t{2}}});
  // 1x1 kernels: read X directly, or through im2col when strided.
  cases.add(conv, {f32({2, 16, 5, 5}), f32({8, 16, 1, 1}), f32({8})});
  cases.add(conv, {f32({2, 16, 5, 5}), f32({8, 16, 1, 1}), std::nullopt},
            {{"strides", Ints{2, 2}}});
  cases.add(conv, {f32({1, 6, 4, 4}), f32({6, 2, 1, 1}), f32({6})}, {{"group", int64_t{3}}});
  // GEMM edges: M, K and N (output positions) across register tiles and cache blocks.
  cases.add(conv, {f32({1, 17, 13, 11}), f32({13, 17, 3, 3}), f32({13})});
  cases.add(conv, {f32({1, 32, 9, 9}), f32({7, 32, 3, 3}), f32({7})}, {{"pads", Ints{1, 1, 1, 1}}});
  cases.add(conv, {f32({1, 4, 6, 6}), f32({170, 4, 3, 3}), f32({170})});
  cases.add(conv, {f32({1, 3, 30, 30}), f32({6, 3, 3, 3}), f32({6})}, {{"pads", Ints{1, 1, 1, 1}}});
  cases.add(conv, {f32({3, 5, 23, 24}), f32({17, 5, 3, 3}), f32({17})},
            {{"pads", Ints{0, 1, 2, 1}}});
  // Degenerate: no images, no output channels, no input channels (bias only), size-1 input.
  cases.add(conv, {f32({0, 3, 5, 5}), f32({4, 3, 3, 3}), f32({4})});
  cases.add(conv, {f32({1, 3, 5, 5}), f32({0, 3, 3, 3}), f32({0})});
  cases.add(conv, {f32({1, 0, 4, 4}), f32({3, 0, 3, 3}), f32({3})});
  cases.add(conv, {f32({1, 2, 1, 1}), f32({3, 2, 3, 3}), f32({3})}, {{"pads", Ints{1, 1, 1, 1}}});
  cases.add(conv, {f64({2, 3, 7, 5}), f64({4, 3, 3, 2}), f64({4})},
            {{"strides", Ints{2, 1}}, {"pads", Ints{1, 0, 1, 1}}});
  cases.add(conv, {f64({1, 4, 5, 5, 5}), f64({4, 2, 2, 2, 2}), std::nullopt},
            {{"group", int64_t{2}}, {"dilations", Ints{2, 2, 1}}});
}

void conv_transpose_cases(CaseList& cases) {
  const auto ct = K::ConvTranspose;
  cases.add(ct, {f32({1, 1, 3, 3}), f32({1, 2, 3, 3})});
  cases.add(ct, {f32({1, 3, 7, 6}), f32({3, 4, 3, 3}), f32({4})},
            {{"strides", Ints{3, 2}}, {"pads", Ints{1, 1, 1, 1}}, {"output_padding", Ints{1, 1}}});
  cases.add(ct, {f32({1, 1, 3, 3}), f32({1, 2, 3, 3})},
            {{"strides", Ints{3, 2}}, {"pads", Ints{1, 2, 1, 2}}});
  cases.add(ct, {f32({1, 2, 3, 3}), f32({2, 1, 2, 2}), f32({1})}, {{"dilations", Ints{2, 2}}});
  cases.add(ct, {f32({2, 4, 5, 4}), f32({4, 3, 3, 2}), f32({6})},
            {{"group", int64_t{2}}, {"strides", Ints{2, 1}}, {"pads", Ints{0, 1, 1, 0}}});
  cases.add(ct, {f32({1, 6, 5, 5}), f32({6, 1, 3, 3}), f32({6})},
            {{"group", int64_t{6}}, {"strides", Ints{2, 2}}});
  cases.add(ct, {f32({2, 3, 7}), f32({3, 4, 3}), f32({4})},
            {{"strides", Ints{2}}, {"pads", Ints{1, 0}}, {"output_padding", Ints{1}}});
  cases.add(ct, {f32({1, 2, 3, 4, 3}), f32({2, 3, 2, 3, 2}), f32({3})},
            {{"strides", Ints{2, 1, 2}}, {"dilations", Ints{1, 2, 1}}});
  cases.add(ct, {f32({1, 17, 9, 8}), f32({17, 13, 3, 3}), f32({13})}, {{"strides", Ints{2, 2}}});
  cases.add(ct, {f32({2, 40, 6, 5}), f32({40, 7, 1, 1}), std::nullopt});
  cases.add(ct, {f32({1, 1, 1, 1}), f32({1, 1, 3, 3}), f32({1})},
            {{"strides", Ints{2, 2}}, {"output_padding", Ints{3, 0}}});
  cases.add(ct, {f32({0, 2, 3, 3}), f32({2, 2, 3, 3}), f32({2})});
  cases.add(ct, {f64({1, 3, 4, 5}), f64({3, 2, 3, 3}), f64({2})},
            {{"strides", Ints{2, 3}}, {"pads", Ints{1, 1, 0, 2}}});
  cases.add(ct, {f64({2, 3, 6}), f64({3, 1, 4}), std::nullopt},
            {{"group", int64_t{3}}, {"dilations", Ints{2}}});
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

void pool_cases(CaseList& cases) {
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

}  // namespace

void spatial_cases(CaseList& cases) {
  conv_cases(cases);
  conv_transpose_cases(cases);
  pool_cases(cases);
}

}  // namespace volta::conformance::cases
