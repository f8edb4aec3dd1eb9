// Loading and describing ONNX models: parse, run the ONNX checker, read the graph's
// interface. Lowering is in importer.cpp.

#include <onnx/checker.h>
#include <onnx/defs/schema.h>

#include <fstream>
#include <sstream>

#include "lowering.h"
#include "model_impl.h"
#include "volta/error.h"

namespace volta::onnx {
namespace {

std::string type_text(const ::onnx::TypeProto& type) {
  switch (type.value_case()) {
    case ::onnx::TypeProto::kTensorType:
      return onnx_type_name(type.tensor_type().elem_type());
    case ::onnx::TypeProto::kSequenceType:
      return "seq(" + type_text(type.sequence_type().elem_type()) + ")";
    case ::onnx::TypeProto::kOptionalType:
      return "optional(" + type_text(type.optional_type().elem_type()) + ")";
    case ::onnx::TypeProto::kMapType:
      return "map";
    case ::onnx::TypeProto::kSparseTensorType:
      return "sparse(" + onnx_type_name(type.sparse_tensor_type().elem_type()) + ")";
    default:
      return "unknown";
  }
}

ValueSpec spec_of(const ::onnx::ValueInfoProto& info) {
  ValueSpec spec{info.name(), std::nullopt, type_text(info.type()), {}, false};
  if (info.type().has_tensor_type()) {
    const auto& tensor = info.type().tensor_type();
    spec.dtype = dtype_from_onnx(tensor.elem_type());
    if (tensor.has_shape()) {
      spec.has_shape = true;
      for (const auto& d : tensor.shape().dim()) {
        spec.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
      }
    }
  }
  return spec;
}

}  // namespace

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;
Model::~Model() = default;

Model Model::load(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(ErrorCode::InvalidArgument, "cannot open ONNX model " + file.string());
  std::stringstream bytes;
  bytes << in.rdbuf();
  return parse(bytes.str(), file.string());
}

Model Model::parse(std::string_view bytes, std::string source) {
  auto impl = std::make_unique<Impl>();
  impl->source = std::move(source);
  if (!impl->proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    fail(ErrorCode::ImportInvalidModel, impl->source + " is not a serialized ONNX ModelProto");
  }
  try {
    ::onnx::checker::check_model(impl->proto);
  } catch (const std::exception& e) {
    fail(ErrorCode::ImportInvalidModel,
         impl->source + " fails the ONNX checker: " + std::string(e.what()));
  }
  for (const auto& opset : impl->proto.opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx") impl->opset = opset.version();
  }
  const auto& graph = impl->proto.graph();
  for (const auto& init : graph.initializer()) impl->initializer_names.insert(init.name());
  for (const auto& input : graph.input()) {
    if (!impl->initializer_names.contains(input.name())) impl->inputs.push_back(spec_of(input));
  }
  for (const auto& output : graph.output()) impl->outputs.push_back(spec_of(output));
  return Model(std::move(impl));
}

const std::string& Model::source() const { return impl_->source; }
int64_t Model::opset() const { return impl_->opset; }
int64_t Model::ir_version() const { return impl_->proto.ir_version(); }
std::string Model::producer() const {
  const std::string& version = impl_->proto.producer_version();
  return impl_->proto.producer_name() + (version.empty() ? "" : " " + version);
}
int Model::num_nodes() const { return impl_->proto.graph().node_size(); }
const std::vector<ValueSpec>& Model::inputs() const { return impl_->inputs; }
const std::vector<ValueSpec>& Model::outputs() const { return impl_->outputs; }

std::vector<std::string> Model::op_types() const {
  std::vector<std::string> out;
  for (const auto& node : impl_->proto.graph().node()) out.push_back(node.op_type());
  return out;
}

std::optional<OpFamily> onnx_op_family(std::string_view op_type) {
  const Lowering* l = lowering_table().find(op_type);
  return l ? std::optional<OpFamily>(l->family) : std::nullopt;
}

std::vector<std::string> supported_onnx_ops() {
  std::vector<std::string> out;
  for (const auto& [name, lowering] : lowering_table().all()) out.push_back(name);
  return out;
}

std::vector<ImportIssue> static_issues(const Model::Impl& model) {
  std::vector<ImportIssue> issues;
  const auto& graph = model.proto.graph();
  auto check_value = [&](const ValueSpec& spec, const char* role) {
    if (!spec.dtype) {
      issues.push_back({"", "",
                        std::string(role) + " '" + spec.name + "' has type " + spec.type +
                            "; supported: tensors of FLOAT, DOUBLE, INT64, INT32, BOOL"});
    }
  };
  if (model.opset == 0) {
    issues.push_back({"", "", "the model imports no opset of the default domain (ai.onnx)"});
  }
  for (const ValueSpec& s : model.inputs) check_value(s, "graph input");
  for (const ValueSpec& s : model.outputs) check_value(s, "graph output");
  for (const auto& init : graph.initializer()) {
    if (!dtype_from_onnx(init.data_type())) {
      issues.push_back({"", "",
                        "initializer '" + init.name() + "' has element type " +
                            onnx_type_name(init.data_type()) +
                            "; supported: FLOAT, DOUBLE, INT64, INT32, BOOL"});
    }
  }
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    const std::string name =
        node.name().empty() ? node.op_type() + "_" + std::to_string(i) : node.name();
    if (!node.domain().empty() && node.domain() != "ai.onnx") {
      issues.push_back({name, node.op_type(),
                        "domain '" + node.domain() +
                            "' is not supported; supported: the default domain (ai.onnx)"});
      continue;
    }
    const Lowering* lowering = lowering_table().find(node.op_type());
    if (lowering == nullptr) {
      issues.push_back({name, node.op_type(),
                        "op " + node.op_type() +
                            " is not supported (`volta check --ops` lists the supported ops)"});
      continue;
    }
    const auto* schema =
        ::onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(model.opset), "");
    if (schema == nullptr) {
      issues.push_back(
          {name, node.op_type(),
           "no ONNX schema for " + node.op_type() + " at opset " + std::to_string(model.opset)});
    } else if (schema->SinceVersion() < lowering->min_version) {
      issues.push_back({name, node.op_type(),
                        "version " + std::to_string(schema->SinceVersion()) + " of " +
                            node.op_type() + " is not supported; supported: versions >= " +
                            std::to_string(lowering->min_version)});
    }
  }
  return issues;
}

}  // namespace volta::onnx
