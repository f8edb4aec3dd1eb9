#pragma once
// Internal to the ONNX exporter: the model being written (ModelWriter, export.cpp) and the
// per-op rules that write each Volta node as ONNX nodes (export_ops.cpp,
// export_ops_decomposed.cpp).

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "volta/ir/graph.h"
#include "volta/onnx/export.h"

namespace volta::onnx {

// The GraphProto under construction: unique ONNX names for Volta values, nodes and the
// initializers the rules add.
class ModelWriter {
 public:
  ModelWriter(const Graph& graph, ::onnx::GraphProto& proto);

  const Graph& graph() const { return graph_; }
  // The ONNX name of a value; "" for kNoValue (an absent optional input, as ONNX writes it).
  const std::string& name_of(ValueId v) const;
  // A value name no other value, initializer or node output of the model has.
  std::string fresh_name(std::string_view stem);

  // Appends a node named `name` (made unique) and returns it for its attributes.
  ::onnx::NodeProto& add_node(std::string_view op_type, std::vector<std::string> inputs,
                              std::vector<std::string> outputs, std::string_view name);
  // An initializer holding `value` (raw_data: the tensor's bytes), named from `stem`.
  std::string add_initializer(const Tensor& value, std::string_view stem);
  std::string ints_initializer(std::span<const int64_t> values, std::string_view stem);
  // A rank-0 int64 initializer (CumSum's axis, Trilu's k, OneHot's depth).
  std::string int_scalar_initializer(int64_t value, std::string_view stem);
  // A rank-0 initializer holding `value` (or `value` in `dtype`), shared by every rule that
  // asks for the same one.
  std::string scalar_initializer(const Tensor& value);
  std::string scalar_initializer(DType dtype, double value);

  // The number of outputs to write: up to the last one a node or graph output reads.
  int used_outputs(const Node& node) const;
  // Node names of the model, for refusals and for the nodes a rule adds ("<node>/erf").
  std::string node_name(const Node& node) const;

  // VoltaError(InvalidArgument): "node 'name' (Op): <what>".
  [[noreturn]] void refuse(const Node& node, const std::string& what) const;

 private:
  const Graph& graph_;
  ::onnx::GraphProto& proto_;
  std::vector<std::string> value_names_;  // by value index
  std::vector<int> uses_;                 // by value index
  std::set<std::string, std::less<>> taken_;
  std::set<std::string, std::less<>> node_names_;
  std::vector<std::pair<std::string, std::string>> scalars_;  // (dtype + bits, name)
};

// ---- Per-op rules --------------------------------------------------------------------------

using EmitFn = void (*)(ModelWriter& writer, const Node& node);

struct ExportRule {
  OpKind op;
  EmitFn emit;  // nullptr: refused
  std::vector<std::string_view> onnx_ops;
  std::string_view note;  // how it is written when not 1:1; why it is refused
};

// The rule of every op, indexed by op_index(); throws std::logic_error if an op has none or two.
const std::vector<ExportRule>& export_rules();

// The rules files: 1:1 ops and attribute-to-input ops (export_ops.cpp), decompositions and
// refusals (export_ops_decomposed.cpp).
void add_direct_rules(std::vector<ExportRule>& rules);
void add_decomposed_rules(std::vector<ExportRule>& rules);

// Shared by the rules files.
// Writes `value` as attribute `name`: Int, Float (as f32, ONNX's float), String, Ints, Floats
// or Tensor.
void set_attribute(::onnx::NodeProto& node, std::string_view name, const AttrValue& value);
// Every attribute of the node's op schema with its value (the table's default when the node
// leaves it out), except `skip` and empty lists (ONNX's "absent": all axes, default pads).
void set_schema_attributes(::onnx::NodeProto& proto, const Node& node,
                           std::initializer_list<std::string_view> skip = {});
// The names of the node's inputs and of its used outputs.
std::vector<std::string> input_names(const ModelWriter& writer, const Node& node);
std::vector<std::string> output_names(const ModelWriter& writer, const Node& node);

// x * 0.5 * (1 + erf(x / sqrt(2))), or for "tanh" x * 0.5 * (1 + tanh(sqrt(2 / pi) * (x +
// 0.044715 x^3))), of `x` (dtype `dtype`) into `out`; x is first clamped below at -40 (tanh:
// -30), where Gelu is -0, so that -inf gives -0 rather than -inf * 0.
void emit_gelu(ModelWriter& writer, const Node& node, const std::string& x, DType dtype,
               const std::string& out, std::string_view approximate);

}  // namespace volta::onnx
