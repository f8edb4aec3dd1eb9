#pragma once
// Reverse-mode differentiation on the IR: a forward graph becomes a training graph whose outputs
// are a loss and its gradients with respect to chosen values. The backward is made of ordinary
// op-table nodes (a VJP rule per differentiable op input, engine/autograd/vjp_<family>.cpp), so
// it is planned, run and checked like any graph: one truth path for inference and training.

#include <span>
#include <string>
#include <vector>

#include "volta/ir/graph.h"

namespace volta {

struct TrainingGraph {
  // The forward's values and nodes first, with the same ids, then the backward's. Its outputs
  // are the loss and then the gradients, in the order the trainables were given.
  Graph graph;
  ValueId loss;
  std::vector<ValueId> gradients;  // d loss / d trainables[i]: its dtype and shape
};

// `loss`: a float value of `forward` (any shape: the backward is seeded with ones, which makes
// the gradient that of the loss's sum). `trainables`: float inputs, parameters or states of
// `forward`. Gradients that reach a value from several consumers are summed in consumer node
// order, so the training graph, and its plan hash, depend on the forward graph alone. Throws
// VoltaError(InvalidArgument) naming the value, node, op and input when a trainable is not a
// float leaf, the loss does not depend on it, every path from it crosses an input no gradient
// flows through, or an op on its path has no VJP rule for that input yet.
TrainingGraph build_training_graph(const Graph& forward, ValueId loss,
                                   std::span<const ValueId> trainables);

// Whether input `input` of `op` has a VJP rule.
bool has_vjp_rule(OpKind op, int input);

}  // namespace volta
