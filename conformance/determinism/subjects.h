#pragma once
// What the determinism suite runs: the built-in models of engine/model (a transformer block, an
// MLP, a CNN: volta/model/builtin_models.h) and every ONNX backend test the CPU engine passes,
// each with fixed inputs.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "volta/ir/graph.h"

namespace volta::conformance {

struct Subject {
  std::string name;      // "model:mlp", "onnx:node/test_abs"
  std::string frontend;  // what built the graph: "graph builder" or "ONNX import"
  Graph graph;
  std::vector<Tensor> inputs;
};

struct SubjectSource {
  std::filesystem::path onnx_data;          // empty: no ONNX subjects
  std::filesystem::path onnx_expectations;  // tests it lists for the CPU backend are left out
  bool large_models = false;                // add the soak's larger models (-large)
};

// Every subject's name: the built-in models first (sorted), then the ONNX tests (sorted).
std::vector<std::string> subject_names(const SubjectSource& source);

// Builds (or imports, with the CPU engine as import-time evaluator) one subject. Throws
// VoltaError for an unknown name or a model that does not import.
Subject load_subject(const std::string& name, const SubjectSource& source);

// The batch subjects, sorted: the built-in models, whose batch axis is axis 0 of their input and
// of every output. ONNX subjects have fixed shapes and declare no batch axis: they are not
// batch subjects.
std::vector<std::string> batch_subject_names(const SubjectSource& source);

// Batch subject `name` built for `batch` samples: the same weights at every batch size
// (counter-based random values by stream), and sample i's input a pure function of i (stream i
// of the model's input seed, BuiltInModel::batch_input), whatever batch it sits in. Throws
// VoltaError for a name that is not a batch subject.
Subject load_batch_subject(const std::string& name, int64_t batch);

}  // namespace volta::conformance
