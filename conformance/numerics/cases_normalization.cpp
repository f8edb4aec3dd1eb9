// Parity cases of the normalization family: Softmax, LogSoftmax and Hardmax along every axis and
// around the reduction leaves, LayerNormalization over trailing axes, and the per-channel
// BatchNormalization, InstanceNormalization, MeanVarianceNormalization and LRN.

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "case_list.h"
#include "volta/ir/random.h"

namespace volta::conformance::cases {
namespace {

using Ints = std::vector<int64_t>;
using Fixed = std::vector<std::optional<Tensor>>;

void batch_and_instance_cases(CaseList& cases) {
  // Scale, bias and statistics are per channel; the variance is drawn positive by its domain.
  auto bn = [&](DType d, const Shape& x, Attributes attrs = {}) {
    const Shape c{x[1]};
    cases.add(K::BatchNormalization, {of(d, x), of(d, c), of(d, c), of(d, c), of(d, c)},
              std::move(attrs));
  };
  auto in = [&](DType d, const Shape& x, Attributes attrs = {}) {
    const Shape c{x[1]};
    cases.add(K::InstanceNormalization, {of(d, x), of(d, c), of(d, c)}, std::move(attrs));
  };
  for (const Shape& x : {Shape{2, 3, 4, 5}, Shape{1, 1}, Shape{4, 3}, Shape{2, 3, 4, 4, 4},
                         Shape{0, 3, 2}, Shape{2, 3, 0}, Shape{2, 2, kChunk + 3}}) {
    bn(DType::F32, x);
    in(DType::F32, x);
  }
  bn(DType::F32, {2, 3, 4, 5}, {{"epsilon", 1e-2}});
  bn(DType::F64, {2, 3, 4, 5});
  in(DType::F32, {2, 3, 4, 5}, {{"epsilon", 1e-2}});
  in(DType::F32, {1, 2, 1, 3});
  in(DType::F32, {2, 3, kLeaf + 1});
  in(DType::F64, {2, 3, 4, 5});
}

void mean_variance_cases(CaseList& cases) {
  const auto mvn = K::MeanVarianceNormalization;
  cases.add(mvn, {f32({3, 3, 3, 1})});
  for (const Ints& axes : {Ints{1}, Ints{0, 1}, Ints{-1}, Ints{2, 3}, Ints{0, 1, 2, 3}, Ints{}}) {
    cases.add(mvn, {f32({2, 3, 4, 5})}, {{"axes", axes}});
  }
  cases.add(mvn, {f32({2, 3, 4, 5})}, {{"axes", Ints{0, 2, 3}}, {"epsilon", 1e-3}});
  cases.add(mvn, {f32({2, kLeaf + 3})}, {{"axes", Ints{1}}});
  cases.add(mvn, {f32({kLeaf + 3, 2})}, {{"axes", Ints{0}}});
  cases.add(mvn, {f32({0, 3, 2, 2})});
  cases.add(mvn, {of(DType::F64, {2, 3, 4, 5})});
}

void lrn_cases(CaseList& cases) {
  const auto lrn = K::LRN;
  cases.add(lrn, {f32({5, 5, 5, 5})},
            {{"alpha", 0.0002}, {"beta", 0.5}, {"bias", 2.0}, {"size", int64_t{3}}});
  for (int64_t size : {1, 2, 3, 4, 7}) cases.add(lrn, {f32({2, 5, 3, 4})}, {{"size", size}});
  cases.add(lrn, {f32({3, 6})}, {{"size", int64_t{3}}});
  cases.add(lrn, {f32({1, 4, kChunk / 4 + 9})}, {{"size", int64_t{3}}});
  cases.add(lrn, {f32({0, 4, 2})}, {{"size", int64_t{3}}});
  cases.add(lrn, {of(DType::F64, {2, 5, 3, 4})}, {{"size", int64_t{5}}, {"beta", 1.5}});
}

void hardmax_cases(CaseList& cases) {
  const auto hardmax = K::Hardmax;
  for (int64_t axis : {0, 1, 2, -1}) cases.add(hardmax, {f32({3, 4, 5})}, {{"axis", axis}});
  cases.add(hardmax, {f32({1, 4})});
  cases.add(hardmax, {f32({0, 3})});
  cases.add(hardmax, {f32({3, 0})}, {{"axis", int64_t{0}}});
  cases.add(hardmax, {f32({2, kLeaf + 1})});
  cases.add(hardmax, {f32({kLeaf + 1, 3})}, {{"axis", int64_t{0}}});
  cases.add(hardmax, {of(DType::F64, {3, 5})});
  // Small integers make ties, which the first index wins; the NaN row checks that the first
  // NaN counts as the maximum.
  const Tensor ints = random_tensor(DType::I64, Shape{6, 7}, 11, 0, 3);
  Tensor ties(DType::F32, Shape{6, 7});
  for (int64_t i = 0; i < ties.numel(); ++i)
    ties.set_double(i, static_cast<double>(ints.get_int(i)));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  ties.set_double(7 + 3, nan);
  ties.set_double(7 + 5, nan);
  ties.set_double(2 * 7 + 0, nan);
  for (int64_t axis : {0, 1}) cases.add(hardmax, {f32({6, 7})}, {{"axis", axis}}, 1, {ties});
}

}  // namespace

void normalization_cases(CaseList& cases) {
  for (OpKind op : {K::Softmax, K::LogSoftmax}) {
    for (const auto& [shape, axis] : std::vector<std::pair<Shape, int64_t>>{{{3, 5}, -1},
                                                                            {{3, 5}, 0},
                                                                            {{2, 3, 4}, 1},
                                                                            {{2, 3, 4}, -1},
                                                                            {{1, 1}, -1},
                                                                            {{0, 5}, -1},
                                                                            {{5, 0}, -1},
                                                                            {{7}, 0},
                                                                            {{2, kLeaf - 1}, -1},
                                                                            {{2, kLeaf}, -1},
                                                                            {{2, kLeaf + 1}, -1},
                                                                            {{3 * kLeaf + 5}, 0},
                                                                            {{64, 33}, -1}}) {
      cases.add(op, {f32(shape)}, {{"axis", axis}});
    }
    cases.add(op, {of(DType::F64, {3, 5})}, {{"axis", int64_t{-1}}});
  }
  const auto ln = K::LayerNormalization;
  cases.add(ln, {f32({2, 3, 8}), f32({8}), f32({8})}, {{"axis", int64_t{-1}}});
  cases.add(ln, {f32({2, 3, 8}), f32({3, 8}), f32({3, 8})}, {{"axis", int64_t{1}}});
  cases.add(ln, {f32({2, 3, 8}), f32({8}), std::nullopt}, {{"axis", int64_t{-1}}});
  cases.add(ln, {f32({4, 6}), f32({6}), f32({6})}, {{"epsilon", 1e-3}}, 3);
  cases.add(ln, {f32({2, kLeaf + 1}), f32({kLeaf + 1}), f32({1})}, {});
  cases.add(ln, {f32({1, 1}), f32({1}), f32({1})}, {});
  cases.add(ln, {f32({0, 4}), f32({4}), f32({4})}, {});
  cases.add(ln, {of(DType::F64, {3, 5}), of(DType::F64, {5}), of(DType::F64, {5})}, {}, 3);
  batch_and_instance_cases(cases);
  mean_variance_cases(cases);
  lrn_cases(cases);
  hardmax_cases(cases);
}

}  // namespace volta::conformance::cases
