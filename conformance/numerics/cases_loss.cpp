// Parity cases of SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss: every reduction, with
// and without weights and an ignored label, spatial dims, and log_prob.

#include <string>
#include <vector>

#include "case_list.h"
#include "volta/ir/random.h"

namespace volta::conformance::cases {
namespace {

using Ints = std::vector<int64_t>;
using Fixed = std::vector<std::optional<Tensor>>;

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

}  // namespace

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

}  // namespace volta::conformance::cases
