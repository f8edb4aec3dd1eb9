#include "volta/conformance/parity_cases.h"

#include <algorithm>
#include <cmath>

#include "case_list.h"
#include "volta/ir/printer.h"
#include "volta/ir/random.h"

namespace volta::conformance::cases {
namespace {

std::string case_id(OpKind op, const Types& types, const Attributes& attrs, int num_outputs) {
  std::string id = std::string(op_name(op)) + "(";
  for (const auto& [name, value] : attrs) id += name + "=" + attr_value_str(value) + ",";
  if (num_outputs != 1) id += "outputs=" + std::to_string(num_outputs) + ",";
  std::string shapes;
  std::vector<DType> dtypes;  // distinct, in operand order: "dtype=bool/f64" for Where
  for (const auto& t : types) {
    shapes += (shapes.empty() ? "" : "x") + (t ? t->shape.str() : std::string("_"));
    if (t && std::find(dtypes.begin(), dtypes.end(), t->dtype) == dtypes.end()) {
      dtypes.push_back(t->dtype);
    }
  }
  if (!types.empty()) id += "shape=" + shapes + ",";
  for (size_t i = 0; i < dtypes.size(); ++i) {
    id += (i == 0 ? "dtype=" : "/") + std::string(dtype_name(dtypes[i]));
  }
  if (!dtypes.empty()) id += ",";
  if (id.back() == ',') {
    id.back() = ')';
  } else {
    id += ")";
  }
  return id;
}

// Values from the operand's domain, seeded by the case id so every case is reproducible.
Tensor domain_tensor(const TypeInfo& type, InputDomain domain, uint64_t seed, uint64_t stream) {
  const bool integer = is_integer(type.dtype);
  switch (domain) {
    case InputDomain::Positive:
      return random_tensor(type.dtype, type.shape, seed, integer ? 1 : 0.05, integer ? 20 : 3,
                           stream);
    case InputDomain::NonZero: {
      Tensor t =
          random_tensor(type.dtype, type.shape, seed, integer ? 1 : 0.25, integer ? 20 : 3, stream);
      for (int64_t i = 0; i < t.numel(); ++i) {
        if (counter_uniform(seed, stream + 1000, static_cast<uint64_t>(i)) < 0.5) {
          if (integer)
            t.set_int(i, -t.get_int(i));
          else
            t.set_double(i, -t.get_double(i));
        }
      }
      return t;
    }
    case InputDomain::Any:
    case InputDomain::Index:
      return random_tensor(type.dtype, type.shape, seed, integer ? -20 : -3, integer ? 20 : 3,
                           stream);
  }
  return Tensor(type.dtype, type.shape);
}

}  // namespace

void CaseList::add(OpKind op, Types types, Attributes attrs, int num_outputs,
                   std::vector<std::optional<Tensor>> fixed) {
  const OpSchema& schema = op_schema(op);
  ParityCase c{case_id(op, types, attrs, num_outputs), op, Graph{}, {}};
  StableHasher h;
  h.text(c.id);
  const uint64_t seed = h.digest();
  std::vector<ValueId> ids;
  for (size_t i = 0; i < types.size(); ++i) {
    if (!types[i]) {
      ids.push_back(kNoValue);
      continue;
    }
    ids.push_back(c.graph.add_input("in" + std::to_string(i), types[i]->dtype, types[i]->shape));
    if (i < fixed.size() && fixed[i]) {
      c.inputs.push_back(*fixed[i]);
    } else {
      const InputSpec& spec = schema.inputs[std::min(i, schema.inputs.size() - 1)];
      c.inputs.push_back(domain_tensor(*types[i], spec.domain, seed, i));
    }
  }
  c.graph.set_outputs(c.graph.add_node(op, ids, std::move(attrs), "op", num_outputs));
  out_.push_back(std::move(c));
}

void unary_cases(CaseList& cases, OpKind op) {
  const OpSchema& s = op_schema(op);
  const DTypeSet types = s.type_params.front().allowed;
  for (const Shape& shape : {Shape{}, Shape{0}, Shape{1}, Shape{7}, Shape{3, 5}, Shape{2, 3, 4},
                             Shape{kChunk - 1}, Shape{kChunk + 1}, Shape{3 * kChunk + 5}}) {
    cases.add(op, {f32(shape)});
  }
  for (DType d : {DType::F64, DType::I32, DType::I64}) {
    if (types.contains(d)) cases.add(op, {of(d, {3, 5})});
  }
}

void binary_cases(CaseList& cases, OpKind op) {
  const DTypeSet types = op_schema(op).type_params.front().allowed;
  const DType main = types.contains(DType::F32) ? DType::F32 : DType::Bool;
  const std::vector<std::pair<Shape, Shape>> pairs = {{{3, 5}, {3, 5}},
                                                      {{3, 5}, {}},
                                                      {{}, {3, 5}},
                                                      {{3, 5}, {5}},
                                                      {{3, 5}, {3, 1}},
                                                      {{3, 1}, {1, 4}},
                                                      {{0, 5}, {5}},
                                                      {{2, 1, 3, 4}, {5, 1, 4}},
                                                      {{1}, {1}},
                                                      {{kChunk + 1}, {kChunk + 1}},
                                                      {{2, kChunk + 3}, {kChunk + 3}}};
  for (const auto& [a, b] : pairs) cases.add(op, {of(main, a), of(main, b)});
  for (DType d : {DType::F64, DType::I32, DType::I64, DType::Bool}) {
    if (d != main && types.contains(d)) {
      cases.add(op, {of(d, {3, 5}), of(d, {3, 5})});
      cases.add(op, {of(d, {3, 1}), of(d, {1, 4})});
    }
  }
}

namespace {

void elementwise_grid(CaseList& cases) {
  for (OpKind op :
       {K::Add, K::Sub, K::Mul, K::Div, K::Pow, K::Equal, K::Less, K::Greater, K::And, K::Or}) {
    binary_cases(cases, op);
  }
  for (OpKind op : {K::Neg, K::Abs, K::Sqrt, K::Reciprocal, K::Exp, K::Log, K::Erf, K::Tanh,
                    K::Sigmoid, K::Relu, K::LeakyRelu, K::Gelu, K::Clip}) {
    unary_cases(cases, op);
  }
  for (OpKind op : {K::Min, K::Max}) {
    binary_cases(cases, op);
    cases.add(op, {f32({3, 5})});
    cases.add(op, {f32({3, 1}), f32({1, 4}), f32({2, 1, 1})});
    cases.add(op, {of(DType::I32, {4}), of(DType::I32, {4}), of(DType::I32, {1})});
  }
  cases.add(K::LeakyRelu, {f32({3, 5})}, {{"alpha", 0.2}});
  cases.add(K::Gelu, {f32({3, 5})}, {{"approximate", std::string("tanh")}});
  cases.add(K::Gelu, {f32({kChunk + 1})}, {{"approximate", std::string("tanh")}});
  cases.add(K::Gelu, {of(DType::F64, {3, 5})}, {{"approximate", std::string("tanh")}});
  cases.add(K::Clip, {f32({3, 5})}, {{"min", -0.5}, {"max", 0.5}});
  cases.add(K::Clip, {f32({3, 5})}, {{"min", 0.0}});
  cases.add(K::Clip, {of(DType::I32, {3, 5})}, {{"min", -5.5}, {"max", 5.5}});
  cases.add(K::Clip, {of(DType::I64, {3, 5})}, {{"max", 2.0}});
  for (const Shape& shape : {Shape{}, Shape{0}, Shape{3, 5}, Shape{kChunk + 1}}) {
    cases.add(K::Not, {of(DType::Bool, shape)});
  }
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
  for (DType from : {DType::F32, DType::F64, DType::I64, DType::I32, DType::Bool}) {
    for (DType to : {DType::F32, DType::F64, DType::I64, DType::I32, DType::Bool}) {
      cases.add(K::Cast, {of(from, {3, 5})}, {{"to", std::string(dtype_name(to))}});
    }
  }
  cases.add(K::Cast, {f32({kChunk + 1})}, {{"to", std::string("i32")}});
  cases.add(K::Cast, {f32({0})}, {{"to", std::string("f64")}});
}

void linalg_grid(CaseList& cases) {
  // Edges of common micro tiles (4, 6, 8, 16) and cache blocks, plus degenerate sizes.
  const std::vector<std::array<int64_t, 3>> mnk = {
      {1, 1, 1},    {5, 7, 3},    {6, 16, 8},    {7, 17, 9},    {4, 8, 16},
      {12, 32, 64}, {13, 33, 65}, {65, 31, 129}, {96, 80, 300}, {1, 64, 512},
      {64, 1, 33},  {0, 4, 3},    {3, 0, 4},     {3, 4, 0}};
  for (const auto& [m, n, k] : mnk) cases.add(K::MatMul, {f32({m, k}), f32({k, n})});
  cases.add(K::MatMul, {of(DType::F64, {7, 9}), of(DType::F64, {9, 5})});
  cases.add(K::MatMul, {of(DType::F64, {13, 33}), of(DType::F64, {33, 17})});
  cases.add(K::MatMul, {f32({4}), f32({4, 3})});
  cases.add(K::MatMul, {f32({3, 4}), f32({4})});
  cases.add(K::MatMul, {f32({5}), f32({5})});
  cases.add(K::MatMul, {f32({2, 3, 4, 5}), f32({5, 6})});
  cases.add(K::MatMul, {f32({2, 1, 3, 4}), f32({5, 4, 6})});
  cases.add(K::MatMul, {f32({3, 4}), f32({2, 4, 6})});
  cases.add(K::MatMul, {f32({0, 3, 4}), f32({4, 2})});

  for (int64_t ta : {0, 1}) {
    for (int64_t tb : {0, 1}) {
      const Shape a = ta ? Shape{9, 7} : Shape{7, 9};
      const Shape b = tb ? Shape{17, 9} : Shape{9, 17};
      cases.add(K::Gemm, {f32(a), f32(b), f32({17})}, {{"transA", ta}, {"transB", tb}});
    }
  }
  cases.add(K::Gemm, {f32({5, 6}), f32({6, 4}), std::nullopt});
  cases.add(K::Gemm, {f32({5, 6}), f32({6, 4}), f32({5, 1})}, {{"alpha", 0.5}, {"beta", 2.0}});
  cases.add(K::Gemm, {f32({5, 6}), f32({6, 4}), f32({})}, {{"beta", -1.0}});
  cases.add(K::Gemm, {f32({5, 6}), f32({6, 4}), f32({5, 4})}, {{"alpha", 0.0}});
  cases.add(K::Gemm, {f32({33, 65}), f32({65, 17}), f32({33, 17})});
  cases.add(K::Gemm, {of(DType::F64, {5, 6}), of(DType::F64, {4, 6}), of(DType::F64, {4})},
            {{"transB", int64_t{1}}});
  cases.add(K::Gemm, {f32({3, 0}), f32({0, 4}), f32({4})});

  // FusedMatMul (made by gemm-epilogue-fusion): every activation and both bias operand orders,
  // at tile edges, a stacked batch, a 1-D A and an empty K.
  for (const char* activation : {"none", "relu", "gelu", "gelu_tanh"}) {
    const Attributes act = {{"activation", std::string(activation)}};
    cases.add(K::FusedMatMul, {f32({13, 65}), f32({65, 33}), f32({33})}, act);
    cases.add(K::FusedMatMul,
              {of(DType::F64, {7, 9}), of(DType::F64, {9, 17}), of(DType::F64, {17})}, act);
  }
  cases.add(K::FusedMatMul, {f32({2, 3, 6, 8}), f32({8, 16}), f32({16})},
            {{"activation", std::string("relu")}, {"bias_first", int64_t{1}}});
  cases.add(K::FusedMatMul, {f32({5}), f32({5, 3}), f32({3})});
  cases.add(K::FusedMatMul, {f32({4, 0}), f32({0, 6}), f32({6})},
            {{"activation", std::string("gelu")}});
  cases.add(K::FusedMatMul, {f32({96, 300}), f32({300, 80}), f32({80})},
            {{"activation", std::string("gelu")}});
}

void normalization_grid(CaseList& cases) {
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
}

void reduction_grid(CaseList& cases) {
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

void movement_grid(CaseList& cases) {
  using Ints = std::vector<int64_t>;
  const std::vector<DType> all = {DType::F32, DType::F64, DType::I64, DType::I32, DType::Bool};
  for (DType d : all) {
    cases.add(K::Reshape, {of(d, {2, 3, 4})}, {{"shape", Ints{4, -1}}});
    cases.add(K::Transpose, {of(d, {2, 3, 4})}, {});
    cases.add(K::Concat, {of(d, {2, 3}), of(d, {2, 5})}, {{"axis", int64_t{1}}});
    cases.add(K::Split, {of(d, {6, 2})}, {}, 3);
    cases.add(K::Slice, {of(d, {5, 6})},
              {{"starts", Ints{1, 0}}, {"ends", Ints{4, 6}}, {"steps", Ints{1, 2}}});
    cases.add(K::Expand, {of(d, {3, 1})}, {{"shape", Ints{2, 3, 4}}});
    cases.add(K::Squeeze, {of(d, {1, 3, 1})}, {});
    cases.add(K::Unsqueeze, {of(d, {3})}, {{"axes", Ints{0, 2}}});
    cases.add(K::Flatten, {of(d, {2, 3, 4})}, {{"axis", int64_t{2}}});
    cases.add(K::Identity, {of(d, {3, 5})}, {});
  }
  cases.add(K::Reshape, {f32({2, 3, 4})}, {{"shape", Ints{0, -1}}});
  cases.add(K::Reshape, {f32({0, 3})}, {{"shape", Ints{3, 0}}, {"allowzero", int64_t{1}}});
  cases.add(K::Reshape, {f32({})}, {{"shape", Ints{1, 1}}});
  for (const Ints& perm : {Ints{1, 0, 2}, Ints{2, 0, 1}, Ints{0, 2, 1}}) {
    cases.add(K::Transpose, {f32({2, 3, 4})}, {{"perm", perm}});
  }
  cases.add(K::Transpose, {f32({65, 33})}, {});
  cases.add(K::Transpose, {f32({3, 130, 67})}, {{"perm", Ints{0, 2, 1}}});
  cases.add(K::Transpose, {f32({2, 3, 4, 5})}, {{"perm", Ints{3, 1, 0, 2}}});
  cases.add(K::Transpose, {f32({0, 3})}, {});
  cases.add(K::Concat, {f32({2, 3}), f32({1, 3}), f32({4, 3})}, {{"axis", int64_t{0}}});
  cases.add(K::Concat, {f32({2, 3}), f32({2, 0}), f32({2, 1})}, {{"axis", int64_t{-1}}});
  cases.add(K::Concat, {f32({4})}, {{"axis", int64_t{0}}});
  cases.add(K::Split, {f32({2, 7})}, {{"axis", int64_t{1}}, {"split", Ints{2, 0, 5}}}, 3);
  cases.add(K::Split, {f32({4, 6})}, {{"axis", int64_t{-1}}}, 2);
  cases.add(K::Slice, {f32({5, 6})},
            {{"starts", Ints{-1}}, {"ends", Ints{-100}}, {"axes", Ints{1}}, {"steps", Ints{-2}}});
  cases.add(K::Slice, {f32({5, 6})},
            {{"starts", Ints{-3, 1}}, {"ends", Ints{1000, 9223372036854775807}}});
  cases.add(K::Slice, {f32({5, 6})}, {{"starts", Ints{4}}, {"ends", Ints{1}}, {"axes", Ints{0}}});
  cases.add(K::Slice, {f32({3, 4, 5})},
            {{"starts", Ints{0, 3}},
             {"ends", Ints{-1, 0}},
             {"axes", Ints{2, 1}},
             {"steps", Ints{2, -1}}});
  cases.add(K::Expand, {f32({})}, {{"shape", Ints{2, 3}}});
  cases.add(K::Expand, {f32({2, 1, 3})}, {{"shape", Ints{3, 2, 4, 1}}});
  cases.add(K::Expand, {f32({3})}, {{"shape", Ints{0, 3}}});
  cases.add(K::Squeeze, {f32({1, 3, 1, 2})}, {{"axes", Ints{-2}}});
  cases.add(K::Unsqueeze, {f32({})}, {{"axes", Ints{0}}});
  cases.add(K::Unsqueeze, {f32({2, 3})}, {{"axes", Ints{-1, 1}}});
  for (int64_t axis : {0, 1, 3, -1}) cases.add(K::Flatten, {f32({2, 3, 4})}, {{"axis", axis}});
  cases.add(K::Identity, {f32({})}, {});
  cases.add(K::Identity, {f32({0, 2})}, {});

  // Gather: indices stay within [-n, n) of the gathered axis, negative ones included.
  auto indices = [](DType d, const Shape& shape, int64_t n, uint64_t seed) {
    Tensor t =
        random_tensor(DType::I64, shape, seed, static_cast<double>(-n), static_cast<double>(n));
    Tensor out(d, shape);
    for (int64_t i = 0; i < t.numel(); ++i) out.set_int(i, t.get_int(i));
    return out;
  };
  for (DType idx : {DType::I64, DType::I32}) {
    cases.add(K::Gather, {f32({5, 4}), of(idx, {3})}, {}, 1,
              {std::nullopt, indices(idx, {3}, 5, 1)});
    cases.add(K::Gather, {f32({5, 4}), of(idx, {2, 3})}, {{"axis", int64_t{1}}}, 1,
              {std::nullopt, indices(idx, {2, 3}, 4, 2)});
  }
  cases.add(K::Gather, {f32({5, 4}), of(DType::I64, {})}, {}, 1,
            {std::nullopt, indices(DType::I64, {}, 5, 3)});
  cases.add(K::Gather, {f32({2, 5, 3}), of(DType::I64, {4})}, {{"axis", int64_t{-2}}}, 1,
            {std::nullopt, indices(DType::I64, {4}, 5, 4)});
  cases.add(K::Gather, {f32({5, 4}), of(DType::I64, {0})}, {}, 1,
            {std::nullopt, indices(DType::I64, {0}, 5, 5)});
  for (DType d : all) {
    cases.add(K::Gather, {of(d, {6, 3}), of(DType::I64, {4})}, {}, 1,
              {std::nullopt, indices(DType::I64, {4}, 6, 6)});
  }
  for (DType d : all) {
    cases.add(K::Constant, {}, {{"value", random_tensor(d, Shape{2, 3}, 7, -5, 5)}});
  }
  cases.add(K::Constant, {}, {{"value", random_tensor(DType::F32, Shape{}, 8, -5, 5)}});
}

}  // namespace
}  // namespace volta::conformance::cases

namespace volta::conformance {

std::vector<ParityCase> parity_cases() {
  using namespace cases;
  std::vector<ParityCase> out;
  CaseList cases(out);
  elementwise_grid(cases);
  linalg_grid(cases);
  normalization_grid(cases);
  reduction_grid(cases);
  movement_grid(cases);
  math_cases(cases);
  spatial_cases(cases);
  normalization_cases(cases);
  indexing_cases(cases);
  resize_cases(cases);
  std::stable_sort(out.begin(), out.end(), [](const ParityCase& a, const ParityCase& b) {
    return op_index(a.op) < op_index(b.op);
  });
  return out;
}

std::vector<ParityCase> parity_cases(OpKind op) {
  std::vector<ParityCase> all = parity_cases();
  std::vector<ParityCase> out;
  for (ParityCase& c : all) {
    if (c.op == op) out.push_back(std::move(c));
  }
  return out;
}

}  // namespace volta::conformance
