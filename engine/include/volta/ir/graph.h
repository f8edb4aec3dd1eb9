#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "volta/ir/attributes.h"
#include "volta/ir/op_kind.h"
#include "volta/ir/op_schema.h"
#include "volta/ir/tensor.h"

namespace volta {

// Index of a value in its graph. An invalid id marks an absent optional input.
struct ValueId {
  int32_t index = -1;
  bool valid() const { return index >= 0; }
  friend auto operator<=>(const ValueId&, const ValueId&) = default;
};
inline constexpr ValueId kNoValue{};

// Input: given per run. Parameter: a constant the graph holds (folded like any constant).
// State: a tensor the caller keeps across runs and plans (trainable weights, optimizer moments),
// bound at execute time and never folded; a node may write its next value in place
// (Graph::set_state_update). Intermediate: a node output.
enum class ValueKind : uint8_t { Input, Parameter, Intermediate, State };

struct Value {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  ValueKind kind = ValueKind::Intermediate;
  TypeInfo type() const { return {dtype, shape}; }
};

struct Node {
  OpKind op = OpKind::Identity;
  std::string name;
  std::vector<ValueId> inputs;  // kNoValue for an absent optional input
  std::vector<ValueId> outputs;
  Attributes attrs;
  // The pass that created or last rewrote this node (a pass that does so sets it); empty:
  // the frontend that built the graph. Traces and first-divergence reports name it.
  std::string origin = {};
};

// A state's next value: `value`, a node output, is written into `state`'s storage in place (the
// plan gives it no buffer of its own), after every other read of the state.
struct StateUpdate {
  ValueId state;
  ValueId value;
};

// An SSA graph. Nodes are kept in program order: every value is defined once (graph input,
// parameter, state, or one node output) before any node reads it. verify_graph checks all of
// it; the builder methods infer output types from the op table as they go.
class Graph {
 public:
  ValueId add_input(std::string name, DType dtype, Shape shape);
  ValueId add_parameter(std::string name, Tensor data);
  // A parameter whose data other graphs may share: parameter data is immutable, so copies of a
  // graph, and the plans an ONNX session compiles per input shape, keep one copy of a weight.
  ValueId add_parameter(std::string name, std::shared_ptr<const Tensor> data);
  // A tensor bound per run from storage the caller keeps (execute's `states`, in this order).
  ValueId add_state(std::string name, DType dtype, Shape shape);
  // Declares `value` (a node output of the state's dtype and shape) the state's next value.
  void set_state_update(ValueId state, ValueId value);

  // Adds a node and infers its outputs from the op table; throws VoltaError (the
  // verifier's diagnostic) when the op rejects the inputs or attributes.
  std::vector<ValueId> add_node(OpKind op, std::vector<ValueId> inputs, Attributes attrs = {},
                                std::string name = {}, int num_outputs = 1);
  ValueId add(OpKind op, std::vector<ValueId> inputs, Attributes attrs = {},
              std::string name = {});  // single-output shorthand

  // Raw construction for importers, passes and verifier tests: nothing is checked here.
  ValueId add_value(std::string name, DType dtype, Shape shape);
  void append_node(Node node);

  void set_outputs(std::vector<ValueId> outputs) { outputs_ = std::move(outputs); }
  void add_output(ValueId v) { outputs_.push_back(v); }

  int num_values() const { return static_cast<int>(values_.size()); }
  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  const Value& value(ValueId id) const { return values_.at(static_cast<size_t>(id.index)); }
  Value& value(ValueId id) { return values_.at(static_cast<size_t>(id.index)); }
  const Node& node(int index) const { return nodes_.at(static_cast<size_t>(index)); }
  std::span<const Node> nodes() const { return nodes_; }
  std::vector<Node>& mutable_nodes() { return nodes_; }
  std::span<const ValueId> inputs() const { return inputs_; }
  std::span<const ValueId> parameters() const { return parameters_; }
  std::span<const ValueId> states() const { return states_; }
  std::span<const StateUpdate> state_updates() const { return state_updates_; }
  std::span<const ValueId> outputs() const { return outputs_; }

  bool has_value(ValueId id) const { return id.index >= 0 && id.index < num_values(); }
  // The initializer of a parameter; throws InvalidArgument for any other value.
  const Tensor& parameter_data(ValueId id) const;
  // The same data as the shared storage it lives in (what memory accounting counts once).
  const std::shared_ptr<const Tensor>& parameter_storage(ValueId id) const;
  void set_parameter_data(ValueId id, Tensor data);
  // Turns an intermediate into a parameter (constant folding). Its producer must be gone.
  void make_parameter(ValueId id, Tensor data);
  // Turns a state nothing updates into a parameter holding `data` (the ONNX importer freezes a
  // trainable initializer that a node reads as a shape or attribute argument).
  void freeze_state(ValueId id, Tensor data);
  // The converse: a parameter becomes a state (a C++-built graph made trainable); returns its
  // data, the state's initial value, which the caller now keeps.
  Tensor thaw_parameter(ValueId id);

  // Removes values no node, output, input, state or update refers to, and parameters nothing
  // reads, renumbering the rest in their original order.
  void compact();

  std::optional<ValueId> find_value(std::string_view name) const;
  std::string unique_name(std::string_view stem) const;

 private:
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> parameters_;
  std::vector<std::shared_ptr<const Tensor>> parameter_data_;  // parallel to parameters_
  std::vector<ValueId> states_;
  std::vector<StateUpdate> state_updates_;
  std::vector<ValueId> outputs_;
};

// Node index that defines each value (-1 for inputs, parameters and undefined values).
// When a value is defined twice the first definition wins; the verifier reports the rest.
std::vector<int> producers(const Graph& graph);
// Number of nodes and graph outputs reading each value.
std::vector<int> use_counts(const Graph& graph);

// Checks tensors given for the graph inputs: count, and each dtype and shape in order.
// Throws R-INPUT-MISMATCH naming the input. Every executor calls this first.
void check_graph_inputs(const Graph& graph, std::span<const Tensor> inputs);
// The same for the tensors bound to the graph's states.
void check_graph_states(const Graph& graph, std::span<Tensor* const> states);

// Whether `node`'s kernel may write its output over `operand` while it runs. Elementwise
// kernels read element i of every operand before writing element i, so any operand; any other
// op (a scatter may read input 0 after writing) only over input 0, when it declares aliasing
// and reads input 0 once.
bool may_write_over_operand(const Node& node, ValueId operand);

// The value each state is updated to, indexed like graph.states() (kNoValue: not updated).
std::vector<ValueId> state_update_values(const Graph& graph);

}  // namespace volta
