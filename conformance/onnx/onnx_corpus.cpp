#include "volta/conformance/onnx_corpus.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "volta/error.h"
#include "volta/onnx/model.h"

namespace volta::conformance {
namespace fs = std::filesystem;
namespace {

// Ops that move or reshape data around a test's real subject.
constexpr std::array<std::string_view, 9> kPlumbing = {
    "Constant", "Shape", "Reshape", "Cast", "Identity", "Unsqueeze", "Squeeze", "Concat", "Gather"};

constexpr std::string_view kExpandedSuffix = "_expanded";

bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_lower_or_digit(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// `text` starts with `word`, followed by its end, '_' or a digit ("and2d" is And's test).
bool starts_with_word(std::string_view text, std::string_view word) {
  if (word.empty() || !text.starts_with(word)) return false;
  if (text.size() == word.size()) return true;
  const char next = text[word.size()];
  return next == '_' || (next >= '0' && next <= '9');
}

// N of "test_data_set_N", or -1 for any other name.
int64_t data_set_index(const std::string& name) {
  constexpr std::string_view kPrefix = "test_data_set_";
  if (!name.starts_with(kPrefix) || name.size() == kPrefix.size()) return -1;
  int64_t n = 0;
  for (char c : std::string_view(name).substr(kPrefix.size())) {
    if (c < '0' || c > '9') return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

std::vector<fs::path> data_sets_of(const fs::path& dir) {
  std::vector<std::pair<int64_t, fs::path>> found;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    const int64_t n = data_set_index(entry.path().filename().string());
    if (entry.is_directory() && n >= 0) found.emplace_back(n, entry.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> out;
  out.reserve(found.size());
  for (auto& [n, path] : found) out.push_back(std::move(path));
  return out;
}

// ONNX's element type of a tensor; the kind of any other value.
std::string type_of(const ::onnx::TypeProto& type) {
  switch (type.value_case()) {
    case ::onnx::TypeProto::kTensorType:
      return onnx::onnx_type_name(type.tensor_type().elem_type());
    case ::onnx::TypeProto::kSequenceType:
      return "seq";
    case ::onnx::TypeProto::kOptionalType:
      return "optional";
    case ::onnx::TypeProto::kMapType:
      return "map";
    case ::onnx::TypeProto::kSparseTensorType:
      return "sparse";
    default:
      return "unknown";
  }
}

// Reads the op types, opset and first input's type of a model; a problem when the file does
// not parse.
void read_model(const fs::path& file, OnnxTest& test) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  ::onnx::ModelProto model;
  if (!in || !model.ParseFromString(bytes.str())) {
    test.problem = file.string() + " is not a readable ONNX model";
    return;
  }
  for (const ::onnx::NodeProto& node : model.graph().node())
    test.op_types.push_back(node.op_type());
  const auto& graph = model.graph();
  if (graph.input_size() > 0) {
    test.dtype = type_of(graph.input(0).type());
  } else if (graph.output_size() > 0) {
    test.dtype = type_of(graph.output(0).type());
  }
  for (const ::onnx::OperatorSetIdProto& opset : model.opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx") test.opset = opset.version();
  }
}

OnnxTest read_test(const std::string& folder, const fs::path& dir) {
  OnnxTest test;
  test.folder = folder;
  test.name = dir.filename().string();
  test.id = folder + "/" + test.name;
  test.dir = dir;
  const fs::path model = dir / "model.onnx";
  if (!fs::is_regular_file(model)) {
    test.problem = "no model.onnx in " + dir.string();
    return test;
  }
  read_model(model, test);
  test.data_sets = data_sets_of(dir);
  if (test.problem.empty() && test.data_sets.empty()) {
    test.problem = "no test_data_set_N directory in " + dir.string();
  }
  return test;
}

}  // namespace

std::string snake_case(std::string_view op_type) {
  std::string out;
  for (size_t i = 0; i < op_type.size(); ++i) {
    const char c = op_type[i];
    // A word starts at an upper-case letter after a lower-case one or a digit ("MatMul"),
    // and at the last capital of an acronym followed by lower case ("QLinear").
    const bool boundary =
        i > 0 && is_upper(c) &&
        (is_lower_or_digit(op_type[i - 1]) || (is_upper(op_type[i - 1]) && i + 1 < op_type.size() &&
                                               op_type[i + 1] >= 'a' && op_type[i + 1] <= 'z'));
    if (boundary) out += '_';
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

const std::vector<std::string>& onnx_op_names() {
  static const std::vector<std::string> kNames = [] {
    std::set<std::string> names;
    for (const ::onnx::OpSchema& schema : ::onnx::OpSchemaRegistry::get_all_schemas()) {
      if (schema.domain().empty() || schema.domain() == "ai.onnx") names.insert(schema.Name());
    }
    return std::vector<std::string>(names.begin(), names.end());
  }();
  return kNames;
}

std::string principal_op(std::string_view folder, std::string_view test_name,
                         std::span<const std::string> op_types, std::string_view sibling_op,
                         std::span<const std::string> known_ops) {
  if (op_types.size() == 1) return op_types.front();
  if (folder == "node" && test_name.ends_with(kExpandedSuffix) && !sibling_op.empty()) {
    return std::string(sibling_op);
  }
  if (folder == "node" && test_name.starts_with("test_")) {
    const std::string_view rest = test_name.substr(5);
    const std::string* best = nullptr;
    size_t best_length = 0;
    for (const std::string& op : known_ops) {
      for (const std::string& form : {snake_case(op), lower(op)}) {
        if (form.size() > best_length && starts_with_word(rest, form)) {
          best = &op;
          best_length = form.size();
        }
      }
    }
    if (best != nullptr) return *best;
  }
  for (const std::string& op : op_types) {
    if (std::find(kPlumbing.begin(), kPlumbing.end(), op) == kPlumbing.end()) return op;
  }
  return op_types.empty() ? "" : op_types.front();
}

const OnnxCorpus* find_onnx_corpus(std::string_view suite) {
  for (const OnnxCorpus* corpus : kOnnxCorpora) {
    if (corpus->suite == suite) return corpus;
  }
  return nullptr;
}

std::vector<OnnxTest> discover_onnx_corpus(const fs::path& root, const OnnxFamilyFn& family_of,
                                           int64_t floor, const OnnxCorpus& corpus) {
  const std::string remedy(corpus.how_to_get);
  if (!fs::is_directory(root)) {
    fail(ErrorCode::InvalidArgument, "ONNX test data root '" + root.string() +
                                         "' is not a directory (" + std::string(corpus.title) +
                                         "): " + remedy);
  }
  std::string expected;
  for (std::string_view folder : corpus.folders) {
    expected += (expected.empty() ? "" : ", ") + std::string(folder);
  }
  std::vector<OnnxTest> tests;
  for (std::string_view folder : corpus.folders) {
    const fs::path dir = root / folder;
    if (!fs::is_directory(dir)) {
      fail(ErrorCode::InvalidArgument, "ONNX test data root '" + root.string() + "' has no " +
                                           std::string(folder) + "/ folder (expected " + expected +
                                           ")");
    }
    for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
      if (entry.is_directory()) tests.push_back(read_test(std::string(folder), entry.path()));
    }
  }
  if (static_cast<int64_t>(tests.size()) < floor) {
    fail(ErrorCode::InvalidArgument,
         "ONNX test data root '" + root.string() + "' holds " + std::to_string(tests.size()) +
             " test directories, fewer than the corpus floor of " + std::to_string(floor) +
             ": the data moved or is partial (" + remedy + ")");
  }
  std::sort(tests.begin(), tests.end(),
            [](const OnnxTest& a, const OnnxTest& b) { return a.id < b.id; });

  // Principal ops: one-node tests first, so that an "_expanded" test can take its sibling's.
  std::map<std::string, std::string> single_op;  // id -> op of one-node tests
  for (const OnnxTest& t : tests) {
    if (t.op_types.size() == 1) single_op[t.id] = t.op_types.front();
  }
  for (OnnxTest& t : tests) {
    std::string sibling;
    if (t.id.ends_with(kExpandedSuffix)) {
      const auto it = single_op.find(t.id.substr(0, t.id.size() - kExpandedSuffix.size()));
      if (it != single_op.end()) sibling = it->second;
    }
    t.op = principal_op(t.folder, t.name, t.op_types, sibling, onnx_op_names());
    const std::optional<OpFamily> family = family_of(t.op);
    t.family = family ? std::string(op_family_name(*family)) : std::string(kOnnxOtherFamily);
  }
  return tests;
}

std::vector<Tensor> read_onnx_data_set(const std::filesystem::path& data_set, std::string_view stem,
                                       std::span<const std::optional<DType>> declared) {
  std::vector<Tensor> tensors = onnx::read_tensor_files(data_set, stem);
  for (size_t i = 0; i < tensors.size() && i < declared.size(); ++i) {
    if (declared[i] == DType::BF16 && tensors[i].dtype() == DType::U16) {
      Tensor bits(DType::BF16, tensors[i].shape());
      if (bits.nbytes() != 0) std::memcpy(bits.data(), tensors[i].data(), bits.nbytes());
      tensors[i] = std::move(bits);
    }
  }
  return tensors;
}

}  // namespace volta::conformance
