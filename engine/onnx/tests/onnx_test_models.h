#pragma once
// One-node ONNX models built in C++ for the lowering tests, and what they check with.
#include <onnx/onnx_pb.h>

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "volta/error.h"
#include "volta/onnx/model.h"
#include "volta/onnx/session.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta::onnx::test {

// Import-time values evaluated by the CPU backend, as a Session on it would.
inline ImportOptions cpu_import() {
  static const std::unique_ptr<Backend> cpu = make_backend("cpu");
  ImportOptions options;
  options.evaluator = make_backend_evaluator(*cpu, DeterminismMode::Strict);
  return options;
}

namespace pb = ::onnx;

struct Io {
  std::string name;
  int elem_type;
  std::vector<int64_t> dims;
};

using NodeAttrs = std::function<void(pb::NodeProto&)>;

inline void add_io(pb::ValueInfoProto* v, const Io& io) {
  v->set_name(io.name);
  auto* tensor = v->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(io.elem_type);
  auto* shape = tensor->mutable_shape();
  for (int64_t d : io.dims) shape->add_dim()->set_dim_value(d);
}

inline void set_int(pb::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(pb::AttributeProto::INT);
  a->set_i(v);
}
inline void set_float(pb::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(pb::AttributeProto::FLOAT);
  a->set_f(v);
}
inline void set_ints(pb::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(pb::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
inline void set_string(pb::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(pb::AttributeProto::STRING);
  a->set_s(v);
}

// The IR version an exporter writes for `opset`: 3 before opset 7, 8 up to 18, then ONNX's
// (9 for 19-20, 10 for 21-22, 11 for 23-24, ...).
inline int64_t ir_version_for(int opset) {
  if (opset < 7) return 3;
  if (opset <= 18) return 8;
  return 9 + (opset - 19) / 2;
}

// An empty model of the default domain at `opset`, its graph named `name`.
inline pb::ModelProto empty_model(int opset, const std::string& name) {
  pb::ModelProto m;
  m.set_ir_version(ir_version_for(opset));
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  m.mutable_graph()->set_name(name);
  return m;
}

// A model of one node `op` (default domain, `opset`) from graph inputs to its outputs; an input
// or output with an empty name is left out of the node (an absent optional one).
inline Model one_node(const std::string& op, int opset, const std::vector<Io>& inputs,
                      const std::vector<Io>& outputs, const NodeAttrs& attrs = {}) {
  pb::ModelProto m = empty_model(opset, op);
  auto* g = m.mutable_graph();
  pb::NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name("node");
  for (const Io& in : inputs) {
    if (!in.name.empty()) add_io(g->add_input(), in);
    n->add_input(in.name);
  }
  for (const Io& out : outputs) {
    if (!out.name.empty()) add_io(g->add_output(), out);
    n->add_output(out.name);
  }
  if (attrs) attrs(*n);
  return Model::parse(m.SerializeAsString(), op + ".onnx");
}

inline Model one_node(const std::string& op, int opset, const std::vector<Io>& inputs,
                      const Io& output, const NodeAttrs& attrs = {}) {
  return one_node(op, opset, inputs, std::vector<Io>{output}, attrs);
}

// Model `m` (its opsets imported by the caller) with one node `op` of `domain` from graph inputs
// to one output, parsed as `file`.
inline Model with_one_node(pb::ModelProto m, const std::string& op, const std::string& domain,
                           const std::vector<Io>& inputs, const Io& output, const NodeAttrs& attrs,
                           const std::string& file) {
  auto* g = m.mutable_graph();
  pb::NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_domain(domain);
  n->set_name("node");
  for (const Io& in : inputs) {
    add_io(g->add_input(), in);
    n->add_input(in.name);
  }
  add_io(g->add_output(), output);
  n->add_output(output.name);
  if (attrs) attrs(*n);
  return Model::parse(m.SerializeAsString(), file);
}

inline std::vector<Tensor> run_cpu(const Model& model, const std::vector<Tensor>& inputs) {
  static const std::unique_ptr<Backend> cpu = make_backend("cpu");
  Session session(model, *cpu, DeterminismMode::Strict);
  return session.run(inputs);
}

template <class T>
Tensor tensor(Shape shape, std::initializer_list<T> values) {
  return Tensor::from<T>(std::move(shape), values);
}

inline void check_values(const Tensor& got, const std::vector<double>& want, double tol = 0) {
  BOOST_REQUIRE_EQUAL(got.numel(), static_cast<int64_t>(want.size()));
  for (int64_t i = 0; i < got.numel(); ++i) {
    BOOST_CHECK_MESSAGE(std::abs(got.get_double(i) - want[static_cast<size_t>(i)]) <= tol,
                        "element " << i << ": got " << got.get_double(i) << ", want "
                                   << want[static_cast<size_t>(i)]);
  }
}

// Importing for `inputs` fails with `code` and a message containing `fragment`.
inline void expect_import_error(const Model& model, const std::vector<Tensor>& inputs,
                                ErrorCode code, const std::string& fragment) {
  try {
    model.import_for(inputs, cpu_import());
    BOOST_FAIL("expected " << error_code_name(code));
  } catch (const VoltaError& e) {
    BOOST_TEST(std::string(error_code_name(e.code())) == std::string(error_code_name(code)));
    BOOST_TEST(e.message().find(fragment) != std::string::npos, e.message());
  }
}

constexpr int kFloat = pb::TensorProto::FLOAT;
constexpr int kInt32 = pb::TensorProto::INT32;
constexpr int kInt64 = pb::TensorProto::INT64;
constexpr int kDouble = pb::TensorProto::DOUBLE;
constexpr int kBool = pb::TensorProto::BOOL;
constexpr int kUint8 = pb::TensorProto::UINT8;

}  // namespace volta::onnx::test
