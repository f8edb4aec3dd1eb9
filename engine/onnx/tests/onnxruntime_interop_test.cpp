// ONNX Runtime (pinned in scripts/ci/interop-requirements.txt) against Volta on one ONNX model
// shaped like a causal LM's head: int64 tokens [B, T] -> Gather (embedding) -> LayerNorm ->
// exact GELU (Erf) -> MatMul + bias -> logits [B, T, V] and their Softmax. Volta's CPU backend
// computes the expectation; conformance/training/interop/run_onnxruntime.py runs the model in
// ORT and must agree within 1e-5. SKIPPED where the interop venv is missing (interop_python.h).
#define BOOST_TEST_MODULE onnxruntime_interop
#include <onnx/onnx_pb.h>

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>

#include "interop_python.h"
#include "volta/model/checkpoint.h"
#include "volta/onnx/model.h"
#include "volta/onnx/session.h"
#include "volta/runtime/registry.h"

namespace volta::onnx {
namespace {

namespace fs = std::filesystem;
namespace pb = ::onnx;
using interop::python_or_skip;
using interop::run_script;
using testing::ScratchDir;

constexpr int64_t kBatch = 2, kTime = 4, kWidth = 8, kVocab = 16;

void add_io(pb::ValueInfoProto* v, const std::string& name, int elem_type,
            const std::vector<int64_t>& dims) {
  v->set_name(name);
  auto* tensor = v->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  for (const int64_t d : dims) tensor->mutable_shape()->add_dim()->set_dim_value(d);
}

void add_node(pb::GraphProto* g, const std::string& op, const std::vector<std::string>& in,
              const std::string& out) {
  pb::NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(out);
  for (const auto& s : in) n->add_input(s);
  n->add_output(out);
}

void add_initializer(pb::GraphProto* g, const std::string& name, const Tensor& t) {
  pb::TensorProto* p = g->add_initializer();
  p->set_name(name);
  p->set_data_type(pb::TensorProto::FLOAT);
  for (const int64_t d : t.shape().dims()) p->add_dims(d);
  p->set_raw_data(std::string(static_cast<const char*>(t.data()), t.nbytes()));
}

// Weights in [-1, 1) from a fixed integer hash, different per salt.
Tensor weights(Shape shape, uint32_t salt) {
  Tensor t(DType::F32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) {
    const uint32_t h = (static_cast<uint32_t>(i) + 1U) * 2654435761U ^ (salt * 40503U);
    t.set_double(i, static_cast<double>(h % 2048U) / 1024.0 - 1.0);
  }
  return t;
}

std::string tiny_lm_model() {
  pb::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("tiny_lm_head");
  add_io(g->add_input(), "tokens", pb::TensorProto::INT64, {kBatch, kTime});
  add_io(g->add_output(), "logits", pb::TensorProto::FLOAT, {kBatch, kTime, kVocab});
  add_io(g->add_output(), "probs", pb::TensorProto::FLOAT, {kBatch, kTime, kVocab});
  add_initializer(g, "embedding", weights(Shape{kVocab, kWidth}, 1));
  add_initializer(g, "gamma", weights(Shape{kWidth}, 2));
  add_initializer(g, "beta", weights(Shape{kWidth}, 3));
  add_initializer(g, "w", weights(Shape{kWidth, kVocab}, 4));
  add_initializer(g, "b", weights(Shape{kVocab}, 5));
  add_initializer(g, "half", Tensor::from<float>(Shape{}, {0.5F}));
  add_initializer(g, "one", Tensor::from<float>(Shape{}, {1.0F}));
  add_initializer(g, "inv_sqrt2", Tensor::from<float>(Shape{}, {0.70710678F}));
  add_node(g, "Gather", {"embedding", "tokens"}, "x");
  add_node(g, "LayerNormalization", {"x", "gamma", "beta"}, "n");
  // GELU(n) = n * 0.5 * (1 + erf(n / sqrt(2)))
  add_node(g, "Mul", {"n", "inv_sqrt2"}, "scaled");
  add_node(g, "Erf", {"scaled"}, "erf");
  add_node(g, "Add", {"erf", "one"}, "erf1");
  add_node(g, "Mul", {"erf1", "half"}, "gate");
  add_node(g, "Mul", {"n", "gate"}, "gelu");
  add_node(g, "MatMul", {"gelu", "w"}, "projected");
  add_node(g, "Add", {"projected", "b"}, "logits");
  add_node(g, "Softmax", {"logits"}, "probs");
  return m.SerializeAsString();
}

Tensor tokens() {
  Tensor t(DType::I64, Shape{kBatch, kTime});
  for (int64_t i = 0; i < t.numel(); ++i) t.set_int(i, (i * 5 + 3) % kVocab);
  return t;
}

// Tensors as a safetensors file (Volta's checkpoint writer; any safetensors file will do).
void write_tensors(const fs::path& path, const std::vector<std::pair<std::string, Tensor>>& named) {
  Checkpoint file;
  for (const auto& [name, t] : named) {
    std::vector<std::byte> bytes(t.nbytes());
    std::memcpy(bytes.data(), t.data(), bytes.size());
    file.tensors.push_back({name, t.dtype(), t.shape().dims(), std::move(bytes)});
  }
  save_checkpoint(file, path);
}

struct Case {
  ScratchDir dir{"onnxruntime-interop"};
  fs::path model = dir / "tiny_lm_head.onnx";
  fs::path inputs = dir / "inputs.safetensors";
  fs::path expected = dir / "expected.safetensors";
  std::vector<Tensor> volta_outputs;  // logits, probs

  Case() {
    const std::string bytes = tiny_lm_model();
    std::ofstream(model, std::ios::binary) << bytes;
    const Model parsed = Model::parse(bytes, model.string());
    const std::unique_ptr<Backend> cpu = make_backend("cpu");
    Session session(parsed, *cpu, DeterminismMode::Strict);
    const std::vector<Tensor> in = {tokens()};
    volta_outputs = session.run(in);
    write_tensors(inputs, {{"tokens", in[0]}});
  }
  void expect(const Tensor& logits, const Tensor& probs) const {
    write_tensors(expected, {{"logits", logits}, {"probs", probs}});
  }
  interop::ScriptResult run(const fs::path& python, const fs::path& inputs_file) const {
    return run_script(python, "run_onnxruntime.py",
                      {model.string(), "--inputs", inputs_file.string(), "--expect",
                       expected.string(), "--atol", "1e-5"});
  }
};

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

BOOST_AUTO_TEST_CASE(onnxruntime_agrees_with_volta_within_1e_5) {
  const auto python = python_or_skip();
  if (!python) return;
  const Case c;
  BOOST_REQUIRE_EQUAL(c.volta_outputs.size(), 2U);
  c.expect(c.volta_outputs[0], c.volta_outputs[1]);
  const auto r = c.run(*python, c.inputs);
  BOOST_TEST_MESSAGE(r.output);
  BOOST_TEST(r.status == 0, r.output);
  BOOST_TEST(contains(r.output, "run_onnxruntime: logits max abs diff "), r.output);
  BOOST_TEST(contains(r.output, "run_onnxruntime: probs max abs diff "), r.output);
}

BOOST_AUTO_TEST_CASE(a_difference_past_atol_is_a_mismatch) {
  const auto python = python_or_skip();
  if (!python) return;
  const Case c;
  Tensor logits = c.volta_outputs.at(0);
  logits.set_double(5, logits.get_double(5) + 1e-3);
  c.expect(logits, c.volta_outputs.at(1));
  const auto r = c.run(*python, c.inputs);
  BOOST_TEST(r.status == 1, r.output);
  BOOST_TEST(contains(r.output, "MISMATCH logits: max abs diff 0.001 over atol 1e-05"), r.output);
  BOOST_TEST(contains(r.output, "run_onnxruntime: probs max abs diff "), r.output);
}

BOOST_AUTO_TEST_CASE(inputs_that_do_not_match_the_model_are_refused) {
  const auto python = python_or_skip();
  if (!python) return;
  const Case c;
  c.expect(c.volta_outputs.at(0), c.volta_outputs.at(1));
  write_tensors(c.dir / "misnamed.safetensors", {{"ids", tokens()}});
  const auto r = c.run(*python, c.dir / "misnamed.safetensors");
  BOOST_TEST(r.status == 1, r.output);
  BOOST_TEST(contains(r.output, "the model's inputs are ['tokens']"), r.output);
}

}  // namespace
}  // namespace volta::onnx
