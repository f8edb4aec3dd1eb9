#pragma once
// Internal to the importer: what a loaded Model holds.

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "volta/onnx/model.h"

namespace volta::onnx {

struct Model::Impl {
  ::onnx::ModelProto proto;
  std::string source;
  std::filesystem::path directory;  // the model file's folder (external data); empty: bytes
  int64_t opset = 0;                // default domain; 0 when the model imports none
  std::map<std::string, int64_t, std::less<>> domain_opsets;  // the other domains it imports

  // The opset the model imports of `domain` (a domain other than the default one); 0: none.
  int64_t domain_opset(std::string_view domain) const {
    const auto it = domain_opsets.find(domain);
    return it == domain_opsets.end() ? 0 : it->second;
  }
  std::vector<ValueSpec> inputs;
  std::vector<ValueSpec> outputs;
  std::set<std::string, std::less<>> initializer_names;

  // The initializer's data, decoded on first use and then shared by the graph of every import
  // that keeps it a parameter, so a session's plans hold each weight once.
  std::shared_ptr<const Tensor> initializer(const ::onnx::TensorProto& tensor) const;

 private:
  mutable std::mutex decoded_mutex_;
  // Keyed by the proto itself: graph attributes may reuse an initializer name for other data.
  mutable std::map<const ::onnx::TensorProto*, std::shared_ptr<const Tensor>> decoded_;
};

// Issues found without importing: other domains, ops without a lowering, old versions,
// unsupported dtypes of inputs, outputs and initializers.
std::vector<ImportIssue> static_issues(const Model::Impl& model);

}  // namespace volta::onnx
