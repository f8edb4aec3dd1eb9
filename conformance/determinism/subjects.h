#pragma once
// What the determinism suite runs: built-in graphs (a transformer block, an MLP, a CNN) and
// every ONNX backend test the CPU engine passes, each with fixed inputs.

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

}  // namespace volta::conformance
