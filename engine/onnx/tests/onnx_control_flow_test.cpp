// Sequences, Loop and Scan unrolled at import (lower_movement_sequence.cpp,
// lower_logical_loop.cpp), and the training preview domain's optimizers
// (lower_elementwise_optimizer.cpp). Optimizer values come from ONNX 1.23.2's reference
// implementation, run once and pasted here; the others are derived in the comments.
#define BOOST_TEST_MODULE onnx_control_flow

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "onnx_test_models.h"

namespace volta::onnx::test {
namespace {

pb::NodeProto* add_node(pb::GraphProto* g, const std::string& op,
                        const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs) {
  pb::NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(outputs.front() + "_node");
  for (const std::string& in : inputs) n->add_input(in);
  for (const std::string& out : outputs) n->add_output(out);
  return n;
}

// A value of element type `elem` and unknown shape (a body graph's formal parameter).
void add_unshaped(pb::ValueInfoProto* v, const std::string& name, int elem) {
  v->set_name(name);
  v->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
}

void add_int_initializer(pb::GraphProto* g, const std::string& name, int64_t value) {
  pb::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(pb::TensorProto::INT64);
  t->add_int64_data(value);
}

void add_bool_initializer(pb::GraphProto* g, const std::string& name, bool value) {
  pb::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(pb::TensorProto::BOOL);
  t->add_int32_data(value ? 1 : 0);
}

void set_graph(pb::NodeProto* n, const std::string& name, const pb::GraphProto& body) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(pb::AttributeProto::GRAPH);
  *a->mutable_g() = body;
}

Model parse(const pb::ModelProto& m) { return Model::parse(m.SerializeAsString(), "test.onnx"); }

// ---- Sequences -------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(sequences_split_erase_insert_count_index_and_stack) {
  pb::ModelProto m = empty_model(13, "sequences");
  auto* g = m.mutable_graph();
  add_io(g->add_input(), {"x", kFloat, {5, 2}});
  add_io(g->add_input(), {"t", kFloat, {2}});
  add_int_initializer(g, "minus_two", -2);
  add_int_initializer(g, "zero", 0);
  add_int_initializer(g, "minus_one", -1);
  set_int(*add_node(g, "SplitToSequence", {"x"}, {"rows"}), "keepdims", 0);
  add_node(g, "SequenceErase", {"rows", "minus_two"}, {"erased"});
  add_node(g, "SequenceInsert", {"erased", "t", "zero"}, {"inserted"});
  add_node(g, "SequenceLength", {"inserted"}, {"length"});
  pb::NodeProto* stack = add_node(g, "ConcatFromSequence", {"inserted"}, {"stacked"});
  set_int(*stack, "axis", 0);
  set_int(*stack, "new_axis", 1);
  add_node(g, "SequenceAt", {"inserted", "minus_one"}, {"last"});
  add_io(g->add_output(), {"length", kInt64, {}});
  add_io(g->add_output(), {"stacked", kFloat, {5, 2}});
  add_io(g->add_output(), {"last", kFloat, {2}});
  const std::vector<Tensor> out =
      run_cpu(parse(m), {tensor<float>(Shape{5, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}),
                         tensor<float>(Shape{2}, {10, 11})});
  // rows [0,1] [2,3] [4,5] [6,7] [8,9]; erasing at -2 drops [6,7]; t goes in front.
  check_values(out.at(0), {5});
  BOOST_TEST((out.at(1).shape() == Shape{5, 2}));
  check_values(out.at(1), {10, 11, 0, 1, 2, 3, 4, 5, 8, 9});
  check_values(out.at(2), {8, 9});
}

BOOST_AUTO_TEST_CASE(a_sequence_read_as_a_tensor_or_at_a_bad_position_is_refused) {
  pb::ModelProto m = empty_model(13, "sequence_as_tensor");
  auto* g = m.mutable_graph();
  add_io(g->add_input(), {"x", kFloat, {2}});
  add_node(g, "SequenceConstruct", {"x", "x"}, {"seq"});
  add_node(g, "Relu", {"seq"}, {"y"});
  add_io(g->add_output(), {"y", kFloat, {2}});
  const Tensor x = tensor<float>(Shape{2}, {1, 2});
  expect_import_error(parse(m), {x}, ErrorCode::ImportUnsupported, "reads the sequence 'seq'");

  pb::ModelProto at = empty_model(13, "sequence_at_2");
  g = at.mutable_graph();
  add_io(g->add_input(), {"x", kFloat, {2}});
  add_int_initializer(g, "two", 2);
  add_node(g, "SequenceConstruct", {"x", "x"}, {"seq"});
  add_node(g, "SequenceAt", {"seq", "two"}, {"y"});
  add_io(g->add_output(), {"y", kFloat, {2}});
  expect_import_error(parse(at), {x}, ErrorCode::ImportInvalidModel,
                      "position 2 is outside [-2, 1]");
}

// ---- Loop ------------------------------------------------------------------------------------

// body(i, cond, y) -> (cond, y + i, y + i).
pb::GraphProto counting_body() {
  pb::GraphProto body;
  body.set_name("body");
  add_unshaped(body.add_input(), "i", kInt64);
  add_unshaped(body.add_input(), "cond_in", kBool);
  add_unshaped(body.add_input(), "y_in", kFloat);
  add_node(&body, "Identity", {"cond_in"}, {"cond_out"});
  set_int(*add_node(&body, "Cast", {"i"}, {"i_float"}), "to", kFloat);
  add_node(&body, "Add", {"y_in", "i_float"}, {"y_out"});
  add_node(&body, "Identity", {"y_out"}, {"scan_out"});
  for (const char* name : {"cond_out", "y_out", "scan_out"}) {
    add_unshaped(body.add_output(), name, std::string(name) == "cond_out" ? kBool : kFloat);
  }
  return body;
}

Model counting_loop(int64_t trips) {
  pb::ModelProto m = empty_model(13, "loop");
  auto* g = m.mutable_graph();
  add_io(g->add_input(), {"y0", kFloat, {2}});
  add_int_initializer(g, "M", trips);
  add_bool_initializer(g, "cond", true);
  set_graph(add_node(g, "Loop", {"M", "cond", "y0"}, {"y", "scanned"}), "body", counting_body());
  add_io(g->add_output(), {"y", kFloat, {2}});
  add_io(g->add_output(), {"scanned", kFloat, {trips, 2}});
  return parse(m);
}

BOOST_AUTO_TEST_CASE(loop_unrolls_its_trip_count_and_stacks_the_scan_outputs) {
  // y: [1,2] -> +0 -> +1 -> +2: [1,2], [2,3], [4,5].
  const std::vector<Tensor> out = run_cpu(counting_loop(3), {tensor<float>(Shape{2}, {1, 2})});
  check_values(out.at(0), {4, 5});
  BOOST_TEST((out.at(1).shape() == Shape{3, 2}));
  check_values(out.at(1), {1, 2, 2, 3, 4, 5});
}

BOOST_AUTO_TEST_CASE(loop_refuses_more_iterations_than_it_unrolls) {
  expect_import_error(counting_loop(5000), {tensor<float>(Shape{2}, {1, 2})},
                      ErrorCode::ImportUnsupported, "4097 iterations; supported: up to 4096");
}

BOOST_AUTO_TEST_CASE(a_while_loop_runs_until_its_condition_on_the_data_is_false) {
  // body(i, cond, y) -> (sum(y + y) < 100, y + y): the plan is specialized on y0's value.
  pb::GraphProto body;
  body.set_name("body");
  add_unshaped(body.add_input(), "i", kInt64);
  add_unshaped(body.add_input(), "cond_in", kBool);
  add_unshaped(body.add_input(), "y_in", kFloat);
  add_node(&body, "Add", {"y_in", "y_in"}, {"y_out"});
  add_node(&body, "ReduceSum", {"y_out"}, {"total"});
  pb::TensorProto* limit = body.add_initializer();
  limit->set_name("limit");
  limit->set_data_type(pb::TensorProto::FLOAT);
  limit->add_float_data(100);
  add_node(&body, "Less", {"total", "limit"}, {"cond_out"});
  add_unshaped(body.add_output(), "cond_out", kBool);
  add_unshaped(body.add_output(), "y_out", kFloat);

  pb::ModelProto m = empty_model(13, "while");
  auto* g = m.mutable_graph();
  add_io(g->add_input(), {"y0", kFloat, {2}});
  add_bool_initializer(g, "cond", true);
  set_graph(add_node(g, "Loop", {"", "cond", "y0"}, {"y"}), "body", body);
  add_io(g->add_output(), {"y", kFloat, {2}});
  const Model model = parse(m);
  // [1,2] doubles until its sum reaches 100: [64,128]; [30,30] stops after one: [60,60].
  check_values(run_cpu(model, {tensor<float>(Shape{2}, {1, 2})}).at(0), {64, 128});
  check_values(run_cpu(model, {tensor<float>(Shape{2}, {30, 30})}).at(0), {60, 60});
}

// ---- Scan ------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(scan_runs_backwards_and_stacks_along_the_output_axis) {
  pb::GraphProto body;
  body.set_name("body");
  add_unshaped(body.add_input(), "s_in", kFloat);
  add_unshaped(body.add_input(), "x_t", kFloat);
  add_node(&body, "Add", {"s_in", "x_t"}, {"s_out"});
  add_node(&body, "Identity", {"s_out"}, {"scan_out"});
  add_unshaped(body.add_output(), "s_out", kFloat);
  add_unshaped(body.add_output(), "scan_out", kFloat);

  pb::ModelProto m = empty_model(11, "scan");
  auto* g = m.mutable_graph();
  add_io(g->add_input(), {"s0", kFloat, {2}});
  add_io(g->add_input(), {"x", kFloat, {3, 2}});
  pb::NodeProto* scan = add_node(g, "Scan", {"s0", "x"}, {"s", "sums"});
  set_graph(scan, "body", body);
  set_int(*scan, "num_scan_inputs", 1);
  set_ints(*scan, "scan_input_directions", {1});
  set_ints(*scan, "scan_output_axes", {1});
  add_io(g->add_output(), {"s", kFloat, {2}});
  add_io(g->add_output(), {"sums", kFloat, {2, 3}});
  // Rows [5,6], [3,4], [1,2] in turn: running sums [5,6], [8,10], [9,12], stacked on axis 1.
  const std::vector<Tensor> out = run_cpu(
      parse(m), {tensor<float>(Shape{2}, {0, 0}), tensor<float>(Shape{3, 2}, {1, 2, 3, 4, 5, 6})});
  check_values(out.at(0), {9, 12});
  BOOST_TEST((out.at(1).shape() == Shape{2, 3}));
  check_values(out.at(1), {5, 8, 9, 6, 10, 12});
}

// ---- Optimizers of ai.onnx.preview.training --------------------------------------------------

struct Optimizer {
  std::string op;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  NodeAttrs attrs;
};

std::vector<Tensor> step(const Optimizer& o, int64_t t) {
  pb::ModelProto m;
  m.set_ir_version(8);
  auto* domain = m.add_opset_import();
  domain->set_domain("ai.onnx.preview.training");
  domain->set_version(1);
  auto* g = m.mutable_graph();
  g->set_name(o.op);
  pb::NodeProto* n = add_node(g, o.op, o.inputs, o.outputs);
  n->set_domain("ai.onnx.preview.training");
  o.attrs(*n);
  std::vector<Tensor> values;
  for (const std::string& in : o.inputs) {
    if (in == "R") {
      add_io(g->add_input(), {in, kFloat, {}});
      values.push_back(tensor<float>(Shape{}, {0.1F}));
    } else if (in == "T") {
      add_io(g->add_input(), {in, kInt64, {}});
      values.push_back(tensor<int64_t>(Shape{}, {t}));
    } else {
      add_io(g->add_input(), {in, kFloat, {2}});
      const std::map<std::string, std::vector<float>> data = {
          {"X", {1, -2}}, {"G", {0.5, 0.25}}, {"V", {0.1, -0.2}}, {"H", {0.3, 0.4}}};
      values.push_back(Tensor::from<float>(Shape{2}, data.at(in)));
    }
  }
  for (const std::string& out : o.outputs) add_io(g->add_output(), {out, kFloat, {2}});
  return run_cpu(parse(m), values);
}

BOOST_AUTO_TEST_CASE(adagrad_decays_the_rate_and_accumulates_squared_gradients) {
  const Optimizer adagrad{"Adagrad", {"R", "T", "X", "G", "H"}, {"X2", "H2"}, [](pb::NodeProto& n) {
                            set_float(n, "decay_factor", 0.1F);
                            set_float(n, "epsilon", 1e-5F);
                            set_float(n, "norm_coefficient", 0.01F);
                          }};
  const std::vector<Tensor> out = step(adagrad, 3);
  check_values(out.at(0), {0.9475810527801514, -2.026289224624634}, 1e-6);
  check_values(out.at(1), {0.5600999593734741, 0.4528999924659729}, 1e-7);
}

BOOST_AUTO_TEST_CASE(adam_corrects_the_rate_from_the_second_step_and_decays_the_weights) {
  const Optimizer adam{
      "Adam", {"R", "T", "X", "G", "V", "H"}, {"X2", "V2", "H2"}, [](pb::NodeProto& n) {
        set_float(n, "alpha", 0.9F);
        set_float(n, "beta", 0.99F);
        set_float(n, "epsilon", 1e-3F);
        set_float(n, "norm_coefficient", 0.01F);
        set_float(n, "norm_coefficient_post", 0.02F);
      }};
  const std::vector<Tensor> out = step(adam, 3);
  check_values(out.at(0), {0.9639750649086928, -1.9444863501850735}, 1e-6);
  check_values(out.at(1), {0.14100000262260437, -0.15699999034404755}, 1e-7);
  check_values(out.at(2), {0.2996010184288025, 0.3965289890766144}, 1e-7);
  check_values(step(adam, 0).at(0), {0.9548011422157288, -1.9356050491333008}, 1e-6);
}

BOOST_AUTO_TEST_CASE(nesterov_momentum_takes_the_full_gradient_on_the_first_step) {
  const Optimizer momentum{
      "Momentum", {"R", "T", "X", "G", "V"}, {"X2", "V2"}, [](pb::NodeProto& n) {
        set_float(n, "alpha", 0.9F);
        set_float(n, "beta", 0.5F);
        set_string(n, "mode", "nesterov");
        set_float(n, "norm_coefficient", 0.01F);
      }};
  const std::vector<Tensor> later = step(momentum, 3);
  check_values(later.at(0), {0.9179499745368958, -2.0171499252319336}, 1e-6);
  check_values(later.at(1), {0.3449999988079071, -0.06499999016523361}, 1e-7);
  const std::vector<Tensor> first = step(momentum, 0);
  check_values(first.at(0), {0.8949999809265137, -2.0274999141693115}, 1e-6);
  check_values(first.at(1), {0.5999999642372131, 0.050000011920928955}, 1e-7);
}

// ---- Nesting limit ---------------------------------------------------------------------------

// A graph whose output y<level> is x after `depth` nested Ifs on cond (each If's else branch is
// a plain Identity, so the model grows linearly with depth).
pb::GraphProto nested_ifs(int depth, int level) {
  pb::GraphProto g;
  g.set_name("level" + std::to_string(level));
  const std::string out = "y" + std::to_string(level);
  if (depth == 0) {
    add_node(&g, "Identity", {"x"}, {out});
  } else {
    pb::NodeProto* n = add_node(&g, "If", {"cond"}, {out});
    set_graph(n, "then_branch", nested_ifs(depth - 1, level + 1));
    pb::GraphProto identity;
    identity.set_name("else" + std::to_string(level));
    add_node(&identity, "Identity", {"x"}, {"e" + std::to_string(level)});
    add_unshaped(identity.add_output(), "e" + std::to_string(level), kFloat);
    set_graph(n, "else_branch", identity);
  }
  add_unshaped(g.add_output(), out, kFloat);
  return g;
}

std::string nested_if_model(int depth) {
  pb::ModelProto m = empty_model(13, "nested");
  *m.mutable_graph() = nested_ifs(depth, 0);
  add_io(m.mutable_graph()->add_input(), {"cond", kBool, {}});
  add_io(m.mutable_graph()->add_input(), {"x", kFloat, {2}});
  m.mutable_graph()
      ->mutable_output(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->add_dim()
      ->set_dim_value(2);
  return m.SerializeAsString();
}

// Nesting is bounded by protobuf's recursion limit (100 message levels): the deepest model that
// parses imports and runs (no recursion of the importer runs out of stack), and one level more
// is refused as I-INVALID-MODEL naming the limit.
BOOST_AUTO_TEST_CASE(subgraph_nesting_up_to_protobufs_limit_runs_and_deeper_is_refused) {
  int deepest = 0;
  while (deepest < 100) {
    try {
      Model::parse(nested_if_model(deepest + 1), "nested.onnx");
    } catch (const VoltaError&) {
      break;
    }
    ++deepest;
  }
  BOOST_TEST(deepest >= 30);
  BOOST_TEST(deepest < 40);
  const Model model = Model::parse(nested_if_model(deepest), "nested.onnx");
  const std::vector<Tensor> out =
      run_cpu(model, {tensor<bool>(Shape{}, {true}), tensor<float>(Shape{2}, {1.5F, -2.0F})});
  check_values(out.at(0), {1.5, -2.0});
  try {
    Model::parse(nested_if_model(deepest + 1), "nested.onnx");
    BOOST_FAIL("a model nested past the limit parsed");
  } catch (const VoltaError& e) {
    BOOST_TEST(error_code_name(e.code()) == "I-INVALID-MODEL");
    BOOST_TEST(e.message().find("nests subgraphs deeper than protobuf's limit") !=
               std::string::npos);
  }
}

}  // namespace
}  // namespace volta::onnx::test
