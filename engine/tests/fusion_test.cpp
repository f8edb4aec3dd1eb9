// gemm-epilogue-fusion: where it fires, where it must not, and that fused plans give the same
// bits as the unfused graph (passes off) at every thread count, f32 and f64.
#define BOOST_TEST_MODULE fusion
#include <algorithm>
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

const Backend& cpu() {
  static const std::unique_ptr<Backend> backend = make_backend("cpu");
  return *backend;
}

std::vector<const Node*> fused_nodes(const Graph& g) {
  std::vector<const Node*> out;
  for (const Node& n : g.nodes()) {
    if (n.op == OpKind::FusedMatMul) out.push_back(&n);
  }
  return out;
}

std::string activation_of(const Node& n) { return AttrReader(n).get_string("activation"); }

// Runs the pass alone; the result must still verify.
bool fuse(Graph& g) {
  const bool changed = make_gemm_epilogue_fusion()->run(g);
  verify_graph_or_throw(g);
  return changed;
}

// x [rows, in] -> Linear(hidden) -> activation -> Linear(hidden) -> Tanh -> Linear(out).
Graph mlp(DType dtype, OpKind activation, const std::string& approximate = "none") {
  Graph g;
  ValueId h = g.add_input("x", dtype, Shape{37, 24});
  const std::vector<int64_t> widths = {24, 40, 40, 9};
  for (size_t layer = 0; layer + 1 < widths.size(); ++layer) {
    const std::string name = "fc" + std::to_string(layer + 1);
    const ValueId w = g.add_parameter(
        name + ".weight",
        random_tensor(dtype, Shape{widths[layer], widths[layer + 1]}, 3, -0.5, 0.5, 2 * layer));
    const ValueId b = g.add_parameter(name + ".bias", random_tensor(dtype, Shape{widths[layer + 1]},
                                                                    3, -0.5, 0.5, 2 * layer + 1));
    h = g.add(OpKind::MatMul, {h, w}, {}, name + ".matmul");
    // The middle layer reads the bias first: Add(bias, product).
    h = layer == 1 ? g.add(OpKind::Add, {b, h}, {}, name) : g.add(OpKind::Add, {h, b}, {}, name);
    if (layer == 0) {
      Attributes attrs;
      if (activation == OpKind::Gelu) attrs = {{"approximate", approximate}};
      h = g.add(activation, {h}, attrs, "fc1.act");
    }
    if (layer == 1) h = g.add(OpKind::Tanh, {h}, {}, "fc2.tanh");
  }
  g.set_outputs({h});
  return g;
}

// Inputs with the special values that expose any difference in operand order or rounding.
Tensor input_for(const Graph& g, uint64_t seed) {
  const Value& x = g.value(g.inputs()[0]);
  Tensor t = random_tensor(x.dtype, x.shape, seed, -4.0, 4.0);
  t.set_double(0, std::numeric_limits<double>::quiet_NaN());
  t.set_double(5, std::numeric_limits<double>::infinity());
  t.set_double(7, -0.0);
  return t;
}

void check_fused_matches_unfused(const std::string& label, const Graph& graph, int expected_fused) {
  BOOST_TEST_CONTEXT(label) {
    const ExecutionPlan fused = compile(graph, cpu(), DeterminismMode::Strict);
    const ExecutionPlan unfused =
        compile(graph, cpu(), DeterminismMode::Strict, {.optimize = false});
    BOOST_TEST(static_cast<int>(fused_nodes(fused.graph).size()) == expected_fused);
    BOOST_TEST(fused_nodes(unfused.graph).empty());
    const std::vector<Tensor> inputs = {input_for(graph, 21)};
    const std::unique_ptr<ExecutionContext> reference_ctx_context =
        cpu().make_context({.threads = 1});
    ExecutionContext& reference_ctx = *reference_ctx_context;
    const std::vector<Tensor> want = execute(unfused, cpu(), reference_ctx, inputs);
    for (int threads : {1, 2, 3, 4}) {
      const std::unique_ptr<ExecutionContext> ctx_context =
          cpu().make_context({.threads = threads});
      ExecutionContext& ctx = *ctx_context;
      const std::vector<Tensor> got = execute(fused, cpu(), ctx, inputs);
      BOOST_REQUIRE_EQUAL(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        BOOST_CHECK_MESSAGE(
            got[i].bit_equal(want[i]),
            "output " << i << " differs from the unfused graph at " << threads << " threads");
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(fuses_every_linear_layer_of_the_transformer_block) {
  const ExecutionPlan plan = compile(transformer_block_graph({}), cpu(), DeterminismMode::Strict);
  const std::vector<const Node*> fused = fused_nodes(plan.graph);
  // q, k, v, the output projection, the MLP's up (with its Gelu) and down projections.
  BOOST_REQUIRE_EQUAL(fused.size(), 6u);
  int with_gelu = 0;
  for (const Node* n : fused) {
    BOOST_TEST(n->origin == "gemm-epilogue-fusion");
    if (activation_of(*n) == "gelu") {
      ++with_gelu;
      BOOST_TEST(n->name == "mlp.up");  // named after the Add: the layer
    }
  }
  BOOST_TEST(with_gelu == 1);
  bool recorded = false;
  for (const PassRecord& p : plan.passes) {
    if (p.pass == "gemm-epilogue-fusion") recorded = p.changed;
  }
  BOOST_TEST(recorded);
  // What `volta info` prints: the fused step, its epilogue kernel and the pass that made it.
  const std::string text = describe_plan(plan);
  BOOST_TEST(text.find("FusedMatMul 'mlp.up' kernel=") != std::string::npos);
  BOOST_TEST(text.find("+bias_gelu_erf (bit-exact) from pass gemm-epilogue-fusion") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(fuses_the_mlp_with_its_relu_and_either_bias_order) {
  Graph g = mlp(DType::F32, OpKind::Relu);
  BOOST_TEST(fuse(g));
  const std::vector<const Node*> fused = fused_nodes(g);
  BOOST_REQUIRE_EQUAL(fused.size(), 3u);
  BOOST_TEST(activation_of(*fused[0]) == "relu");
  BOOST_TEST(activation_of(*fused[1]) == "none");  // Tanh is not an epilogue
  BOOST_TEST(AttrReader(*fused[1]).get_int("bias_first") == 1);
  BOOST_TEST(AttrReader(*fused[0]).get_int("bias_first") == 0);
  BOOST_TEST(activation_of(*fused[2]) == "none");
  BOOST_TEST(g.num_nodes() == 4);  // three fused layers and the Tanh
  BOOST_TEST(!fuse(g));            // nothing left to fuse
}

// A backend whose FusedMatMul lacks an activation gets the bias fused and the activation left
// as its own node; one that runs no fused node of that dtype keeps the graph as it is.
BOOST_AUTO_TEST_CASE(fuses_only_what_the_backend_runs) {
  const auto without_gelu = [](const Graph&, const Node& fused) {
    return activation_of(fused) != "gelu";
  };
  Graph g = mlp(DType::F32, OpKind::Gelu);
  BOOST_TEST(make_gemm_epilogue_fusion(without_gelu)->run(g));
  verify_graph_or_throw(g);
  BOOST_REQUIRE_EQUAL(fused_nodes(g).size(), 3u);
  for (const Node* n : fused_nodes(g)) BOOST_TEST(activation_of(*n) == "none");
  const auto gelus =
      std::ranges::count_if(g.nodes(), [](const Node& n) { return n.op == OpKind::Gelu; });
  BOOST_TEST(gelus == 1);

  Graph f64 = mlp(DType::F64, OpKind::Relu);
  const auto f32_only = [](const Graph& graph, const Node& fused) {
    return graph.value(fused.outputs[0]).dtype == DType::F32;
  };
  BOOST_TEST(!make_gemm_epilogue_fusion(f32_only)->run(f64));
  BOOST_TEST(fused_nodes(f64).empty());
}

BOOST_AUTO_TEST_CASE(does_not_fuse_a_product_something_else_reads) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{4, 3});
  const ValueId w = g.add_parameter("w", random_tensor(DType::F32, Shape{3, 5}, 1, -1, 1));
  const ValueId b = g.add_parameter("b", random_tensor(DType::F32, Shape{5}, 2, -1, 1));
  const ValueId y = g.add(OpKind::MatMul, {x, w}, {}, "mm");
  const ValueId z = g.add(OpKind::Add, {y, b}, {}, "add");
  g.set_outputs({g.add(OpKind::Mul, {z, y}, {}, "second_reader")});
  BOOST_TEST(!fuse(g));
}

BOOST_AUTO_TEST_CASE(does_not_fuse_a_bias_that_is_not_one_row) {
  for (const Shape& bias : {Shape{4, 5}, Shape{1, 5}, Shape{}, Shape{1}}) {
    BOOST_TEST_CONTEXT("bias " << bias.str()) {
      Graph g;
      const ValueId x = g.add_input("x", DType::F32, Shape{4, 3});
      const ValueId w = g.add_parameter("w", random_tensor(DType::F32, Shape{3, 5}, 1, -1, 1));
      const ValueId b = g.add_parameter("b", random_tensor(DType::F32, bias, 2, -1, 1));
      const ValueId y = g.add(OpKind::MatMul, {x, w}, {}, "mm");
      g.set_outputs({g.add(OpKind::Add, {y, b}, {}, "add")});
      BOOST_TEST(!fuse(g));
    }
  }
}

BOOST_AUTO_TEST_CASE(does_not_fuse_away_a_graph_output_or_a_batched_weight) {
  {  // the product itself is an output
    Graph g;
    const ValueId x = g.add_input("x", DType::F32, Shape{4, 3});
    const ValueId w = g.add_parameter("w", random_tensor(DType::F32, Shape{3, 5}, 1, -1, 1));
    const ValueId b = g.add_parameter("b", random_tensor(DType::F32, Shape{5}, 2, -1, 1));
    const ValueId y = g.add(OpKind::MatMul, {x, w}, {}, "mm");
    g.set_outputs({g.add(OpKind::Add, {y, b}, {}, "add"), y});
    BOOST_TEST(!fuse(g));
  }
  {  // the biased value is an output: bias fused, the Relu after it is not
    Graph g;
    const ValueId x = g.add_input("x", DType::F32, Shape{4, 3});
    const ValueId w = g.add_parameter("w", random_tensor(DType::F32, Shape{3, 5}, 1, -1, 1));
    const ValueId b = g.add_parameter("b", random_tensor(DType::F32, Shape{5}, 2, -1, 1));
    const ValueId z = g.add(OpKind::Add, {g.add(OpKind::MatMul, {x, w}, {}, "mm"), b}, {}, "add");
    g.set_outputs({g.add(OpKind::Relu, {z}, {}, "relu"), z});
    BOOST_TEST(fuse(g));
    const std::vector<const Node*> fused = fused_nodes(g);
    BOOST_REQUIRE_EQUAL(fused.size(), 1u);
    BOOST_TEST(activation_of(*fused[0]) == "none");
    BOOST_TEST(g.num_nodes() == 2);
  }
  {  // a stack of weights [2,3,5] is not one matrix
    Graph g;
    const ValueId x = g.add_input("x", DType::F32, Shape{2, 4, 3});
    const ValueId w = g.add_parameter("w", random_tensor(DType::F32, Shape{2, 3, 5}, 1, -1, 1));
    const ValueId b = g.add_parameter("b", random_tensor(DType::F32, Shape{5}, 2, -1, 1));
    const ValueId y = g.add(OpKind::MatMul, {x, w}, {}, "mm");
    g.set_outputs({g.add(OpKind::Add, {y, b}, {}, "add")});
    BOOST_TEST(!fuse(g));
  }
}

BOOST_AUTO_TEST_CASE(fused_plans_match_the_unfused_graph_bit_for_bit) {
  for (DType dtype : {DType::F32, DType::F64}) {
    BOOST_TEST_CONTEXT(dtype_name(dtype)) {
      check_fused_matches_unfused("mlp relu", mlp(dtype, OpKind::Relu), 3);
      check_fused_matches_unfused("mlp gelu", mlp(dtype, OpKind::Gelu), 3);
      check_fused_matches_unfused("mlp gelu tanh", mlp(dtype, OpKind::Gelu, "tanh"), 3);
      // Tile edges and several K slices: 2 x 128 rows, d_model 96, d_ff 320.
      check_fused_matches_unfused(
          "transformer block",
          transformer_block_graph(
              {.batch = 2, .seq = 128, .d_model = 96, .heads = 4, .d_ff = 320, .dtype = dtype}),
          6);
    }
  }
}

}  // namespace
}  // namespace volta
