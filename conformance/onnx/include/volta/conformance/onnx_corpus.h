#pragma once
// The ONNX backend test data (Debian's libonnx-testdata, ONNX 1.12, and the tests of a current
// ONNX release generated into the build tree): finding its test directories and naming the op
// and family each test is reported under.

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "volta/ir/op_schema.h"
#include "volta/ir/tensor.h"

namespace volta::conformance {

inline constexpr std::string_view kOnnxDataRoot = "/usr/share/libonnx-testdata/data";
// The folders that hold runnable tests. (`real/` only names models to download.)
inline constexpr std::array<std::string_view, 4> kOnnxFolders = {"node", "pytorch-converted",
                                                                 "pytorch-operator", "simple"};
// ONNX 1.12's data holds 1,072 test directories. Finding fewer means a moved or partial
// package: a loud error, never a quietly smaller suite.
inline constexpr int64_t kOnnxCorpusFloor = 1072;
// The node and model tests of a current ONNX release (onnx 1.23.2: 1,884 node tests and 26
// simple models), generated into the build tree from the pinned PyPI wheel, and ONNX 1.12's
// PyTorch exports converted to opset 18 by its version converter (78 + 34 of 117 convert), in
// the same four folders.
inline constexpr int64_t kOnnxCurrentCorpusFloor = 2022;

// One corpus of ONNX backend tests, run as its own suite with its own expectations and floor.
struct OnnxCorpus {
  std::string_view suite;      // the suite its rows are recorded under
  std::string_view title;      // what the data is, for reports and docs
  std::string_view data_root;  // the default root; a relative one is under the source tree
  std::span<const std::string_view> folders;
  int64_t floor;                  // fewer test directories than this is an error
  std::string_view expectations;  // its expectations file, relative to the source tree
  std::string_view how_to_get;    // the remedy when the data is missing
  std::string_view issue;         // the issue new expectation lines name
};

// ONNX 1.12's backend test data, from Debian's libonnx-testdata: suite `onnx`.
inline constexpr OnnxCorpus kOnnxCorpus = {
    "onnx",
    "ONNX 1.12 backend test data (Debian's libonnx-testdata)",
    kOnnxDataRoot,
    kOnnxFolders,
    kOnnxCorpusFloor,
    "conformance/onnx/expectations.tsv",
    "install libonnx-testdata (scripts/ci/bootstrap.sh) or pass --data DIR",
    "#4"};
// The current ONNX release's tests: suite `onnx-current`.
inline constexpr OnnxCorpus kOnnxCurrentCorpus = {
    "onnx-current",
    "ONNX 1.23.2 backend test data (generated from the pinned onnx wheel)",
    "build/onnx-current-data",
    kOnnxFolders,
    kOnnxCurrentCorpusFloor,
    "conformance/onnx/expectations-current.tsv",
    "generate it with scripts/ci/onnx_current_data.sh (it needs the interop venv of "
    "scripts/ci/bootstrap.sh) or pass --data DIR",
    "#19"};
inline constexpr std::array<const OnnxCorpus*, 2> kOnnxCorpora = {&kOnnxCorpus,
                                                                  &kOnnxCurrentCorpus};
// The corpus run as `suite`; nullptr for another suite.
const OnnxCorpus* find_onnx_corpus(std::string_view suite);

// The family of tests whose op Volta does not lower (strings, sequences, control flow, ...).
inline constexpr std::string_view kOnnxOtherFamily = "other";

struct OnnxTest {
  std::string id;      // "<folder>/<test name>", e.g. "node/test_abs"
  std::string folder;  // "node"
  std::string name;    // "test_abs"
  std::filesystem::path dir;
  std::vector<std::string> op_types;  // of the top-level graph's nodes, in node order
  int64_t opset = 0;                  // of the default domain; 0 when the model does not say
  // ONNX's type of the first graph input (the first output when there is none): "FLOAT",
  // "UINT8", "seq", ...; what the coverage reports per element type.
  std::string dtype;
  std::string op;                                // the principal op (see principal_op)
  std::string family;                            // op_family_name of op, or kOnnxOtherFamily
  std::vector<std::filesystem::path> data_sets;  // test_data_set_N, by N
  std::string problem;  // why the directory cannot run (no model.onnx, ...); empty when it can
};

// The internal family an ONNX op is reported under; nullopt when Volta does not lower it.
using OnnxFamilyFn = std::function<std::optional<OpFamily>(std::string_view op_type)>;

// Every test directory under `root`/<each of corpus.folders>, sorted by id. Throws
// VoltaError(InvalidArgument) when `root` or a folder is missing, or when fewer than `floor`
// test directories are found. A directory that cannot run is returned with its `problem`
// (the suite reports it as ERROR), never dropped.
std::vector<OnnxTest> discover_onnx_corpus(const std::filesystem::path& root,
                                           const OnnxFamilyFn& family_of,
                                           int64_t floor = kOnnxCorpusFloor,
                                           const OnnxCorpus& corpus = kOnnxCorpus);

// The op a test is about. A one-node model: that node's op. A node test "X_expanded" (an
// op's function body spelled out): the op of its sibling test "X" (`sibling_op`, empty when
// there is none). Otherwise, for node tests, the longest op of `known_ops` whose snake_case
// or lower-case spelling starts the test name after "test_" at a word boundary
// (test_reduce_log_sum_exp_* -> ReduceLogSumExp). Otherwise the first node op that is not
// plumbing (Constant, Shape, Reshape, Cast, Identity, Unsqueeze, Squeeze, Concat, Gather),
// else the first node op; "" for a model without nodes.
std::string principal_op(std::string_view folder, std::string_view test_name,
                         std::span<const std::string> op_types, std::string_view sibling_op,
                         std::span<const std::string> known_ops);

// "ReduceLogSumExp" -> "reduce_log_sum_exp", "LSTM" -> "lstm", "MatMulInteger" ->
// "mat_mul_integer".
std::string snake_case(std::string_view op_type);

// The tensors of one data set (`stem`_N.pb for stem "input" or "output") as the model declares
// them (`declared`: each value's dtype, in order). ONNX 1.12's data stores bfloat16 tensors as
// UINT16 (numpy had no bfloat16): a UINT16 file for a value declared bf16 is read as those bits.
std::vector<Tensor> read_onnx_data_set(const std::filesystem::path& data_set, std::string_view stem,
                                       std::span<const std::optional<DType>> declared);

// Every default-domain ONNX op name the ONNX library knows (all opsets), sorted.
const std::vector<std::string>& onnx_op_names();

}  // namespace volta::conformance
