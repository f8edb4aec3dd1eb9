// Loading and describing ONNX models: parse, run the ONNX checker, read the graph's
// interface. Lowering is in importer.cpp.

#include <onnx/checker.h>
#include <onnx/defs/schema.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "lowering.h"
#include "model_impl.h"
#include "onnx_versions.h"
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

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

std::string node_text(const ::onnx::NodeProto& node) {
  return "node '" + node.name() + "' (" + node.op_type() + ")";
}

// What ::onnx::checker::check_model checks, for a model newer than the library knows (IR
// version above 8, an opset above 17, or an ai.onnx.ml opset above 3): every graph input, output
// and value info; every initializer of an element type the library knows (Volta refuses the
// others); every node of the default domain whose schema in force the library has, at the same
// schema version (the others are checked by their lowering, and other domains are refused, when
// imported); and the graph's own rules: an IR version, names defined before they are used, each
// output name defined once.
void check_newer_model(const ::onnx::ModelProto& model, int64_t opset) {
  using ::onnx::checker::ValidationError;
  namespace checker = ::onnx::checker;
  if (!model.has_ir_version()) throw ValidationError("The model does not have an ir_version set");
  checker::CheckerContext ctx;
  ctx.set_ir_version(static_cast<int>(kLibraryIrVersion));
  std::unordered_map<std::string, int> opsets;
  for (const auto& o : model.opset_import()) {
    const int64_t version =
        is_default_domain(o.domain()) ? std::min(o.version(), kLibraryOpset) : o.version();
    opsets[o.domain()] = static_cast<int>(version);
  }
  ctx.set_opset_imports(opsets);

  const auto& graph = model.graph();
  checker::LexicalScopeContext scope;
  for (const auto& input : graph.input()) {
    checker::check_value_info(input, ctx);
    scope.add(input.name());
  }
  for (const auto& init : graph.initializer()) {
    if (init.data_type() <= kLibraryNewestElementType) checker::check_tensor(init, ctx);
    scope.add(init.name());
  }
  for (const auto& info : graph.value_info()) checker::check_value_info(info, ctx);
  for (const auto& node : graph.node()) {
    for (const std::string& in : node.input()) {
      if (!in.empty() && !scope.this_graph_has(in)) {
        throw ValidationError("Nodes in a graph must be topologically sorted, however input '" +
                              in + "' of " + node_text(node) +
                              " is not output of any previous nodes.");
      }
    }
    if (!is_default_domain(node.domain())) {
      // Volta lowers the preview domain's ops itself and refuses other domains; their versions
      // may be newer than the library's too. A node's domain must be imported all the same.
      if (!opsets.contains(node.domain())) {
        throw ValidationError("No opset import for domain '" + node.domain() + "' of " +
                              node_text(node));
      }
    } else if (!schema_version(node.op_type(), opset)) {
      throw ValidationError("No Op registered for " + node.op_type() + " with domain_version of " +
                            std::to_string(opset));
    } else if (newer_schema(node.op_type(), opset) == nullptr) {
      checker::check_node(node, ctx, scope);  // the library's schema is the one in force
    }
    for (const std::string& out : node.output()) {
      if (out.empty()) continue;
      if (scope.this_graph_has(out)) {
        throw ValidationError("Graph must be in single static assignment (SSA) form, however '" +
                              out + "' has been used as output names multiple times.");
      }
      scope.add(out);
    }
  }
  for (const auto& output : graph.output()) checker::check_value_info(output, ctx);
}

// The library's checker looks for external data files relative to the working directory, and
// its ONNX 1.12 follows any location: in the checked copy those initializers hold no elements
// and no data. Volta reads external data itself, inside the model's folder only
// (tensor_proto.cpp); a model with none is checked as it is.
std::optional<::onnx::ModelProto> without_external_data(const ::onnx::ModelProto& model) {
  const auto external = [](const ::onnx::TensorProto& t) {
    return t.data_location() == ::onnx::TensorProto::EXTERNAL;
  };
  const auto& inits = model.graph().initializer();
  if (std::none_of(inits.begin(), inits.end(), external)) return std::nullopt;
  ::onnx::ModelProto copy = model;
  for (auto& init : *copy.mutable_graph()->mutable_initializer()) {
    if (!external(init)) continue;
    init.clear_external_data();
    init.set_data_location(::onnx::TensorProto::DEFAULT);
    init.clear_dims();
    init.add_dims(0);  // no elements: the checker then asks for no data field
  }
  return copy;
}

// Refuses what is newer than Volta reads, naming both; then checks the model with the ONNX
// library's checker, whole when the library knows its IR version and opset.
void check_model(const Model::Impl& impl) {
  const int64_t ir_version = impl.proto.ir_version();
  if (ir_version > kNewestIrVersion) {
    fail(ErrorCode::ImportUnsupported, impl.source + " has IR version " +
                                           std::to_string(ir_version) +
                                           "; Volta reads IR versions up to " +
                                           std::to_string(kNewestIrVersion) + " (ONNX 1.23)");
  }
  if (impl.opset > kNewestOpset) {
    fail(ErrorCode::ImportUnsupported, impl.source + " imports opset " +
                                           std::to_string(impl.opset) +
                                           " of the default domain; Volta reads opsets 1 to " +
                                           std::to_string(kNewestOpset) + " (ONNX 1.23)");
  }
  try {
    const std::optional<::onnx::ModelProto> embedded = without_external_data(impl.proto);
    const ::onnx::ModelProto& checked = embedded ? *embedded : impl.proto;
    if (ir_version <= kLibraryIrVersion && impl.opset <= kLibraryOpset &&
        impl.domain_opset(kMlDomain) <= kLibraryMlOpset) {
      ::onnx::checker::check_model(checked);
    } else {
      check_newer_model(checked, impl.opset);
    }
  } catch (const std::exception& e) {
    fail(ErrorCode::ImportInvalidModel,
         impl.source + " fails the ONNX checker: " + std::string(e.what()));
  }
}

// Protobuf reads a message of at most 2^31 - 1 bytes; larger models keep their weights as
// external data (ONNX's own rule for models over 2 GiB).
constexpr uint64_t kMaxModelBytes = (uint64_t{1} << 31) - 1;

void check_model_size(uint64_t bytes, const std::string& source) {
  if (bytes > kMaxModelBytes) {
    fail(ErrorCode::ImportUnsupported,
         source + " is " + std::to_string(bytes) +
             " bytes; an ONNX ModelProto holds at most 2^31 - 1 (2 GiB): save the model with its "
             "weights as external data");
  }
}

}  // namespace

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;
Model::~Model() = default;

Model Model::load(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(ErrorCode::InvalidArgument, "cannot open ONNX model " + file.string());
  std::error_code error;
  const uint64_t size = std::filesystem::file_size(file, error);
  if (!error) check_model_size(size, file.string());  // before reading it whole
  std::stringstream bytes;
  bytes << in.rdbuf();
  Model model = parse(bytes.str(), file.string());
  model.impl_->directory = std::filesystem::absolute(file).parent_path();
  return model;
}

Model Model::parse(std::string_view bytes, std::string source) {
  auto impl = std::make_unique<Impl>();
  impl->source = std::move(source);
  check_model_size(bytes.size(), impl->source);
  if (!impl->proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    // Protobuf also refuses messages nested past its recursion limit of 100, which bounds a
    // model's subgraph nesting (three levels a subgraph: node, attribute, graph).
    fail(ErrorCode::ImportInvalidModel,
         impl->source +
             " is not a serialized ONNX ModelProto (or nests subgraphs deeper than protobuf's "
             "limit of 100 message levels, about 32 levels of If/Loop/Scan bodies)");
  }
  for (const auto& opset : impl->proto.opset_import()) {
    if (is_default_domain(opset.domain())) impl->opset = opset.version();
    if (!is_default_domain(opset.domain())) {
      impl->domain_opsets.insert_or_assign(opset.domain(), opset.version());
    }
  }
  check_model(*impl);
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
                            "; supported: tensors of " + onnx_tensor_types()});
    }
  };
  const auto& nodes = graph.node();
  if (model.opset == 0 && std::any_of(nodes.begin(), nodes.end(), [](const auto& n) {
        return is_default_domain(n.domain());
      })) {
    issues.push_back({"", "", "the model imports no opset of the default domain (ai.onnx)"});
  }
  for (const ValueSpec& s : model.inputs) check_value(s, "graph input");
  for (const ValueSpec& s : model.outputs) check_value(s, "graph output");
  for (const auto& init : graph.initializer()) {
    if (!dtype_from_onnx(init.data_type())) {
      issues.push_back({"", "",
                        "initializer '" + init.name() + "' has element type " +
                            onnx_type_name(init.data_type()) +
                            "; supported: " + onnx_tensor_types()});
    }
  }
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    const std::string name =
        node.name().empty() ? node.op_type() + "_" + std::to_string(i) : node.name();
    const NodeLowering found = find_lowering(node.domain(), node.op_type(), model.opset,
                                             model.domain_opset(node.domain()));
    if (!found.version.problem.empty()) {
      issues.push_back({name, node.op_type(), found.version.problem});
    }
  }
  return issues;
}

}  // namespace volta::onnx
