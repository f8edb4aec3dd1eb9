// gemm-epilogue-fusion: MatMul(A, W) -> Add(_, bias) [-> Relu | Gelu] becomes one FusedMatMul
// node, whose CPU kernel adds the bias and applies the activation to each GEMM output tile while
// it is in cache instead of writing and re-reading the whole product twice more.
//
// Legal only where nothing else can see the values that disappear: the MatMul's only reader is
// the Add and the Add's only reader is the activation (when one is fused), neither is a graph
// output; W is one [K,N] matrix, the bias a 1-D [N] broadcast along the last axis (either Add
// operand), all of one float dtype. FusedMatMul's kernel computes each element with the same
// instructions as the unfused ops, so the pass never changes a bit of any output.

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "volta/passes/pass_manager.h"

namespace volta {
namespace {

struct Match {
  int matmul = -1;
  int add = -1;
  int activation = -1;  // -1: none fused
  ValueId bias = {};
  bool bias_first = false;
  std::string activation_name = "none";
};

class GemmEpilogueFusion final : public Pass {
 public:
  explicit GemmEpilogueFusion(FusedNodeFilter runs) : runs_(std::move(runs)) {}
  std::string_view name() const override { return "gemm-epilogue-fusion"; }

  bool run(Graph& graph) override {
    const std::vector<int> uses = use_counts(graph);
    std::vector<char> is_output(static_cast<size_t>(graph.num_values()), 0);
    for (ValueId v : graph.outputs()) is_output[static_cast<size_t>(v.index)] = 1;
    // A state's next value survives as it is, like an output, and is left to the node that
    // writes it: a fused GEMM may not write over a state it reads.
    std::vector<char> is_next_state(static_cast<size_t>(graph.num_values()), 0);
    for (const StateUpdate& u : graph.state_updates()) {
      is_output[static_cast<size_t>(u.value.index)] = 1;
      is_next_state[static_cast<size_t>(u.value.index)] = 1;
    }
    // The node reading each value (any one of them: only values with one use are asked about).
    std::vector<int> reader(static_cast<size_t>(graph.num_values()), -1);
    for (int i = 0; i < graph.num_nodes(); ++i) {
      for (ValueId v : graph.node(i).inputs) {
        if (v.valid()) reader[static_cast<size_t>(v.index)] = i;
      }
    }
    // The one node reading `v`, when it is read once and is not a graph output.
    auto sole_reader = [&](ValueId v) -> std::optional<int> {
      const auto i = static_cast<size_t>(v.index);
      if (uses[i] != 1 || is_output[i] != 0 || reader[i] < 0) return std::nullopt;
      return reader[i];
    };

    std::vector<Match> matches;
    std::vector<char> taken(static_cast<size_t>(graph.num_nodes()), 0);
    for (int i = 0; i < graph.num_nodes(); ++i) {
      if (taken[static_cast<size_t>(i)] != 0) continue;
      std::optional<Match> m = match_at(graph, i, sole_reader);
      if (m) m = runnable(graph, *m);
      if (m && is_next_state[static_cast<size_t>(
                   graph.node(m->activation >= 0 ? m->activation : m->add).outputs[0].index)]) {
        m.reset();
      }
      if (m) {
        for (int n : {m->matmul, m->add, m->activation}) {
          if (n >= 0) taken[static_cast<size_t>(n)] = 1;
        }
        matches.push_back(std::move(*m));
      }
    }
    if (matches.empty()) return false;

    std::vector<Fusion> fusions;
    for (const Match& m : matches) {
      Fusion f{.replaced = {m.matmul, m.add}, .fused = fused_node(graph, m)};
      if (m.activation >= 0) f.replaced.push_back(m.activation);
      fusions.push_back(std::move(f));
    }
    apply_fusions(graph, std::move(fusions));
    return true;
  }

 private:
  // The match as the backend runs it: whole, or without its activation where the backend's
  // FusedMatMul has no kernel for that (the activation then stays a node of its own), or none.
  std::optional<Match> runnable(const Graph& graph, Match m) const {
    if (!runs_ || runs_(graph, fused_node(graph, m))) return m;
    if (m.activation < 0) return std::nullopt;
    m.activation = -1;
    m.activation_name = "none";
    if (runs_(graph, fused_node(graph, m))) return m;
    return std::nullopt;
  }

  FusedNodeFilter runs_;

  template <class SoleReader>
  static std::optional<Match> match_at(const Graph& graph, int index,
                                       const SoleReader& sole_reader) {
    const Node& matmul = graph.node(index);
    if (matmul.op != OpKind::MatMul || matmul.inputs.size() != 2) return std::nullopt;
    const Value& product = graph.value(matmul.outputs[0]);
    if (product.dtype != DType::F32 && product.dtype != DType::F64) return std::nullopt;
    const Shape& w = graph.value(matmul.inputs[1]).shape;
    if (w.rank() != 2 || graph.value(matmul.inputs[0]).shape.rank() < 1) return std::nullopt;

    const std::optional<int> add_index = sole_reader(matmul.outputs[0]);
    if (!add_index) return std::nullopt;
    const Node& add = graph.node(*add_index);
    if (add.op != OpKind::Add || add.inputs.size() != 2) return std::nullopt;
    Match m{.matmul = index, .add = *add_index};
    m.bias_first = add.inputs[1] == matmul.outputs[0];
    m.bias = add.inputs[m.bias_first ? 0 : 1];
    const Value& bias = graph.value(m.bias);
    if (bias.dtype != product.dtype || bias.shape != Shape{w[1]}) return std::nullopt;
    if (graph.value(add.outputs[0]).shape != product.shape) return std::nullopt;

    if (const std::optional<int> act_index = sole_reader(add.outputs[0])) {
      const Node& act = graph.node(*act_index);
      if (act.op == OpKind::Relu) {
        m.activation = *act_index;
        m.activation_name = "relu";
      } else if (act.op == OpKind::Gelu) {
        m.activation = *act_index;
        m.activation_name =
            AttrReader(act).get_string("approximate") == "tanh" ? "gelu_tanh" : "gelu";
      }
    }
    return m;
  }

  // Named after the Add: the layer a model builder or exporter names ("mlp.up", "fc3"), so
  // traces and first-divergence reports keep pointing at it.
  static Node fused_node(const Graph& graph, const Match& m) {
    const Node& matmul = graph.node(m.matmul);
    const Node& add = graph.node(m.add);
    const Node& last = graph.node(m.activation >= 0 ? m.activation : m.add);
    return Node{.op = OpKind::FusedMatMul,
                .name = add.name,
                .inputs = {matmul.inputs[0], matmul.inputs[1], m.bias},
                .outputs = {last.outputs[0]},
                .attrs = {{"activation", std::string(m.activation_name)},
                          {"bias_first", int64_t{m.bias_first ? 1 : 0}}},
                .origin = "gemm-epilogue-fusion"};
  }
};

}  // namespace

std::unique_ptr<Pass> make_gemm_epilogue_fusion(FusedNodeFilter runs) {
  return std::make_unique<GemmEpilogueFusion>(std::move(runs));
}

}  // namespace volta
