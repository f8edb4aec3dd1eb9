#pragma once
// ONNX import through the ONNX library's own protobuf types. A Model is a checked
// ModelProto; import_for() lowers it onto Volta's op table for concrete inputs. Shapes are
// static per plan: a plan is specialized on every input's dtype and shape and on the values
// of the inputs that feed shape or attribute arguments (Reshape's shape, Slice's starts, ...).

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "volta/ir/graph.h"
#include "volta/passes/pass_manager.h"

namespace volta::onnx {

// A graph input or output as the model declares it.
// ONNX's name of a TensorProto element type ("FLOAT", "UINT8", "FLOAT8E4M3FN"), known to ONNX
// 1.23 (IR version 14); "element type N" for another number.
std::string onnx_type_name(int64_t elem_type);
// The ONNX element types Volta has a dtype for: "FLOAT, DOUBLE, INT64, ...".
std::string onnx_tensor_types();

struct ValueSpec {
  std::string name;
  std::optional<DType> dtype;  // nullopt: a type Volta does not support
  std::string type;            // ONNX spelling: "FLOAT", "UINT8", "seq(FLOAT)", ...
  std::vector<int64_t> dims;   // -1 for a symbolic or unknown dimension
  bool has_shape = false;
};

// One thing the importer cannot do, naming the node, its op and what is wrong.
struct ImportIssue {
  std::string node;     // node name ("" for model-level issues)
  std::string op_type;  // "" for model-level issues
  std::string message;  // the diagnostic, with what is supported
};

struct ImportOptions {
  // Evaluates, at import time, the nodes whose values become shape or attribute arguments:
  // required (I-INVALID-ARGUMENT without one), so the caller says whose kernels decide them.
  // A Session passes its backend's (make_backend_evaluator); the conformance runner passes the
  // reference engine's when importing for it.
  ConstantEvaluator evaluator;
  // false: initializers are parameters, constants the passes fold (inference).
  // true: floating-point initializers are states (Graph::add_state), bound at run time from
  // storage the caller keeps and shares across plans, never folded (training). An initializer
  // a node reads as a shape or attribute argument (Reshape's shape, Resize's scales) is fixed in
  // the plan and stays a parameter: ImportedGraph::frozen_initializers names it.
  bool trainable = false;
};

struct ImportedGraph {
  Graph graph;                    // inputs and outputs in the model's order
  std::vector<int> value_inputs;  // inputs the graph is specialized on by value
  std::vector<std::string> output_names;
  // Trainable import: each state's initializer data, indexed like graph.states() (a state's
  // value name is its initializer's name), and the initializers frozen as parameters.
  std::vector<Tensor> initial_states;
  std::vector<std::string> frozen_initializers;
};

class Model {
 public:
  // I-INVALID-MODEL when the bytes do not parse or the ONNX checker rejects the model.
  static Model load(const std::filesystem::path& file);
  static Model parse(std::string_view bytes, std::string source = "<bytes>");
  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;
  ~Model();

  const std::string& source() const;
  int64_t opset() const;  // of the default domain
  int64_t ir_version() const;
  std::string producer() const;
  int num_nodes() const;
  const std::vector<ValueSpec>& inputs() const;  // graph inputs that are not initializers
  const std::vector<ValueSpec>& outputs() const;

  // Every node the importer cannot lower, all at once: unknown ops, other domains, opset
  // versions, attribute values and dtypes it rejects. Nodes whose support depends on input
  // shapes or values are checked by importing (with `options`, as import_for) when every input
  // shape is static.
  std::vector<ImportIssue> check(const ImportOptions& options) const;

  // Lowers the model for these inputs (one per inputs(), in order). Throws VoltaError:
  // I-UNSUPPORTED / I-NOT-STATIC / I-INVALID-MODEL naming the node, or R-INPUT-MISMATCH.
  ImportedGraph import_for(std::span<const Tensor> inputs, const ImportOptions& options) const;

  // The ONNX op types of the model's nodes, in node order (for reports).
  std::vector<std::string> op_types() const;

  struct Impl;  // the importer's view of the ModelProto (engine/onnx/model_impl.h)

 private:
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The key a plan is specialized on: each input's dtype and shape, and the bytes of the inputs
// the import specialized on by value.
std::string specialization_key(std::span<const Tensor> inputs, std::span<const int> value_inputs);

// The family an ONNX op is reported under (from the lowering table), or nullopt when Volta
// does not lower it.
std::optional<OpFamily> onnx_op_family(std::string_view op_type);
// Every default-domain op type the importer lowers, sorted.
std::vector<std::string> supported_onnx_ops();

// TensorProto files (the backend test data's input_N.pb / output_N.pb, `volta run` outputs).
struct NamedTensor {
  std::string name;
  Tensor tensor;
};
// I-UNSUPPORTED for element types Volta lacks, I-INVALID-MODEL for malformed data.
NamedTensor read_tensor_file(const std::filesystem::path& file);
// The same from the file's bytes; `source` names them in messages.
NamedTensor parse_tensor_file(std::string_view bytes, std::string_view source);
// `dir`/STEM_0.pb, STEM_1.pb, ... until the first gap (a backend test's input_N / output_N).
std::vector<Tensor> read_tensor_files(const std::filesystem::path& dir, std::string_view stem);
void write_tensor_file(const std::filesystem::path& file, const Tensor& tensor,
                       std::string_view name);
// The bytes write_tensor_file writes.
std::string tensor_file_bytes(const Tensor& tensor, std::string_view name);

}  // namespace volta::onnx
