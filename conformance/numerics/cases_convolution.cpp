// Parity cases of Conv and ConvTranspose: 1-D, 2-D and 3-D, groups (depthwise too), dilations,
// strides, asymmetric pads, channel and output counts around the GEMM's register tiles (6 x 16)
// and blocks (kc 256, mc 168, nc 512).

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

}  // namespace

void convolution_cases(CaseList& cases) {
  conv_cases(cases);
  conv_transpose_cases(cases);
}

}  // namespace volta::conformance::cases
