#include "volta/ir/graph.h"

#include <algorithm>

#include "volta/ir/verify.h"

namespace volta {

ValueId Graph::add_value(std::string name, DType dtype, Shape shape) {
  values_.push_back(Value{std::move(name), dtype, std::move(shape), ValueKind::Intermediate});
  return ValueId{static_cast<int32_t>(values_.size() - 1)};
}

ValueId Graph::add_input(std::string name, DType dtype, Shape shape) {
  ValueId id = add_value(std::move(name), dtype, std::move(shape));
  values_.back().kind = ValueKind::Input;
  inputs_.push_back(id);
  return id;
}

ValueId Graph::add_parameter(std::string name, Tensor data) {
  return add_parameter(std::move(name), std::make_shared<const Tensor>(std::move(data)));
}

ValueId Graph::add_parameter(std::string name, std::shared_ptr<const Tensor> data) {
  if (data == nullptr) {
    fail(ErrorCode::InvalidArgument, "parameter '" + name + "' has no data");
  }
  ValueId id = add_value(std::move(name), data->dtype(), data->shape());
  values_.back().kind = ValueKind::Parameter;
  parameters_.push_back(id);
  parameter_data_.push_back(std::move(data));
  return id;
}

ValueId Graph::add_state(std::string name, DType dtype, Shape shape) {
  ValueId id = add_value(std::move(name), dtype, std::move(shape));
  values_.back().kind = ValueKind::State;
  states_.push_back(id);
  return id;
}

void Graph::set_state_update(ValueId state, ValueId value) {
  state_updates_.push_back({state, value});
}

void Graph::append_node(Node node) { nodes_.push_back(std::move(node)); }

std::vector<ValueId> Graph::add_node(OpKind op, std::vector<ValueId> inputs, Attributes attrs,
                                     std::string name, int num_outputs) {
  Node node{op,
            name.empty() ? unique_name(op_name(op)) : std::move(name),
            std::move(inputs),
            {},
            std::move(attrs)};
  // Placeholder outputs let the shape function see how many outputs the node declares.
  node.outputs.assign(static_cast<size_t>(num_outputs), kNoValue);
  const std::vector<TypeInfo> types = infer_node(*this, node);
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    const std::string out_name =
        node.outputs.size() == 1 ? node.name : node.name + ":" + std::to_string(i);
    node.outputs[i] = add_value(out_name, types[i].dtype, types[i].shape);
  }
  std::vector<ValueId> outs = node.outputs;
  nodes_.push_back(std::move(node));
  return outs;
}

ValueId Graph::add(OpKind op, std::vector<ValueId> inputs, Attributes attrs, std::string name) {
  return add_node(op, std::move(inputs), std::move(attrs), std::move(name), 1).front();
}

const Tensor& Graph::parameter_data(ValueId id) const { return *parameter_storage(id); }

const std::shared_ptr<const Tensor>& Graph::parameter_storage(ValueId id) const {
  for (size_t i = 0; i < parameters_.size(); ++i) {
    if (parameters_[i] == id) return parameter_data_[i];
  }
  fail(ErrorCode::InvalidArgument,
       "value " + std::to_string(id.index) + " is not a parameter of this graph");
}

void Graph::set_parameter_data(ValueId id, Tensor data) {
  for (size_t i = 0; i < parameters_.size(); ++i) {
    if (parameters_[i] == id) {
      parameter_data_[i] = std::make_shared<const Tensor>(std::move(data));
      return;
    }
  }
  fail(ErrorCode::InvalidArgument,
       "value " + std::to_string(id.index) + " is not a parameter of this graph");
}

void Graph::freeze_state(ValueId id, Tensor data) {
  const auto it = std::find(states_.begin(), states_.end(), id);
  if (it == states_.end()) {
    fail(ErrorCode::InvalidArgument, "%" + std::to_string(id.index) + " is not a state");
  }
  for (const StateUpdate& u : state_updates_) {
    if (u.state == id) {
      fail(ErrorCode::InvalidArgument, "state %" + std::to_string(id.index) + " '" +
                                           value(id).name + "' is updated and cannot be frozen");
    }
  }
  states_.erase(it);
  values_[static_cast<size_t>(id.index)].kind = ValueKind::Parameter;
  parameters_.push_back(id);
  parameter_data_.push_back(std::make_shared<const Tensor>(std::move(data)));
}

Tensor Graph::thaw_parameter(ValueId id) {
  const auto it = std::find(parameters_.begin(), parameters_.end(), id);
  if (it == parameters_.end()) {
    fail(ErrorCode::InvalidArgument, "%" + std::to_string(id.index) +
                                         (has_value(id) ? " '" + value(id).name + "'" : "") +
                                         " is not a parameter");
  }
  const auto slot = static_cast<size_t>(it - parameters_.begin());
  Tensor data = *parameter_data_[slot];
  parameters_.erase(it);
  parameter_data_.erase(parameter_data_.begin() + static_cast<std::ptrdiff_t>(slot));
  values_[static_cast<size_t>(id.index)].kind = ValueKind::State;
  states_.push_back(id);
  return data;
}

void Graph::make_parameter(ValueId id, Tensor data) {
  Value& v = value(id);
  v.kind = ValueKind::Parameter;
  v.dtype = data.dtype();
  v.shape = data.shape();
  parameters_.push_back(id);
  parameter_data_.push_back(std::make_shared<const Tensor>(std::move(data)));
}

void Graph::compact() {
  std::vector<char> used(values_.size(), 0);
  auto mark = [&](ValueId v) {
    if (has_value(v)) used[static_cast<size_t>(v.index)] = 1;
  };
  for (const Node& n : nodes_) {
    for (ValueId v : n.inputs) mark(v);
    for (ValueId v : n.outputs) mark(v);
  }
  for (ValueId v : outputs_) mark(v);
  for (ValueId v : inputs_) mark(v);  // inputs and states are the graph's signature: kept
  for (ValueId v : states_) mark(v);
  for (const StateUpdate& u : state_updates_) {
    mark(u.state);
    mark(u.value);
  }

  std::vector<int32_t> remap(values_.size(), -1);
  std::vector<Value> kept;
  for (size_t i = 0; i < values_.size(); ++i) {
    if (!used[i]) continue;
    remap[i] = static_cast<int32_t>(kept.size());
    kept.push_back(std::move(values_[i]));
  }
  auto fix = [&](ValueId& v) {
    if (v.valid()) v.index = remap[static_cast<size_t>(v.index)];
  };
  for (Node& n : nodes_) {
    for (ValueId& v : n.inputs) fix(v);
    for (ValueId& v : n.outputs) fix(v);
  }
  for (ValueId& v : outputs_) fix(v);
  for (ValueId& v : inputs_) fix(v);
  for (ValueId& v : states_) fix(v);
  for (StateUpdate& u : state_updates_) {
    fix(u.state);
    fix(u.value);
  }
  std::vector<ValueId> params;
  std::vector<std::shared_ptr<const Tensor>> data;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    const int32_t now = remap[static_cast<size_t>(parameters_[i].index)];
    if (now < 0) continue;
    params.push_back(ValueId{now});
    data.push_back(std::move(parameter_data_[i]));
  }
  values_ = std::move(kept);
  parameters_ = std::move(params);
  parameter_data_ = std::move(data);
}

std::optional<ValueId> Graph::find_value(std::string_view name) const {
  for (size_t i = 0; i < values_.size(); ++i) {
    if (values_[i].name == name) return ValueId{static_cast<int32_t>(i)};
  }
  return std::nullopt;
}

std::string Graph::unique_name(std::string_view stem) const {
  // Names derive from the node count, so the same build sequence gives the same names.
  for (int i = num_nodes();; ++i) {
    std::string candidate = std::string(stem) + "_" + std::to_string(i);
    if (!find_value(candidate)) return candidate;
  }
}

std::vector<int> producers(const Graph& graph) {
  std::vector<int> producer(static_cast<size_t>(graph.num_values()), -1);
  for (int n = 0; n < graph.num_nodes(); ++n) {
    for (ValueId v : graph.node(n).outputs) {
      if (graph.has_value(v) && producer[static_cast<size_t>(v.index)] < 0) {
        producer[static_cast<size_t>(v.index)] = n;
      }
    }
  }
  return producer;
}

std::vector<int> use_counts(const Graph& graph) {
  std::vector<int> uses(static_cast<size_t>(graph.num_values()), 0);
  for (const Node& n : graph.nodes()) {
    for (ValueId v : n.inputs) {
      if (graph.has_value(v)) ++uses[static_cast<size_t>(v.index)];
    }
  }
  for (ValueId v : graph.outputs()) {
    if (graph.has_value(v)) ++uses[static_cast<size_t>(v.index)];
  }
  return uses;
}

void check_graph_states(const Graph& graph, std::span<Tensor* const> states) {
  if (states.size() != graph.states().size()) {
    fail(ErrorCode::InputMismatch, "the graph has " + std::to_string(graph.states().size()) +
                                       (graph.states().size() == 1 ? " state, " : " states, ") +
                                       std::to_string(states.size()) + " bound");
  }
  for (size_t i = 0; i < states.size(); ++i) {
    const Value& v = graph.value(graph.states()[i]);
    if (states[i]->dtype() != v.dtype || states[i]->shape() != v.shape) {
      fail(ErrorCode::InputMismatch,
           "state " + std::to_string(i) + " '" + v.name + "' is " +
               std::string(dtype_name(v.dtype)) + v.shape.str() + ", bound to " +
               std::string(dtype_name(states[i]->dtype())) + states[i]->shape().str());
    }
  }
}

bool may_write_over_operand(const Node& node, ValueId operand) {
  switch (op_schema(node.op).family) {
    case OpFamily::Elementwise:
    case OpFamily::Activation:
    case OpFamily::Logical:
      return true;
    default:
      return op_schema(node.op).aliasing != Aliasing::None && !node.inputs.empty() &&
             node.inputs[0] == operand &&
             std::count(node.inputs.begin() + 1, node.inputs.end(), operand) == 0;
  }
}

std::vector<ValueId> state_update_values(const Graph& graph) {
  std::vector<ValueId> out(graph.states().size(), kNoValue);
  for (const StateUpdate& u : graph.state_updates()) {
    for (size_t i = 0; i < graph.states().size(); ++i) {
      if (graph.states()[i] == u.state) out[i] = u.value;
    }
  }
  return out;
}

void check_graph_inputs(const Graph& graph, std::span<const Tensor> inputs) {
  if (inputs.size() != graph.inputs().size()) {
    fail(ErrorCode::InputMismatch, "the graph takes " + std::to_string(graph.inputs().size()) +
                                       (graph.inputs().size() == 1 ? " input, " : " inputs, ") +
                                       std::to_string(inputs.size()) + " given");
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = graph.value(graph.inputs()[i]);
    if (inputs[i].dtype() != v.dtype || inputs[i].shape() != v.shape) {
      fail(ErrorCode::InputMismatch, "input " + std::to_string(i) + " '" + v.name + "' expects " +
                                         std::string(dtype_name(v.dtype)) + v.shape.str() +
                                         ", got " + std::string(dtype_name(inputs[i].dtype())) +
                                         inputs[i].shape().str());
    }
  }
}

}  // namespace volta
