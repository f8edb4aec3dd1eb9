#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "volta/ir/graph.h"

namespace volta {

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string_view name() const = 0;
  // Rewrites the graph in place; returns whether anything changed.
  virtual bool run(Graph& graph) = 0;
};

struct PassRecord {
  std::string pass;
  bool changed = false;
  int nodes_after = 0;
  uint64_t ir_hash = 0;  // after the pass
};

// What a fusion pass makes of a match: `fused` replaces the nodes at `replaced` (indices).
struct Fusion {
  std::vector<int> replaced;
  Node fused;
};

// Replaces each fusion's nodes by its fused node, which takes the place of the last of them
// (every input it reads is defined by then, and no node in between read the values it hides),
// then drops the values nothing reads anymore. Fusions must not share a node.
void apply_fusions(Graph& graph, std::vector<Fusion> fusions);

// Runs passes in order, verifies the IR after each, and records its hash. A pass that
// leaves the IR invalid throws P-PASS-FAILED whose message holds a reproducer: the pass
// list so far and the IR text before the failing pass.
class PassManager {
 public:
  void add(std::unique_ptr<Pass> pass) { passes_.push_back(std::move(pass)); }
  std::vector<PassRecord> run(Graph& graph) const;
  std::vector<std::string> pass_names() const;

 private:
  std::vector<std::unique_ptr<Pass>> passes_;
};

// Removes nodes whose outputs reach no graph output, then unused values and parameters.
std::unique_ptr<Pass> make_dead_code_elimination();

// Whether the plan's backend runs a node a pass would create (FusedMatMul of these dtypes and
// this activation, a PermutedMatMul): asked about each fused node before it replaces the nodes
// it fuses.
using FusedNodeFilter = std::function<bool(const Graph& graph, const Node& fused)>;

// Rewrites MatMul(A, W) -> Add(_, bias) [-> Relu | Gelu] into one FusedMatMul node (bias and
// activation applied per GEMM tile) where no other node or graph output reads the values it
// hides. Outputs are bit-identical to the unfused graph's. With a filter, a fused node the
// backend has no kernel for fuses less (bias only, the activation left as it is) or not at all.
std::unique_ptr<Pass> make_gemm_epilogue_fusion(FusedNodeFilter runs = {});

// Folds the Transposes that feed a MatMul, and the one Transpose that reads its product, into one
// PermutedMatMul (operands and product read and written through GEMM strides: no copies). A
// folded factor's Transpose stays for its other readers. Outputs are bit-identical to the
// unfolded graph's. With a filter, a fold the backend has no kernel for is not made.
std::unique_ptr<Pass> make_matmul_transpose_folding(FusedNodeFilter runs = {});

// Evaluates a single-node graph whose inputs are all parameters; used by constant folding
// so folded values come from the same backend that runs the graph.
using ConstantEvaluator = std::function<std::vector<Tensor>(const Graph& single_node_graph)>;

// Replaces nodes whose inputs are all parameters (and Constant nodes) with parameters
// holding their values. Outputs larger than max_folded_elements are left unfolded so
// folding never inflates a model (e.g. an Expand of a scalar).
std::unique_ptr<Pass> make_constant_folding(ConstantEvaluator evaluate,
                                            int64_t max_folded_elements = 1 << 20);

}  // namespace volta
