#pragma once

#include <string>
#include <vector>

#include "volta/error.h"
#include "volta/ir/graph.h"

namespace volta {

struct Diagnostic {
  ErrorCode code;
  std::string message;  // names the node, the op, the invariant and the numbers
  int node = -1;        // node index, -1 when the graph itself is at fault
};

// Every rule the IR must satisfy: SSA, use-before-def, arity, attribute types and ranges,
// dtype constraints, shapes (declared output types equal the inferred ones).
std::vector<Diagnostic> verify_graph(const Graph& graph);
// Throws VoltaError carrying the first diagnostic (and a count of the rest).
void verify_graph_or_throw(const Graph& graph);

// Infers a node's output types from its inputs; throws VoltaError with the same
// diagnostics verify_graph gives for this node.
std::vector<TypeInfo> infer_node(const Graph& graph, const Node& node);

}  // namespace volta
