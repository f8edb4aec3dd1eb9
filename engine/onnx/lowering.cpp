#include "lowering.h"

#include <onnx/onnx_pb.h>

#include <array>
#include <stdexcept>

#include "onnx_versions.h"
#include "volta/error.h"

namespace volta::onnx {

std::vector<int64_t> LoweringContext::constant_ints(int i, std::string_view what) {
  const Tensor& t = constant_input(i, what);
  if (!is_integer(t.dtype()) || t.shape().rank() > 1) {
    invalid(std::string(what) + " must be a 1-D integer tensor; got " +
            std::string(dtype_name(t.dtype())) + " of shape " + t.shape().str());
  }
  std::vector<int64_t> out(static_cast<size_t>(t.numel()));
  for (int64_t k = 0; k < t.numel(); ++k) out[static_cast<size_t>(k)] = t.get_int(k);
  return out;
}

int64_t LoweringContext::constant_int(int i, std::string_view what) {
  const std::vector<int64_t> v = constant_ints(i, what);
  if (v.size() != 1) {
    invalid(std::string(what) + " must hold one value; got " + std::to_string(v.size()));
  }
  return v[0];
}

double LoweringContext::constant_scalar(int i, std::string_view what) {
  const Tensor& t = constant_input(i, what);
  if (t.numel() != 1) {
    invalid(std::string(what) + " must hold one value; got shape " + t.shape().str());
  }
  return t.get_double(0);
}

int LoweringContext::declared_outputs() const {
  int n = 1;
  for (int i = 0; i < num_outputs(); ++i) {
    if (has_output(i)) n = i + 1;
  }
  return n;
}

void LoweringContext::unsupported(const std::string& what) const {
  fail(ErrorCode::ImportUnsupported, "node '" + node_name() + "' (" + op_type() + ", version " +
                                         std::to_string(since_version()) + "): " + what);
}

void LoweringContext::invalid(const std::string& what) const {
  fail(ErrorCode::ImportInvalidModel, "node '" + node_name() + "' (" + op_type() + ", version " +
                                          std::to_string(since_version()) + "): " + what);
}

ValueId scalar_constant(LoweringContext& ctx, DType dtype, double value) {
  Tensor t(dtype, Shape{});
  t.set_double(0, value);
  return ctx.constant(std::move(t));
}

bool half_through_f32(DTypeSet allowed, DType dtype) {
  return kHalfTypes.contains(dtype) && !allowed.contains(dtype) && allowed.contains(DType::F32);
}

DTypeSet importable(DTypeSet allowed) {
  return allowed.contains(DType::F32) ? allowed | kHalfTypes : allowed;
}

void require_dtype(LoweringContext& ctx, OpKind op, DType dtype) {
  const DTypeSet allowed = importable(op_schema(op).type_params.front().allowed);
  if (!allowed.contains(dtype)) {
    ctx.unsupported("input of dtype " + std::string(dtype_name(dtype)) +
                    "; supported: " + allowed.str());
  }
}

bool attr_flag(LoweringContext& ctx, std::string_view name, int64_t def) {
  const int64_t v = ctx.attr_int(name, def);
  if (v != 0 && v != 1) {
    ctx.invalid(std::string(name) + " must be 0 or 1; got " + std::to_string(v));
  }
  return v == 1;
}

ValueId as_dtype(LoweringContext& ctx, ValueId v, DType dtype) {
  if (ctx.type_of(v).dtype == dtype) return v;
  return ctx.add(OpKind::Cast, {v}, {{"to", std::string(dtype_name(dtype))}});
}

std::string type_text(const TypeInfo& t) {
  return std::string(dtype_name(t.dtype)) + t.shape.str();
}

void check_constant_size(LoweringContext& ctx, const Shape& shape) {
  constexpr int64_t kMaxConstantElements = int64_t{1} << 28;
  if (shape.numel() > kMaxConstantElements) {
    ctx.unsupported("the constant output " + shape.str() + " exceeds " +
                    std::to_string(kMaxConstantElements) + " elements");
  }
}

std::optional<DType> dtype_from_onnx(int64_t elem_type) {
  switch (elem_type) {
    case ::onnx::TensorProto::FLOAT:
      return DType::F32;
    case ::onnx::TensorProto::DOUBLE:
      return DType::F64;
    case ::onnx::TensorProto::INT64:
      return DType::I64;
    case ::onnx::TensorProto::INT32:
      return DType::I32;
    case ::onnx::TensorProto::BOOL:
      return DType::Bool;
    case ::onnx::TensorProto::FLOAT16:
      return DType::F16;
    case ::onnx::TensorProto::BFLOAT16:
      return DType::BF16;
    case ::onnx::TensorProto::INT8:
      return DType::I8;
    case ::onnx::TensorProto::UINT8:
      return DType::U8;
    case ::onnx::TensorProto::INT16:
      return DType::I16;
    case ::onnx::TensorProto::UINT16:
      return DType::U16;
    case ::onnx::TensorProto::UINT32:
      return DType::U32;
    case ::onnx::TensorProto::UINT64:
      return DType::U64;
    default:
      return std::nullopt;
  }
}

int64_t onnx_from_dtype(DType dtype) {
  switch (dtype) {
    case DType::F32:
      return ::onnx::TensorProto::FLOAT;
    case DType::F64:
      return ::onnx::TensorProto::DOUBLE;
    case DType::I64:
      return ::onnx::TensorProto::INT64;
    case DType::I32:
      return ::onnx::TensorProto::INT32;
    case DType::Bool:
      return ::onnx::TensorProto::BOOL;
    case DType::F16:
      return ::onnx::TensorProto::FLOAT16;
    case DType::BF16:
      return ::onnx::TensorProto::BFLOAT16;
    case DType::I8:
      return ::onnx::TensorProto::INT8;
    case DType::U8:
      return ::onnx::TensorProto::UINT8;
    case DType::I16:
      return ::onnx::TensorProto::INT16;
    case DType::U16:
      return ::onnx::TensorProto::UINT16;
    case DType::U32:
      return ::onnx::TensorProto::UINT32;
    case DType::U64:
      return ::onnx::TensorProto::UINT64;
  }
  return ::onnx::TensorProto::UNDEFINED;
}

std::string onnx_tensor_types() {
  std::string names;
  for (int code = 0; code < kDTypeCount; ++code) {
    names +=
        (names.empty() ? "" : ", ") + onnx_type_name(onnx_from_dtype(static_cast<DType>(code)));
  }
  return names;
}

std::string onnx_type_name(int64_t elem_type) {
  if (::onnx::TensorProto_DataType_IsValid(static_cast<int>(elem_type))) {
    return ::onnx::TensorProto_DataType_Name(static_cast<::onnx::TensorProto_DataType>(elem_type));
  }
  // The element types of IR versions 9 to 14, which ONNX 1.12's enum lacks.
  static constexpr std::array<std::string_view, 12> kNewer = {
      "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4",      "INT4",
      "FLOAT4E2M1",   "FLOAT8E8M0",     "UINT2",      "INT2",           "FLOAT6E2M3", "FLOAT6E3M2"};
  const int64_t k = elem_type - kLibraryNewestElementType - 1;
  if (k >= 0 && k < static_cast<int64_t>(kNewer.size())) {
    return std::string(kNewer[static_cast<size_t>(k)]);
  }
  return "element type " + std::to_string(elem_type);
}

VersionCheck check_version(std::string_view op, int64_t opset, const Lowering& lowering) {
  const std::optional<int> version = schema_version(op, opset);
  const std::string name(op);
  if (!version) {
    return {0, "ONNX has no op " + name + " at opset " + std::to_string(opset), true};
  }
  if (*version < lowering.min_version) {
    return {
        0, "version " + std::to_string(*version) + " of " + name +
               " is not supported; supported: versions >= " + std::to_string(lowering.min_version)};
  }
  for (const NewerSchema& s : newer_schemas()) {
    if (s.op != op || s.version > opset || s.change != SchemaChange::Refused) continue;
    // The first version whose form no lowering reads: the one before it is the newest read.
    const std::optional<int> newest_read = schema_version(op, s.version - 1);
    return {0, "version " + std::to_string(s.version) + " of " + name +
                   " changed its inputs or attributes and is not supported yet; supported: "
                   "versions " +
                   std::to_string(lowering.min_version) + " to " +
                   std::to_string(newest_read.value_or(lowering.min_version)) + " (opset " +
                   std::to_string(s.version - 1) + " and older)"};
  }
  return {*version, ""};
}

namespace {

// "domain (Op, Op, ...)": the ops the lowering table reads from another domain than the default.
std::string domain_with_ops(std::string_view domain) {
  std::string ops;
  for (const auto& [op_type, lowering] : lowering_table().all()) {
    if (lowering.domain == domain) ops += (ops.empty() ? "" : ", ") + op_type;
  }
  return std::string(domain) + " (" + ops + ")";
}

}  // namespace

NodeLowering find_lowering(std::string_view domain, std::string_view op_type, int64_t opset,
                           int64_t domain_opset) {
  const std::string op(op_type);
  const bool standard = domain.empty() || domain == "ai.onnx";
  const bool ml = domain == kMlDomain;
  if (!standard && !ml && domain != kPreviewDomain && domain != kTrainingDomain) {
    return {nullptr,
            {0, "domain '" + std::string(domain) +
                    "' is not supported; supported: the default domain (ai.onnx), " +
                    domain_with_ops(kMlDomain) + ", " + domain_with_ops(kPreviewDomain) + " and " +
                    domain_with_ops(kTrainingDomain)}};
  }
  const Lowering* lowering = lowering_table().find(op_type);
  if (lowering == nullptr || lowering->domain != (standard ? std::string_view() : domain)) {
    return {nullptr,
            {0, "op " + op + (standard ? "" : " of domain " + std::string(domain)) +
                    " is not supported (`volta check --ops` lists the supported ops)"}};
  }
  if (standard) return {lowering, check_version(op_type, opset, *lowering)};
  if (domain_opset == 0) {  // the checker refuses this first (model.cpp)
    return {lowering, {0, "the model imports no opset of domain " + std::string(domain), true}};
  }
  if (ml) {
    if (domain_opset > kNewestMlOpset) {
      return {lowering,
              {0, "the model imports opset " + std::to_string(domain_opset) + " of " +
                      std::string(domain) + "; Volta reads its opsets 1 to " +
                      std::to_string(kNewestMlOpset) + " (ONNX 1.23)"}};
    }
    if (domain_opset < lowering->min_version) {
      return {lowering,
              {0,
               "op " + op + " of " + std::string(domain) + " is defined from its opset " +
                   std::to_string(lowering->min_version) + "; the model imports opset " +
                   std::to_string(domain_opset),
               true}};
    }
    return {lowering, {lowering->min_version, ""}};
  }
  if (domain_opset > kNewestPreviewOpset) {
    return {lowering,
            {0, "the model imports opset " + std::to_string(domain_opset) + " of " +
                    std::string(domain) + "; Volta reads its opset " +
                    std::to_string(kNewestPreviewOpset) + " (ONNX 1.23)"}};
  }
  return {lowering, {1, ""}};
}

DType attr_dtype(const LoweringContext& ctx, int64_t elem_type, std::string_view what) {
  if (const std::optional<DType> d = dtype_from_onnx(elem_type)) return *d;
  ctx.unsupported(std::string(what) + " is " + onnx_type_name(elem_type) +
                  "; supported: " + onnx_tensor_types());
}

void LoweringTable::add(std::string_view op_type, OpKind onto, int min_version, LowerFn lower) {
  add(Lowering{op_type, op_schema(onto).family, min_version, lower, onto, {}});
}

void LoweringTable::add_composite(std::string_view op_type, OpFamily family, int min_version,
                                  LowerFn lower) {
  add(Lowering{op_type, family, min_version, lower, std::nullopt, {}});
}

void LoweringTable::add_preview_composite(std::string_view domain, std::string_view op_type,
                                          OpFamily family, LowerFn lower) {
  if (domain != kPreviewDomain && domain != kTrainingDomain) {
    throw std::logic_error("ONNX lowering for " + std::string(op_type) + ": domain " +
                           std::string(domain) + " is not a preview domain");
  }
  add(Lowering{op_type, family, 1, lower, std::nullopt, domain});
}

void LoweringTable::add_ml_composite(std::string_view op_type, OpFamily family, int min_version,
                                     LowerFn lower) {
  add(Lowering{op_type, family, min_version, lower, std::nullopt, kMlDomain});
}

void LoweringTable::add(Lowering lowering) {
  if (!table_.emplace(std::string(lowering.op_type), lowering).second) {
    throw std::logic_error("ONNX lowering for " + std::string(lowering.op_type) +
                           " registered twice");
  }
}

const Lowering* LoweringTable::find(std::string_view op_type) const {
  const auto it = table_.find(op_type);
  return it == table_.end() ? nullptr : &it->second;
}

namespace {

// Each family file registers the ONNX ops reported under its family and no other.
struct FamilyFile {
  OpFamily family;
  void (*add)(LoweringTable& table);
};
constexpr FamilyFile kFamilyFiles[] = {
    {OpFamily::Elementwise, register_elementwise_lowerings},
    {OpFamily::Elementwise, register_elementwise_quantize_lowerings},
    {OpFamily::Elementwise, register_elementwise_optimizer_lowerings},
    {OpFamily::Activation, register_activation_lowerings},
    {OpFamily::Logical, register_logical_lowerings},
    {OpFamily::Logical, register_logical_loop_lowerings},
    {OpFamily::Linalg, register_linalg_lowerings},
    {OpFamily::Linalg, register_linalg_quantized_lowerings},
    {OpFamily::Linalg, register_linalg_rnn_lowerings},
    {OpFamily::Linalg, register_attention_lowerings},
    {OpFamily::Linalg, register_linalg_signal_lowerings},
    {OpFamily::Linalg, register_linalg_recurrent_lowerings},
    {OpFamily::Normalization, register_normalization_lowerings},
    {OpFamily::Reduction, register_reduction_lowerings},
    {OpFamily::Movement, register_movement_lowerings},
    {OpFamily::Movement, register_movement_sequence_lowerings},
    {OpFamily::Convolution, register_convolution_lowerings},
    {OpFamily::Convolution, register_convolution_quantized_lowerings},
    {OpFamily::Convolution, register_convolution_deform_lowerings},
    {OpFamily::Pooling, register_pooling_lowerings},
    {OpFamily::Pooling, register_pooling_roi_lowerings},
    {OpFamily::Indexing, register_indexing_lowerings},
    {OpFamily::Indexing, register_indexing_ml_lowerings},
    {OpFamily::Loss, register_loss_lowerings},
    {OpFamily::Resampling, register_resampling_lowerings},
};

}  // namespace

const LoweringTable& lowering_table() {
  static const LoweringTable kTable = [] {
    LoweringTable t;
    for (const FamilyFile& file : kFamilyFiles) {
      LoweringTable part;
      file.add(part);
      for (const auto& [op_type, lowering] : part.all()) {
        if (lowering.family != file.family) {
          throw std::logic_error("ONNX lowering for " + op_type + " (family " +
                                 std::string(op_family_name(lowering.family)) +
                                 ") is registered in lower_" +
                                 std::string(op_family_name(file.family)) + ".cpp");
        }
        t.add(lowering);
      }
    }
    return t;
  }();
  return kTable;
}

}  // namespace volta::onnx
