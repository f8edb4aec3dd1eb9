// Parity cases of the comparisons, the boolean logic ops and the NaN/Inf classifiers: the
// shared binary grid, special values against each other, and ties.

#include <vector>

#include "case_list.h"
#include "volta/ir/random.h"

namespace volta::conformance::cases {

void logical_cases(CaseList& cases) {
  for (OpKind op : {K::Equal, K::Less, K::Greater, K::And, K::Or}) binary_cases(cases, op);
  for (const Shape& shape : {Shape{}, Shape{0}, Shape{3, 5}, Shape{kChunk + 1}}) {
    cases.add(K::Not, {of(DType::Bool, shape)});
  }

  // Classification: random values are all finite, so the special values carry the cases.
  for (OpKind op : {K::IsNaN, K::IsInf}) {
    unary_cases(cases, op);
    special_cases(cases, op);
  }
  for (int64_t positive : {0, 1}) {
    for (int64_t negative : {0, 1}) {
      special_cases(cases, K::IsInf,
                    {{"detect_negative", negative}, {"detect_positive", positive}});
    }
  }

  binary_cases(cases, K::Xor);
  for (OpKind op : {K::LessOrEqual, K::GreaterOrEqual}) {
    binary_cases(cases, op);
    for (DType d : {DType::F32, DType::F64}) {
      // Every special value against every other one shifted by 5, NaN included.
      Tensor shifted = special(d);
      for (int64_t i = 0; i < shifted.numel(); ++i) {
        shifted.set_double(i, special(d).get_double((i + 5) % shifted.numel()));
      }
      cases.add(op, {of(d, kSpecialShape), of(d, kSpecialShape)}, {}, 1, {special(d), shifted});
    }
    // Small integers make ties.
    cases.add(op, {of(DType::I32, {4, 6}), of(DType::I32, {6})}, {}, 1,
              {tensor_of(DType::I32, {-3, -3, -2, -2, -1, -1, 0,  0,  1, 1, 2, 2,
                                      3,  3,  2,  1,  0,  -1, -2, -3, 0, 0, 1, -1},
                         Shape{4, 6}),
               spaced(DType::I32, 6, -2, 3)});
  }
}

}  // namespace volta::conformance::cases
