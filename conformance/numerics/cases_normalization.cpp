// Parity cases for BatchNormalization, InstanceNormalization, MeanVarianceNormalization, LRN,
// Hardmax, the losses and Einsum.

#include <cmath>
#include <limits>
#include <string>

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

// Labels in [0, classes), with every 5th sample set to `ignore` when given (which may lie outside
// [0, classes), as ONNX allows).
Tensor labels(DType dtype, const Shape& shape, int64_t classes, std::optional<int64_t> ignore,
              uint64_t seed) {
  const Tensor drawn = random_tensor(DType::I64, shape, seed, 0, static_cast<double>(classes));
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    t.set_int(i, ignore && i % 5 == 2 ? *ignore : drawn.get_int(i));
  }
  return t;
}

void loss_cases(CaseList& cases) {
  const std::vector<std::string> reductions = {"none", "sum", "mean"};
  uint64_t seed = 1;
  // One case per op: scores [N, C, d...], labels [N, d...], optional weights [C].
  auto add = [&](DType d, DType label_type, const Shape& x, bool weighted,
                 const std::string& reduction, std::optional<int64_t> ignore, int outputs) {
    std::vector<int64_t> label_dims = x.dims();
    label_dims.erase(label_dims.begin() + 1);
    const Shape label_shape(label_dims);
    Attributes attrs = {{"reduction", reduction}};
    if (ignore) attrs["ignore_index"] = Ints{*ignore};
    const Fixed fixed = {std::nullopt, labels(label_type, label_shape, x[1], ignore, seed++)};
    Types types = {of(d, x), of(label_type, label_shape)};
    if (weighted) types.push_back(of(d, {x[1]}));
    if (outputs == 1) cases.add(K::NegativeLogLikelihoodLoss, types, attrs, 1, fixed);
    cases.add(K::SoftmaxCrossEntropyLoss, types, attrs, outputs, fixed);
  };
  for (const std::string& r : reductions) {
    for (bool weighted : {false, true}) {
      for (const Shape& x : {Shape{3, 5}, Shape{3, 5, 2}, Shape{3, 5, 6, 6}}) {
        add(DType::F32, DType::I64, x, weighted, r, std::nullopt, 1);
      }
      add(DType::F32, DType::I64, {3, 5, 2}, weighted, r, int64_t{1}, 1);
      add(DType::F32, DType::I64, {3, 5, 6}, weighted, r, int64_t{-1}, 1);
      add(DType::F32, DType::I64, {3, 5}, weighted, r, int64_t{10}, 1);
      add(DType::F32, DType::I64, {3, 5, 2}, weighted, r, std::nullopt, 2);
      add(DType::F32, DType::I64, {3, 5, 2, 7}, weighted, r, int64_t{2}, 2);
    }
    add(DType::F32, DType::I32, {4, 3, 5}, true, r, int64_t{0}, 1);
    add(DType::F64, DType::I64, {4, 3, 5}, true, r, int64_t{0}, 1);
    add(DType::F64, DType::I32, {3, 5}, false, r, std::nullopt, 2);
    add(DType::F32, DType::I64, {0, 4}, false, r, std::nullopt, 1);
    add(DType::F32, DType::I64, {1, 1}, false, r, std::nullopt, 2);
  }
  // Long batches: the sums over samples span several tree leaves; long class rows span leaves
  // of the log-softmax.
  add(DType::F32, DType::I64, {4, 7, kLeaf + 3}, true, "mean", int64_t{3}, 2);
  add(DType::F32, DType::I64, {2, 7, kLeaf + 3}, false, "sum", std::nullopt, 1);
  add(DType::F32, DType::I64, {3, kLeaf + 5}, false, "mean", std::nullopt, 2);
}

void einsum_cases(CaseList& cases) {
  auto add = [&](const std::string& equation, const std::vector<Shape>& shapes,
                 DType d = DType::F32) {
    Types types;
    for (const Shape& s : shapes) types.push_back(of(d, s));
    cases.add(K::Einsum, types, {{"equation", equation}});
  };
  add("ij,jk->ik", {{3, 4}, {4, 5}});
  add("bij, bjk -> bik", {{5, 2, 3}, {5, 3, 4}});
  add("i,i", {{5}, {5}});
  add("ij->i", {{3, 4}});
  add("ij->ji", {{3, 4}});
  add("ji", {{3, 4}});
  add("ij,jk", {{3, 4}, {4, 5}});
  add("...ii ->...i", {{3, 5, 5}});
  add("ii", {{4, 4}});
  add("ii->i", {{4, 4}});
  add("iij->j", {{3, 3, 2}});
  add("i,j->ij", {{3}, {4}});
  add("ij->", {{3, 4}});
  add(",->", {{}, {}});
  add("i->", {{0}});
  add("...ij,...jk->...ik", {{2, 1, 3, 4}, {5, 4, 6}});
  add("...ij,jk", {{2, 3, 4}, {4, 2}});
  add("i...->...", {{3, 2, 2}});
  add("ij...->", {{3, 2, 2}});
  add("abc,cd,de->abe", {{2, 3, 4}, {4, 5}, {5, 2}});
  add("bn,anm,bm->ba", {{2, 3}, {4, 3, 5}, {2, 5}});
  add("Ab,bc->Ac", {{3, 4}, {4, 2}});
  add("ij,jk->ik", {{3, 0}, {0, 5}});
  add("ij,jk->ik", {{0, 4}, {4, 5}});
  add("ij,jk->ik", {{3, kLeaf + 5}, {kLeaf + 5, 2}});
  add("ij->ji", {{130, 131}});
  // Two float operands run as a packed GEMM: diagonals, labels only one operand sums over,
  // elementwise products, and outputs in another order than [batch, M, N].
  add("ii,i->i", {{4, 4}, {4}});
  add("ij,k->", {{3, 4}, {5}});
  add("ij,ij->ij", {{3, 4}, {3, 4}});
  add("bij,jk->bik", {{2, 3, 4}, {4, 5}});
  add("bij,bjk->kib", {{4, 33, 65}, {4, 65, 17}});
  add("ij,jk->ik", {{7, 9}, {9, 5}}, DType::F64);
  add("...ii ->...i", {{3, 5, 5}}, DType::F64);
  add("ij,jk->ik", {{7, 9}, {9, 5}}, DType::I32);
  add("ij->i", {{3, 4}}, DType::I32);
  add("ij,jk->ik", {{7, 9}, {9, 5}}, DType::I64);
  add("i,i", {{5}, {5}}, DType::I64);
}

}  // namespace

void normalization_cases(CaseList& cases) {
  batch_and_instance_cases(cases);
  mean_variance_cases(cases);
  lrn_cases(cases);
  hardmax_cases(cases);
  loss_cases(cases);
  einsum_cases(cases);
}

}  // namespace volta::conformance::cases
