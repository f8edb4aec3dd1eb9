// Models newer than the ONNX library Volta links (1.12: opsets up to 17, IR versions up to 8):
// read up to the newest opset and IR version Volta knows (onnx_versions.h), checked by the
// library where it knows the schema and by the lowerings elsewhere; the versions of opsets 18
// to 28 that changed an op's inputs or attributes, each lowered from its new form; anything
// newer refused naming both versions.
#define BOOST_TEST_MODULE onnx_versions

#include "onnx_versions.h"

#include "lowering.h"
#include "onnx_test_models.h"

namespace volta::onnx::test {
namespace {

// Parsing `m` fails with `code` and a message containing `fragment`.
void expect_parse_error(const pb::ModelProto& m, ErrorCode code, const std::string& fragment) {
  try {
    Model::parse(m.SerializeAsString(), "m.onnx");
    BOOST_FAIL("expected " << error_code_name(code));
  } catch (const VoltaError& e) {
    BOOST_TEST(std::string(error_code_name(e.code())) == std::string(error_code_name(code)));
    BOOST_TEST(e.message().find(fragment) != std::string::npos, e.message());
  }
}

// y = Relu(x) as a model of `opset` and `ir_version`.
pb::ModelProto relu_model(int64_t opset, int64_t ir_version) {
  pb::ModelProto m;
  m.set_ir_version(ir_version);
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  auto* g = m.mutable_graph();
  g->set_name("relu");
  add_io(g->add_input(), {"x", kFloat, {3}});
  add_io(g->add_output(), {"y", kFloat, {3}});
  pb::NodeProto* n = g->add_node();
  n->set_op_type("Relu");
  n->add_input("x");
  n->add_output("y");
  return m;
}

BOOST_AUTO_TEST_CASE(every_ir_version_and_opset_up_to_the_newest_is_read) {
  const Tensor x = tensor<float>(Shape{3}, {-1.0F, 0.5F, 2.0F});
  for (const auto& [opset, ir] :
       {std::pair<int64_t, int64_t>{17, 8}, {18, 8}, {21, 10}, {kNewestOpset, kNewestIrVersion}}) {
    BOOST_TEST_CONTEXT("opset " << opset << ", IR version " << ir) {
      const Model model = Model::parse(relu_model(opset, ir).SerializeAsString(), "relu.onnx");
      BOOST_TEST(model.opset() == opset);
      BOOST_TEST(model.ir_version() == ir);
      check_values(run_cpu(model, {x}).at(0), {0.0, 0.5, 2.0});
    }
  }
}

BOOST_AUTO_TEST_CASE(versions_newer_than_volta_reads_are_refused_naming_both) {
  expect_parse_error(relu_model(kNewestOpset + 1, kNewestIrVersion), ErrorCode::ImportUnsupported,
                     "imports opset 29 of the default domain; Volta reads opsets 1 to 28");
  expect_parse_error(relu_model(kNewestOpset, kNewestIrVersion + 1), ErrorCode::ImportUnsupported,
                     "has IR version 15; Volta reads IR versions up to 14");
}

BOOST_AUTO_TEST_CASE(a_newer_model_is_still_checked) {
  // The library's checker on a node whose schema it knows: Relu takes one input.
  pb::ModelProto two_inputs = relu_model(21, 10);
  two_inputs.mutable_graph()->mutable_node(0)->add_input("x");
  expect_parse_error(two_inputs, ErrorCode::ImportInvalidModel, "fails the ONNX checker");
  // Volta's own graph rules: names defined before use, and once.
  pb::ModelProto unsorted = relu_model(21, 10);
  unsorted.mutable_graph()->mutable_node(0)->set_input(0, "z");
  expect_parse_error(unsorted, ErrorCode::ImportInvalidModel, "topologically sorted");
  pb::ModelProto twice = relu_model(21, 10);
  *twice.mutable_graph()->add_node() = twice.graph().node(0);
  expect_parse_error(twice, ErrorCode::ImportInvalidModel, "single static assignment");
  pb::ModelProto unknown = relu_model(21, 10);
  unknown.mutable_graph()->mutable_node(0)->set_op_type("NoSuchOp");
  expect_parse_error(unknown, ErrorCode::ImportInvalidModel, "No Op registered for NoSuchOp");
}

BOOST_AUTO_TEST_CASE(newer_element_types_are_unsupported_and_named) {
  pb::ModelProto m = relu_model(21, 10);
  m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(22);
  const Model model = Model::parse(m.SerializeAsString(), "int4.onnx");
  BOOST_TEST(model.inputs().at(0).type == "INT4");
  BOOST_TEST(!model.inputs().at(0).dtype.has_value());
  BOOST_TEST(onnx_type_name(17) == "FLOAT8E4M3FN");
  BOOST_TEST(onnx_type_name(28) == "FLOAT6E3M2");
  BOOST_TEST(onnx_type_name(29) == "element type 29");
}

BOOST_AUTO_TEST_CASE(a_version_whose_new_form_no_lowering_reads_is_refused_naming_the_last_read) {
  // OptionalHasElement 18 takes tensors as well as optionals; were it lowered from version 15,
  // a model of opset 18 would be refused until that lowering read the new form.
  const Lowering has{"OptionalHasElement", OpFamily::Elementwise, 15, nullptr, std::nullopt, {}};
  BOOST_TEST(check_version("OptionalHasElement", 17, has).problem.empty());
  BOOST_TEST(check_version("OptionalHasElement", 17, has).version == 15);
  const VersionCheck refused = check_version("OptionalHasElement", kNewestOpset, has);
  BOOST_TEST(refused.problem ==
             "version 18 of OptionalHasElement changed its inputs or attributes and is not "
             "supported yet; supported: versions 15 to 15 (opset 17 and older)");
  BOOST_TEST(!refused.invalid);
  BOOST_TEST(check_version("OptionalHasElement", 14, has).problem ==
             "ONNX has no op OptionalHasElement at opset 14");
  BOOST_TEST(check_version("OptionalHasElement", 14, has).invalid);
  const Lowering from_18{
      "OptionalHasElement", OpFamily::Elementwise, 18, nullptr, std::nullopt, {}};
  BOOST_TEST(check_version("OptionalHasElement", 17, from_18).problem ==
             "version 15 of OptionalHasElement is not supported; supported: versions >= 18");
}

BOOST_AUTO_TEST_CASE(reductions_take_axes_as_an_input_from_opset_18) {
  const Tensor x = tensor<float>(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  const Model by_attribute =
      one_node("ReduceMean", 17, {{"x", kFloat, {2, 3}}}, {"y", kFloat, {2}}, [](pb::NodeProto& n) {
        set_ints(n, "axes", {1});
        set_int(n, "keepdims", 0);
      });
  check_values(run_cpu(by_attribute, {x}).at(0), {2.0, 5.0});
  const Model by_input =
      one_node("ReduceMean", 18, {{"x", kFloat, {2, 3}}, {"axes", kInt64, {1}}}, {"y", kFloat, {2}},
               [](pb::NodeProto& n) { set_int(n, "keepdims", 0); });
  check_values(run_cpu(by_input, {x, tensor<int64_t>(Shape{1}, {1})}).at(0), {2.0, 5.0});
  // No axes: every axis, or none with noop_with_empty_axes.
  const Model all = one_node("ReduceMax", 18, {{"x", kFloat, {2, 3}}}, {"y", kFloat, {1, 1}});
  check_values(run_cpu(all, {x}).at(0), {6.0});
  const Model noop = one_node("ReduceLogSum", 18, {{"x", kFloat, {2, 3}}}, {"y", kFloat, {2, 3}},
                              [](pb::NodeProto& n) { set_int(n, "noop_with_empty_axes", 1); });
  check_values(run_cpu(noop, {x}).at(0),
               {0.0, std::log(2.0), std::log(3.0), std::log(4.0), std::log(5.0), std::log(6.0)},
               1e-6);
}

BOOST_AUTO_TEST_CASE(split_18_makes_num_outputs_parts_the_last_one_smaller) {
  const Model model =
      one_node("Split", 18, {{"x", kFloat, {5}}},
               std::vector<Io>{{"a", kFloat, {2}}, {"b", kFloat, {2}}, {"c", kFloat, {1}}},
               [](pb::NodeProto& n) { set_int(n, "num_outputs", 3); });
  const std::vector<Tensor> out = run_cpu(model, {tensor<float>(Shape{5}, {1, 2, 3, 4, 5})});
  check_values(out.at(0), {1, 2});
  check_values(out.at(1), {3, 4});
  check_values(out.at(2), {5});
  const Model wrong = one_node("Split", 18, {{"x", kFloat, {4}}},
                               std::vector<Io>{{"a", kFloat, {2}}, {"b", kFloat, {2}}},
                               [](pb::NodeProto& n) { set_int(n, "num_outputs", 3); });
  expect_import_error(wrong, {tensor<float>(Shape{4}, {1, 2, 3, 4})}, ErrorCode::ImportInvalidModel,
                      "num_outputs 3 must equal the node's 2");
}

BOOST_AUTO_TEST_CASE(pad_18_pads_only_the_axes_it_names) {
  const Model model = one_node(
      "Pad", 18,
      {{"x", kFloat, {2, 2}}, {"pads", kInt64, {2}}, {"", kFloat, {}}, {"axes", kInt64, {1}}},
      {"y", kFloat, {2, 4}});
  const std::vector<Tensor> in = {tensor<float>(Shape{2, 2}, {1, 2, 3, 4}),
                                  tensor<int64_t>(Shape{2}, {1, 1}),
                                  tensor<int64_t>(Shape{1}, {-1})};
  check_values(run_cpu(model, in).at(0), {0, 1, 2, 0, 0, 3, 4, 0});
}

BOOST_AUTO_TEST_CASE(cast_19_reads_saturate_which_only_float8_targets_use) {
  const Model model =
      one_node("Cast", 19, {{"x", kFloat, {2}}}, {"y", kInt32, {2}}, [](pb::NodeProto& n) {
        set_int(n, "to", pb::TensorProto::INT32);
        set_int(n, "saturate", 0);
      });
  check_values(run_cpu(model, {tensor<float>(Shape{2}, {1.5F, -2.5F})}).at(0), {1, -2});
  const Model float8 = one_node("Cast", 19, {{"x", kFloat, {2}}}, {"y", 17, {2}},
                                [](pb::NodeProto& n) { set_int(n, "to", 17); });
  expect_import_error(float8, {tensor<float>(Shape{2}, {1, 2})}, ErrorCode::ImportUnsupported,
                      "FLOAT8E4M3FN");
}

BOOST_AUTO_TEST_CASE(gelu_20_lowers_onto_the_internal_gelu) {
  const Model model = one_node("Gelu", 20, {{"x", kFloat, {3}}}, {"y", kFloat, {3}});
  const Tensor y = run_cpu(model, {tensor<float>(Shape{3}, {-1.0F, 0.0F, 1.0F})}).at(0);
  check_values(y, {-0.15865525, 0.0, 0.84134475}, 1e-6);
  const Model before = one_node("Gelu", 20, {{"x", kFloat, {3}}}, {"y", kFloat, {3}},
                                [](pb::NodeProto& n) { set_string(n, "approximate", "erf"); });
  expect_import_error(before, {tensor<float>(Shape{3}, {0, 0, 0})}, ErrorCode::ImportUnsupported,
                      "approximate \"erf\"; supported: \"none\", \"tanh\"");
}

BOOST_AUTO_TEST_CASE(resize_18_resizes_the_axes_it_names_keeping_the_aspect_ratio) {
  // sizes [3, 3] for axes (2, 3) of a 1x1x2x4 input, not_larger: one scale, min(3/2, 3/4) =
  // 0.75, so the output is 1x1x2x3 (round-half-up(0.75 * 2) = 2, 0.75 * 4 = 3).
  const Model model = one_node(
      "Resize", 18,
      {{"x", kFloat, {1, 1, 2, 4}}, {"", kFloat, {}}, {"", kFloat, {}}, {"sizes", kInt64, {2}}},
      {"y", kFloat, {1, 1, 2, 3}}, [](pb::NodeProto& n) {
        set_string(n, "mode", "nearest");
        set_string(n, "keep_aspect_ratio_policy", "not_larger");
        set_ints(n, "axes", {2, 3});
      });
  const Tensor y = run_cpu(model, {tensor<float>(Shape{1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}),
                                   tensor<int64_t>(Shape{2}, {3, 3})})
                       .at(0);
  BOOST_TEST(y.shape().str() == "[1,1,2,3]");
}

BOOST_AUTO_TEST_CASE(pad_19_wraps_periodically_past_the_axis_length) {
  const Model model =
      one_node("Pad", 19, {{"x", kFloat, {1, 3}}, {"pads", kInt64, {4}}}, {"y", kFloat, {1, 9}},
               [](pb::NodeProto& n) { set_string(n, "mode", "wrap"); });
  const std::vector<Tensor> in = {tensor<float>(Shape{1, 3}, {1, 2, 3}),
                                  tensor<int64_t>(Shape{4}, {0, 2, 0, 4})};
  check_values(run_cpu(model, in).at(0), {2, 3, 1, 2, 3, 1, 2, 3, 1});
  const Model old =
      one_node("Pad", 18, {{"x", kFloat, {1, 3}}, {"pads", kInt64, {4}}}, {"y", kFloat, {1, 9}},
               [](pb::NodeProto& n) { set_string(n, "mode", "wrap"); });
  expect_import_error(old, in, ErrorCode::ImportUnsupported,
                      "mode \"wrap\"; supported: \"constant\", \"reflect\", \"edge\"");
}

BOOST_AUTO_TEST_CASE(space_to_depth_28_crd_keeps_each_channel_s_blocks_together) {
  auto model = [](const std::string& mode) {
    return one_node("SpaceToDepth", 28, {{"x", kFloat, {1, 2, 2, 2}}}, {"y", kFloat, {1, 8, 1, 1}},
                    [mode](pb::NodeProto& n) {
                      set_int(n, "blocksize", 2);
                      set_string(n, "mode", mode);
                    });
  };
  const Tensor x = tensor<float>(Shape{1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  check_values(run_cpu(model("CRD"), {x}).at(0), {0, 1, 2, 3, 4, 5, 6, 7});
  check_values(run_cpu(model("DCR"), {x}).at(0), {0, 4, 1, 5, 2, 6, 3, 7});
}

BOOST_AUTO_TEST_CASE(swiglu_28_gates_b_with_the_swish_of_a) {
  const Model model =
      one_node("SwiGLU", 28, {{"a", kFloat, {2}}, {"b", kFloat, {2}}}, {"y", kFloat, {2}});
  check_values(
      run_cpu(model, {tensor<float>(Shape{2}, {0, 1}), tensor<float>(Shape{2}, {2, 3})}).at(0),
      {0.0, 3.0 / (1.0 + std::exp(-1.0))}, 1e-6);
  const Model mismatched =
      one_node("SwiGLU", 28, {{"a", kFloat, {2}}, {"b", kFloat, {1}}}, {"y", kFloat, {2}});
  expect_import_error(mismatched, {tensor<float>(Shape{2}, {0, 1}), tensor<float>(Shape{1}, {2})},
                      ErrorCode::ImportInvalidModel, "must have one dtype and shape");
}

BOOST_AUTO_TEST_CASE(reduce_max_and_min_20_take_bool) {
  const Tensor x = tensor<bool>(Shape{2, 2}, {1, 0, 0, 0});  // bool
  const Tensor axes = tensor<int64_t>(Shape{1}, {1});
  for (const auto& [op, want] :
       {std::pair<std::string, std::vector<double>>{"ReduceMax", {1, 0}}, {"ReduceMin", {0, 0}}}) {
    const Model model =
        one_node(op, 20, {{"x", kBool, {2, 2}}, {"axes", kInt64, {1}}}, {"y", kBool, {2}},
                 [](pb::NodeProto& n) { set_int(n, "keepdims", 0); });
    const Tensor y = run_cpu(model, {x, axes}).at(0);
    BOOST_TEST((y.dtype() == DType::Bool));
    check_values(y, want);
  }
}

BOOST_AUTO_TEST_CASE(byte_types_are_named_when_refused) {
  const Model model = one_node("Relu", 21, {{"x", kUint8, {2}}}, {"y", kUint8, {2}});
  BOOST_TEST(model.inputs().at(0).type == "UINT8");
}

}  // namespace
}  // namespace volta::onnx::test
