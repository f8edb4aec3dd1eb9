// The importer's contract: specialization on shape-feeding input values, the plan cache,
// every unsupported node reported at once, and clear errors for bad models and inputs.
#define BOOST_TEST_MODULE onnx_import
#include <onnx/onnx_pb.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>

#include "volta/error.h"
#include "volta/onnx/model.h"
#include "volta/onnx/session.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

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
  add_node(g, "Unique", {"x"}, {"u"}, "unique");
  add_node(g, "Bernoulli", {"x"}, {"w"}, "coin");  // random ops are unsupported
  add_node(g, "Identity", {"x"}, {"r"}, "copy");
  add_node(g, "Identity", {"u"}, {"s_in"}, "depends_on_unique");  // skipped: its input failed
  auto* c = add_node(g, "Constant", {}, {"s"}, "text");
  auto* attr = c->add_attribute();
  attr->set_name("value_string");
  attr->set_type(pb::AttributeProto::STRING);
  attr->set_s("hello");
  add_io(g->add_output(), "s_in", pb::TensorProto::FLOAT, {-1});
  const Model model = Model::parse(serialize(m, 17), "mixed.onnx");
  const std::vector<ImportIssue> issues = model.check(cpu_import());
  BOOST_REQUIRE_EQUAL(issues.size(), 3u);
  BOOST_TEST(issues[0].node == "unique");
  BOOST_TEST(issues[0].message.find("op Unique is not supported") != std::string::npos);
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
    BOOST_TEST(e.message().find("node 'unique' (Unique)") != std::string::npos);
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

BOOST_AUTO_TEST_CASE(unsupported_tensor_dtypes_are_named) {
  pb::TensorProto p;
  p.set_data_type(pb::TensorProto::FLOAT16);
  p.add_dims(1);
  p.set_raw_data(std::string(2, '\0'));
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / "volta_onnx_import_test_f16.pb";
  {
    std::ofstream out(file, std::ios::binary);
    out << p.SerializeAsString();
  }
  try {
    read_tensor_file(file);
    BOOST_FAIL("expected I-UNSUPPORTED");
  } catch (const VoltaError& e) {
    BOOST_TEST((e.code() == ErrorCode::ImportUnsupported));
    BOOST_TEST(e.message().find("FLOAT16") != std::string::npos);
  }
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace volta::onnx
