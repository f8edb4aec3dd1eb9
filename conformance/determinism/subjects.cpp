#include "subjects.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "volta/conformance/determinism_suite.h"
#include "volta/conformance/expectations.h"
#include "volta/conformance/onnx_corpus.h"
#include "volta/conformance/onnx_expectations.h"
#include "volta/ir/random.h"
#include "volta/model/builtin_models.h"
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

// x [batch, 64] -> 128 -> Relu -> 128 -> Tanh -> 10 -> Softmax. No inputs yet.
Subject mlp(int64_t batch) {
  Subject s{"model:mlp", std::string(kBuilder), {}, {}};
  Graph& g = s.graph;
  ValueId h = g.add_input("x", DType::F32, Shape{batch, 64});
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
  return s;
}

// x [batch, 3, size, size] -> Conv 3x3 (16) -> Relu -> MaxPool 2 -> Conv 3x3 (32) -> Relu ->
// depthwise Conv 3x3 -> GlobalAveragePool -> Flatten -> Gemm-like MatMul + Add (10). No inputs
// yet.
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
  return s;
}

// No inputs yet.
Subject transformer_block(std::string name, TransformerBlockConfig config, int64_t batch) {
  config.batch = batch;
  return {std::move(name), std::string(kBuilder), transformer_block_graph(config), {}};
}

const TransformerBlockConfig kTransformer{.seq = 16, .d_model = 64, .heads = 4, .d_ff = 256};
// The soak's block: GEMMs span several cache blocks, rows several reduction leaves.
const TransformerBlockConfig kLargeTransformer{
    .seq = 128, .d_model = 256, .heads = 8, .d_ff = 1024};

// The built-in models: the batch they are replay, thread and plan subjects at (a batch subject
// is built at any batch), and the seed of their input values.
struct BuiltInModel {
  std::string_view name;
  int64_t batch = 0;
  uint64_t input_seed = 0;
};
constexpr BuiltInModel kBuiltInModels[] = {
    {"model:cnn", 2, 12},
    {"model:cnn-large", 8, 12},
    {"model:mlp", 32, 11},
    {"model:transformer-block", 2, 13},
    {"model:transformer-block-large", 4, 13},
};

const BuiltInModel* find_built_in(std::string_view name) {
  const auto* it = std::ranges::find(kBuiltInModels, name, &BuiltInModel::name);
  return it == std::end(kBuiltInModels) ? nullptr : it;
}

// The model's graph at `batch` samples; same weights (counter-based, by stream) at every batch.
Subject build_model(const BuiltInModel& model, int64_t batch) {
  const std::string name(model.name);
  if (name == "model:mlp") return mlp(batch);
  if (name == "model:cnn") return cnn(name, batch, 32);
  if (name == "model:cnn-large") return cnn(name, batch, 96);
  if (name == "model:transformer-block") return transformer_block(name, kTransformer, batch);
  return transformer_block(name, kLargeTransformer, batch);
}

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
  std::vector<std::string> names(kBuiltinSubjects.begin(), kBuiltinSubjects.end());
  if (source.large_models) {
    names.insert(names.end(), {"model:cnn-large", "model:transformer-block-large"});
    std::ranges::sort(names);
  }
  for (const OnnxTest& t : passing_onnx_tests(source))
    names.push_back(std::string(kOnnxPrefix) + t.id);
  return names;
}

Subject load_subject(const std::string& name, const SubjectSource& source) {
  if (const BuiltInModel* model = find_built_in(name)) {
    Subject s = build_model(*model, model->batch);
    const Value& x = s.graph.value(s.graph.inputs()[0]);
    s.inputs.push_back(random_tensor(x.dtype, x.shape, model->input_seed, -1, 1));
    return s;
  }
  if (name.starts_with(kOnnxPrefix)) return onnx_subject(name, source);
  fail(ErrorCode::InvalidArgument, "unknown determinism subject '" + name +
                                       "' (built-in: model:cnn, model:mlp, "
                                       "model:transformer-block and their -large soak versions; "
                                       "ONNX tests: onnx:FOLDER/TEST)");
}

std::vector<std::string> batch_subject_names(const SubjectSource& source) {
  std::vector<std::string> names = subject_names({{}, {}, source.large_models});
  std::erase_if(names, [](const std::string& n) { return find_built_in(n) == nullptr; });
  return names;
}

Subject load_batch_subject(const std::string& name, int64_t batch) {
  const BuiltInModel* model = find_built_in(name);
  if (model == nullptr) {
    fail(ErrorCode::InvalidArgument,
         "'" + name +
             "' is not a batch subject (batch subjects: the built-in models; ONNX subjects have "
             "fixed shapes and declare no batch axis)");
  }
  Subject s = build_model(*model, batch);
  const Value& x = s.graph.value(s.graph.inputs()[0]);
  std::vector<int64_t> sample_dims = x.shape.dims();
  sample_dims.erase(sample_dims.begin());
  const Shape sample_shape(sample_dims);
  const size_t sample_bytes = static_cast<size_t>(sample_shape.numel()) * dtype_size(x.dtype);
  Tensor input(x.dtype, x.shape);
  for (int64_t i = 0; i < batch; ++i) {
    // Stream i: sample i holds the same values in every batch it is part of.
    const Tensor sample =
        random_tensor(x.dtype, sample_shape, model->input_seed, -1, 1, static_cast<uint64_t>(i));
    std::memcpy(static_cast<std::byte*>(input.data()) + static_cast<size_t>(i) * sample_bytes,
                sample.data(), sample_bytes);
  }
  s.inputs.push_back(std::move(input));
  return s;
}

}  // namespace volta::conformance
