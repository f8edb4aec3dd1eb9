// Parity cases of the activations: the shared unary grid, every attribute variant (defaults,
// then other values exact in f32, so both engines see the same attribute), and the special
// values where random ones say little.

#include <string>
#include <utility>
#include <vector>

#include "case_list.h"

namespace volta::conformance::cases {

void activation_cases(CaseList& cases) {
  for (OpKind op : {K::Erf, K::Tanh, K::Sigmoid, K::Relu, K::LeakyRelu, K::Gelu}) {
    unary_cases(cases, op);
  }
  cases.add(K::LeakyRelu, {f32({3, 5})}, {{"alpha", 0.2}});
  cases.add(K::Gelu, {f32({3, 5})}, {{"approximate", std::string("tanh")}});
  cases.add(K::Gelu, {f32({kChunk + 1})}, {{"approximate", std::string("tanh")}});
  cases.add(K::Gelu, {of(DType::F64, {3, 5})}, {{"approximate", std::string("tanh")}});
  for (OpKind op : {K::HardSwish, K::Softplus, K::Softsign}) float_unary(cases, op);

  // Activations with attributes: defaults, then other values (exact in f32, so both engines
  // see the same attribute).
  float_unary(cases, K::Elu);
  cases.add(K::Elu, {f32({3, 5})}, {{"alpha", 2.0}});
  float_unary(cases, K::Selu);
  cases.add(K::Selu, {f32({3, 5})}, {{"alpha", 2.0}, {"gamma", 3.0}});
  float_unary(cases, K::Celu);
  cases.add(K::Celu, {f32({3, 5})}, {{"alpha", 2.0}});
  cases.add(K::Celu, {of(DType::F64, {3, 5})}, {{"alpha", 0.5}});
  float_unary(cases, K::HardSigmoid);
  cases.add(K::HardSigmoid, {f32({3, 5})}, {{"alpha", 0.5}, {"beta", 0.625}});
  float_unary(cases, K::ThresholdedRelu);
  cases.add(K::ThresholdedRelu, {f32({3, 5})}, {{"alpha", 0.5}});
  cases.add(K::ThresholdedRelu, {of(DType::F64, {3, 5})}, {{"alpha", -1.5}});
  float_unary(cases, K::Shrink);
  cases.add(K::Shrink, {f32({3, 5})}, {{"lambd", 1.5}});
  cases.add(K::Shrink, {f32({3, 5})}, {{"bias", 1.5}, {"lambd", 1.5}});
  cases.add(K::Shrink, {of(DType::F64, {3, 5})}, {{"bias", 0.25}, {"lambd", 0.75}});
  special_cases(cases, K::Shrink, {{"bias", 0.25}, {"lambd", 1.0}});

  // PRelu: the slope broadcasts to X only.
  for (const auto& [x, slope] :
       std::vector<std::pair<Shape, Shape>>{{{3, 5}, {3, 5}},
                                            {{3, 5}, {5}},
                                            {{3, 5}, {}},
                                            {{2, 3, 4}, {3, 1}},
                                            {{2, 3, 4}, {1}},
                                            {{}, {}},
                                            {{0, 5}, {5}},
                                            {{kChunk + 1}, {1}},
                                            {{2, kChunk + 3}, {kChunk + 3}}}) {
    cases.add(K::PRelu, {f32(x), f32(slope)});
  }
  for (DType d : {DType::F64, DType::I32, DType::I64, DType::F16, DType::BF16}) {
    cases.add(K::PRelu, {of(d, {3, 5}), of(d, {5})});
  }
}

}  // namespace volta::conformance::cases
