// The op table. Each op is described exactly once: the core ops here, the rest in the
// family parts declared in op_table_builders.h.

#include <string>

#include "op_table_builders.h"

namespace volta::op_table {
namespace {

// FusedMatMul: a MatMul whose B is one matrix [K,N], plus a bias [N] along Y's last axis.
std::vector<TypeInfo> fused_matmul_shape(const InferContext& ctx) {
  const Shape& b = ctx.input(1).shape;
  const Shape& bias = ctx.input(2).shape;
  if (b.rank() != 2) {
    throw ShapeError("B must be one matrix [K,N], got " + b.str());
  }
  if (bias.rank() != 1 || bias[0] != b[1]) {
    throw ShapeError("bias must be [" + std::to_string(b[1]) + "] (B's columns), got " +
                     bias.str());
  }
  return shape_fn::matmul(ctx);
}

}  // namespace

void add_core_schemas(std::vector<OpSchema>& t) {
  using K = OpKind;
  using F = OpFamily;
  const InputDomain any = InputDomain::Any;

  t.push_back(binary(K::Add, "Add", kNumericTypes, any, "A + B"));
  t.push_back(binary(K::Sub, "Sub", kNumericTypes, any, "A - B"));
  t.push_back(binary(K::Mul, "Mul", kNumericTypes, any, "A * B"));
  t.push_back(binary(K::Div, "Div", kNumericTypes, InputDomain::NonZero,
                     "A / B (integers: truncation toward zero; division by zero is an error)"));
  OpSchema pow = binary(K::Pow, "Pow", kFloatTypes, any, "A ^ B");
  pow.inputs[0].domain = InputDomain::Positive;
  t.push_back(std::move(pow));
  t.push_back(unary(K::Neg, "Neg", F::Elementwise, kNumericTypes, any, "-X"));
  t.push_back(unary(K::Abs, "Abs", F::Elementwise, kNumericTypes, any, "|X|"));
  t.push_back(unary(K::Sqrt, "Sqrt", F::Elementwise, kFloatTypes, InputDomain::Positive,
                    "square root (NaN below zero)"));
  t.push_back(unary(K::Reciprocal, "Reciprocal", F::Elementwise, kFloatTypes, InputDomain::NonZero,
                    "1 / X"));
  t.push_back(unary(K::Exp, "Exp", F::Elementwise, kFloatTypes, any, "e^X"));
  t.push_back(unary(K::Log, "Log", F::Elementwise, kFloatTypes, InputDomain::Positive,
                    "natural logarithm"));
  t.push_back(unary(K::Erf, "Erf", F::Activation, kFloatTypes, any, "error function", {}, 9));
  t.push_back(unary(K::Tanh, "Tanh", F::Activation, kFloatTypes, any, "hyperbolic tangent"));
  t.push_back(unary(K::Sigmoid, "Sigmoid", F::Activation, kFloatTypes, any, "1 / (1 + e^-X)"));
  t.push_back(unary(K::Relu, "Relu", F::Activation, kNumericTypes, any, "max(X, 0)"));
  t.push_back(unary(K::LeakyRelu, "LeakyRelu", F::Activation, kFloatTypes, any,
                    "X if X >= 0 else alpha * X", {{"alpha", AttrType::Float, AttrValue{0.01}}}));
  t.push_back(unary(K::Gelu, "Gelu", F::Activation, kFloatTypes, any,
                    "X * Phi(X); approximate=\"tanh\" uses the tanh form",
                    {{"approximate",
                      AttrType::String,
                      AttrValue{std::string("none")},
                      std::nullopt,
                      std::nullopt,
                      {"none", "tanh"}}},
                    20));
  t.push_back(extremum(K::Min, "Min", "elementwise minimum of one or more broadcasting inputs"));
  t.push_back(extremum(K::Max, "Max", "elementwise maximum of one or more broadcasting inputs"));
  t.push_back(OpSchema{.kind = K::Where,
                       .name = "Where",
                       .family = F::Elementwise,
                       .inputs = {{"condition", 'B'}, {"X", 'T'}, {"Y", 'T'}},
                       .outputs = {{"output", 'T'}},
                       .type_params = {{'B', kBoolType}, {'T', kAllTypes}},
                       .infer = shape_fn::where,
                       .summary = "condition ? X : Y, broadcasting all three",
                       .nan_mode = NanMode::PassThrough,
                       .onnx_since = 9});
  t.push_back(logical(K::Equal, "Equal", {{"A", 'T'}, {"B", 'T'}}, kAllTypes,
                      NanMode::ComparesFalse, "A == B"));
  t.push_back(logical(K::Less, "Less", {{"A", 'T'}, {"B", 'T'}}, kNumericTypes,
                      NanMode::ComparesFalse, "A < B"));
  t.push_back(logical(K::Greater, "Greater", {{"A", 'T'}, {"B", 'T'}}, kNumericTypes,
                      NanMode::ComparesFalse, "A > B"));
  OpSchema not_op =
      logical(K::Not, "Not", {{"X", 'B'}}, kBoolType, NanMode::NotApplicable, "logical not", 1);
  not_op.infer = shape_fn::same_as_input0;
  not_op.aliasing = Aliasing::InPlaceInput0;
  t.push_back(std::move(not_op));
  t.push_back(logical(K::And, "And", {{"A", 'B'}, {"B", 'B'}}, kBoolType, NanMode::NotApplicable,
                      "logical and"));
  t.push_back(logical(K::Or, "Or", {{"A", 'B'}, {"B", 'B'}}, kBoolType, NanMode::NotApplicable,
                      "logical or"));
  t.push_back(OpSchema{.kind = K::Cast,
                       .name = "Cast",
                       .family = F::Elementwise,
                       .inputs = {{"input", 'T'}},
                       .outputs = {{"output", 0}},
                       .type_params = {{'T', kAllTypes}},
                       .attrs = {{"to",
                                  AttrType::String,
                                  std::nullopt,
                                  std::nullopt,
                                  std::nullopt,
                                  {"f32", "f64", "i64", "i32", "bool"}}},
                       .infer = shape_fn::cast,
                       .summary = "convert dtype (float to int truncates toward zero; "
                                  "NaN/Inf/out-of-range to int is an error)",
                       .onnx_since = 1});
  t.push_back(unary(
      K::Clip, "Clip", F::Elementwise, kNumericTypes, any, "min(max(X, min), max)",
      {{"min", AttrType::Float, AttrValue{-kInf}}, {"max", AttrType::Float, AttrValue{kInf}}}, 1));
  t.push_back(OpSchema{.kind = K::MatMul,
                       .name = "MatMul",
                       .family = F::Linalg,
                       .inputs = {{"A", 'T'}, {"B", 'T'}},
                       .outputs = {{"Y", 'T'}},
                       .type_params = {{'T', kFloatTypes}},
                       .infer = shape_fn::matmul,
                       .summary = "numpy matmul: batched, batch dims broadcast, 1-D promoted",
                       .accumulator = Accumulator::InputType});
  t.push_back(OpSchema{.kind = K::Gemm,
                       .name = "Gemm",
                       .family = F::Linalg,
                       .inputs = {{"A", 'T'}, {"B", 'T'}, {"C", 'T', true}},
                       .outputs = {{"Y", 'T'}},
                       .type_params = {{'T', kFloatTypes}},
                       .attrs = {{"alpha", AttrType::Float, AttrValue{1.0}},
                                 {"beta", AttrType::Float, AttrValue{1.0}},
                                 flag("transA", 0),
                                 flag("transB", 0)},
                       .infer = shape_fn::gemm,
                       .summary = "alpha * op(A) @ op(B) + beta * C, C broadcast to [M,N]",
                       .accumulator = Accumulator::InputType,
                       .onnx_since = 11});
  // Internal: what the gemm-epilogue-fusion pass makes of MatMul -> Add(bias) [-> activation].
  t.push_back(OpSchema{
      .kind = K::FusedMatMul,
      .name = "FusedMatMul",
      .family = F::Linalg,
      .inputs = {{"A", 'T'}, {"B", 'T'}, {"bias", 'T'}},
      .outputs = {{"Y", 'T'}},
      .type_params = {{'T', kFloatTypes}},
      .attrs = {{"activation",
                 AttrType::String,
                 AttrValue{std::string("none")},
                 std::nullopt,
                 std::nullopt,
                 {"none", "relu", "gelu", "gelu_tanh"}},
                flag("bias_first", 0)},
      .infer = fused_matmul_shape,
      .summary = "activation(MatMul(A, B) + bias) with B [K,N] and bias [N], bit for bit the "
                 "unfused ops (bias_first: the Add read bias as its first operand); internal, "
                 "made by the gemm-epilogue-fusion pass",
      .accumulator = Accumulator::InputType,
      .onnx_since = 0,
      .internal = true});
  t.push_back(softmax_like(K::Softmax, "Softmax", "exp(x - max) / sum along axis"));
  t.push_back(softmax_like(K::LogSoftmax, "LogSoftmax", "x - max - log(sum exp(x - max))"));
  t.push_back(
      OpSchema{.kind = K::LayerNormalization,
               .name = "LayerNormalization",
               .family = F::Normalization,
               .inputs = {{"X", 'T'}, {"Scale", 'T'}, {"B", 'T', true}},
               .outputs = {{"Y", 'T'}, {"Mean", 'T', true}, {"InvStdDev", 'T', true}},
               .type_params = {{'T', kFloatTypes}},
               .attrs = {axis_attr(-1), {"epsilon", AttrType::Float, AttrValue{1e-5}, 0.0, kInf}},
               .infer = shape_fn::layer_normalization,
               .summary = "normalize over axes [axis, rank), then * Scale + B",
               .accumulator = Accumulator::InputType,
               .onnx_since = 17});
  t.push_back(reduce(K::ReduceSum, "ReduceSum", kNumericTypes, any, "sum"));
  t.push_back(reduce(K::ReduceMean, "ReduceMean", kFloatTypes, any, "mean"));
  OpSchema rmax = reduce(K::ReduceMax, "ReduceMax", kNumericTypes, any, "maximum");
  OpSchema rmin = reduce(K::ReduceMin, "ReduceMin", kNumericTypes, any, "minimum");
  rmax.accumulator = rmin.accumulator = Accumulator::None;
  t.push_back(std::move(rmax));
  t.push_back(std::move(rmin));
  OpSchema rprod = reduce(K::ReduceProd, "ReduceProd", kNumericTypes, any, "product");
  OpSchema rl2 = reduce(K::ReduceL2, "ReduceL2", kFloatTypes, any, "sqrt(sum of x^2)");
  rprod.accumulator = rl2.accumulator = Accumulator::Wide;
  t.push_back(std::move(rprod));
  t.push_back(reduce(K::ReduceSumSquare, "ReduceSumSquare", kNumericTypes, any, "sum of x^2"));
  t.push_back(reduce(K::ReduceL1, "ReduceL1", kNumericTypes, any, "sum of |x|"));
  t.push_back(std::move(rl2));
  t.push_back(reduce(K::ReduceLogSumExp, "ReduceLogSumExp", kFloatTypes, any,
                     "log(sum exp(x)), computed as max + log(sum exp(x - max))"));
  t.push_back(arg_reduce(K::ArgMax, "ArgMax", "index of the maximum along axis"));
  t.push_back(arg_reduce(K::ArgMin, "ArgMin", "index of the minimum along axis"));
  t.push_back(
      OpSchema{.kind = K::CumSum,
               .name = "CumSum",
               .family = F::Reduction,
               .inputs = {{"x", 'T'}},
               .outputs = {{"y", 'T'}},
               .type_params = {{'T', kNumericTypes}},
               .attrs = {required("axis", AttrType::Int), flag("exclusive", 0), flag("reverse", 0)},
               .infer = shape_fn::cumsum,
               .summary = "running sum along axis (sequential, in index order)",
               .accumulator = Accumulator::Wide,
               .onnx_since = 11});

  const std::vector<OutputSpec> one_out = {{"output", 'T'}};
  t.push_back(movement(K::Reshape, "Reshape", {{"data", 'T'}}, one_out,
                       {required("shape", AttrType::Ints), flag("allowzero", 0)}, shape_fn::reshape,
                       Aliasing::ViewOfInput0, 5,
                       "same elements, new shape (0 copies a dim, -1 infers one)"));
  t.push_back(movement(K::Transpose, "Transpose", {{"data", 'T'}}, one_out, {ints_attr("perm")},
                       shape_fn::transpose, Aliasing::None, 1,
                       "permute axes (default: reverse them)"));
  t.push_back(movement(K::Concat, "Concat", {{"inputs", 'T', false, true}}, one_out,
                       {required("axis", AttrType::Int)}, shape_fn::concat, Aliasing::None, 4,
                       "join along axis"));
  t.push_back(movement(K::Split, "Split", {{"input", 'T'}}, {{"outputs", 'T', false, true}},
                       {axis_attr(0), ints_attr("split")}, shape_fn::split, Aliasing::None, 2,
                       "split along axis into the given sizes, or evenly"));
  t.push_back(movement(K::Slice, "Slice", {{"data", 'T'}}, one_out,
                       {required("starts", AttrType::Ints), required("ends", AttrType::Ints),
                        ints_attr("axes"), ints_attr("steps")},
                       shape_fn::slice, Aliasing::None, 10,
                       "strided slice with ONNX clamping; negative steps allowed"));
  t.push_back(movement(K::Gather, "Gather",
                       {{"data", 'T'}, {"indices", 'I', false, false, InputDomain::Index}}, one_out,
                       {axis_attr(0)}, shape_fn::gather, Aliasing::None, 1,
                       "take slices along axis at indices (negative indices count from the end)"));
  t.push_back(movement(K::Expand, "Expand", {{"input", 'T'}}, one_out,
                       {required("shape", AttrType::Ints)}, shape_fn::expand, Aliasing::None, 8,
                       "broadcast to shape (bidirectional)"));
  t.push_back(movement(K::Squeeze, "Squeeze", {{"data", 'T'}}, one_out, {ints_attr("axes")},
                       shape_fn::squeeze, Aliasing::ViewOfInput0, 1,
                       "drop size-1 axes (all of them when axes is empty)"));
  t.push_back(movement(K::Unsqueeze, "Unsqueeze", {{"data", 'T'}}, one_out,
                       {required("axes", AttrType::Ints)}, shape_fn::unsqueeze,
                       Aliasing::ViewOfInput0, 1, "insert size-1 axes"));
  t.push_back(movement(K::Flatten, "Flatten", {{"input", 'T'}}, one_out, {axis_attr(1)},
                       shape_fn::flatten, Aliasing::ViewOfInput0, 1,
                       "reshape to 2-D: [prod(dims[:axis]), prod(dims[axis:])]"));
  t.push_back(movement(K::Identity, "Identity", {{"input", 'T'}}, one_out, {},
                       shape_fn::same_as_input0, Aliasing::ViewOfInput0, 1, "copy"));
  OpSchema constant =
      movement(K::Constant, "Constant", {}, one_out, {required("value", AttrType::Tensor)},
               shape_fn::constant, Aliasing::None, 9, "a tensor given as an attribute");
  constant.differentiability = D::NotDifferentiable;
  t.push_back(std::move(constant));
}

namespace {

std::vector<OpSchema> build_table() {
  std::vector<OpSchema> parts;
  add_core_schemas(parts);
  add_math_schemas(parts);
  add_spatial_schemas(parts);
  add_normalization_schemas(parts);
  add_indexing_schemas(parts);
  add_resize_schemas(parts);
  // Put the schemas in OpKind order: tables indexed by op rely on it. An op no part
  // describes keeps a bare entry (no shape function), which the verifier rejects and the
  // op-table tests report.
  std::vector<OpSchema> t(static_cast<size_t>(kOpCount));
  std::vector<bool> described(static_cast<size_t>(kOpCount), false);
  for (int i = 0; i < kOpCount; ++i) {
    t[static_cast<size_t>(i)].kind = static_cast<OpKind>(i);
    t[static_cast<size_t>(i)].name = op_name(static_cast<OpKind>(i));
  }
  for (OpSchema& s : parts) {
    const auto i = static_cast<size_t>(op_index(s.kind));
    if (described[i] || s.name != op_name(s.kind)) {
      throw std::logic_error("op table: " + std::string(op_name(s.kind)) +
                             " is described twice or under another name");
    }
    described[i] = true;
    t[i] = std::move(s);
  }
  for (OpSchema& s : t) {
    if (s.onnx_name.empty() && !s.internal) s.onnx_name = s.name;
  }
  return t;
}

const std::vector<OpSchema>& table() {
  static const std::vector<OpSchema> kTable = build_table();
  return kTable;
}

}  // namespace
}  // namespace volta::op_table

namespace volta {

const OpSchema& op_schema(OpKind op) {
  return op_table::table()[static_cast<size_t>(op_index(op))];
}
std::span<const OpSchema> all_op_schemas() { return op_table::table(); }

}  // namespace volta
