#pragma once
// Internal to autograd: how a VJP rule is written and registered. A rule sees one forward node,
// the gradient of each of its outputs, and which inputs need a gradient; it adds backward
// nodes to the training graph and sets each wanted input's gradient.

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "volta/ir/graph.h"
#include "volta/ir/op_schema.h"

namespace volta::autograd {

class VjpBuilder {
 public:
  VjpBuilder(Graph& graph, const Node& node, std::vector<ValueId> output_grads,
             std::vector<char> wanted);

  const Node& node() const { return node_; }
  AttrReader attrs() const { return AttrReader(node_); }
  int num_inputs() const { return static_cast<int>(node_.inputs.size()); }
  ValueId input(int i) const { return node_.inputs.at(static_cast<size_t>(i)); }
  ValueId output(int i = 0) const { return node_.outputs.at(static_cast<size_t>(i)); }
  // The gradient of output i, or kNoValue when the loss does not depend on it.
  ValueId grad(int i = 0) const { return output_grads_.at(static_cast<size_t>(i)); }
  // By value: adding a node may reallocate the graph's values, which a reference would not
  // survive (rules hold shapes across the nodes they add).
  Value value(ValueId v) const { return graph_.value(v); }
  Shape shape(ValueId v) const { return graph_.value(v).shape; }
  DType dtype() const { return graph_.value(output()).dtype; }
  bool wants(int i) const { return wanted_.at(static_cast<size_t>(i)) != 0; }
  // Sets input i's gradient; it must have the input's dtype and shape.
  void set(int i, ValueId gradient);
  const std::vector<ValueId>& input_grads() const { return input_grads_; }

  // Backward nodes, named after the forward node.
  ValueId add(OpKind op, std::vector<ValueId> inputs, Attributes attrs = {});
  std::vector<ValueId> add_outputs(OpKind op, std::vector<ValueId> inputs, Attributes attrs,
                                   int num_outputs);
  // A rank-0 constant of the forward's float dtype.
  ValueId scalar(double v);
  // A constant tensor (for shape-derived data: window counts, plane offsets).
  ValueId constant(Tensor t);
  // A gradient of a broadcast result summed back to `shape` (numpy broadcasting's adjoint).
  ValueId sum_to(ValueId g, const Shape& shape);
  // Elementwise helpers.
  ValueId mul(ValueId a, ValueId b) { return add(OpKind::Mul, {a, b}); }
  ValueId div(ValueId a, ValueId b) { return add(OpKind::Div, {a, b}); }
  ValueId sub(ValueId a, ValueId b) { return add(OpKind::Sub, {a, b}); }
  ValueId sum(ValueId a, ValueId b) { return add(OpKind::Add, {a, b}); }
  ValueId neg(ValueId a) { return add(OpKind::Neg, {a}); }
  // `g` given where `condition` holds, 0 elsewhere.
  ValueId where(ValueId condition, ValueId g);
  // The gradient of input `input` of a one-output node `op(inputs)` = `output` (values already in
  // the graph) given its output's gradient `output_grad`, by that op's own rule: for a rule that
  // composes others (a fused op's parts). Throws std::logic_error when the op has no rule for it.
  ValueId chain(OpKind op, std::vector<ValueId> inputs, Attributes attrs, ValueId output,
                ValueId output_grad, int input);

 private:
  Graph& graph_;
  Node node_;  // a copy: adding nodes may move the graph's node storage
  std::vector<ValueId> output_grads_;
  std::vector<char> wanted_;
  std::vector<ValueId> input_grads_;
  int added_ = 0;
};

using VjpRule = void (*)(VjpBuilder& b);

// A rule and the inputs it gives gradients for (bit i: input i; variadic ops: every bit).
struct VjpEntry {
  VjpRule rule = nullptr;
  uint32_t inputs = 0;
};
using VjpTable = std::array<VjpEntry, kOpCount>;

inline constexpr uint32_t kAllInputs = ~uint32_t{0};

// One registrar per op family file (vjp_<family>.cpp); registering an op of another family, or
// an input the op table says no gradient flows through, throws std::logic_error.
void register_elementwise_vjps(VjpTable& table);
void register_activation_vjps(VjpTable& table);
void register_linalg_vjps(VjpTable& table);
void register_convolution_vjps(VjpTable& table);
void register_normalization_vjps(VjpTable& table);
void register_reduction_vjps(VjpTable& table);
void register_movement_vjps(VjpTable& table);
void register_pooling_vjps(VjpTable& table);
void register_indexing_vjps(VjpTable& table);
void register_loss_vjps(VjpTable& table);
void register_resampling_vjps(VjpTable& table);

const VjpTable& vjp_table();

}  // namespace volta::autograd
