#pragma once
// Internal: builders shared by the op table's family files (engine/ir/op_table_<family>.cpp),
// and the function each defines. Every family file appends the schemas of its family's ops;
// op_table.cpp puts them in OpKind order and checks that every op is described exactly once.

#include <limits>
#include <string>
#include <vector>

#include "shape_functions.h"
#include "volta/ir/op_schema.h"

namespace volta::op_table {

// One function per family file: op_table_<family>.cpp.
void add_elementwise_schemas(std::vector<OpSchema>& t);
void add_activation_schemas(std::vector<OpSchema>& t);
void add_logical_schemas(std::vector<OpSchema>& t);
void add_linalg_schemas(std::vector<OpSchema>& t);
void add_normalization_schemas(std::vector<OpSchema>& t);
void add_reduction_schemas(std::vector<OpSchema>& t);
void add_movement_schemas(std::vector<OpSchema>& t);
void add_convolution_schemas(std::vector<OpSchema>& t);
void add_pooling_schemas(std::vector<OpSchema>& t);
void add_indexing_schemas(std::vector<OpSchema>& t);
void add_loss_schemas(std::vector<OpSchema>& t);
void add_resampling_schemas(std::vector<OpSchema>& t);

using D = Differentiability;
inline constexpr double kInf = std::numeric_limits<double>::infinity();

inline AttrSpec flag(std::string_view name, int64_t def) {
  return {name, AttrType::Int, AttrValue{def}, 0.0, 1.0};
}
inline AttrSpec axis_attr(int64_t def) { return {"axis", AttrType::Int, AttrValue{def}}; }
inline AttrSpec required(std::string_view name, AttrType type) {
  return {name, type, std::nullopt};
}
inline AttrSpec ints_attr(std::string_view name) {
  return {name, AttrType::Ints, AttrValue{std::vector<int64_t>{}}};
}
inline AttrSpec int_attr(std::string_view name, int64_t def,
                         std::optional<double> min = std::nullopt,
                         std::optional<double> max = std::nullopt) {
  return {name, AttrType::Int, AttrValue{def}, min, max};
}
inline AttrSpec required_min(std::string_view name, AttrType type, double min) {
  return {name, type, std::nullopt, min};
}
inline AttrSpec string_attr(std::string_view name, const char* def,
                            std::vector<std::string_view> allowed) {
  return {name,         AttrType::String, AttrValue{std::string(def)},
          std::nullopt, std::nullopt,     std::move(allowed)};
}

// `s` with traits beyond those its builder gives (Commutative, Idempotent).
inline OpSchema with_traits(OpSchema s, std::initializer_list<OpTrait> traits) {
  for (OpTrait trait : traits) s.traits = s.traits.with(trait);
  return s;
}

// Elementwise op of one input whose output takes the input's type and buffer.
inline OpSchema unary(OpKind kind, std::string_view name, OpFamily family, DTypeSet types,
                      Differentiability x, InputDomain domain, std::string_view summary,
                      std::vector<AttrSpec> attrs = {}) {
  return OpSchema{.kind = kind,
                  .name = name,
                  .family = family,
                  .inputs = {{"X", 'T', x, false, false, domain}},
                  .outputs = {{"Y", 'T'}},
                  .type_params = {{'T', types}},
                  .attrs = std::move(attrs),
                  .infer = shape_fn::same_as_input0,
                  .summary = summary,
                  .aliasing = Aliasing::InPlaceInput0,
                  .traits = {OpTrait::UnaryElementwise}};
}

// Elementwise op of two broadcasting inputs of one type, both of differentiability `ab`.
inline OpSchema binary(OpKind kind, std::string_view name, DTypeSet types, Differentiability ab,
                       InputDomain rhs_domain, std::string_view summary) {
  return OpSchema{.kind = kind,
                  .name = name,
                  .family = OpFamily::Elementwise,
                  .inputs = {{"A", 'T', ab}, {"B", 'T', ab, false, false, rhs_domain}},
                  .outputs = {{"C", 'T'}},
                  .type_params = {{'T', types}},
                  .infer = shape_fn::broadcast,
                  .summary = summary,
                  .aliasing = Aliasing::InPlaceInput0,
                  .traits = {OpTrait::BroadcastingBinary}};
}

// Variadic broadcasting Min/Max: commutative and idempotent.
inline OpSchema extremum(OpKind kind, std::string_view name, std::string_view summary) {
  OpSchema s = binary(kind, name, kEveryNumericType, D::Differentiable, InputDomain::Any, summary);
  s.inputs = {{"data", 'T', D::Differentiable, false, true}};
  s.outputs = {{"result", 'T'}};
  s.traits = {OpTrait::BroadcastingBinary, OpTrait::Commutative, OpTrait::Idempotent};
  return s;
}

// Comparisons and boolean logic: a bool per (broadcast) element, so no input is differentiable.
inline OpSchema logical(OpKind kind, std::string_view name, std::vector<InputSpec> inputs,
                        DTypeSet types, NanMode nan_mode, std::string_view summary) {
  const bool binary_op = inputs.size() == 2;
  return OpSchema{.kind = kind,
                  .name = name,
                  .family = OpFamily::Logical,
                  .inputs = std::move(inputs),
                  .outputs = {{"C", 'B'}},
                  .type_params = {{'T', types}, {'B', kBoolType}},
                  .infer = shape_fn::broadcast_to_bool,
                  .summary = summary,
                  .nan_mode = nan_mode,
                  .traits = binary_op ? OpTraits{OpTrait::BroadcastingBinary} : OpTraits{}};
}

// Row-wise ops over one axis: Softmax, LogSoftmax.
inline OpSchema softmax_like(OpKind kind, std::string_view name, Differentiability input,
                             std::string_view summary) {
  return OpSchema{.kind = kind,
                  .name = name,
                  .family = OpFamily::Normalization,
                  .inputs = {{"input", 'T', input}},
                  .outputs = {{"output", 'T'}},
                  .type_params = {{'T', kFloatTypes}},
                  .attrs = {axis_attr(-1)},
                  .infer = shape_fn::softmax,
                  .summary = summary,
                  .accumulator = Accumulator::InputType,
                  .traits = {OpTrait::AxisAttribute}};
}

inline OpSchema reduce(OpKind kind, std::string_view name, DTypeSet types, Differentiability data,
                       InputDomain domain, std::string_view summary) {
  return OpSchema{
      .kind = kind,
      .name = name,
      .family = OpFamily::Reduction,
      .inputs = {{"data", 'T', data, false, false, domain}},
      .outputs = {{"reduced", 'T'}},
      .type_params = {{'T', types}},
      .attrs = {ints_attr("axes"), flag("keepdims", 1), flag("noop_with_empty_axes", 0)},
      .infer = shape_fn::reduce,
      .summary = summary,
      .accumulator = Accumulator::InputType,
      .traits = {OpTrait::AxisAttribute}};
}

inline OpSchema arg_reduce(OpKind kind, std::string_view name, std::string_view summary) {
  return OpSchema{.kind = kind,
                  .name = name,
                  .family = OpFamily::Reduction,
                  .inputs = {{"data", 'T', D::NotDifferentiable}},  // the outputs are indices
                  .outputs = {{"reduced", 'I'}},
                  .type_params = {{'T', kNumericTypes}, {'I', {DType::I64}}},
                  .attrs = {axis_attr(0), flag("keepdims", 1), flag("select_last_index", 0)},
                  .infer = shape_fn::arg_reduce,
                  .summary = summary,
                  .nan_mode = NanMode::FirstNanWins,
                  .tie_break = TieBreak::FirstIndex,
                  .traits = {OpTrait::AxisAttribute}};
}

// Data movement: bytes are copied or rearranged, never computed on.
inline OpSchema movement(OpKind kind, std::string_view name, std::vector<InputSpec> inputs,
                         std::vector<OutputSpec> outputs, std::vector<AttrSpec> attrs,
                         ShapeFn infer, Aliasing aliasing, std::string_view summary) {
  return OpSchema{.kind = kind,
                  .name = name,
                  .family = OpFamily::Movement,
                  .inputs = std::move(inputs),
                  .outputs = std::move(outputs),
                  .type_params = {{'T', kAllTypes}, {'I', kIndexTypes}},
                  .attrs = std::move(attrs),
                  .infer = infer,
                  .summary = summary,
                  .nan_mode = NanMode::PassThrough,
                  .aliasing = aliasing};
}

}  // namespace volta::op_table
