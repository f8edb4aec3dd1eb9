// Parity cases of the elementwise family: the shared unary and binary grids, every attribute
// variant, and fixed inputs where random ones say little (special values, the [-1, 1] domain of
// the inverse functions, halves for rounding).

#include <string>
#include <tuple>
#include <vector>

#include "case_list.h"
#include "volta/ir/random.h"

namespace volta::conformance::cases {

void elementwise_cases(CaseList& cases) {
  for (OpKind op : {K::Add, K::Sub, K::Mul, K::Div, K::Pow}) binary_cases(cases, op);
  for (OpKind op : {K::Neg, K::Abs, K::Sqrt, K::Reciprocal, K::Exp, K::Log, K::Clip}) {
    unary_cases(cases, op);
  }
  for (OpKind op : {K::Min, K::Max}) {
    binary_cases(cases, op);
    cases.add(op, {f32({3, 5})});
    cases.add(op, {f32({3, 1}), f32({1, 4}), f32({2, 1, 1})});
    cases.add(op, {of(DType::I32, {4}), of(DType::I32, {4}), of(DType::I32, {1})});
  }
  cases.add(K::Clip, {f32({3, 5})}, {{"min", -0.5}, {"max", 0.5}});
  cases.add(K::Clip, {f32({3, 5})}, {{"min", 0.0}});
  cases.add(K::Clip, {of(DType::I32, {3, 5})}, {{"min", -5.5}, {"max", 5.5}});
  cases.add(K::Clip, {of(DType::I64, {3, 5})}, {{"max", 2.0}});
  for (const auto& [c, x, y] :
       std::vector<std::tuple<Shape, Shape, Shape>>{{{3, 5}, {3, 5}, {3, 5}},
                                                    {{3, 1}, {1, 4}, {}},
                                                    {{5}, {3, 5}, {3, 1}},
                                                    {{0, 2}, {2}, {2}},
                                                    {{kChunk + 1}, {kChunk + 1}, {}}}) {
    cases.add(K::Where, {of(DType::Bool, c), f32(x), f32(y)});
  }
  cases.add(K::Where, {of(DType::Bool, {3, 5}), of(DType::I64, {3, 5}), of(DType::I64, {5})});
  cases.add(K::Where, {of(DType::Bool, {4}), of(DType::Bool, {4}), of(DType::Bool, {1})});
  cases.add(K::Where, {of(DType::Bool, {4}), of(DType::F64, {4}), of(DType::F64, {4})});
  cases.add(K::Where, {of(DType::Bool, {4}), of(DType::I32, {4}), of(DType::I32, {4})});
  for (DType d : {DType::F16, DType::BF16, DType::I8, DType::U8, DType::I16, DType::U16, DType::U32,
                  DType::U64}) {
    cases.add(K::Where, {of(DType::Bool, {3, 5}), of(d, {3, 5}), of(d, {5})});
  }
  cases.add(K::Clip, {of(DType::I8, {3, 5})}, {{"min", -5.5}, {"max", 5.5}});
  cases.add(K::Clip, {of(DType::U16, {3, 5})}, {{"min", 3.0}, {"max", 60000.5}});
  cases.add(K::Clip, {of(DType::BF16, {3, 5})}, {{"min", -0.5}, {"max", 0.5}});
  // Cast between every pair of dtypes. A float source converted to an unsigned type takes
  // values in [0, 20): a negative one has no value there, an error on every backend.
  for (int from = 0; from < kDTypeCount; ++from) {
    for (int to = 0; to < kDTypeCount; ++to) {
      const auto f = static_cast<DType>(from);
      const auto t = static_cast<DType>(to);
      const Attributes attrs{{"to", std::string(dtype_name(t))}};
      if (is_floating(f) && is_unsigned(t)) {
        cases.add(K::Cast, {of(f, {3, 5})}, attrs, 1,
                  {random_tensor(f, {3, 5}, 7700 + static_cast<uint64_t>(from), 0, 20)});
      } else {
        cases.add(K::Cast, {of(f, {3, 5})}, attrs);
      }
    }
  }
  cases.add(K::Cast, {f32({kChunk + 1})}, {{"to", std::string("i32")}});
  cases.add(K::Cast, {f32({0})}, {{"to", std::string("f64")}});
  // BitCast between every pair of one width: random integers read as floats include NaNs with
  // payloads and subnormals, and small bytes read as bool include values other than 0 and 1.
  for (int from = 0; from < kDTypeCount; ++from) {
    for (int to = 0; to < kDTypeCount; ++to) {
      const auto f = static_cast<DType>(from);
      const auto t = static_cast<DType>(to);
      if (dtype_size(f) != dtype_size(t)) continue;
      cases.add(K::BitCast, {of(f, {3, 5})}, {{"to", std::string(dtype_name(t))}});
    }
  }
  for (DType d : {DType::F32, DType::F64}) {
    const DType bits = d == DType::F32 ? DType::I32 : DType::U64;
    cases.add(K::BitCast, {of(d, {8})}, {{"to", std::string(dtype_name(bits))}}, 1,
              {tensor_of(d, {kNaN, -kNaN, kInf, -kInf, 0.0, -0.0, 1.0, -1e-310})});
  }
  cases.add(K::BitCast, {f32({kChunk + 1})}, {{"to", std::string("u32")}});
  cases.add(K::BitCast, {of(DType::I16, {0})}, {{"to", std::string("f16")}});

  for (OpKind op :
       {K::Sin, K::Cos, K::Tan, K::Atan, K::Sinh, K::Cosh, K::Asinh, K::Floor, K::Ceil, K::Round}) {
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
      cases.add(K::Mod, {of(d, {14}), of(d, {14})}, attrs, 1, {tensor_of(d, a), tensor_of(d, b)});
    }
  }

  // Bit operations: every integer dtype, broadcast; shifts by 0 to past the width.
  for (DType d : {DType::I32, DType::I64, DType::I8, DType::U8, DType::I16, DType::U16, DType::U32,
                  DType::U64}) {
    for (OpKind op : {K::BitwiseAnd, K::BitwiseOr, K::BitwiseXor}) {
      cases.add(op, {of(d, {3, 5}), of(d, {3, 5})});
      cases.add(op, {of(d, {3, 1}), of(d, {1, 4})});
    }
    cases.add(K::BitwiseNot, {of(d, {3, 5})});
    cases.add(K::BitwiseNot, {of(d, {kChunk + 1})});
  }
  for (DType d : {DType::I32, DType::I64, DType::I8, DType::U8, DType::I16, DType::U16, DType::U32,
                  DType::U64}) {
    const auto width = static_cast<int64_t>(8 * dtype_size(d));
    const int64_t lowest_shift = is_unsigned(d) ? 0 : -3;  // signed: negative shifts too
    for (const char* direction : {"left", "right"}) {
      const Attributes attrs{{"direction", std::string(direction)}};
      cases.add(K::BitShift, {of(d, {3, 5}), of(d, {3, 5})}, attrs, 1,
                {std::nullopt,
                 ints(d, {3, 5}, lowest_shift, width + 3, 9100 + static_cast<uint64_t>(width))});
      cases.add(K::BitShift, {of(d, {3, 1}), of(d, {1, 4})}, attrs, 1,
                {std::nullopt, ints(d, {1, 4}, 0, width, 9200 + static_cast<uint64_t>(width))});
    }
  }
}

}  // namespace volta::conformance::cases
