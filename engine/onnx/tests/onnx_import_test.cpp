// The importer's contract: specialization on shape-feeding input values, the plan cache,
// every unsupported node reported at once, and clear errors for bad models and inputs.
#define BOOST_TEST_MODULE onnx_import
#include <onnx/onnx_pb.h>

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>

#include "volta/autograd/autograd.h"
#include "volta/error.h"
#include "volta/onnx/model.h"
#include "volta/onnx/session.h"
#include "volta/reference/reference.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"
#include "volta/train/training_session.h"

namespace volta::onnx {
namespace {

// Import-time values evaluated by the CPU backend, as a Session on it would.
ImportOptions cpu_import() {
  static const std::unique_ptr<Backend> cpu = make_backend("cpu");
  ImportOptions options;
  options.evaluator = make_backend_evaluator(*cpu, DeterminismMode::Strict);
  return options;
}

namespace pb = ::onnx;

void add_io(pb::ValueInfoProto* v, const std::string& name, int elem_type,
            const std::vector<int64_t>& dims) {
  v->set_name(name);
  auto* tensor = v->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  auto* shape = tensor->mutable_shape();
  for (int64_t d : dims) {
    if (d < 0) {
      shape->add_dim()->set_dim_param("N");
    } else {
      shape->add_dim()->set_dim_value(d);
    }
  }
}

pb::NodeProto* add_node(pb::GraphProto* g, const std::string& op,
                        const std::vector<std::string>& in, const std::vector<std::string>& out,
                        const std::string& name = {}) {
  pb::NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& s : in) n->add_input(s);
  for (const auto& s : out) n->add_output(s);
  return n;
}

std::string serialize(pb::ModelProto& m, int opset) {
  m.set_ir_version(8);
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  return m.SerializeAsString();
}

// y = Reshape(x, shape) with `shape` a graph input: the plan depends on its value.
Model reshape_model() {
  pb::ModelProto m;
  auto* g = m.mutable_graph();
  g->set_name("reshape");
  add_io(g->add_input(), "x", pb::TensorProto::FLOAT, {-1, 6});
  add_io(g->add_input(), "shape", pb::TensorProto::INT64, {2});
  add_io(g->add_output(), "y", pb::TensorProto::FLOAT, {-1, -1});
  add_node(g, "Reshape", {"x", "shape"}, {"y"}, "reshape");
  return Model::parse(serialize(m, 13), "reshape.onnx");
}

Tensor iota(const Shape& shape) {
  Tensor t(DType::F32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_double(i, static_cast<double>(i));
  return t;
}

BOOST_AUTO_TEST_CASE(shape_inputs_specialize_the_plan_by_value) {
  const Model model = reshape_model();
  BOOST_TEST(model.inputs().size() == 2u);
  BOOST_TEST(model.opset() == 13);
  const std::vector<Tensor> in = {iota(Shape{2, 6}), Tensor::from<int64_t>(Shape{2}, {3, 4})};
  const ImportedGraph imported = model.import_for(in, cpu_import());
  BOOST_TEST(imported.value_inputs == std::vector<int>{1});
  BOOST_TEST(imported.output_names == std::vector<std::string>{"y"});
  BOOST_TEST(specialization_key(in, imported.value_inputs) != specialization_key(in, {}));

  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  Session session(model, *cpu, DeterminismMode::Strict);
  std::vector<Tensor> out = session.run(in);
  BOOST_TEST(out.at(0).shape().str() == "[3,4]");
  BOOST_TEST(out.at(0).get_double(11) == 11.0);
  session.run(in);
  BOOST_TEST(session.cache_stats().hits == 1);
  BOOST_TEST(session.cache_stats().misses == 1);
  // Same shapes, another shape value: a new specialization.
  const std::vector<Tensor> other = {iota(Shape{2, 6}), Tensor::from<int64_t>(Shape{2}, {6, 2})};
  out = session.run(other);
  BOOST_TEST(out.at(0).shape().str() == "[6,2]");
  BOOST_TEST(session.cache_stats().misses == 2);
  BOOST_TEST(session.cache_stats().entries == 2);
  session.run(other);
  session.run(in);
  BOOST_TEST(session.cache_stats().hits == 3);
}

// A dense layer whose weights a trainable import makes states: y = Reshape(Clip(Relu(x W + B),
// lo, hi), [-1, 16, 16]). lo and hi are float initializers Clip reads by value (frozen even
// when trainable); the shape is an int64 initializer (always a parameter).
constexpr int64_t kIn = 64, kOut = 256;

void add_initializer(pb::GraphProto* g, const std::string& name, const Tensor& t) {
  pb::TensorProto* p = g->add_initializer();
  p->set_name(name);
  p->set_data_type(t.dtype() == DType::I64 ? pb::TensorProto::INT64 : pb::TensorProto::FLOAT);
  for (int d = 0; d < t.shape().rank(); ++d) p->add_dims(t.shape()[d]);
  p->set_raw_data(std::string(static_cast<const char*>(t.data()), t.nbytes()));
}

Model dense_model() {
  pb::ModelProto m;
  auto* g = m.mutable_graph();
  g->set_name("dense");
  add_io(g->add_input(), "x", pb::TensorProto::FLOAT, {-1, kIn});
  add_io(g->add_output(), "y", pb::TensorProto::FLOAT, {-1, 16, 16});
  Tensor w(DType::F32, Shape{kIn, kOut});
  for (int64_t i = 0; i < w.numel(); ++i) w.set_double(i, static_cast<double>(i % 7) - 3.0);
  Tensor b(DType::F32, Shape{kOut});
  for (int64_t i = 0; i < b.numel(); ++i) b.set_double(i, static_cast<double>(i % 5));
  add_initializer(g, "W", w);
  add_initializer(g, "B", b);
  add_initializer(g, "lo", Tensor::from<float>(Shape{}, {0.5F}));
  add_initializer(g, "hi", Tensor::from<float>(Shape{}, {40.0F}));
  add_initializer(g, "shape", Tensor::from<int64_t>(Shape{3}, {-1, 16, 16}));
  add_node(g, "MatMul", {"x", "W"}, {"h"}, "matmul");
  add_node(g, "Add", {"h", "B"}, {"a"}, "bias");
  add_node(g, "Relu", {"a"}, {"r"}, "relu");
  add_node(g, "Clip", {"r", "lo", "hi"}, {"c"}, "clip");
  add_node(g, "Reshape", {"c", "shape"}, {"y"}, "reshape");
  return Model::parse(serialize(m, 13), "dense.onnx");
}

BOOST_AUTO_TEST_CASE(a_trainable_import_makes_float_weights_states) {
  const Model model = dense_model();
  ImportOptions options = cpu_import();
  options.trainable = true;
  const std::vector<Tensor> in{iota(Shape{2, kIn})};
  ImportedGraph imported = model.import_for(in, options);
  std::vector<std::string> states;
  for (ValueId v : imported.graph.states()) states.push_back(imported.graph.value(v).name);
  BOOST_TEST(states == (std::vector<std::string>{"W", "B"}));
  BOOST_TEST(imported.frozen_initializers == (std::vector<std::string>{"lo", "hi"}));
  BOOST_REQUIRE_EQUAL(imported.initial_states.size(), 2u);
  BOOST_TEST(imported.initial_states[0].shape().str() == "[64,256]");
  BOOST_TEST(imported.initial_states[1].get_double(4) == 4.0);
  // Inference import: every initializer a parameter, nothing bound at run time.
  const ImportedGraph frozen = model.import_for(in, cpu_import());
  BOOST_TEST(frozen.graph.states().empty());
  BOOST_TEST(frozen.initial_states.empty());
}

// Weights are stored once however many plans a session caches: as states when trainable, as
// parameters the plans share when frozen.
BOOST_AUTO_TEST_CASE(a_session_stores_its_weights_once_for_every_plan) {
  const Model model = dense_model();
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  Session frozen(model, *cpu, DeterminismMode::Strict);
  Session trainable(model, *cpu, DeterminismMode::Strict, SessionOptions{.trainable = true});
  for (int64_t batch : {1, 2, 3, 4}) {
    const std::vector<Tensor> in{iota(Shape{batch, kIn})};
    const std::vector<Tensor> want = frozen.run(in);
    const std::vector<Tensor> got = trainable.run(in);
    BOOST_TEST(got.at(0).bit_equal(want.at(0)));  // the same kernels on the same values
  }
  const int64_t weight_bytes = (kIn * kOut + kOut) * 4;
  const SessionMemory f = frozen.memory();
  const SessionMemory t = trainable.memory();
  BOOST_TEST_MESSAGE("4-plan session, frozen: parameters " << f.parameter_bytes << " B, states "
                                                           << f.state_bytes << " B, arena "
                                                           << f.arena_bytes << " B");
  BOOST_TEST_MESSAGE("4-plan session, trainable: parameters " << t.parameter_bytes << " B, states "
                                                              << t.state_bytes << " B, arena "
                                                              << t.arena_bytes << " B");
  BOOST_TEST(f.plans == 4);
  BOOST_TEST(t.plans == 4);
  BOOST_TEST(f.state_bytes == 0);
  BOOST_TEST(f.parameter_bytes >= weight_bytes);                      // W and B, once
  BOOST_TEST(f.parameter_bytes < weight_bytes + weight_bytes / 100);  // not once per plan
  BOOST_TEST(t.state_bytes == weight_bytes);                          // once
  BOOST_TEST(t.parameter_bytes < weight_bytes / 100);  // lo, hi and the shape, per plan
  BOOST_TEST(trainable.state_names() == (std::vector<std::string>{"B", "W"}));

  // Every plan binds the one storage: zeroing W makes every batch size see y = clip(B).
  Tensor& w = trainable.state("W");
  w = Tensor(DType::F32, Shape{kIn, kOut});
  for (int64_t batch : {1, 4}) {
    const std::vector<Tensor> y = trainable.run(std::vector<Tensor>{iota(Shape{batch, kIn})});
    BOOST_TEST(y.at(0).get_double(batch * kOut - 1) == 0.5);  // B = 0 there, clipped to lo
    BOOST_TEST(y.at(0).get_double(batch * kOut - 2) == 4.0);
  }
  BOOST_TEST(trainable.cache_stats().misses == 4);
  try {
    trainable.state("lo");
    BOOST_FAIL("expected E-INVALID-ARGUMENT");
  } catch (const VoltaError& e) {
    BOOST_TEST(e.message() == "the session has no state 'lo' (states: B, W)");
  }
}

BOOST_AUTO_TEST_CASE(inputs_must_match_the_declared_interface) {
  const Model model = reshape_model();
  const std::vector<Tensor> wrong = {iota(Shape{2, 5}), Tensor::from<int64_t>(Shape{2}, {2, 5})};
  try {
    model.import_for(wrong, cpu_import());
    BOOST_FAIL("expected R-INPUT-MISMATCH");
  } catch (const VoltaError& e) {
    BOOST_TEST((e.code() == ErrorCode::InputMismatch));
    BOOST_TEST(e.message().find("graph input 'x' is FLOAT[?,6]; given f32 [2,5]") !=
               std::string::npos);
  }
  BOOST_CHECK_THROW(model.import_for(std::vector<Tensor>{iota(Shape{2, 6})}, cpu_import()),
                    VoltaError);
}

BOOST_AUTO_TEST_CASE(check_lists_every_unsupported_node_at_once) {
  pb::ModelProto m;
  auto* g = m.mutable_graph();
  g->set_name("mixed");
  add_io(g->add_input(), "x", pb::TensorProto::FLOAT, {4});
  add_io(g->add_output(), "u", pb::TensorProto::FLOAT, {-1});
  add_io(g->add_output(), "w", pb::TensorProto::FLOAT, {4});
  add_io(g->add_output(), "r", pb::TensorProto::FLOAT, {4});
  add_io(g->add_output(), "s", pb::TensorProto::FLOAT, {4});
  add_node(g, "RandomUniformLike", {"x"}, {"u"}, "noise");  // random ops are unsupported
  add_node(g, "Bernoulli", {"x"}, {"w"}, "coin");
  add_node(g, "Identity", {"x"}, {"r"}, "copy");
  add_node(g, "Identity", {"u"}, {"s_in"}, "depends_on_noise");  // skipped: its input failed
  auto* c = add_node(g, "Constant", {}, {"s"}, "text");
  auto* attr = c->add_attribute();
  attr->set_name("value_string");
  attr->set_type(pb::AttributeProto::STRING);
  attr->set_s("hello");
  add_io(g->add_output(), "s_in", pb::TensorProto::FLOAT, {-1});
  const Model model = Model::parse(serialize(m, 17), "mixed.onnx");
  const std::vector<ImportIssue> issues = model.check(cpu_import());
  BOOST_REQUIRE_EQUAL(issues.size(), 3u);
  BOOST_TEST(issues[0].node == "noise");
  BOOST_TEST(issues[0].message.find("op RandomUniformLike is not supported") != std::string::npos);
  BOOST_TEST(issues[1].node == "coin");
  BOOST_TEST(issues[2].node == "text");
  BOOST_TEST(
      issues[2].message.find("attribute 'value_string' is not supported") != std::string::npos,
      issues[2].message);
  try {
    model.import_for(std::vector<Tensor>{iota(Shape{4})}, cpu_import());
    BOOST_FAIL("expected I-UNSUPPORTED");
  } catch (const VoltaError& e) {
    BOOST_TEST((e.code() == ErrorCode::ImportUnsupported));
    BOOST_TEST(e.message().find("node 'noise' (RandomUniformLike)") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(unread_attributes_are_unsupported_never_ignored) {
  pb::ModelProto m;
  auto* g = m.mutable_graph();
  g->set_name("flatten");
  add_io(g->add_input(), "x", pb::TensorProto::FLOAT, {2, 3});
  add_io(g->add_output(), "y", pb::TensorProto::FLOAT, {2, 3});
  auto* n = add_node(g, "Identity", {"x"}, {"y"}, "copy");
  auto* attr = n->add_attribute();  // Identity has no attributes: the checker allows unknown ones
  attr->set_name("mystery");
  attr->set_type(pb::AttributeProto::INT);
  attr->set_i(1);
  try {
    const Model model = Model::parse(serialize(m, 13), "attr.onnx");
    const std::vector<ImportIssue> issues = model.check(cpu_import());
    BOOST_REQUIRE_EQUAL(issues.size(), 1u);
    BOOST_TEST(issues[0].message.find("attribute 'mystery' is not supported") != std::string::npos);
  } catch (const VoltaError& e) {
    // The ONNX checker may reject the attribute first; either way it is an error.
    BOOST_TEST((e.code() == ErrorCode::ImportInvalidModel));
  }
}

BOOST_AUTO_TEST_CASE(values_needed_at_import_name_the_input_when_unknown) {
  const Model model = reshape_model();
  // check() imports with zeros but no input values: Reshape's shape is resolved at run time,
  // which is not an issue.
  BOOST_TEST(model.check(cpu_import()).empty());
}

BOOST_AUTO_TEST_CASE(bad_bytes_are_an_invalid_model) {
  try {
    Model::parse("not a model", "junk.onnx");
    BOOST_FAIL("expected I-INVALID-MODEL");
  } catch (const VoltaError& e) {
    BOOST_TEST((e.code() == ErrorCode::ImportInvalidModel));
    BOOST_TEST(e.message().find("junk.onnx") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(tensor_files_round_trip) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / "volta_onnx_import_test_tensor.pb";
  const Tensor t = Tensor::from<int32_t>(Shape{2, 2}, {1, -2, 3, -4});
  write_tensor_file(file, t, "t");
  const NamedTensor back = read_tensor_file(file);
  BOOST_TEST(back.name == "t");
  BOOST_TEST(back.tensor.bit_equal(t));
  std::filesystem::remove(file);
}

// Writes `p` to a temporary tensor file and reads it back.
NamedTensor read_back(const pb::TensorProto& p, const std::string& stem) {
  const std::filesystem::path file = std::filesystem::temp_directory_path() / (stem + ".pb");
  {
    std::ofstream out(file, std::ios::binary);
    out << p.SerializeAsString();
  }
  struct Remove {
    std::filesystem::path file;
    ~Remove() { std::filesystem::remove(file); }
  } remove{file};
  return read_tensor_file(file);
}

BOOST_AUTO_TEST_CASE(unsupported_tensor_dtypes_are_named) {
  pb::TensorProto p;
  p.set_data_type(pb::TensorProto::COMPLEX64);
  p.add_dims(1);
  p.set_raw_data(std::string(8, '\0'));
  try {
    read_back(p, "volta_onnx_import_test_c64");
    BOOST_FAIL("expected I-UNSUPPORTED");
  } catch (const VoltaError& e) {
    BOOST_TEST((e.code() == ErrorCode::ImportUnsupported));
    BOOST_TEST(e.message().find("COMPLEX64") != std::string::npos);
    BOOST_TEST(e.message().find("FLOAT16, BFLOAT16, INT8, UINT8") != std::string::npos);
  }
}

// Each element type's typed field, as ONNX assigns them: f16 and bf16 as bits in int32_data,
// the narrow integers as values in int32_data, u32 and u64 in uint64_data; raw_data bools
// become 0 or 1.
BOOST_AUTO_TEST_CASE(every_dtype_reads_from_its_typed_field_and_raw_data) {
  pb::TensorProto half;
  half.set_data_type(pb::TensorProto::FLOAT16);
  half.add_dims(2);
  half.add_int32_data(0x3C00);
  half.add_int32_data(0xFE00);
  const Tensor h = read_back(half, "volta_onnx_import_test_f16").tensor;
  BOOST_TEST((h.dtype() == DType::F16));
  BOOST_TEST(static_cast<const uint16_t*>(h.data())[0] == 0x3C00);
  BOOST_TEST(static_cast<const uint16_t*>(h.data())[1] == 0xFE00);

  pb::TensorProto bytes;
  bytes.set_data_type(pb::TensorProto::INT8);
  bytes.add_dims(2);
  bytes.add_int32_data(-128);
  bytes.add_int32_data(127);
  const Tensor b = read_back(bytes, "volta_onnx_import_test_i8").tensor;
  BOOST_TEST((b.dtype() == DType::I8));
  BOOST_TEST(b.get_int(0) == -128);
  BOOST_TEST(b.get_int(1) == 127);

  pb::TensorProto wide;
  wide.set_data_type(pb::TensorProto::UINT64);
  wide.add_dims(1);
  wide.add_uint64_data(UINT64_MAX);
  const Tensor w = read_back(wide, "volta_onnx_import_test_u64").tensor;
  BOOST_TEST((w.dtype() == DType::U64));
  BOOST_TEST(w.data_as<uint64_t>()[0] == UINT64_MAX);

  pb::TensorProto flags;
  flags.set_data_type(pb::TensorProto::BOOL);
  flags.add_dims(3);
  flags.set_raw_data(std::string("\x00\x01\x07", 3));
  const Tensor f = read_back(flags, "volta_onnx_import_test_bool").tensor;
  const auto* stored = static_cast<const uint8_t*>(f.data());
  BOOST_TEST((std::vector<uint8_t>(stored, stored + 3) == std::vector<uint8_t>{0, 1, 1}));
}

// A two-layer MLP as an ONNX model: x [N, 8] -> MatMul W1 + B1 -> Tanh -> MatMul W2 + B2 -> y.
constexpr int64_t kMlpIn = 8, kMlpHidden = 16, kMlpOut = 4;

Tensor uniform(Shape shape, int salt) {
  Tensor t(DType::F32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) {
    t.set_double(i, static_cast<double>((i * 37 + salt * 11) % 19) / 19.0 - 0.5);
  }
  return t;
}

Model mlp_model() {
  pb::ModelProto m;
  auto* g = m.mutable_graph();
  g->set_name("mlp");
  add_io(g->add_input(), "x", pb::TensorProto::FLOAT, {-1, kMlpIn});
  add_io(g->add_output(), "y", pb::TensorProto::FLOAT, {-1, kMlpOut});
  add_initializer(g, "W1", uniform(Shape{kMlpIn, kMlpHidden}, 1));
  add_initializer(g, "B1", uniform(Shape{kMlpHidden}, 2));
  add_initializer(g, "W2", uniform(Shape{kMlpHidden, kMlpOut}, 3));
  add_initializer(g, "B2", uniform(Shape{kMlpOut}, 4));
  add_node(g, "MatMul", {"x", "W1"}, {"h"}, "fc1");
  add_node(g, "Add", {"h", "B1"}, {"a"}, "fc1.bias");
  add_node(g, "Tanh", {"a"}, {"t"}, "tanh");
  add_node(g, "MatMul", {"t", "W2"}, {"o"}, "fc2");
  add_node(g, "Add", {"o", "B2"}, {"y"}, "fc2.bias");
  return Model::parse(serialize(m, 13), "mlp.onnx");
}

// loss = mean((y - target)^2) appended to a forward whose output 0 is y.
ValueId append_mse(Graph& g) {
  const Value y = g.value(g.outputs()[0]);
  const ValueId target = g.add_input("target", y.dtype, y.shape);
  const ValueId e = g.add(OpKind::Sub, {g.outputs()[0], target});
  const ValueId loss =
      g.add(OpKind::ReduceMean, {g.add(OpKind::Mul, {e, e})}, {{"keepdims", int64_t{0}}});
  g.set_outputs({loss});
  return loss;
}

// The same MLP built with the graph builder, its weights states (in the ONNX initializers' order).
Graph mlp_graph_in_cpp(int64_t batch) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{batch, kMlpIn});
  const ValueId w1 = g.add_state("W1", DType::F32, Shape{kMlpIn, kMlpHidden});
  const ValueId b1 = g.add_state("B1", DType::F32, Shape{kMlpHidden});
  const ValueId w2 = g.add_state("W2", DType::F32, Shape{kMlpHidden, kMlpOut});
  const ValueId b2 = g.add_state("B2", DType::F32, Shape{kMlpOut});
  const ValueId t = g.add(OpKind::Tanh, {g.add(OpKind::Add, {g.add(OpKind::MatMul, {x, w1}), b1})});
  g.set_outputs({g.add(OpKind::Add, {g.add(OpKind::MatMul, {t, w2}), b2})});
  return g;
}

// An imported model whose float initializers are made trainable trains in a TrainingSession: the
// loss falls, and it takes the same steps, bit for bit, as the same model built in C++.
BOOST_AUTO_TEST_CASE(a_trainable_import_trains_like_the_same_graph_built_in_cpp) {
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  const Model model = mlp_model();
  constexpr int64_t kBatch = 6;
  const std::vector<Tensor> batch{uniform(Shape{kBatch, kMlpIn}, 5),
                                  uniform(Shape{kBatch, kMlpOut}, 6)};
  ImportOptions options = cpu_import();
  options.trainable = true;
  ImportedGraph imported = model.import_for(std::span(batch).first(1), options);
  const ValueId loss = append_mse(imported.graph);
  Graph cpp = mlp_graph_in_cpp(kBatch);
  const ValueId cpp_loss = append_mse(cpp);
  const train::TrainingOptions sgd{.optimizer = {.kind = train::OptimizerConfig::Kind::Sgd,
                                                 .schedule = {.base_lr = 0.2},
                                                 .momentum = 0.9}};
  train::TrainingSession onnx_session(imported.graph, loss, imported.initial_states, sgd, *cpu,
                                      DeterminismMode::Strict);
  train::TrainingSession cpp_session(cpp, cpp_loss, imported.initial_states, sgd, *cpu,
                                     DeterminismMode::Strict);
  BOOST_TEST(onnx_session.parameter_names() == (std::vector<std::string>{"W1", "B1", "W2", "B2"}));
  double first = 0, last = 0;
  for (int step = 0; step < 30; ++step) {
    last = onnx_session.step(batch);
    if (step == 0) first = last;
    BOOST_TEST(cpp_session.step(batch) == last, "step " << step);
  }
  BOOST_TEST_MESSAGE("ONNX MLP, SGD momentum 30 steps: loss " << first << " -> " << last);
  BOOST_TEST(last < 0.5 * first);
  for (const std::string& name : onnx_session.parameter_names()) {
    BOOST_TEST(onnx_session.state(name).bit_equal(cpp_session.state(name)), name);
  }
}

// Training-mode BatchNormalization (opset 15), as the importer lowers it: batch statistics from
// primitive ops around the inference op. Its gradients flow through the batch statistics: the
// reference engine's float64 gradients of x, scale and B match central finite differences of
// the reference forward, and a TrainingSession trains scale and B while the running mean and
// variance, which the loss does not read, stay as they were.
Model batch_norm_training_model() {
  pb::ModelProto m;
  auto* g = m.mutable_graph();
  g->set_name("bn");
  add_io(g->add_input(), "x", pb::TensorProto::DOUBLE, {3, 2, 2, 3});
  add_io(g->add_output(), "y", pb::TensorProto::DOUBLE, {3, 2, 2, 3});
  add_io(g->add_output(), "running_mean", pb::TensorProto::DOUBLE, {2});
  add_io(g->add_output(), "running_var", pb::TensorProto::DOUBLE, {2});
  const auto f64 = [](std::initializer_list<double> v) {
    return Tensor::from<double>(Shape{static_cast<int64_t>(v.size())}, v);
  };
  const auto add = [&](const std::string& name, const Tensor& t) {
    pb::TensorProto* p = g->add_initializer();
    p->set_name(name);
    p->set_data_type(pb::TensorProto::DOUBLE);
    p->add_dims(t.numel());
    p->set_raw_data(std::string(static_cast<const char*>(t.data()), t.nbytes()));
  };
  add("scale", f64({1.5, -0.5}));
  add("B", f64({0.25, 0.75}));
  add("mean", f64({0.0, 0.1}));
  add("var", f64({1.0, 2.0}));
  pb::NodeProto* n = add_node(g, "BatchNormalization", {"x", "scale", "B", "mean", "var"},
                              {"y", "running_mean", "running_var"}, "bn");
  pb::AttributeProto* a = n->add_attribute();
  a->set_name("training_mode");
  a->set_type(pb::AttributeProto::INT);
  a->set_i(1);
  return Model::parse(serialize(m, 15), "bn.onnx");
}

std::vector<Tensor*> pointers_to(std::vector<Tensor>& tensors) {
  std::vector<Tensor*> out;
  out.reserve(tensors.size());
  for (Tensor& t : tensors) out.push_back(&t);
  return out;
}

BOOST_AUTO_TEST_CASE(training_mode_batch_normalization_differentiates_through_its_statistics) {
  const Model model = batch_norm_training_model();
  Tensor x(DType::F64, Shape{3, 2, 2, 3});
  for (int64_t i = 0; i < x.numel(); ++i) x.set_double(i, std::sin(0.7 * static_cast<double>(i)));
  const std::vector<Tensor> in{x};
  ImportOptions options = cpu_import();
  options.trainable = true;
  ImportedGraph imported = model.import_for(in, options);
  Graph& g = imported.graph;
  Tensor r(DType::F64, Shape{3, 2, 2, 3});
  for (int64_t i = 0; i < r.numel(); ++i) r.set_double(i, std::cos(1.3 * static_cast<double>(i)));
  const ValueId loss =
      g.add(OpKind::ReduceSum, {g.add(OpKind::Mul, {g.outputs()[0], g.add_parameter("r", r)})},
            {{"keepdims", int64_t{0}}});
  g.set_outputs({loss});
  const ValueId scale = *g.find_value("scale"), bias = *g.find_value("B");
  const std::vector<ValueId> trainables = {g.inputs()[0], scale, bias};
  const TrainingGraph t = build_training_graph(g, loss, trainables);
  std::vector<Tensor> states = imported.initial_states;
  const std::vector<Tensor> grads = reference::evaluate(t.graph, in, pointers_to(states));
  const auto loss_at = [&](const Tensor& xv, std::vector<Tensor> sv) {
    return reference::evaluate(g, std::vector<Tensor>{xv}, pointers_to(sv)).at(0).get_double(0);
  };
  constexpr double kEps = 1e-6;
  const char* const names[] = {"x", "scale", "B"};
  for (size_t k = 0; k < trainables.size(); ++k) {
    const Tensor& grad = grads.at(k + 1);
    // x is input 0; scale and B are states, found by their index among the graph's states.
    size_t state = 0;
    while (k > 0 && g.states()[state] != trainables[k]) ++state;
    for (int64_t e = 0; e < grad.numel(); ++e) {
      Tensor xp = x, xm = x;
      std::vector<Tensor> sp = imported.initial_states, sm = imported.initial_states;
      Tensor& plus = k == 0 ? xp : sp[state];
      Tensor& minus = k == 0 ? xm : sm[state];
      plus.set_double(e, plus.get_double(e) + kEps);
      minus.set_double(e, minus.get_double(e) - kEps);
      const double fd = (loss_at(xp, sp) - loss_at(xm, sm)) / (2 * kEps);
      BOOST_TEST(std::abs(grad.get_double(e) - fd) <= 1e-5 + 1e-3 * std::abs(fd),
                 names[k] << "[" << e << "]: gradient " << grad.get_double(e)
                          << ", finite difference " << fd);
    }
  }
  // Training: scale and B move; the running statistics (states the loss does not read) do not.
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  train::TrainingSession session(g, loss, imported.initial_states,
                                 {.optimizer = {.schedule = {.base_lr = 0.1}}}, *cpu,
                                 DeterminismMode::Strict);
  BOOST_TEST(session.parameter_names() == (std::vector<std::string>{"scale", "B"}));
  session.step(in);
  BOOST_TEST(!session.state("scale").bit_equal(imported.initial_states[0]));
  BOOST_TEST(session.state("mean").bit_equal(imported.initial_states[2]));
  BOOST_TEST(session.state("var").bit_equal(imported.initial_states[3]));
}

}  // namespace
}  // namespace volta::onnx
