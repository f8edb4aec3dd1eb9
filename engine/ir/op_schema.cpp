#include "volta/ir/op_schema.h"

#include <array>

#include "volta/error.h"
#include "volta/ir/graph.h"

namespace volta {

std::string_view op_name(OpKind op) { return detail::kOpNames[static_cast<size_t>(op_index(op))]; }

std::optional<OpKind> parse_op(std::string_view name) {
  for (int i = 0; i < kOpCount; ++i) {
    if (op_name(static_cast<OpKind>(i)) == name) return static_cast<OpKind>(i);
  }
  return std::nullopt;
}

std::string_view op_family_name(OpFamily family) {
  switch (family) {
    case OpFamily::Elementwise:
      return "elementwise";
    case OpFamily::Activation:
      return "activation";
    case OpFamily::Logical:
      return "logical";
    case OpFamily::Linalg:
      return "linalg";
    case OpFamily::Normalization:
      return "normalization";
    case OpFamily::Reduction:
      return "reduction";
    case OpFamily::Movement:
      return "movement";
    case OpFamily::Convolution:
      return "convolution";
    case OpFamily::Pooling:
      return "pooling";
    case OpFamily::Indexing:
      return "indexing";
    case OpFamily::Loss:
      return "loss";
    case OpFamily::Resampling:
      return "resampling";
  }
  return "?";
}

std::optional<OpFamily> parse_op_family(std::string_view name) {
  for (int i = 0; i < kOpFamilyCount; ++i) {
    if (op_family_name(static_cast<OpFamily>(i)) == name) return static_cast<OpFamily>(i);
  }
  return std::nullopt;
}

std::string_view nan_mode_name(NanMode mode) {
  switch (mode) {
    case NanMode::Propagate:
      return "propagate";
    case NanMode::ComparesFalse:
      return "compares-false";
    case NanMode::FirstNanWins:
      return "first-nan-wins";
    case NanMode::PassThrough:
      return "pass-through";
    case NanMode::Detects:
      return "detects";
    case NanMode::NotApplicable:
      return "n/a";
  }
  return "?";
}

std::string_view differentiability_name(Differentiability d) {
  switch (d) {
    case Differentiability::Differentiable:
      return "differentiable";
    case Differentiability::NotDifferentiable:
      return "not-differentiable";
    case Differentiability::IntegerIndex:
      return "integer-index";
  }
  return "?";
}

std::string_view op_trait_name(OpTrait trait) {
  switch (trait) {
    case OpTrait::UnaryElementwise:
      return "unary-elementwise";
    case OpTrait::BroadcastingBinary:
      return "broadcasting-binary";
    case OpTrait::AxisAttribute:
      return "axis-attribute";
    case OpTrait::Commutative:
      return "commutative";
    case OpTrait::Idempotent:
      return "idempotent";
  }
  return "?";
}

int OpSchema::min_inputs() const {
  int n = 0;
  for (const InputSpec& in : inputs) n += in.optional ? 0 : 1;
  return n;
}

int OpSchema::max_inputs() const {
  if (!inputs.empty() && inputs.back().variadic) return -1;
  return static_cast<int>(inputs.size());
}

int OpSchema::min_outputs() const {
  int n = 0;
  for (const OutputSpec& out : outputs) n += out.optional ? 0 : 1;
  return n;
}

int OpSchema::max_outputs() const {
  if (!outputs.empty() && outputs.back().variadic) return -1;
  return static_cast<int>(outputs.size());
}

const AttrSpec* OpSchema::find_attr(std::string_view attr) const {
  for (const AttrSpec& spec : attrs) {
    if (spec.name == attr) return &spec;
  }
  return nullptr;
}

const TypeParam* OpSchema::find_type_param(char param) const {
  for (const TypeParam& p : type_params) {
    if (p.name == param) return &p;
  }
  return nullptr;
}

AttrReader::AttrReader(const Node& node) : node_(node) {}

bool AttrReader::has(std::string_view name) const { return node_.attrs.contains(name); }

const AttrValue& AttrReader::lookup(std::string_view name) const {
  if (auto it = node_.attrs.find(name); it != node_.attrs.end()) return it->second;
  const OpSchema& schema = op_schema(node_.op);
  const AttrSpec* spec = schema.find_attr(name);
  if (spec == nullptr) {
    fail(ErrorCode::InvalidArgument,
         std::string(schema.name) + " has no attribute '" + std::string(name) + "'");
  }
  if (!spec->default_value) {
    fail(ErrorCode::VerifyMissingAttribute,
         "Node '" + node_.name + "' (" + std::string(schema.name) + "): required attribute '" +
             std::string(name) + "' is missing");
  }
  return *spec->default_value;
}

namespace {
template <class T>
const T& typed(const AttrValue& v, std::string_view name, AttrType want) {
  if (const T* p = std::get_if<T>(&v)) return *p;
  fail(ErrorCode::VerifyAttributeType, "attribute '" + std::string(name) + "' is " +
                                           std::string(attr_type_name(attr_type_of(v))) +
                                           ", expected " + std::string(attr_type_name(want)));
}
}  // namespace

int64_t AttrReader::get_int(std::string_view name) const {
  return typed<int64_t>(lookup(name), name, AttrType::Int);
}
double AttrReader::get_float(std::string_view name) const {
  return typed<double>(lookup(name), name, AttrType::Float);
}
const std::string& AttrReader::get_string(std::string_view name) const {
  return typed<std::string>(lookup(name), name, AttrType::String);
}
const std::vector<int64_t>& AttrReader::get_ints(std::string_view name) const {
  return typed<std::vector<int64_t>>(lookup(name), name, AttrType::Ints);
}
const std::vector<double>& AttrReader::get_floats(std::string_view name) const {
  return typed<std::vector<double>>(lookup(name), name, AttrType::Floats);
}
const Tensor& AttrReader::get_tensor(std::string_view name) const {
  return typed<Tensor>(lookup(name), name, AttrType::Tensor);
}

}  // namespace volta
