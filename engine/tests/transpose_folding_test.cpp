// matmul-transpose-folding: where it folds, where it must not, and that folded plans give the same
// bits as the unfolded graph (passes off) at every thread count, f32 and f64.
#define BOOST_TEST_MODULE transpose_folding
#include <boost/test/unit_test.hpp>
#include <limits>
#include <string>
#include <vector>

#include "test_util.h"
#include "volta/model/builtin_models.h"
#include "volta/passes/pass_manager.h"
#include "volta/plan/execution_plan.h"

namespace volta {
namespace {

using Ints = std::vector<int64_t>;

const Backend& cpu() {
  static const std::unique_ptr<Backend> backend = make_backend("cpu");
  return *backend;
}

int count_of(const Graph& g, OpKind op) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.op == op ? 1 : 0;
  return n;
}

const Node& only(const Graph& g, OpKind op) {
  BOOST_REQUIRE_EQUAL(count_of(g, op), 1);
  for (const Node& node : g.nodes()) {
    if (node.op == op) return node;
  }
  throw std::logic_error("unreachable");
}

Ints perm_of(const Node& n, const char* name) { return AttrReader(n).get_ints(name); }

// Runs the pass, then dead-code elimination as the pipeline does; the result must verify.
bool fold(Graph& g) {
  const bool changed = make_matmul_transpose_folding()->run(g);
  make_dead_code_elimination()->run(g);
  verify_graph_or_throw(g);
  return changed;
}

ValueId transpose(Graph& g, ValueId x, Ints perm, const std::string& name) {
  return g.add(OpKind::Transpose, {x}, {{"perm", std::move(perm)}}, name);
}

// Attention's shapes: q, k and v [batch, seq, heads, head_dim] split into heads, the context
// merged back: context = Transpose(softmax(q' k'^T) v', [0, 2, 1, 3]).
Graph attention(DType dtype, int64_t batch, int64_t seq, int64_t heads, int64_t head_dim) {
  Graph g;
  const Shape split{batch, seq, heads, head_dim};
  const ValueId q = transpose(g, g.add_input("q", dtype, split), {0, 2, 1, 3}, "q.heads");
  const ValueId k = transpose(g, g.add_input("k", dtype, split), {0, 2, 3, 1}, "k.heads");
  const ValueId v = transpose(g, g.add_input("v", dtype, split), {0, 2, 1, 3}, "v.heads");
  const ValueId scores = g.add(OpKind::MatMul, {q, k}, {}, "scores");
  const ValueId probs = g.add(OpKind::Softmax, {scores}, {{"axis", int64_t{-1}}}, "probs");
  const ValueId context = g.add(OpKind::MatMul, {probs, v}, {}, "context");
  g.set_outputs({transpose(g, context, {0, 2, 1, 3}, "merge")});
  return g;
}

// Random inputs with a NaN, an infinity and a -0 in the first.
std::vector<Tensor> inputs_for(const Graph& g, uint64_t seed) {
  std::vector<Tensor> inputs;
  for (ValueId id : g.inputs()) {
    const Value& v = g.value(id);
    inputs.push_back(random_tensor(v.dtype, v.shape, seed++, -3.0, 3.0));
  }
  inputs[0].set_double(0, std::numeric_limits<double>::quiet_NaN());
  inputs[0].set_double(5, std::numeric_limits<double>::infinity());
  inputs[0].set_double(7, -0.0);
  return inputs;
}

void check_folded_matches_unfolded(const std::string& label, const Graph& graph,
                                   int expected_folds) {
  BOOST_TEST_CONTEXT(label) {
    const ExecutionPlan folded = compile(graph, cpu(), DeterminismMode::Strict);
    const ExecutionPlan unfolded =
        compile(graph, cpu(), DeterminismMode::Strict, {.optimize = false});
    BOOST_TEST(count_of(folded.graph, OpKind::PermutedMatMul) == expected_folds);
    BOOST_TEST(count_of(unfolded.graph, OpKind::PermutedMatMul) == 0);
    const std::vector<Tensor> inputs = inputs_for(graph, 31);
    const std::unique_ptr<ExecutionContext> one_thread = cpu().make_context({.threads = 1});
    const std::vector<Tensor> want = execute(unfolded, cpu(), *one_thread, inputs);
    for (int threads : {1, 2, 3, 4}) {
      const std::unique_ptr<ExecutionContext> ctx = cpu().make_context({.threads = threads});
      const std::vector<Tensor> got = execute(folded, cpu(), *ctx, inputs);
      BOOST_REQUIRE_EQUAL(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        BOOST_CHECK_MESSAGE(
            got[i].bit_equal(want[i]),
            "output " << i << " differs from the unfolded graph at " << threads << " threads");
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(folds_every_transpose_of_attention) {
  Graph g = attention(DType::F32, 2, 8, 4, 16);
  BOOST_TEST(fold(g));
  BOOST_TEST(count_of(g, OpKind::Transpose) == 0);
  BOOST_REQUIRE_EQUAL(count_of(g, OpKind::PermutedMatMul), 2);
  for (const Node& n : g.nodes()) {
    if (n.op != OpKind::PermutedMatMul) continue;
    BOOST_TEST(n.origin == "matmul-transpose-folding");
    if (n.name == "scores") {
      BOOST_TEST(perm_of(n, "perm_a") == (Ints{0, 2, 1, 3}));
      BOOST_TEST(perm_of(n, "perm_b") == (Ints{0, 2, 3, 1}));
      BOOST_TEST(perm_of(n, "perm_y") == (Ints{0, 1, 2, 3}));
    } else {
      BOOST_TEST(n.name == "context");  // named after the MatMul
      BOOST_TEST(perm_of(n, "perm_a") == (Ints{0, 1, 2, 3}));
      BOOST_TEST(perm_of(n, "perm_b") == (Ints{0, 2, 1, 3}));
      BOOST_TEST(perm_of(n, "perm_y") == (Ints{0, 2, 1, 3}));
      BOOST_TEST(n.outputs[0].index == g.outputs()[0].index);  // writes the merged output itself
    }
  }
}

BOOST_AUTO_TEST_CASE(folds_the_transformer_blocks_attention_in_the_pipeline) {
  const ExecutionPlan plan = compile(transformer_block_graph({}), cpu(), DeterminismMode::Strict);
  BOOST_TEST(count_of(plan.graph, OpKind::PermutedMatMul) == 2);
  BOOST_TEST(count_of(plan.graph, OpKind::Transpose) == 0);
  BOOST_TEST(count_of(plan.graph, OpKind::FusedMatMul) == 6);  // the epilogues still fuse
  bool recorded = false;
  for (const PassRecord& p : plan.passes) {
    if (p.pass == "matmul-transpose-folding") recorded = p.changed;
  }
  BOOST_TEST(recorded);
}

BOOST_AUTO_TEST_CASE(keeps_a_transpose_something_else_reads) {
  // q's Transpose is also an output: it stays, and the MatMul still reads through it.
  Graph g;
  const ValueId q = transpose(g, g.add_input("q", DType::F32, Shape{2, 5, 3}), {1, 0, 2}, "q.t");
  const ValueId k = g.add_input("k", DType::F32, Shape{5, 3, 4});
  g.set_outputs({g.add(OpKind::MatMul, {q, k}, {}, "mm"), q});
  BOOST_TEST(fold(g));
  BOOST_TEST(count_of(g, OpKind::Transpose) == 1);
  const Node& folded = only(g, OpKind::PermutedMatMul);
  BOOST_TEST(perm_of(folded, "perm_a") == (Ints{1, 0, 2}));
  BOOST_TEST(folded.inputs[0].index == g.inputs()[0].index);
}

BOOST_AUTO_TEST_CASE(does_not_fold_what_would_change_the_products_layout_or_readers) {
  {  // the product has a second reader: its Transpose stays a node of its own
    Graph g;
    const ValueId a = g.add_input("a", DType::F32, Shape{2, 3, 4});
    const ValueId b = g.add_input("b", DType::F32, Shape{2, 4, 5});
    const ValueId y = g.add(OpKind::MatMul, {a, b}, {}, "mm");
    g.set_outputs({transpose(g, y, {1, 0, 2}, "t"), g.add(OpKind::Relu, {y}, {}, "relu")});
    BOOST_TEST(!fold(g));
  }
  {  // the product's Transpose moves its last axis: Y's rows would not be contiguous
    Graph g;
    const ValueId a = g.add_input("a", DType::F32, Shape{2, 3, 4});
    const ValueId b = g.add_input("b", DType::F32, Shape{2, 4, 5});
    g.set_outputs({transpose(g, g.add(OpKind::MatMul, {a, b}, {}, "mm"), {0, 2, 1}, "t")});
    BOOST_TEST(!fold(g));
  }
  {  // a factor's Transpose puts its contiguous axis among the batch axes: left as a copy
    Graph g;
    const ValueId a = transpose(g, g.add_input("a", DType::F32, Shape{3, 4, 2}), {2, 0, 1}, "t");
    const ValueId b = g.add_input("b", DType::F32, Shape{2, 4, 5});
    g.set_outputs({g.add(OpKind::MatMul, {a, b}, {}, "mm")});
    BOOST_TEST(!fold(g));
  }
  {  // a 1-D factor: MatMul promotes it, there is no matrix to permute
    Graph g;
    const ValueId a = g.add_input("a", DType::F32, Shape{4});
    const ValueId b = transpose(g, g.add_input("b", DType::F32, Shape{5, 4}), {1, 0}, "t");
    g.set_outputs({g.add(OpKind::MatMul, {a, b}, {}, "mm")});
    BOOST_TEST(!fold(g));
  }
}

BOOST_AUTO_TEST_CASE(folds_only_what_the_backend_runs) {
  Graph g = attention(DType::F32, 1, 4, 2, 8);
  const auto refuse_all = [](const Graph&, const Node&) { return false; };
  BOOST_TEST(!make_matmul_transpose_folding(refuse_all)->run(g));
  BOOST_TEST(count_of(g, OpKind::Transpose) == 4);
}

BOOST_AUTO_TEST_CASE(the_op_refuses_permutations_it_cannot_compute) {
  const std::vector<std::optional<TypeInfo>> types = {TypeInfo{DType::F32, Shape{2, 3, 4}},
                                                      TypeInfo{DType::F32, Shape{2, 4, 5}}};
  const auto build = [&](Ints perm_a, Ints perm_y) {
    return test::single_op_graph(
        OpKind::PermutedMatMul, types,
        {{"perm_a", std::move(perm_a)}, {"perm_b", Ints{0, 1, 2}}, {"perm_y", std::move(perm_y)}});
  };
  BOOST_CHECK_NO_THROW(build({0, 1, 2}, {1, 0, 2}));
  const auto fails_with = [&](Ints perm_a, Ints perm_y, const std::string& words) {
    try {
      build(std::move(perm_a), std::move(perm_y));
      BOOST_ERROR("no error for " << words);
    } catch (const VoltaError& e) {
      BOOST_TEST_CONTEXT(e.what()) {
        BOOST_TEST(std::string(e.what()).find(words) != std::string::npos);
      }
    }
  };
  fails_with({0, 1, 2}, {0, 2, 1}, "must leave the product's last axis last");
  fails_with({0, 1, 1}, {0, 1, 2}, "perm_a [0,1,1] is not a permutation");
  fails_with({0, 1}, {0, 1, 2}, "perm_a [0,1] has 2 entries for rank 3");
}

BOOST_AUTO_TEST_CASE(folded_plans_match_the_unfolded_graph_bit_for_bit) {
  for (DType dtype : {DType::F32, DType::F64}) {
    BOOST_TEST_CONTEXT(dtype_name(dtype)) {
      check_folded_matches_unfolded("attention", attention(dtype, 3, 37, 4, 16), 2);
      // Tile edges and several K slices: 2 x 128 rows, d_model 96 in 4 heads.
      check_folded_matches_unfolded(
          "transformer block",
          transformer_block_graph(
              {.batch = 2, .seq = 128, .d_model = 96, .heads = 4, .d_ff = 320, .dtype = dtype}),
          2);
    }
  }
}

}  // namespace
}  // namespace volta
