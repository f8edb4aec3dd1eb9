// The ai.onnx.ml domain's ops Volta lowers: Binarizer, ArrayFeatureExtractor and TreeEnsemble
// (opset 5), on models that import only that domain. Expected values are worked out by hand
// from ONNX's operator documentation (ONNX 1.23) and written beside each case.
#define BOOST_TEST_MODULE onnx_ml_ops

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "onnx_test_models.h"

namespace volta::onnx::test {
namespace {

// A model of one ai.onnx.ml node, importing only that domain at `ml_opset`.
Model ml_node(const std::string& op, int ml_opset, const std::vector<Io>& inputs, const Io& output,
              const NodeAttrs& attrs = {}) {
  pb::ModelProto m;
  m.set_ir_version(ml_opset >= 5 ? 10 : 8);
  auto* o = m.add_opset_import();
  o->set_domain("ai.onnx.ml");
  o->set_version(ml_opset);
  m.mutable_graph()->set_name(op);
  return with_one_node(m, op, "ai.onnx.ml", inputs, output, attrs, op + ".onnx");
}

// A 1-D tensor attribute of FLOAT, DOUBLE or UINT8 elements.
void set_tensor(pb::NodeProto& n, const std::string& name, int elem,
                const std::vector<double>& values) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(pb::AttributeProto::TENSOR);
  pb::TensorProto* t = a->mutable_t();
  t->set_name(name);
  t->set_data_type(elem);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (const double v : values) {
    if (elem == kFloat) t->add_float_data(static_cast<float>(v));
    if (elem == kDouble) t->add_double_data(v);
    if (elem == kUint8) t->add_int32_data(static_cast<int32_t>(v));
  }
}

const double kNan = std::numeric_limits<double>::quiet_NaN();

// ---- Binarizer --------------------------------------------------------------------------

Model binarizer(int elem, float threshold) {
  return ml_node("Binarizer", 1, {{"X", elem, {5}}}, {"Y", elem, {5}},
                 [threshold](pb::NodeProto& n) { set_float(n, "threshold", threshold); });
}

BOOST_AUTO_TEST_CASE(binarizer_gives_one_above_the_threshold_and_zero_elsewhere_nan_included) {
  const Tensor x = tensor<float>(Shape{5}, {-1.0f, 0.5f, 0.50001f, 7.0f, std::nanf("")});
  check_values(run_cpu(binarizer(kFloat, 0.5f), {x}).at(0), {0, 0, 1, 1, 0});
}

BOOST_AUTO_TEST_CASE(binarizer_compares_integers_exactly_with_a_fractional_threshold) {
  const Tensor x = tensor<int32_t>(Shape{5}, {-3, 1, 2, 2147483647, -2147483647 - 1});
  const Tensor y = run_cpu(binarizer(kInt32, 1.5f), {x}).at(0);
  BOOST_TEST((y.dtype() == DType::I32));
  check_values(y, {0, 0, 1, 1, 0});
  check_values(run_cpu(binarizer(kInt32, -1.5f), {x}).at(0), {0, 1, 1, 1, 0});
  // Past the type's range: none above, or all.
  check_values(run_cpu(binarizer(kInt32, 1e10f), {x}).at(0), {0, 0, 0, 0, 0});
  const Tensor wide = tensor<int64_t>(Shape{5}, {-3, 0, 1, INT64_MAX, INT64_MIN});
  check_values(run_cpu(binarizer(kInt64, -1e30f), {wide}).at(0), {1, 1, 1, 1, 1});
  check_values(run_cpu(binarizer(kInt64, 1e30f), {wide}).at(0), {0, 0, 0, 0, 0});
}

BOOST_AUTO_TEST_CASE(binarizer_refuses_types_it_does_not_take) {
  expect_import_error(binarizer(kUint8, 0.5f), {tensor<uint8_t>(Shape{5}, {1, 2, 3, 4, 5})},
                      ErrorCode::ImportUnsupported, "Binarizer takes f32, f64, i64 and i32");
}

// ---- ArrayFeatureExtractor -------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(array_feature_extractor_gathers_the_last_axis_by_the_flattened_indices) {
  const Model m = ml_node("ArrayFeatureExtractor", 1,
                          {{"X", kFloat, {2, 3}}, {"Y", kInt64, {1, 2}}}, {"Z", kFloat, {2, 2}});
  const Tensor x = tensor<float>(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor z = run_cpu(m, {x, tensor<int64_t>(Shape{1, 2}, {2, 0})}).at(0);
  BOOST_TEST((z.shape() == Shape{2, 2}));
  check_values(z, {3, 1, 6, 4});
}

BOOST_AUTO_TEST_CASE(array_feature_extractor_gives_a_vector_one_row) {
  const Model m = ml_node("ArrayFeatureExtractor", 1, {{"X", kInt64, {4}}, {"Y", kInt64, {3}}},
                          {"Z", kInt64, {1, 3}});
  const Tensor z = run_cpu(m, {tensor<int64_t>(Shape{4}, {10, 20, 30, 40}),
                               tensor<int64_t>(Shape{3}, {3, 3, 1})})
                       .at(0);
  BOOST_TEST((z.shape() == Shape{1, 3}));
  check_values(z, {40, 40, 20});
}

// ---- TreeEnsemble --------------------------------------------------------------------------

// Two trees over X [3, 2]:
//   tree 0: node 0 (x0 < 2, NaN goes true) -> node 1 | leaf 0
//           node 1 (x1 >= 3) -> leaf 1 | leaf 2
//   tree 1: node 2 (x1 != 2) -> leaf 3 | leaf 4
// Leaves: weights 10, 20, 30, 1, 2 feeding targets 0, 0, 1, 0, 0 of 2.
// Rows [1, 5] -> leaves 1, 3; [NaN, 2] -> leaves 2, 4; [3, -1] -> leaves 0, 3.
Model two_trees(int64_t aggregate, int64_t post_transform = 0,
                const std::vector<int64_t>& false_ids = {0, 2, 4},
                const std::vector<int64_t>& false_leafs = {1, 1, 1},
                const std::vector<double>& weights = {10, 20, 30, 1, 2}) {
  return ml_node("TreeEnsemble", 5, {{"X", kFloat, {3, 2}}}, {"Y", kFloat, {3, 2}},
                 [aggregate, post_transform, false_ids, false_leafs, weights](pb::NodeProto& n) {
                   set_int(n, "aggregate_function", aggregate);
                   set_int(n, "post_transform", post_transform);
                   set_int(n, "n_targets", 2);
                   set_ints(n, "tree_roots", {0, 2});
                   set_tensor(n, "nodes_modes", kUint8, {1, 2, 5});  // LT, GTE, NEQ
                   set_ints(n, "nodes_featureids", {0, 1, 1});
                   set_tensor(n, "nodes_splits", kFloat, {2, 3, 2});
                   set_ints(n, "nodes_truenodeids", {1, 1, 3});
                   set_ints(n, "nodes_trueleafs", {0, 1, 1});
                   set_ints(n, "nodes_falsenodeids", false_ids);
                   set_ints(n, "nodes_falseleafs", false_leafs);
                   set_ints(n, "nodes_missing_value_tracks_true", {1, 0, 0});
                   set_tensor(n, "leaf_weights", kFloat, weights);
                   set_ints(n, "leaf_targetids", {0, 0, 1, 0, 0});
                 });
}

const Tensor kRows = tensor<float>(Shape{3, 2}, {1, 5, std::nanf(""), 2, 3, -1});

BOOST_AUTO_TEST_CASE(tree_ensemble_walks_every_tree_and_sums_its_leaves_per_target) {
  check_values(run_cpu(two_trees(1), {kRows}).at(0), {21, 0, 2, 30, 11, 0});
}

BOOST_AUTO_TEST_CASE(tree_ensemble_averages_over_the_trees_and_takes_extremes) {
  check_values(run_cpu(two_trees(0), {kRows}).at(0), {10.5, 0, 1, 15, 5.5, 0});
  const double most = std::numeric_limits<float>::max();
  check_values(run_cpu(two_trees(2), {kRows}).at(0), {1, most, 2, 30, 1, most});
  check_values(run_cpu(two_trees(3), {kRows}).at(0), {20, -most, 2, 30, 10, -most});
}

// One tree over X [3, 1]: node 0 (x0 in {0, 7}) -> leaf 0 | node 1; node 1 (x0 == 1) ->
// leaf 1 | leaf 2; weights 5, 6, 7 (doubles, X f64).
BOOST_AUTO_TEST_CASE(tree_ensemble_tests_set_membership_and_equality) {
  const Model m = ml_node("TreeEnsemble", 5, {{"X", kDouble, {4, 1}}}, {"Y", kDouble, {4, 1}},
                          [](pb::NodeProto& n) {
                            set_ints(n, "tree_roots", {0});
                            set_tensor(n, "nodes_modes", kUint8, {6, 4});  // MEMBER, EQ
                            set_ints(n, "nodes_featureids", {0, 0});
                            set_tensor(n, "nodes_splits", kDouble, {0, 1});
                            set_tensor(n, "membership_values", kDouble, {0, 7, kNan});
                            set_ints(n, "nodes_truenodeids", {0, 1});
                            set_ints(n, "nodes_trueleafs", {1, 1});
                            set_ints(n, "nodes_falsenodeids", {1, 2});
                            set_ints(n, "nodes_falseleafs", {0, 1});
                            set_tensor(n, "leaf_weights", kDouble, {5, 6, 7});
                            set_ints(n, "leaf_targetids", {0, 0, 0});
                          });
  const Tensor x = tensor<double>(Shape{4, 1}, {1, 7, 0, 2});
  check_values(run_cpu(m, {x}).at(0), {6, 5, 5, 7});
}

// Weights 0, 0.2, 0.3, 0, 0.5 give the scores [0.2, 0], [0.5, 0.3], [0, 0]: a zero score, a
// row without one, a row of zeros, and scores in [0, 1] for PROBIT. Expected values from ONNX
// Runtime 1.32 (run once; it numbers SOFTMAX 2 and LOGISTIC 1, the spec's reverse), except
// SOFTMAX_ZERO's row of zeros: ONNX's reference gives it 0.5, ONNX Runtime NaN (0 / 0).
BOOST_AUTO_TEST_CASE(tree_ensemble_post_transforms_its_scores) {
  const std::vector<double> weights = {0, 0.2, 0.3, 0, 0.5};
  const auto transformed = [&](int64_t transform) {
    return run_cpu(two_trees(1, transform, {0, 2, 4}, {1, 1, 1}, weights), {kRows}).at(0);
  };
  const double inf = std::numeric_limits<double>::infinity();
  const std::pair<int64_t, std::vector<double>> cases[] = {
      {1, {0.549833953, 0.450165987, 0.549833953, 0.450165987, 0.5, 0.5}},
      {2, {0.549833953, 0.5, 0.622459352, 0.574442506, 0.5, 0.5}},
      {3, {1.0, 0.0, 0.549833953, 0.450165987, 0.5, 0.5}},
      {4, {-0.841756105, -inf, 0.0, -0.524445891, -inf, -inf}},
  };
  for (const auto& [transform, want] : cases) {
    const Tensor y = transformed(transform);
    BOOST_TEST_CONTEXT("post_transform " << transform) {
      BOOST_REQUIRE_EQUAL(y.numel(), static_cast<int64_t>(want.size()));
      for (int64_t i = 0; i < y.numel(); ++i) {
        const double w = want[static_cast<size_t>(i)];
        const double got = y.get_double(i);
        BOOST_TEST((std::isinf(w) ? got == w : std::abs(got - w) <= 2e-6), i << ": " << got);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(tree_ensemble_refuses_bad_trees_and_transforms) {
  expect_import_error(two_trees(1, 5), {kRows}, ErrorCode::ImportInvalidModel,
                      "post_transform is 5; it is 0 (NONE), 1 (SOFTMAX), 2 (LOGISTIC), 3 "
                      "(SOFTMAX_ZERO) or 4 (PROBIT)");
  // Node 0's false branch back to node 0: a cycle.
  expect_import_error(two_trees(1, 0, {0, 2, 4}, {0, 1, 1}), {kRows}, ErrorCode::ImportInvalidModel,
                      "the trees have a cycle through node 0");
  expect_import_error(two_trees(1, 0, {5, 2, 4}), {kRows}, ErrorCode::ImportInvalidModel,
                      "node 0's false leaf id is 5; it must lie in [0, 5)");
}

// A chain of 1100 interior nodes (each true branch a leaf, each false branch the next node)
// is deeper than the walk takes: refused before the recursion or the graph grows with it.
BOOST_AUTO_TEST_CASE(tree_ensemble_refuses_trees_deeper_than_1024) {
  constexpr int64_t kChain = 1100;
  const Model m = ml_node(
      "TreeEnsemble", 5, {{"X", kFloat, {1, 1}}}, {"Y", kFloat, {1, 1}}, [](pb::NodeProto& n) {
        std::vector<int64_t> next(kChain), leafs(kChain, 0), zeros(kChain, 0), ones(kChain, 1);
        for (int64_t i = 0; i < kChain; ++i) next[static_cast<size_t>(i)] = i + 1;
        next.back() = 0;
        leafs.back() = 1;
        set_ints(n, "tree_roots", {0});
        set_tensor(n, "nodes_modes", kUint8, std::vector<double>(kChain, 0));
        set_ints(n, "nodes_featureids", zeros);
        set_tensor(n, "nodes_splits", kFloat, std::vector<double>(kChain, 0));
        set_ints(n, "nodes_truenodeids", zeros);
        set_ints(n, "nodes_trueleafs", ones);
        set_ints(n, "nodes_falsenodeids", next);
        set_ints(n, "nodes_falseleafs", leafs);
        set_tensor(n, "leaf_weights", kFloat, {1});
        set_ints(n, "leaf_targetids", {0});
      });
  expect_import_error(m, {tensor<float>(Shape{1, 1}, {0})}, ErrorCode::ImportUnsupported,
                      "a tree deeper than 1024 interior nodes");
}

BOOST_AUTO_TEST_CASE(the_ml_domain_is_read_up_to_its_opset_5) {
  const auto at_opset = [](int opset) {
    return ml_node("Binarizer", opset, {{"X", kFloat, {5}}}, {"Y", kFloat, {5}});
  };
  expect_import_error(at_opset(6), {tensor<float>(Shape{5}, {1, 2, 3, 4, 5})},
                      ErrorCode::ImportUnsupported,
                      "imports opset 6 of ai.onnx.ml; Volta reads its opsets 1 to 5 (ONNX 1.23)");
  check_values(run_cpu(at_opset(5), {tensor<float>(Shape{5}, {1, -2, 3, 0, 5})}).at(0),
               {1, 0, 1, 0, 1});
}

}  // namespace
}  // namespace volta::onnx::test
