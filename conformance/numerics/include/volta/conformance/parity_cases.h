#pragma once
// Parity cases: every op of the op table over shape grids that include empty tensors,
// size-1 dims, broadcasting and kernel tile/chunk edges, with inputs drawn from each
// operand's declared domain. Shared by the parity tests and `volta-audit run parity`.

#include <string>
#include <vector>

#include "volta/ir/graph.h"

namespace volta::conformance {

struct ParityCase {
  std::string id;  // canonical: "Softmax(axis=-1,shape=[3,5],dtype=f32)"
  OpKind op;
  Graph graph;  // one node; its operands are graph inputs
  std::vector<Tensor> inputs;
};

std::vector<ParityCase> parity_cases();           // all ops, in op-table order
std::vector<ParityCase> parity_cases(OpKind op);  // one op's grid

}  // namespace volta::conformance
