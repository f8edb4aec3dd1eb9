#pragma once
// The scalar oracle. It interprets a verified Graph node by node in program order, one
// buffer per value, one thread, plain loops with double-precision accumulation. It shares
// the IR and op table with the engine and nothing else: no kernels, planner or allocator.

#include <span>
#include <vector>

#include "volta/ir/graph.h"

namespace volta::reference {

// Verifies the graph, then evaluates it. Throws VoltaError on an invalid graph, wrong
// inputs or states (R-INPUT-MISMATCH) or bad data (R-KERNEL-FAILURE, e.g. a Gather index out
// of range). Every node reads a state's value from before the run; each updated state then
// takes its next value (the semantics the engine keeps by ordering reads before the update).
std::vector<Tensor> evaluate(const Graph& graph, std::span<const Tensor> inputs,
                             std::span<Tensor* const> states = {});

// One op on concrete tensors: the reference table entry for node.op.
using RefKernel = std::vector<Tensor> (*)(const Node& node, std::span<const Tensor* const> inputs,
                                          std::span<const TypeInfo> output_types);
// nullptr when the op has no reference kernel (a test fails for that).
RefKernel reference_kernel(OpKind op);

}  // namespace volta::reference
