// Graph passes: dead-code elimination, constant folding, and the PassManager's contract
// (verify and hash after every pass; a reproducer when a pass breaks the IR).

#define BOOST_TEST_MODULE passes_test
#include <boost/test/unit_test.hpp>
#include <memory>
#include <string>
#include <vector>

#include "expect_error.h"
#include "volta/ir/printer.h"
#include "volta/ir/verify.h"
#include "volta/passes/pass_manager.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta {
namespace {

std::vector<std::string> node_names(const Graph& g) {
  std::vector<std::string> names;
  for (const Node& n : g.nodes()) names.push_back(n.name);
  return names;
}

std::vector<std::string> parameter_names(const Graph& g) {
  std::vector<std::string> names;
  for (ValueId p : g.parameters()) names.push_back(g.value(p).name);
  return names;
}

using Names = std::vector<std::string>;

Tensor f32_tensor(Shape shape, std::initializer_list<float> values) {
  return Tensor::from<float>(std::move(shape), values);
}

void check_values(const Tensor& got, std::initializer_list<double> want) {
  BOOST_REQUIRE_EQUAL(got.numel(), static_cast<int64_t>(want.size()));
  int64_t i = 0;
  for (double w : want) BOOST_CHECK_EQUAL(got.get_double(i++), w);
}

// x -> a = Add(x, w) -> b = Relu(a) is the live path; `dead` reads a and the parameter u,
// and `unused` is read by nothing.
struct DeadCodeGraph {
  Graph graph;
  DeadCodeGraph() {
    const ValueId x = graph.add_input("x", DType::F32, Shape{4});
    const ValueId spare = graph.add_input("spare", DType::F32, Shape{4});
    const ValueId w = graph.add_parameter("w", Tensor(DType::F32, Shape{4}));
    const ValueId u = graph.add_parameter("u", Tensor(DType::F32, Shape{4}));
    graph.add_parameter("unused", Tensor(DType::F32, Shape{4}));
    const ValueId a = graph.add(OpKind::Add, {x, w}, {}, "a");
    graph.add(OpKind::Mul, {a, u}, {}, "dead");
    graph.add(OpKind::Neg, {spare}, {}, "dead_too");
    graph.set_outputs({graph.add(OpKind::Relu, {a}, {}, "b")});
  }
};

BOOST_AUTO_TEST_CASE(dce_removes_dead_nodes_and_unused_parameters) {
  DeadCodeGraph d;
  Graph& g = d.graph;
  const std::unique_ptr<Pass> dce = make_dead_code_elimination();
  BOOST_CHECK_EQUAL(dce->name(), "dead-code-elimination");
  BOOST_CHECK(dce->run(g));
  BOOST_CHECK(verify_graph(g).empty());
  BOOST_CHECK(node_names(g) == (Names{"a", "b"}));
  BOOST_CHECK(parameter_names(g) == (Names{"w"}));
  // The inputs are the graph's signature: kept even when nothing reads one.
  BOOST_REQUIRE_EQUAL(g.inputs().size(), 2u);
  BOOST_CHECK_EQUAL(g.value(g.inputs()[1]).name, "spare");
  BOOST_CHECK(!g.find_value("dead").has_value());
  BOOST_CHECK(!g.find_value("u").has_value());
  // x, spare, w, a, b: renumbered densely, in their original order.
  BOOST_CHECK_EQUAL(g.num_values(), 5);
  BOOST_CHECK_EQUAL(g.value(g.outputs()[0]).name, "b");
  BOOST_CHECK_EQUAL(g.node(1).inputs[0].index, g.node(0).outputs[0].index);
  // Nothing left to remove.
  const uint64_t hash = ir_hash(g);
  BOOST_CHECK(!dce->run(g));
  BOOST_CHECK_EQUAL(ir_hash(g), hash);
}

BOOST_AUTO_TEST_CASE(dce_keeps_a_node_when_any_output_is_live) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{4});
  const std::vector<ValueId> halves = g.add_node(OpKind::Split, {x}, {}, "split", 2);
  g.set_outputs({g.add(OpKind::Relu, {halves[1]}, {}, "relu")});
  BOOST_CHECK(!make_dead_code_elimination()->run(g));
  BOOST_CHECK(node_names(g) == (Names{"split", "relu"}));
  BOOST_CHECK_EQUAL(g.num_values(), 4);
}

// A stand-in for a backend: computes Add, Neg and Constant itself and records what it saw.
struct FakeEvaluator {
  std::vector<std::string> evaluated;  // node names, in call order

  ConstantEvaluator evaluator() {
    return [this](const Graph& single) {
      BOOST_REQUIRE_EQUAL(single.num_nodes(), 1);
      BOOST_REQUIRE(verify_graph(single).empty());
      BOOST_REQUIRE(single.inputs().empty());
      const Node& node = single.node(0);
      evaluated.push_back(node.name);
      const Value& out = single.value(node.outputs[0]);
      Tensor result(out.dtype, out.shape);
      for (int64_t i = 0; i < result.numel(); ++i) {
        result.set_double(i, element(single, node, i));
      }
      return std::vector<Tensor>{result};
    };
  }

  static double element(const Graph& g, const Node& node, int64_t i) {
    const auto operand = [&](int k) {
      const Tensor& t = g.parameter_data(node.inputs[static_cast<size_t>(k)]);
      return t.get_double(t.numel() == 1 ? 0 : i);
    };
    if (node.op == OpKind::Add) return operand(0) + operand(1);
    if (node.op == OpKind::Neg) return -operand(0);
    BOOST_REQUIRE_MESSAGE(node.op == OpKind::Constant,
                          "the fake evaluator does not compute " << op_name(node.op));
    return AttrReader(node).get_tensor("value").get_double(i);
  }
};

// x + (-(p + q)) + constant: `sum`, `negated` and `constant` depend on no graph input.
struct FoldableGraph {
  Graph graph;
  FoldableGraph() {
    const ValueId x = graph.add_input("x", DType::F32, Shape{2});
    const ValueId p = graph.add_parameter("p", f32_tensor({2}, {1, 2}));
    const ValueId q = graph.add_parameter("q", f32_tensor({2}, {10, 20}));
    const ValueId sum = graph.add(OpKind::Add, {p, q}, {}, "sum");
    const ValueId negated = graph.add(OpKind::Neg, {sum}, {}, "negated");
    const ValueId constant =
        graph.add(OpKind::Constant, {}, {{"value", f32_tensor({2}, {3, 4})}}, "constant");
    const ValueId y = graph.add(OpKind::Add, {x, negated}, {}, "live");
    graph.set_outputs({graph.add(OpKind::Add, {y, constant}, {}, "out")});
  }
  const Tensor& data(std::string_view name) const {
    return graph.parameter_data(*graph.find_value(name));
  }
};

BOOST_AUTO_TEST_CASE(constant_folding_turns_parameter_only_nodes_into_parameters) {
  FoldableGraph f;
  FakeEvaluator fake;
  const std::unique_ptr<Pass> fold = make_constant_folding(fake.evaluator());
  BOOST_CHECK_EQUAL(fold->name(), "constant-folding");
  BOOST_CHECK(fold->run(f.graph));
  BOOST_CHECK(verify_graph(f.graph).empty());
  // `negated` folds too: its input became constant a node earlier.
  BOOST_CHECK(fake.evaluated == (Names{"sum", "negated", "constant"}));
  BOOST_CHECK(node_names(f.graph) == (Names{"live", "out"}));
  BOOST_CHECK(parameter_names(f.graph) == (Names{"p", "q", "sum", "negated", "constant"}));
  check_values(f.data("sum"), {11, 22});
  check_values(f.data("negated"), {-11, -22});
  check_values(f.data("constant"), {3, 4});
  // Nothing foldable is left.
  BOOST_CHECK(!fold->run(f.graph));
  BOOST_CHECK_EQUAL(fake.evaluated.size(), 3u);
}

BOOST_AUTO_TEST_CASE(constant_folding_respects_max_folded_elements) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{1000});
  const ValueId scalar = g.add_parameter("scalar", f32_tensor({}, {2}));
  const ValueId small = g.add(OpKind::Neg, {scalar}, {}, "small");
  const ValueId big =
      g.add(OpKind::Expand, {small}, {{"shape", std::vector<int64_t>{1000}}}, "big");
  g.set_outputs({g.add(OpKind::Add, {x, big}, {}, "out")});
  FakeEvaluator fake;
  BOOST_CHECK(make_constant_folding(fake.evaluator(), 100)->run(g));
  // A 1-element Neg folds; an Expand to 1000 elements would inflate the model, so it stays.
  BOOST_CHECK(fake.evaluated == (Names{"small"}));
  BOOST_CHECK(node_names(g) == (Names{"big", "out"}));
  BOOST_CHECK(verify_graph(g).empty());
}

BOOST_AUTO_TEST_CASE(constant_folding_with_the_cpu_backend) {
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{3, 2});
  const ValueId w = g.add_parameter("w", f32_tensor({2, 3}, {1, 2, 3, 4, 5, 6}));
  const ValueId wt = g.add(OpKind::Transpose, {w}, {}, "wt");
  const ValueId col = g.add(OpKind::ReduceSum, {wt}, {{"axes", std::vector<int64_t>{1}}}, "col");
  g.set_outputs({g.add(OpKind::Concat, {x, col}, {{"axis", int64_t{1}}}, "out")});
  PassManager passes;
  passes.add(make_constant_folding(make_backend_evaluator(*cpu, DeterminismMode::Strict)));
  passes.add(make_dead_code_elimination());
  passes.run(g);
  BOOST_CHECK(node_names(g) == (Names{"out"}));
  BOOST_CHECK(parameter_names(g) == (Names{"col"}));
  // Transpose of [[1,2,3],[4,5,6]] is [[1,4],[2,5],[3,6]]; its row sums are 5, 7, 9.
  const Tensor& col_data = g.parameter_data(*g.find_value("col"));
  BOOST_CHECK_EQUAL(col_data.shape().str(), "[3,1]");
  check_values(col_data, {5, 7, 9});
}

BOOST_AUTO_TEST_CASE(pass_manager_records_each_pass_and_its_ir_hash) {
  FakeEvaluator fake;
  PassManager passes;
  passes.add(make_dead_code_elimination());
  passes.add(make_constant_folding(fake.evaluator()));
  passes.add(make_dead_code_elimination());
  BOOST_CHECK(passes.pass_names() ==
              (Names{"dead-code-elimination", "constant-folding", "dead-code-elimination"}));

  // The same passes run by hand, hashing after each.
  FoldableGraph by_hand;
  FakeEvaluator fake_by_hand;
  std::vector<uint64_t> hashes;
  std::vector<bool> changed;
  for (const std::unique_ptr<Pass>& pass :
       {make_dead_code_elimination(), make_constant_folding(fake_by_hand.evaluator()),
        make_dead_code_elimination()}) {
    changed.push_back(pass->run(by_hand.graph));
    hashes.push_back(ir_hash(by_hand.graph));
  }

  FoldableGraph f;
  const std::vector<PassRecord> records = passes.run(f.graph);
  BOOST_REQUIRE_EQUAL(records.size(), 3u);
  const std::vector<int> nodes_after = {5, 2, 2};
  for (size_t i = 0; i < records.size(); ++i) {
    BOOST_CHECK_EQUAL(records[i].pass, passes.pass_names()[i]);
    BOOST_CHECK_EQUAL(records[i].changed, changed[i]);
    BOOST_CHECK_EQUAL(records[i].nodes_after, nodes_after[i]);
    BOOST_CHECK_EQUAL(hash_hex(records[i].ir_hash), hash_hex(hashes[i]));
  }
  // Nothing is dead at first; folding changes the graph; the second DCE drops p, q and sum.
  BOOST_CHECK(!records[0].changed);
  BOOST_CHECK(records[1].changed);
  BOOST_CHECK(records[2].changed);
  BOOST_CHECK(parameter_names(f.graph) == (Names{"negated", "constant"}));
  BOOST_CHECK_EQUAL(hash_hex(records.back().ir_hash), hash_hex(ir_hash(f.graph)));
  BOOST_CHECK(PassManager().run(f.graph).empty());
}

// A deliberately broken pass: appends a second definition of the first node's output.
class RedefineFirstOutput final : public Pass {
 public:
  std::string_view name() const override { return "redefine-first-output"; }
  bool run(Graph& graph) override {
    Node copy = graph.node(0);
    copy.name = "duplicate";
    graph.append_node(std::move(copy));
    return true;
  }
};

BOOST_AUTO_TEST_CASE(pass_that_breaks_the_ir_throws_a_reproducer) {
  DeadCodeGraph d;
  // The IR the broken pass is given: the graph after dead-code elimination.
  Graph after_dce = d.graph;
  make_dead_code_elimination()->run(after_dce);
  const std::string ir_before = to_text(after_dce);

  PassManager passes;
  passes.add(make_dead_code_elimination());
  passes.add(std::make_unique<RedefineFirstOutput>());
  passes.add(make_dead_code_elimination());
  test::expect_error([&] { passes.run(d.graph); }, ErrorCode::PassFailed,
                     "pass 'redefine-first-output' left the IR invalid: [V-REDEFINED-VALUE] "
                     "Node 'duplicate' (Add): output 0 redefines %3 'a' (node 0 'a' defines it)\n"
                     "--- reproducer: passes dead-code-elimination,redefine-first-output on ---\n" +
                         ir_before);
  // The reproducer names the live nodes and the parameter that feeds them.
  BOOST_CHECK(ir_before.find("# a\n") != std::string::npos);
  BOOST_CHECK(ir_before.find("\"w\"") != std::string::npos);
}

}  // namespace
}  // namespace volta
