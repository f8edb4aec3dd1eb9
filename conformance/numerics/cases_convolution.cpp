// Parity cases of Conv, ConvTranspose and ConvGradFilter: 1-D, 2-D and 3-D, groups (depthwise
// too), dilations, strides, asymmetric pads, channel and output counts around the GEMM's register
// tiles (6 x 16) and blocks (kc 256, mc 168, nc 512).

#include <vector>

#include "case_list.h"

namespace volta::conformance::cases {
namespace {

using Ints = std::vector<int64_t>;

TypeInfo f64(Shape s) { return {DType::F64, std::move(s)}; }

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

// dY [1, M, 4, 4] of 0.5 with +Inf at its first position, which taps over the begin padding
// read: those weights are NaN (0 * Inf), the others +Inf.
Tensor infinite_corner(int64_t channels) {
  std::vector<double> values(static_cast<size_t>(channels * 16), 0.5);
  values[0] = kInf;
  return tensor_of(DType::F32, values, Shape{1, channels, 4, 4});
}

// X [N, C, D...] and dY [N, M, O...] as Conv(X, W) with W [M, C/group, k...] would give them.
void conv_grad_filter_cases(CaseList& cases) {
  const auto gf = K::ConvGradFilter;
  // 2-D without pads first: the numerics rules read the first case.
  cases.add(gf, {f32({2, 3, 7, 7}), f32({2, 4, 5, 5})}, {{"kernel_shape", Ints{3, 3}}});
  // 1-D strided, padded, dilated; 2-D with asymmetric pads, dilations.
  cases.add(gf, {f32({2, 4, 10}), f32({2, 5, 5})},
            {{"kernel_shape", Ints{3}},
             {"strides", Ints{2}},
             {"pads", Ints{1, 2}},
             {"dilations", Ints{2}}});
  cases.add(gf, {f32({2, 3, 7, 5}), f32({2, 4, 4, 3})},
            {{"kernel_shape", Ints{3, 2}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 0, 2, 1}}});
  cases.add(gf, {f32({2, 3, 8, 8}), f32({2, 2, 3, 3})},
            {{"kernel_shape", Ints{3, 3}},
             {"dilations", Ints{2, 2}},
             {"strides", Ints{2, 2}},
             {"pads", Ints{1, 1, 1, 1}}});
  // Groups; one X channel per group (the direct kernel): depthwise, a channel multiplier, rows
  // longer than its lanes, strided rows.
  cases.add(gf, {f32({2, 4, 6, 5}), f32({2, 6, 4, 4})},
            {{"kernel_shape", Ints{3, 2}}, {"group", int64_t{2}}});
  cases.add(gf, {f32({1, 8, 9, 9}), f32({1, 8, 9, 9})},
            {{"kernel_shape", Ints{3, 3}}, {"group", int64_t{8}}, {"pads", Ints{1, 1, 1, 1}}});
  cases.add(gf, {f32({2, 4, 6, 6}), f32({2, 8, 2, 2})},
            {{"kernel_shape", Ints{3, 3}}, {"group", int64_t{4}}, {"strides", Ints{2, 2}}});
  cases.add(gf, {f32({2, 3, 5, 21}), f32({2, 3, 5, 21})},
            {{"kernel_shape", Ints{1, 3}}, {"group", int64_t{3}}, {"pads", Ints{0, 1, 0, 1}}});
  cases.add(gf, {f32({2, 3, 5, 21}), f32({2, 3, 5, 11})},
            {{"kernel_shape", Ints{1, 3}},
             {"group", int64_t{3}},
             {"strides", Ints{1, 2}},
             {"pads", Ints{0, 1, 0, 1}}});
  // 3-D.
  cases.add(gf, {f32({1, 2, 5, 6, 7}), f32({1, 3, 4, 3, 8})},
            {{"kernel_shape", Ints{2, 3, 2}},
             {"strides", Ints{1, 2, 1}},
             {"pads", Ints{0, 1, 1, 1, 0, 1}},
             {"dilations", Ints{2, 1, 1}}});
  cases.add(gf, {f32({2, 4, 4, 5, 4}), f32({2, 6, 2, 3, 2})},
            {{"kernel_shape", Ints{3, 3, 3}}, {"group", int64_t{2}}});
  // 1x1; GEMM edges: M, N (C/group * taps) and K (images * positions) across tiles and blocks.
  cases.add(gf, {f32({2, 16, 5, 5}), f32({2, 8, 5, 5})}, {{"kernel_shape", Ints{1, 1}}});
  cases.add(gf, {f32({1, 17, 13, 11}), f32({1, 13, 11, 9})}, {{"kernel_shape", Ints{3, 3}}});
  cases.add(gf, {f32({1, 4, 6, 6}), f32({1, 170, 4, 4})}, {{"kernel_shape", Ints{3, 3}}});
  cases.add(gf, {f32({1, 64, 6, 6}), f32({1, 7, 4, 4})}, {{"kernel_shape", Ints{3, 3}}});
  cases.add(gf, {f32({3, 5, 23, 24}), f32({3, 17, 23, 24})},
            {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{0, 1, 2, 1}}});
  // Fewer window positions than fit (ConvTranspose's output_padding); every tap in the padding.
  cases.add(gf, {f32({1, 2, 9}), f32({1, 3, 2})},
            {{"kernel_shape", Ints{3}}, {"strides", Ints{2}}});
  cases.add(gf, {f32({1, 2, 4}), f32({1, 3, 3})},
            {{"kernel_shape", Ints{2}}, {"pads", Ints{5, 0}}});
  // A non-finite dY seen only through the padding, on both kernels.
  cases.add(gf, {f32({1, 2, 4, 4}), f32({1, 3, 4, 4})},
            {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}}, 1,
            {std::nullopt, infinite_corner(3)});
  cases.add(gf, {f32({1, 2, 4, 4}), f32({1, 2, 4, 4})},
            {{"kernel_shape", Ints{3, 3}}, {"group", int64_t{2}}, {"pads", Ints{1, 1, 1, 1}}}, 1,
            {std::nullopt, infinite_corner(2)});
  // Degenerate: no images, no output channels, no input channels, no positions, size-1 input.
  cases.add(gf, {f32({0, 3, 5, 5}), f32({0, 4, 3, 3})}, {{"kernel_shape", Ints{3, 3}}});
  cases.add(gf, {f32({1, 3, 5, 5}), f32({1, 0, 3, 3})}, {{"kernel_shape", Ints{3, 3}}});
  cases.add(gf, {f32({1, 0, 4, 4}), f32({1, 3, 2, 2})}, {{"kernel_shape", Ints{3, 3}}});
  cases.add(gf, {f32({1, 2, 0, 3}), f32({1, 3, 0, 3})}, {{"kernel_shape", Ints{1, 1}}});
  cases.add(gf, {f32({1, 2, 0, 3}), f32({1, 2, 0, 3})},
            {{"kernel_shape", Ints{1, 1}}, {"group", int64_t{2}}});
  cases.add(gf, {f32({1, 2, 1, 1}), f32({1, 3, 1, 1})},
            {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}});
  cases.add(gf, {f64({2, 3, 7, 5}), f64({2, 4, 4, 5})},
            {{"kernel_shape", Ints{3, 2}}, {"strides", Ints{2, 1}}, {"pads", Ints{1, 0, 1, 1}}});
  cases.add(gf, {f64({2, 3, 9}), f64({2, 3, 5})},
            {{"kernel_shape", Ints{3}}, {"group", int64_t{3}}, {"dilations", Ints{2}}});
  cases.add(gf, {f64({1, 4, 5, 5, 5}), f64({1, 4, 3, 3, 4})},
            {{"kernel_shape", Ints{2, 2, 2}}, {"group", int64_t{2}}, {"dilations", Ints{2, 2, 1}}});
}

}  // namespace

void convolution_cases(CaseList& cases) {
  conv_cases(cases);
  conv_transpose_cases(cases);
  conv_grad_filter_cases(cases);
}

}  // namespace volta::conformance::cases
