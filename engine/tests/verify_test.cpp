// verify_graph: one case per kind of invalid graph, each pinning the diagnostic's code, node
// and exact message. Invalid graphs are built raw (add_value + append_node), which checks
// nothing, so each graph breaks exactly one rule.

#define BOOST_TEST_MODULE verify_test
#include "volta/ir/verify.h"

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "expect_error.h"
#include "volta/model/builtin_models.h"

namespace volta {
namespace {

using test::expect_error;

const Shape kVec2{2};

// Checks that `graph` breaks exactly one rule, reported with this code, node and message,
// and that verify_graph_or_throw throws that same diagnostic.
void expect_diagnostic(const Graph& graph, ErrorCode code, int node, const std::string& message) {
  const std::vector<Diagnostic> diags = verify_graph(graph);
  BOOST_REQUIRE_EQUAL(diags.size(), 1u);
  BOOST_CHECK_EQUAL(std::string(error_code_name(diags[0].code)),
                    std::string(error_code_name(code)));
  BOOST_CHECK_EQUAL(diags[0].node, node);
  BOOST_CHECK_EQUAL(diags[0].message, message);
  expect_error([&] { verify_graph_or_throw(graph); }, code, message);
}

// A raw graph of one node named `name`: graph inputs x0, x1, ... of the given types feed it
// in order (nullopt: an absent operand), and it writes fresh values y0, y1, ... of the given
// types, which are the graph outputs. Inputs take value ids first, then outputs.
Graph one_node_graph(OpKind op, const std::string& name,
                     const std::vector<std::optional<TypeInfo>>& inputs,
                     const std::vector<TypeInfo>& outputs, Attributes attrs = {}) {
  Graph g;
  Node node{op, name, {}, {}, std::move(attrs)};
  for (size_t i = 0; i < inputs.size(); ++i) {
    node.inputs.push_back(
        inputs[i] ? g.add_input("x" + std::to_string(i), inputs[i]->dtype, inputs[i]->shape)
                  : kNoValue);
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    node.outputs.push_back(
        g.add_value("y" + std::to_string(i), outputs[i].dtype, outputs[i].shape));
  }
  g.set_outputs(node.outputs);
  g.append_node(std::move(node));
  return g;
}

TypeInfo f32(Shape shape) { return {DType::F32, std::move(shape)}; }

BOOST_AUTO_TEST_CASE(valid_transformer_block_verifies_clean) {
  for (DType dtype : {DType::F32, DType::F64}) {
    const Graph g = transformer_block_graph({.dtype = dtype});
    const std::vector<Diagnostic> diags = verify_graph(g);
    for (const Diagnostic& d : diags) BOOST_ERROR(d.message);
    BOOST_CHECK(diags.empty());
    BOOST_CHECK_NO_THROW(verify_graph_or_throw(g));
  }
}

BOOST_AUTO_TEST_CASE(undefined_value) {
  {  // A value that exists but that nothing defines.
    Graph g;
    g.add_input("x", DType::F32, kVec2);
    const ValueId ghost = g.add_value("ghost", DType::F32, kVec2);
    const ValueId y = g.add_value("y", DType::F32, kVec2);
    g.append_node({OpKind::Relu, "relu", {ghost}, {y}, {}});
    g.set_outputs({y});
    expect_diagnostic(g, ErrorCode::VerifyUndefinedValue, 0,
                      "Node 'relu' (Relu): input 0 reads %1 'ghost', which nothing defines");
  }
  {  // An input id past the end of the value table.
    Graph g;
    g.add_input("x", DType::F32, kVec2);
    const ValueId y = g.add_value("y", DType::F32, kVec2);
    g.append_node({OpKind::Relu, "relu", {ValueId{7}}, {y}, {}});
    g.set_outputs({y});
    expect_diagnostic(g, ErrorCode::VerifyUndefinedValue, 0,
                      "Node 'relu' (Relu): input 0 refers to value %7, but the graph has 2 values");
  }
  {  // An output id past the end of the value table.
    Graph g;
    const ValueId x = g.add_input("x", DType::F32, kVec2);
    g.append_node({OpKind::Relu, "relu", {x}, {ValueId{9}}, {}});
    g.set_outputs({x});
    expect_diagnostic(g, ErrorCode::VerifyUndefinedValue, 0,
                      "Node 'relu' (Relu): output 0 is %9, but the graph has 1 value");
  }
}

BOOST_AUTO_TEST_CASE(use_before_def) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, kVec2);
  const ValueId a = g.add_value("a", DType::F32, kVec2);
  const ValueId b = g.add_value("b", DType::F32, kVec2);
  g.append_node({OpKind::Relu, "second", {a}, {b}, {}});
  g.append_node({OpKind::Relu, "first", {x}, {a}, {}});
  g.set_outputs({b});
  expect_diagnostic(
      g, ErrorCode::VerifyUseBeforeDef, 0,
      "Node 'second' (Relu): input 0 reads %1 'a' before node 1 'first' defines it (reader is "
      "node 0)");
}

// A declared shape past 2^48 elements (here 2^62, whose f32 byte count wraps to 0) is refused
// naming it, before a planner or an allocation could overflow.
BOOST_AUTO_TEST_CASE(a_value_past_the_size_limit) {
  Graph g;
  const Shape huge{int64_t{1} << 31, int64_t{1} << 31};
  const ValueId x = g.add_input("x", DType::F32, huge);
  g.set_outputs(g.add_node(OpKind::Relu, {x}, {}, "relu"));
  const std::vector<Diagnostic> diags = verify_graph(g);
  BOOST_REQUIRE_EQUAL(diags.size(), 2U);  // x and Relu's output
  BOOST_CHECK_EQUAL(std::string(error_code_name(diags[0].code)), "V-SHAPE");
  BOOST_CHECK_EQUAL(diags[0].message,
                    "value %0 'x' of type f32[2147483648,2147483648] has more than 2^48 elements, "
                    "Volta's limit");
  BOOST_CHECK_THROW(Tensor(DType::F32, huge), VoltaError);
}

BOOST_AUTO_TEST_CASE(redefined_value) {
  {  // Two nodes write the same value.
    Graph g;
    const ValueId x = g.add_input("x", DType::F32, kVec2);
    const ValueId y = g.add_value("y", DType::F32, kVec2);
    g.append_node({OpKind::Relu, "first", {x}, {y}, {}});
    g.append_node({OpKind::Neg, "again", {x}, {y}, {}});
    g.set_outputs({y});
    expect_diagnostic(g, ErrorCode::VerifyRedefinedValue, 1,
                      "Node 'again' (Neg): output 0 redefines %1 'y' (node 0 'first' defines it)");
  }
  {  // A node writes a graph input.
    Graph g;
    const ValueId x = g.add_input("x", DType::F32, kVec2);
    g.append_node({OpKind::Relu, "overwrite", {x}, {x}, {}});
    g.set_outputs({x});
    expect_diagnostic(g, ErrorCode::VerifyRedefinedValue, 0,
                      "Node 'overwrite' (Relu): output 0 redefines %0 'x' (it is a graph input)");
  }
  {  // A node writes a parameter.
    Graph g;
    const ValueId w = g.add_parameter("w", Tensor(DType::F32, kVec2));
    g.append_node({OpKind::Relu, "overwrite", {w}, {w}, {}});
    g.set_outputs({w});
    expect_diagnostic(g, ErrorCode::VerifyRedefinedValue, 0,
                      "Node 'overwrite' (Relu): output 0 redefines %0 'w' (it is a parameter)");
  }
}

BOOST_AUTO_TEST_CASE(undefined_graph_output) {
  {
    Graph g;
    const ValueId x = g.add_input("x", DType::F32, kVec2);
    const ValueId y = g.add_value("y", DType::F32, kVec2);
    const ValueId ghost = g.add_value("ghost", DType::F32, kVec2);
    g.append_node({OpKind::Relu, "relu", {x}, {y}, {}});
    g.set_outputs({y, ghost});
    expect_diagnostic(g, ErrorCode::VerifyUndefinedOutput, -1,
                      "graph output 1 %2 'ghost' is never defined");
  }
  {
    Graph g;
    g.add_input("x", DType::F32, kVec2);
    g.set_outputs({ValueId{4}});
    expect_diagnostic(g, ErrorCode::VerifyUndefinedOutput, -1,
                      "graph output 0 refers to value %4, but the graph has 1 value");
  }
}

BOOST_AUTO_TEST_CASE(no_outputs) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, kVec2);
  const ValueId y = g.add_value("y", DType::F32, kVec2);
  g.append_node({OpKind::Relu, "relu", {x}, {y}, {}});
  expect_diagnostic(g, ErrorCode::VerifyUndefinedOutput, -1, "the graph has no outputs");
}

BOOST_AUTO_TEST_CASE(input_arity) {
  const TypeInfo t = f32(kVec2);
  expect_diagnostic(one_node_graph(OpKind::Add, "add", {t, t, t}, {t}), ErrorCode::VerifyArity, 0,
                    "Node 'add' (Add): takes 2 inputs, got 3");
  expect_diagnostic(one_node_graph(OpKind::Relu, "relu", {}, {t}), ErrorCode::VerifyArity, 0,
                    "Node 'relu' (Relu): takes 1 input, got 0");
  expect_diagnostic(one_node_graph(OpKind::Gemm, "gemm", {f32({2, 2})}, {f32({2, 2})}),
                    ErrorCode::VerifyArity, 0, "Node 'gemm' (Gemm): takes 2 to 3 inputs, got 1");
  expect_diagnostic(one_node_graph(OpKind::Concat, "concat", {}, {t}, {{"axis", int64_t{0}}}),
                    ErrorCode::VerifyArity, 0,
                    "Node 'concat' (Concat): takes at least 1 input, got 0");
}

BOOST_AUTO_TEST_CASE(output_arity) {
  const TypeInfo t = f32(kVec2);
  expect_diagnostic(one_node_graph(OpKind::Relu, "relu", {t}, {t, t}), ErrorCode::VerifyOutputArity,
                    0, "Node 'relu' (Relu): produces 1 output, got 2");
  const TypeInfo row = f32({2, 3});
  expect_diagnostic(
      one_node_graph(OpKind::LayerNormalization, "ln", {row, f32({3})}, {row, row, row, row}),
      ErrorCode::VerifyOutputArity, 0,
      "Node 'ln' (LayerNormalization): produces 1 to 3 outputs, got 4");
}

BOOST_AUTO_TEST_CASE(missing_required_input) {
  const TypeInfo t = f32(kVec2);
  expect_diagnostic(one_node_graph(OpKind::Add, "add", {t, std::nullopt}, {t}),
                    ErrorCode::VerifyMissingInput, 0,
                    "Node 'add' (Add): required input 1 'B' is empty");
}

BOOST_AUTO_TEST_CASE(unknown_attribute) {
  const TypeInfo t = f32(kVec2);
  expect_diagnostic(one_node_graph(OpKind::Relu, "relu", {t}, {t}, {{"alpha", 0.5}}),
                    ErrorCode::VerifyUnknownAttribute, 0,
                    "Node 'relu' (Relu): unknown attribute 'alpha' (supported: none)");
  expect_diagnostic(one_node_graph(OpKind::LeakyRelu, "leaky", {t}, {t}, {{"slope", 0.5}}),
                    ErrorCode::VerifyUnknownAttribute, 0,
                    "Node 'leaky' (LeakyRelu): unknown attribute 'slope' (supported: alpha)");
}

BOOST_AUTO_TEST_CASE(missing_required_attribute) {
  expect_diagnostic(one_node_graph(OpKind::Reshape, "reshape", {f32({2, 3})}, {f32({3, 2})}),
                    ErrorCode::VerifyMissingAttribute, 0,
                    "Node 'reshape' (Reshape): required attribute 'shape' is missing");
}

BOOST_AUTO_TEST_CASE(attribute_type) {
  const TypeInfo t = f32(kVec2);
  expect_diagnostic(one_node_graph(OpKind::LeakyRelu, "leaky", {t}, {t}, {{"alpha", int64_t{1}}}),
                    ErrorCode::VerifyAttributeType, 0,
                    "Node 'leaky' (LeakyRelu): attribute 'alpha' is int, expected float");
}

BOOST_AUTO_TEST_CASE(attribute_range) {
  expect_diagnostic(
      one_node_graph(OpKind::Reshape, "reshape", {f32({2, 3})}, {f32({3, 2})},
                     {{"shape", std::vector<int64_t>{3, 2}}, {"allowzero", int64_t{2}}}),
      ErrorCode::VerifyAttributeRange, 0,
      "Node 'reshape' (Reshape): attribute 'allowzero' is 2, outside [0, 1]");
  const TypeInfo row = f32({2, 3});
  expect_diagnostic(
      one_node_graph(OpKind::LayerNormalization, "ln", {row, f32({3})}, {row},
                     {{"epsilon", -1e-5}}),
      ErrorCode::VerifyAttributeRange, 0,
      "Node 'ln' (LayerNormalization): attribute 'epsilon' is -1e-05, outside [0, inf]");
  expect_diagnostic(one_node_graph(OpKind::LayerNormalization, "ln", {row, f32({3})}, {row},
                                   {{"epsilon", std::nan("")}}),
                    ErrorCode::VerifyAttributeRange, 0,
                    "Node 'ln' (LayerNormalization): attribute 'epsilon' is nan, outside [0, inf]");
  const TypeInfo t = f32(kVec2);
  expect_diagnostic(
      one_node_graph(OpKind::Gelu, "gelu", {t}, {t}, {{"approximate", std::string("fast")}}),
      ErrorCode::VerifyAttributeRange, 0,
      "Node 'gelu' (Gelu): attribute 'approximate' is \"fast\", supported: \"none\", \"tanh\"");
}

BOOST_AUTO_TEST_CASE(dtype_outside_constraint) {
  const TypeInfo i64{DType::I64, kVec2};
  expect_diagnostic(one_node_graph(OpKind::Sqrt, "sqrt", {i64}, {i64}), ErrorCode::VerifyDType, 0,
                    "Node 'sqrt' (Sqrt): input 0 'X' has dtype i64, supported: {f32,f64,f16,bf16}");
  const TypeInfo t = f32(kVec2);
  expect_diagnostic(one_node_graph(OpKind::Where, "where", {t, t, t}, {t}), ErrorCode::VerifyDType,
                    0,
                    "Node 'where' (Where): input 0 'condition' has dtype f32, supported: {bool}");
}

BOOST_AUTO_TEST_CASE(mismatched_dtypes_within_type_parameter) {
  const TypeInfo t = f32(kVec2);
  expect_diagnostic(one_node_graph(OpKind::Add, "add", {t, TypeInfo{DType::F64, kVec2}}, {t}),
                    ErrorCode::VerifyDType, 0,
                    "Node 'add' (Add): input 1 'B' has dtype f64, but input 0 'A' of the same "
                    "type parameter T has f32");
}

BOOST_AUTO_TEST_CASE(shape_errors) {
  const auto expect_shape_error = [](const Graph& g, const std::string& message) {
    expect_diagnostic(g, ErrorCode::VerifyShape, 0, message);
  };
  expect_shape_error(
      one_node_graph(OpKind::MatMul, "mm", {f32({2, 3}), f32({4, 5})}, {f32({2, 5})}),
      "Node 'mm' (MatMul): inner dimensions differ: A is [2,3], B is [4,5] (3 != 4)");
  expect_shape_error(one_node_graph(OpKind::Add, "add", {f32({2, 3}), f32({4})}, {f32({2, 3})}),
                     "Node 'add' (Add): input 1 shape [4] does not broadcast with [2,3]");
  expect_shape_error(one_node_graph(OpKind::Reshape, "reshape", {f32({2, 3})}, {f32({4, 2})},
                                    {{"shape", std::vector<int64_t>{4, 2}}}),
                     "Node 'reshape' (Reshape): shape [4,2] holds 8 elements, the input [2,3] "
                     "holds 6");
  expect_shape_error(one_node_graph(OpKind::Concat, "concat", {f32({2, 3}), f32({3, 3})},
                                    {f32({2, 6})}, {{"axis", int64_t{1}}}),
                     "Node 'concat' (Concat): input 1 shape [3,3] differs from [2,3] outside "
                     "axis 1");
  expect_shape_error(one_node_graph(OpKind::Softmax, "softmax", {f32({2, 3})}, {f32({2, 3})},
                                    {{"axis", int64_t{2}}}),
                     "Node 'softmax' (Softmax): axis 2 is out of range for rank 2 (valid: [-2, "
                     "1])");
  expect_shape_error(one_node_graph(OpKind::Split, "split", {f32({6})}, {f32({2}), f32({3})},
                                    {{"split", std::vector<int64_t>{2, 3}}}),
                     "Node 'split' (Split): split sizes [2,3] sum to 5, the axis has 6");
  expect_shape_error(
      one_node_graph(OpKind::Gather, "gather", {f32({}), TypeInfo{DType::I64, kVec2}}, {f32({})}),
      "Node 'gather' (Gather): Gather needs data of rank >= 1, got a scalar");
  // Dims whose product would overflow int64 (found by onnx_model_fuzz) are refused, not wrapped.
  expect_shape_error(
      one_node_graph(OpKind::Reshape, "reshape", {f32({2, 3})}, {f32({2, 3})},
                     {{"shape", std::vector<int64_t>{int64_t{1} << 40, int64_t{1} << 40, -1}}}),
      "Node 'reshape' (Reshape): shape [1099511627776,1099511627776,-1] has more than 2^48 "
      "elements");
  expect_shape_error(one_node_graph(OpKind::Tile, "tile", {f32({2, 3})}, {f32({2, 3})},
                                    {{"repeats", std::vector<int64_t>{int64_t{1} << 62, 1}}}),
                     "Node 'tile' (Tile): repeats [4611686018427387904,1] tile [2,3] past 2^48 "
                     "elements");
}

BOOST_AUTO_TEST_CASE(declared_output_type_differs_from_inferred) {
  expect_diagnostic(
      one_node_graph(OpKind::MatMul, "mm", {f32({2, 3}), f32({3, 6})}, {f32({6, 6})}),
      ErrorCode::VerifyDeclaredType, 0,
      "Node 'mm' (MatMul): output 0 %2 'y0' is f32[2,6] for inputs f32[2,3], f32[3,6], graph "
      "declares f32[6,6]");
  const TypeInfo t = f32(kVec2);
  expect_diagnostic(one_node_graph(OpKind::Relu, "relu", {t}, {TypeInfo{DType::F64, kVec2}}),
                    ErrorCode::VerifyDeclaredType, 0,
                    "Node 'relu' (Relu): output 0 %1 'y0' is f32[2] for inputs f32[2], graph "
                    "declares f64[2]");
}

BOOST_AUTO_TEST_CASE(parameter_data_differs_from_declared_type) {
  Graph g;
  const ValueId w = g.add_parameter("w", Tensor(DType::F32, kVec2));
  g.value(w).shape = Shape{3};
  g.set_outputs({w});
  expect_diagnostic(g, ErrorCode::VerifyParameter, -1,
                    "parameter %0 'w' is declared f32[3], but its data is f32[2]");
  g.value(w) = Value{"w", DType::I64, kVec2, ValueKind::Parameter};
  expect_diagnostic(g, ErrorCode::VerifyParameter, -1,
                    "parameter %0 'w' is declared i64[2], but its data is f32[2]");
}

BOOST_AUTO_TEST_CASE(duplicate_value_names) {
  Graph g;
  const ValueId a = g.add_input("x", DType::F32, kVec2);
  const ValueId b = g.add_input("x", DType::F32, kVec2);
  g.set_outputs({g.add(OpKind::Add, {a, b}, {}, "sum")});
  expect_diagnostic(g, ErrorCode::VerifyDuplicateName, -1,
                    "value %1 reuses the name 'x' of value %0");
}

BOOST_AUTO_TEST_CASE(every_problem_is_reported_and_the_first_is_thrown) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, kVec2);
  const ValueId y = g.add_value("y", DType::F32, kVec2);
  const ValueId z = g.add_value("z", DType::F32, kVec2);
  g.append_node({OpKind::Relu, "bad_attr", {x}, {y}, {{"alpha", 0.5}}});
  g.append_node({OpKind::Add, "bad_arity", {y}, {z}, {}});
  g.set_outputs({z});
  const std::vector<Diagnostic> diags = verify_graph(g);
  BOOST_REQUIRE_EQUAL(diags.size(), 2u);
  BOOST_CHECK_EQUAL(diags[0].node, 0);
  BOOST_CHECK_EQUAL(diags[1].node, 1);
  BOOST_CHECK_EQUAL(diags[1].message, "Node 'bad_arity' (Add): takes 2 inputs, got 1");
  expect_error([&] { verify_graph_or_throw(g); }, ErrorCode::VerifyUnknownAttribute,
               "Node 'bad_attr' (Relu): unknown attribute 'alpha' (supported: none) (and 1 more)");
}

// The builder rejects what the verifier rejects, with the same diagnostic, and leaves the
// graph as it was.
BOOST_AUTO_TEST_CASE(add_node_throws_the_verifier_diagnostic) {
  const auto expect_rejected = [](OpKind op, std::vector<TypeInfo> inputs, Attributes attrs,
                                  ErrorCode code) {
    Graph g;
    std::vector<ValueId> ids;
    std::vector<std::optional<TypeInfo>> raw_inputs;
    for (size_t i = 0; i < inputs.size(); ++i) {
      ids.push_back(g.add_input("x" + std::to_string(i), inputs[i].dtype, inputs[i].shape));
      raw_inputs.emplace_back(inputs[i]);
    }
    // The verifier's view of the same node, with an arbitrary declared output.
    const Graph raw = one_node_graph(op, "node", raw_inputs, {inputs[0]}, attrs);
    const std::vector<Diagnostic> diags = verify_graph(raw);
    BOOST_REQUIRE(!diags.empty());
    BOOST_CHECK_EQUAL(std::string(error_code_name(diags[0].code)),
                      std::string(error_code_name(code)));
    expect_error([&] { g.add(op, ids, attrs, "node"); }, code, diags[0].message);
    BOOST_CHECK_EQUAL(g.num_nodes(), 0);
    BOOST_CHECK_EQUAL(g.num_values(), static_cast<int>(inputs.size()));
  };
  expect_rejected(OpKind::MatMul, {f32({2, 3}), f32({4, 5})}, {}, ErrorCode::VerifyShape);
  expect_rejected(OpKind::Sqrt, {TypeInfo{DType::I32, kVec2}}, {}, ErrorCode::VerifyDType);
  expect_rejected(OpKind::Relu, {f32(kVec2)}, {{"alpha", 0.5}}, ErrorCode::VerifyUnknownAttribute);
  expect_rejected(OpKind::Reshape, {f32(kVec2)}, {}, ErrorCode::VerifyMissingAttribute);
  expect_rejected(OpKind::Add, {f32(kVec2), f32(kVec2), f32(kVec2)}, {}, ErrorCode::VerifyArity);
  expect_error([] { Graph().add_node(OpKind::Relu, {}, {}, "node", 1); }, ErrorCode::VerifyArity,
               "Node 'node' (Relu): takes 1 input, got 0");
}

}  // namespace
}  // namespace volta
