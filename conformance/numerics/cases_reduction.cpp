// Parity cases of the reductions: every axis set with and without keepdims, empty and scalar
// inputs, long reductions around the reduction tree's leaves, both tie-break rules of
// ArgMax/ArgMin, and CumSum's exclusive and reverse forms across chunk edges.

#include <optional>
#include <vector>

#include "case_list.h"
#include "volta/ir/random.h"

namespace volta::conformance::cases {

void reduction_cases(CaseList& cases) {
  using Axes = std::vector<int64_t>;
  for (OpKind op : {K::ReduceSum, K::ReduceMean, K::ReduceMax, K::ReduceMin, K::ReduceProd,
                    K::ReduceSumSquare, K::ReduceL1, K::ReduceL2, K::ReduceLogSumExp}) {
    const DTypeSet types = op_schema(op).type_params.front().allowed;
    for (const Axes& axes : {Axes{}, Axes{0}, Axes{-1}, Axes{1}, Axes{0, 2}}) {
      for (int64_t keep : {0, 1}) {
        cases.add(op, {f32({3, 4, 5})}, {{"axes", axes}, {"keepdims", keep}});
      }
    }
    cases.add(op, {f32({3, 4})}, {{"noop_with_empty_axes", int64_t{1}}});
    cases.add(op, {f32({})}, {});
    cases.add(op, {f32({0, 3})}, {{"axes", Axes{0}}});
    cases.add(op, {f32({3, 0})}, {{"axes", Axes{1}}, {"keepdims", int64_t{0}}});
    // Long reductions get well-conditioned inputs: with mixed signs the f32 error scales
    // with sum|x| rather than with the result, which a result-relative tolerance cannot
    // judge. Cancellation is covered by the short cases above. Long products stay finite
    // only for factors near 1.
    auto long_input = [op](const Shape& shape) {
      const bool product = op == K::ReduceProd;
      return std::vector<std::optional<Tensor>>{
          random_tensor(DType::F32, shape, static_cast<uint64_t>(shape.numel()),
                        product ? 0.95 : 0.0, product ? 1.05 : 3.0)};
    };
    for (int64_t n : {kLeaf - 1, kLeaf, kLeaf + 1, 3 * kLeaf + 5}) {
      cases.add(op, {f32({n})}, {}, 1, long_input(Shape{n}));
    }
    cases.add(op, {f32({2, kLeaf + 7})}, {{"axes", Axes{-1}}}, 1, long_input(Shape{2, kLeaf + 7}));
    cases.add(op, {f32({kLeaf + 7, 3})}, {{"axes", Axes{0}}}, 1, long_input(Shape{kLeaf + 7, 3}));
    for (DType d : {DType::F64, DType::I32, DType::I64}) {
      if (types.contains(d)) cases.add(op, {of(d, {3, 4, 5})}, {{"axes", Axes{1}}});
    }
  }
  for (OpKind op : {K::ArgMax, K::ArgMin}) {
    for (int64_t axis : {0, 1, -1}) {
      for (int64_t keep : {0, 1}) {
        cases.add(op, {f32({3, 4, 5})}, {{"axis", axis}, {"keepdims", keep}});
      }
    }
    // Small integers make ties: both tie-break rules are exercised.
    for (int64_t last : {0, 1}) {
      cases.add(op, {of(DType::I32, {6, 7})}, {{"axis", int64_t{1}}, {"select_last_index", last}});
      cases.add(op, {of(DType::I64, {6, 7})}, {{"axis", int64_t{0}}, {"select_last_index", last}});
    }
    cases.add(op, {of(DType::F64, {3, 5})}, {{"axis", int64_t{-1}}});
    cases.add(op, {f32({kLeaf + 3})}, {});
    cases.add(op, {f32({0, 4})}, {{"axis", int64_t{1}}});
  }
  for (int64_t axis : {0, 1, -1}) {
    for (int64_t exclusive : {0, 1}) {
      for (int64_t reverse : {0, 1}) {
        cases.add(K::CumSum, {f32({3, 4, 5})},
                  {{"axis", axis}, {"exclusive", exclusive}, {"reverse", reverse}});
      }
    }
  }
  cases.add(K::CumSum, {of(DType::I32, {4, 6})}, {{"axis", int64_t{1}}});
  cases.add(K::CumSum, {of(DType::I64, {4, 6})}, {{"axis", int64_t{0}}, {"reverse", int64_t{1}}});
  cases.add(K::CumSum, {of(DType::F64, {4, 6})}, {{"axis", int64_t{1}}, {"exclusive", int64_t{1}}});
  // A long running sum of small integers is exact in f32: this case checks order and
  // indexing across chunk edges, not rounding.
  Tensor steps(DType::F32, Shape{kLeaf + 1});
  const Tensor ints = random_tensor(DType::I64, Shape{kLeaf + 1}, 9, -3, 4);
  for (int64_t i = 0; i < steps.numel(); ++i)
    steps.set_double(i, static_cast<double>(ints.get_int(i)));
  cases.add(K::CumSum, {f32({kLeaf + 1})}, {{"axis", int64_t{0}}}, 1, {steps});
  cases.add(K::CumSum, {f32({0, 3})}, {{"axis", int64_t{0}}});
}

}  // namespace volta::conformance::cases
