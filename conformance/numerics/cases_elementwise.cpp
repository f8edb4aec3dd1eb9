// Parity cases of the math, activation and logic ops added for ONNX import: the shared unary
// and binary grids, every attribute variant, and fixed inputs where random ones say little
// (special values, the [-1, 1] domain of the inverse functions, halves for rounding).

#include <cmath>
#include <limits>

#include "case_list.h"

namespace volta::conformance::cases {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Tensor values(DType dtype, const std::vector<double>& v, std::optional<Shape> shape = {}) {
  Tensor t(dtype, shape ? *shape : Shape{static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.set_double(static_cast<int64_t>(i), v[i]);
  return t;
}

// 24 values that exercise edges: NaN, infinities, signed zeros, halves, tiny and huge.
Tensor special(DType dtype) {
  return values(dtype,
                {kNaN, kInf,  -kInf,  0.0,  -0.0, 0.5,   -0.5,  1.5,  -1.5,  2.5,   -2.5,   1.0,
                 -1.0, 1e-30, -1e-30, 1e-8, 3e38, -3e38, 1e-45, 88.0, -88.0, 0.999, -0.999, 4e15});
}
const Shape kSpecialShape{24};

// `count` values evenly spaced in [lo, hi].
Tensor spaced(DType dtype, int64_t count, double lo, double hi) {
  std::vector<double> v(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    v[static_cast<size_t>(i)] =
        lo + (hi - lo) * static_cast<double>(i) / static_cast<double>(count - 1);
  }
  return values(dtype, v);
}

void special_cases(CaseList& cases, OpKind op, const Attributes& attrs = {}) {
  for (DType d : {DType::F32, DType::F64}) {
    cases.add(op, {of(d, kSpecialShape)}, attrs, 1, {special(d)});
  }
}

void float_unary(CaseList& cases, OpKind op) {
  unary_cases(cases, op);
  special_cases(cases, op);
}

}  // namespace

void math_cases(CaseList& cases) {
  for (OpKind op : {K::Sin, K::Cos, K::Tan, K::Atan, K::Sinh, K::Cosh, K::Asinh, K::Floor, K::Ceil,
                    K::Round, K::HardSwish, K::Softplus, K::Softsign}) {
    float_unary(cases, op);
  }
  // Inverse functions: random inputs in [-3, 3] are mostly outside the domain (NaN), so
  // each also gets a sweep of its domain.
  for (OpKind op : {K::Asin, K::Acos, K::Atanh}) {
    float_unary(cases, op);
    for (DType d : {DType::F32, DType::F64})
      cases.add(op, {of(d, {41})}, {}, 1, {spaced(d, 41, -1, 1)});
  }
  float_unary(cases, K::Acosh);
  for (DType d : {DType::F32, DType::F64})
    cases.add(K::Acosh, {of(d, {41})}, {}, 1, {spaced(d, 41, 1, 30)});
  // Rounding: a sweep through halves and the integers around them.
  for (OpKind op : {K::Floor, K::Ceil, K::Round}) {
    for (DType d : {DType::F32, DType::F64})
      cases.add(op, {of(d, {41})}, {}, 1, {spaced(d, 41, -5, 5)});
  }
  unary_cases(cases, K::Sign);
  special_cases(cases, K::Sign);

  // Mod: both fmod modes, every dtype, mixed signs and the special cases of each mode.
  binary_cases(cases, K::Mod);
  const Attributes c_fmod{{"fmod", int64_t{1}}};
  for (DType d : {DType::F32, DType::F64, DType::I32, DType::I64}) {
    cases.add(K::Mod, {of(d, {3, 5}), of(d, {3, 5})}, c_fmod);
    cases.add(K::Mod, {of(d, {3, 1}), of(d, {1, 4})}, c_fmod);
  }
  cases.add(K::Mod, {f32({kChunk + 1}), f32({})}, c_fmod);
  const std::vector<double> a = {5, -5, 5, -5, 5.5, -5.5, 0, -0.0, kInf, kNaN, 3, 1e30, 6, -6};
  const std::vector<double> b = {3, 3, -3, -3, 2, 2, -3, 3, 2, 2, kInf, 7, -3, 3};
  for (DType d : {DType::F32, DType::F64}) {
    for (const Attributes& attrs : {Attributes{}, c_fmod}) {
      cases.add(K::Mod, {of(d, {14}), of(d, {14})}, attrs, 1, {values(d, a), values(d, b)});
    }
  }

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
  for (DType d : {DType::F64, DType::I32, DType::I64}) {
    cases.add(K::PRelu, {of(d, {3, 5}), of(d, {5})});
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
              {values(DType::I32, {-3, -3, -2, -2, -1, -1, 0,  0,  1, 1, 2, 2,
                                   3,  3,  2,  1,  0,  -1, -2, -3, 0, 0, 1, -1},
                      Shape{4, 6}),
               spaced(DType::I32, 6, -2, 3)});
  }
}

}  // namespace volta::conformance::cases
