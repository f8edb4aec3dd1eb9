#include "subjects.h"

#include <algorithm>

#include "volta/conformance/determinism_suite.h"
#include "volta/conformance/expectations.h"
#include "volta/conformance/onnx_corpus.h"
#include "volta/conformance/onnx_expectations.h"
#include "volta/model/builtin_models.h"
#include "volta/onnx/model.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta::conformance {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kOnnxPrefix = "onnx:";
constexpr std::string_view kModelPrefix = "model:";
constexpr std::string_view kBuilder = "graph builder";

// The built-in model behind a "model:NAME" subject, or nullptr.
const BuiltInModel* find_built_in(std::string_view name) {
  if (!name.starts_with(kModelPrefix)) return nullptr;
  return find_built_in_model(name.substr(kModelPrefix.size()));
}

// The model's graph at `batch` samples (the same weights at every batch), without inputs yet.
Subject build_model(std::string_view name, const BuiltInModel& model, int64_t batch) {
  return {std::string(name), std::string(kBuilder), model.graph(batch), {}};
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
  const onnx::Model model = onnx::Model::load(dir / "model.onnx");
  std::vector<std::optional<DType>> declared;
  declared.reserve(model.inputs().size());
  for (const onnx::ValueSpec& v : model.inputs()) declared.push_back(v.dtype);
  Subject s{
      name, "ONNX import", {}, read_onnx_data_set(dir / "test_data_set_0", "input", declared)};
  // Import-time values come from the backend the subjects run on.
  static const std::unique_ptr<Backend> cpu = make_backend("cpu");
  onnx::ImportOptions options;
  options.evaluator = make_backend_evaluator(*cpu, DeterminismMode::Strict);
  s.graph = model.import_for(s.inputs, options).graph;
  return s;
}

}  // namespace

std::vector<std::string> subject_names(const SubjectSource& source) {
  std::vector<std::string> names;
  for (const BuiltInModel& model : built_in_models()) {
    if (!model.large || source.large_models) {
      names.push_back(std::string(kModelPrefix) + std::string(model.name));
    }
  }
  std::ranges::sort(names);
  for (const OnnxTest& t : passing_onnx_tests(source))
    names.push_back(std::string(kOnnxPrefix) + t.id);
  return names;
}

Subject load_subject(const std::string& name, const SubjectSource& source) {
  if (const BuiltInModel* model = find_built_in(name)) {
    Subject s = build_model(name, *model, model->default_batch);
    s.inputs.push_back(model->input(model->default_batch));
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
  Subject s = build_model(name, *model, batch);
  s.inputs.push_back(model->batch_input(batch));
  return s;
}

}  // namespace volta::conformance
