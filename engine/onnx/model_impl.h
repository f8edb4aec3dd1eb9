#pragma once
// Internal to the importer: what a loaded Model holds.

#include <onnx/onnx_pb.h>

#include <set>
#include <string>
#include <vector>

#include "volta/onnx/model.h"

namespace volta::onnx {

struct Model::Impl {
  ::onnx::ModelProto proto;
  std::string source;
  int64_t opset = 0;  // default domain; 0 when the model imports none
  std::vector<ValueSpec> inputs;
  std::vector<ValueSpec> outputs;
  std::set<std::string, std::less<>> initializer_names;
};

// Issues found without importing: other domains, ops without a lowering, old versions,
// unsupported dtypes of inputs, outputs and initializers.
std::vector<ImportIssue> static_issues(const Model::Impl& model);

}  // namespace volta::onnx
