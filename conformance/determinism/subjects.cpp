#include "subjects.h"

#include <algorithm>
#include <cmath>

#include "volta/conformance/expectations.h"
#include "volta/conformance/onnx_corpus.h"
#include "volta/conformance/onnx_expectations.h"
#include "volta/ir/random.h"
#include "volta/model/examples.h"
#include "volta/onnx/model.h"

namespace volta::conformance {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kOnnxPrefix = "onnx:";
constexpr std::string_view kBuilder = "graph builder";

// Weights are counter-based random values, so every process builds the same bits.
ValueId weight(Graph& g, const std::string& name, const Shape& shape, uint64_t stream) {
  const double fan_in =
      static_cast<double>(shape.numel()) / static_cast<double>(std::max<int64_t>(1, shape[0]));
  const double scale = 1.0 / std::sqrt(std::max(1.0, fan_in));
  return g.add_parameter(name, random_tensor(DType::F32, shape, 7, -scale, scale, stream));
}

// x [32, 64] -> 128 -> Relu -> 128 -> Tanh -> 10 -> Softmax.
Subject mlp() {
  Subject s{"model:mlp", std::string(kBuilder), {}, {}};
  Graph& g = s.graph;
  ValueId h = g.add_input("x", DType::F32, Shape{32, 64});
  const std::vector<int64_t> widths = {64, 128, 128, 10};
  for (size_t layer = 0; layer + 1 < widths.size(); ++layer) {
    const std::string name = "fc" + std::to_string(layer + 1);
    h = g.add(OpKind::MatMul,
              {h, weight(g, name + ".weight", Shape{widths[layer], widths[layer + 1]}, 2 * layer)},
              {}, name + ".matmul");
    h = g.add(OpKind::Add, {h, weight(g, name + ".bias", Shape{widths[layer + 1]}, 2 * layer + 1)},
              {}, name);
    if (layer == 0) h = g.add(OpKind::Relu, {h}, {}, "fc1.relu");
    if (layer == 1) h = g.add(OpKind::Tanh, {h}, {}, "fc2.tanh");
  }
  g.set_outputs({g.add(OpKind::Softmax, {h}, {{"axis", int64_t{-1}}}, "probs")});
  s.inputs.push_back(random_tensor(DType::F32, Shape{32, 64}, 11, -1, 1));
  return s;
}

// x [batch, 3, size, size] -> Conv 3x3 (16) -> Relu -> MaxPool 2 -> Conv 3x3 (32) -> Relu ->
// depthwise Conv 3x3 -> GlobalAveragePool -> Flatten -> Gemm-like MatMul + Add (10).
Subject cnn(std::string name, int64_t batch, int64_t size) {
  Subject s{std::move(name), std::string(kBuilder), {}, {}};
  Graph& g = s.graph;
  const ValueId x = g.add_input("x", DType::F32, Shape{batch, 3, size, size});
  const std::vector<int64_t> pads = {1, 1, 1, 1};
  auto conv = [&](ValueId in, const std::string& layer, int64_t out_ch, int64_t in_ch,
                  int64_t group, uint64_t stream) {
    const ValueId w = weight(g, layer + ".weight", Shape{out_ch, in_ch / group, 3, 3}, stream);
    const ValueId b = weight(g, layer + ".bias", Shape{out_ch}, stream + 100);
    return g.add(OpKind::Conv, {in, w, b}, {{"pads", pads}, {"group", group}}, layer);
  };
  ValueId h = g.add(OpKind::Relu, {conv(x, "conv1", 16, 3, 1, 1)}, {}, "conv1.relu");
  h = g.add(OpKind::MaxPool, {h},
            {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}},
            "pool1");
  h = g.add(OpKind::Relu, {conv(h, "conv2", 32, 16, 1, 2)}, {}, "conv2.relu");
  h = conv(h, "conv3.depthwise", 32, 32, 32, 3);
  h = g.add(OpKind::GlobalAveragePool, {h}, {}, "gap");
  h = g.add(OpKind::Reshape, {h}, {{"shape", std::vector<int64_t>{batch, 32}}}, "flatten");
  h = g.add(OpKind::MatMul, {h, weight(g, "fc.weight", Shape{32, 10}, 4)}, {}, "fc.matmul");
  g.set_outputs({g.add(OpKind::Add, {h, weight(g, "fc.bias", Shape{10}, 5)}, {}, "logits")});
  s.inputs.push_back(random_tensor(DType::F32, Shape{batch, 3, size, size}, 12, -1, 1));
  return s;
}

Subject transformer_block(std::string name, const TransformerBlockConfig& config) {
  Subject s{std::move(name), std::string(kBuilder), transformer_block_graph(config), {}};
  s.inputs.push_back(
      random_tensor(DType::F32, Shape{config.batch, config.seq, config.d_model}, 13, -1, 1));
  return s;
}

const TransformerBlockConfig kTransformer{
    .batch = 2, .seq = 16, .d_model = 64, .heads = 4, .d_ff = 256};
// The soak's block: GEMMs span several cache blocks, rows several reduction leaves.
const TransformerBlockConfig kLargeTransformer{
    .batch = 4, .seq = 128, .d_model = 256, .heads = 8, .d_ff = 1024};

// The ONNX tests the CPU engine passes: those no expectation lists for the CPU backend.
std::vector<OnnxTest> passing_onnx_tests(const SubjectSource& source) {
  if (source.onnx_data.empty()) return {};
  std::vector<OnnxTest> corpus = discover_onnx_corpus(source.onnx_data, onnx::onnx_op_family);
  const std::vector<OnnxExpectation> expectations =
      load_onnx_expectations(source.onnx_expectations);
  std::erase_if(corpus, [&](const OnnxTest& t) {
    return !t.problem.empty() || std::ranges::any_of(expectations, [&](const OnnxExpectation& e) {
      return e.applies_to("cpu") && glob_match(e.pattern, t.id);
    });
  });
  return corpus;
}

Subject onnx_subject(const std::string& name, const SubjectSource& source) {
  const std::string id = name.substr(kOnnxPrefix.size());
  const fs::path dir = source.onnx_data / id;
  if (source.onnx_data.empty() || !fs::is_directory(dir)) {
    fail(ErrorCode::InvalidArgument,
         "determinism subject '" + name + "': no ONNX test directory " + dir.string());
  }
  Subject s{name, "ONNX import", {}, onnx::read_tensor_files(dir / "test_data_set_0", "input")};
  const onnx::Model model = onnx::Model::load(dir / "model.onnx");
  s.graph = model.import_for(s.inputs).graph;
  return s;
}

}  // namespace

std::vector<std::string> subject_names(const SubjectSource& source) {
  std::vector<std::string> names = {"model:cnn", "model:mlp", "model:transformer-block"};
  if (source.large_models) {
    names = {"model:cnn", "model:cnn-large", "model:mlp", "model:transformer-block",
             "model:transformer-block-large"};
  }
  for (const OnnxTest& t : passing_onnx_tests(source))
    names.push_back(std::string(kOnnxPrefix) + t.id);
  return names;
}

Subject load_subject(const std::string& name, const SubjectSource& source) {
  if (name == "model:mlp") return mlp();
  if (name == "model:cnn") return cnn(name, 2, 32);
  if (name == "model:cnn-large") return cnn(name, 8, 96);
  if (name == "model:transformer-block") return transformer_block(name, kTransformer);
  if (name == "model:transformer-block-large") return transformer_block(name, kLargeTransformer);
  if (name.starts_with(kOnnxPrefix)) return onnx_subject(name, source);
  fail(ErrorCode::InvalidArgument, "unknown determinism subject '" + name +
                                       "' (built-in: model:cnn, model:mlp, "
                                       "model:transformer-block and their -large soak versions; "
                                       "ONNX tests: onnx:FOLDER/TEST)");
}

}  // namespace volta::conformance
