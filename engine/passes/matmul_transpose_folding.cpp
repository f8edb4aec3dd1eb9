// matmul-transpose-folding: the Transposes that feed a MatMul, and the Transpose that reads its
// product, fold into one PermutedMatMul, whose CPU kernel reads and writes those layouts through
// the GEMM's strides instead of copying them: attention's head split (Q, K^T, V) and merge.
//
// A factor's Transpose folds when the folded view still steps by one element along one of its
// matrix axes (the GEMM then packs contiguous runs; a Transpose whose copy would gather single
// elements anyway is left alone). It stays in the graph for any other reader (dead-code
// elimination drops it otherwise). The product's Transpose folds where it is the product's only
// reader, the product is no graph output, and the last axis stays last (Y's rows stay
// contiguous). Both factors need rank >= 2: a 1-D MatMul operand has no matrix to permute.
// PermutedMatMul runs the same GEMM sums, so the pass never changes a bit of any output.

#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "volta/ir/op_helpers.h"
#include "volta/passes/pass_manager.h"

namespace volta {
namespace {

std::vector<int64_t> identity_perm(int rank) {
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  std::iota(perm.begin(), perm.end(), int64_t{0});
  return perm;
}

// Whether the Transpose by `perm` of a contiguous tensor of `stored` shape steps by one element
// along one of its last two (matrix) axes.
bool keeps_a_unit_matrix_stride(const Shape& stored, const std::vector<int>& perm) {
  const std::vector<int64_t> strides = stored.strides();
  const size_t rank = perm.size();
  return strides[static_cast<size_t>(perm[rank - 2])] == 1 ||
         strides[static_cast<size_t>(perm[rank - 1])] == 1;
}

class MatmulTransposeFolding final : public Pass {
 public:
  explicit MatmulTransposeFolding(FusedNodeFilter runs) : runs_(std::move(runs)) {}
  std::string_view name() const override { return "matmul-transpose-folding"; }

  bool run(Graph& graph) override {
    const std::vector<int> uses = use_counts(graph);
    // Graph outputs and states' next values stay as they are; a state's next value is also left
    // to the node that writes it, as gemm-epilogue-fusion leaves it (a GEMM may not write over a
    // state it reads).
    std::vector<char> kept(static_cast<size_t>(graph.num_values()), 0);
    std::vector<char> next_state(static_cast<size_t>(graph.num_values()), 0);
    for (ValueId v : graph.outputs()) kept[static_cast<size_t>(v.index)] = 1;
    for (const StateUpdate& u : graph.state_updates()) {
      kept[static_cast<size_t>(u.value.index)] = 1;
      next_state[static_cast<size_t>(u.value.index)] = 1;
    }
    std::vector<int> producer(static_cast<size_t>(graph.num_values()), -1);
    std::vector<int> reader(static_cast<size_t>(graph.num_values()), -1);
    for (int i = 0; i < graph.num_nodes(); ++i) {
      for (ValueId v : graph.node(i).outputs) producer[static_cast<size_t>(v.index)] = i;
      for (ValueId v : graph.node(i).inputs) {
        if (v.valid()) reader[static_cast<size_t>(v.index)] = i;
      }
    }

    std::vector<Fusion> folds;
    // Product Transposes already folded: no later MatMul may fold them as a factor's.
    std::vector<char> taken(static_cast<size_t>(graph.num_nodes()), 0);
    for (int i = 0; i < graph.num_nodes(); ++i) {
      const Node& matmul = graph.node(i);
      if (matmul.op != OpKind::MatMul || !foldable_factors(graph, matmul)) continue;
      Node fused{.op = OpKind::PermutedMatMul,
                 .name = matmul.name,
                 .inputs = matmul.inputs,
                 .outputs = matmul.outputs,
                 .attrs = {},
                 .origin = "matmul-transpose-folding"};
      bool folded = false;
      for (size_t f = 0; f < 2; ++f) {
        const ValueId factor = matmul.inputs[f];
        const int rank = graph.value(factor).shape.rank();
        std::vector<int64_t> perm = identity_perm(rank);
        const int t = producer[static_cast<size_t>(factor.index)];
        if (t >= 0 && taken[static_cast<size_t>(t)] == 0 && graph.node(t).op == OpKind::Transpose) {
          const ValueId source = graph.node(t).inputs[0];
          const std::vector<int> p =
              resolve_perm(AttrReader(graph.node(t)), graph.value(source).shape.rank());
          if (keeps_a_unit_matrix_stride(graph.value(source).shape, p)) {
            perm.assign(p.begin(), p.end());
            fused.inputs[f] = source;
            folded = true;
          }
        }
        fused.attrs[f == 0 ? "perm_a" : "perm_b"] = std::move(perm);
      }
      const ValueId product = matmul.outputs[0];
      const int rank_y = graph.value(product).shape.rank();
      std::vector<int64_t> perm_y = identity_perm(rank_y);
      int product_transpose = -1;
      const auto p = static_cast<size_t>(product.index);
      if (uses[p] == 1 && kept[p] == 0 && reader[p] >= 0 &&
          graph.node(reader[p]).op == OpKind::Transpose) {
        const Node& t = graph.node(reader[p]);
        const std::vector<int> perm = resolve_perm(AttrReader(t), rank_y);
        if (perm.back() == rank_y - 1) {
          perm_y.assign(perm.begin(), perm.end());
          fused.outputs = t.outputs;
          product_transpose = reader[p];
          folded = true;
        }
      }
      fused.attrs["perm_y"] = std::move(perm_y);
      if (!folded || next_state[static_cast<size_t>(fused.outputs[0].index)] != 0) continue;
      if (runs_ && !runs_(graph, fused)) continue;
      Fusion fold{.replaced = {i}, .fused = std::move(fused)};
      if (product_transpose >= 0) {
        taken[static_cast<size_t>(product_transpose)] = 1;
        fold.replaced.push_back(product_transpose);
      }
      folds.push_back(std::move(fold));
    }
    if (folds.empty()) return false;

    apply_fusions(graph, std::move(folds));
    return true;
  }

 private:
  // A float MatMul of two operands of rank >= 2: the GEMM's dtypes, no 1-D promotion.
  static bool foldable_factors(const Graph& graph, const Node& matmul) {
    if (matmul.inputs.size() != 2) return false;
    const DType dtype = graph.value(matmul.outputs[0]).dtype;
    if (dtype != DType::F32 && dtype != DType::F64) return false;
    return graph.value(matmul.inputs[0]).shape.rank() >= 2 &&
           graph.value(matmul.inputs[1]).shape.rank() >= 2;
  }

  FusedNodeFilter runs_;
};

}  // namespace

std::unique_ptr<Pass> make_matmul_transpose_folding(FusedNodeFilter runs) {
  return std::make_unique<MatmulTransposeFolding>(std::move(runs));
}

}  // namespace volta
