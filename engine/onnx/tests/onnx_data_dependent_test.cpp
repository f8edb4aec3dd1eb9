// MaxUnpool (a scatter into zeros), Unique and NonMaxSuppression, whose output shapes depend
// on their inputs' values and which are therefore computed at import time, the plan specialized
// on those values; If, whose condition picks the branch lowered, likewise; and RoiAlign, whose
// adaptive sampling grid is sized from the RoIs' values. Expected values
// come from ONNX 1.23.2's reference implementation, run once and pasted here, except where it
// departs from the spec (noted at the case).
#define BOOST_TEST_MODULE onnx_data_dependent

#include <cmath>
#include <cstdint>
#include <limits>

#include "onnx_test_models.h"

namespace volta::onnx::test {
namespace {

void check_ints(const Tensor& got, const Shape& shape, const std::vector<double>& want) {
  BOOST_TEST((got.dtype() == DType::I64));
  BOOST_TEST((got.shape() == shape), got.shape().str() << " != " << shape.str());
  check_values(got, want);
}

// A model of `op` whose inputs are Expand(x, shape) for each of `shapes`: values too large to
// compute at import time that cost nothing until then.
Model after_expands(const std::string& op, int opset,
                    const std::vector<std::vector<int64_t>>& shapes) {
  pb::ModelProto m = empty_model(opset, op);
  auto* g = m.mutable_graph();
  add_io(g->add_input(), {"x", kFloat, {1}});
  for (size_t i = 0; i < shapes.size(); ++i) {
    const std::string name = "big" + std::to_string(i);
    auto* shape = g->add_initializer();
    shape->set_name(name + "_shape");
    shape->set_data_type(kInt64);
    shape->add_dims(static_cast<int64_t>(shapes[i].size()));
    for (int64_t d : shapes[i]) shape->add_int64_data(d);
    pb::NodeProto* expand = g->add_node();
    expand->set_op_type("Expand");
    expand->set_name("expand" + std::to_string(i));
    expand->add_input("x");
    expand->add_input(name + "_shape");
    expand->add_output(name);
  }
  pb::NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name("node");
  for (size_t i = 0; i < shapes.size(); ++i) n->add_input("big" + std::to_string(i));
  n->add_output("y");
  add_io(g->add_output(), {"y", kFloat, {}});
  return Model::parse(m.SerializeAsString(), op + ".onnx");
}

// ---- MaxUnpool -------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(max_unpool_scatters_x_at_the_flat_indices_of_the_unpooled_shape) {
  // 1 spatial dim, kernel 3, stride 2, pads 1 + 1: unpooled length (3 - 1) * 2 - 2 + 3 = 5. The
  // indices count over N * C * 5; channel 1 names position 9 twice: the last write wins.
  const Model model =
      one_node("MaxUnpool", 11, {{"x", kFloat, {1, 2, 3}}, {"i", kInt64, {1, 2, 3}}},
               {"y", kFloat, {1, 2, 5}}, [](pb::NodeProto& n) {
                 set_ints(n, "kernel_shape", {3});
                 set_ints(n, "strides", {2});
                 set_ints(n, "pads", {1, 1});
               });
  const Tensor y = run_cpu(model, {tensor<float>(Shape{1, 2, 3}, {1, 2, 3, 4, 5, 6}),
                                   tensor<int64_t>(Shape{1, 2, 3}, {0, 3, 4, 5, 9, 9})})
                       .at(0);
  BOOST_TEST((y.shape() == Shape{1, 2, 5}));
  check_values(y, {1, 0, 0, 2, 3, 4, 0, 0, 0, 6});
}

BOOST_AUTO_TEST_CASE(max_unpool_pads_the_unpooled_result_to_output_shape_at_the_end) {
  // Kernel 2, stride 2, end pads 1: unpooled [1, 1, 3, 3]; output_shape [1, 1, 4, 5] adds zeros
  // after it, the indices staying those of the 3 x 3 result (ONNX's reference implementation).
  const Model model =
      one_node("MaxUnpool", 11,
               {{"x", kFloat, {1, 1, 2, 2}}, {"i", kInt64, {1, 1, 2, 2}}, {"shape", kInt64, {4}}},
               {"y", kFloat, {1, 1, 4, 5}}, [](pb::NodeProto& n) {
                 set_ints(n, "kernel_shape", {2, 2});
                 set_ints(n, "strides", {2, 2});
                 set_ints(n, "pads", {0, 0, 1, 1});
               });
  const Tensor y = run_cpu(model, {tensor<float>(Shape{1, 1, 2, 2}, {5, 6, 7, 8}),
                                   tensor<int64_t>(Shape{1, 1, 2, 2}, {0, 2, 6, 8}),
                                   tensor<int64_t>(Shape{4}, {1, 1, 4, 5})})
                       .at(0);
  BOOST_TEST((y.shape() == Shape{1, 1, 4, 5}));
  check_values(y, {5, 0, 6, 0, 0, 0, 0, 0, 0, 0, 7, 0, 8, 0, 0, 0, 0, 0, 0, 0});
  // Version 9 reads the same form; double X.
  const Model v9 =
      one_node("MaxUnpool", 9, {{"x", kDouble, {1, 1, 1, 2}}, {"i", kInt64, {1, 1, 1, 2}}},
               {"y", kDouble, {1, 1, 2, 4}}, [](pb::NodeProto& n) {
                 set_ints(n, "kernel_shape", {2, 2});
                 set_ints(n, "strides", {2, 2});
               });
  Tensor x(DType::F64, Shape{1, 1, 1, 2});
  x.set_double(0, 0.25);
  x.set_double(1, -1.5);
  check_values(run_cpu(v9, {x, tensor<int64_t>(Shape{1, 1, 1, 2}, {1, 6})}).at(0),
               {0, 0.25, 0, 0, 0, 0, -1.5, 0});
}

BOOST_AUTO_TEST_CASE(max_unpool_refuses_malformed_attributes_and_shapes) {
  const Tensor x = tensor<float>(Shape{1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor i = tensor<int64_t>(Shape{1, 1, 2, 2}, {0, 1, 2, 3});
  const std::vector<Io> inputs = {{"x", kFloat, {1, 1, 2, 2}}, {"i", kInt64, {1, 1, 2, 2}}};
  const Io out{"y", kFloat, {1, 1, 4, 4}};
  // Version 22 is newer than the ONNX library, whose checker finds this in older ones.
  expect_import_error(one_node("MaxUnpool", 22, inputs, out), {x, i}, ErrorCode::ImportInvalidModel,
                      "attribute 'kernel_shape' is required");
  expect_import_error(one_node("MaxUnpool", 11, inputs, out,
                               [](pb::NodeProto& n) { set_ints(n, "kernel_shape", {2}); }),
                      {x, i}, ErrorCode::ImportInvalidModel,
                      "kernel_shape has 1 entries; X has 2 spatial dims");
  const auto with_shape = [&inputs, &out](int64_t entries) {
    return one_node("MaxUnpool", 11, {inputs[0], inputs[1], {"shape", kInt64, {entries}}}, out,
                    [](pb::NodeProto& n) {
                      set_ints(n, "kernel_shape", {2, 2});
                      set_ints(n, "strides", {2, 2});
                    });
  };
  expect_import_error(with_shape(4), {x, i, tensor<int64_t>(Shape{4}, {1, 1, 3, 4})},
                      ErrorCode::ImportInvalidModel,
                      "output_shape [1,1,3,4] is smaller than the unpooled shape [1,1,4,4]");
  expect_import_error(with_shape(3), {x, i, tensor<int64_t>(Shape{3}, {1, 4, 4})},
                      ErrorCode::ImportInvalidModel, "output_shape has 3 entries; X has rank 4");
  const Model flat =
      one_node("MaxUnpool", 11, {{"x", kFloat, {1, 4}}, {"i", kInt64, {1, 4}}},
               {"y", kFloat, {1, 4}}, [](pb::NodeProto& n) { set_ints(n, "kernel_shape", {2}); });
  expect_import_error(
      flat, {tensor<float>(Shape{1, 4}, {1, 2, 3, 4}), tensor<int64_t>(Shape{1, 4}, {0, 1, 2, 3})},
      ErrorCode::ImportUnsupported, "supported: [N, C, D1...Dn], n >= 1");
}

// ---- Unique ----------------------------------------------------------------------------------

struct UniqueWant {
  Shape y_shape;
  std::vector<double> y, indices, inverse, counts;
};

void check_unique(const Model& model, const Tensor& x, const UniqueWant& want) {
  const std::vector<Tensor> out = run_cpu(model, {x});
  BOOST_REQUIRE_EQUAL(out.size(), 4u);
  BOOST_TEST((out[0].dtype() == x.dtype()));
  BOOST_TEST((out[0].shape() == want.y_shape), out[0].shape().str());
  check_values(out[0], want.y);
  const auto unique = static_cast<int64_t>(want.indices.size());
  check_ints(out[1], Shape{unique}, want.indices);
  check_ints(out[2], Shape{static_cast<int64_t>(want.inverse.size())}, want.inverse);
  check_ints(out[3], Shape{unique}, want.counts);
}

Model unique_model(int elem_type, const std::vector<int64_t>& dims, int64_t sorted,
                   std::optional<int64_t> axis = std::nullopt) {
  return one_node("Unique", 11, {{"x", elem_type, dims}},
                  {{"y", elem_type, {}},
                   {"indices", kInt64, {}},
                   {"inverse", kInt64, {}},
                   {"counts", kInt64, {}}},
                  [sorted, axis](pb::NodeProto& n) {
                    set_int(n, "sorted", sorted);
                    if (axis) set_int(n, "axis", *axis);
                  });
}

BOOST_AUTO_TEST_CASE(unique_without_axis_flattens_x) {
  // The spec's examples 1 (first-occurrence order) and 2 (ascending).
  check_unique(unique_model(kFloat, {6}, 0), tensor<float>(Shape{6}, {2, 1, 1, 3, 4, 3}),
               {Shape{4}, {2, 1, 3, 4}, {0, 1, 3, 4}, {0, 1, 1, 2, 3, 2}, {1, 2, 2, 1}});
  check_unique(unique_model(kFloat, {2, 2}, 1), tensor<float>(Shape{2, 2}, {1, 3, 2, 3}),
               {Shape{3}, {1, 2, 3}, {0, 2, 1}, {0, 2, 1, 2}, {1, 1, 2}});
  // sorted = 0 on a matrix: the flattened values in order of first occurrence (by hand: the
  // reference implementation takes Y's rows along axis 0 here, against the spec).
  check_unique(unique_model(kFloat, {2, 2}, 0), tensor<float>(Shape{2, 2}, {3, 1, 3, 5}),
               {Shape{3}, {3, 1, 5}, {0, 1, 3}, {0, 1, 0, 2}, {2, 1, 1}});
}

BOOST_AUTO_TEST_CASE(unique_along_an_axis_compares_whole_slices) {
  // The spec's examples 3 and 4; axis -2 is axis 1.
  check_unique(unique_model(kFloat, {3, 3}, 1, 0),
               tensor<float>(Shape{3, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 4}),
               {Shape{2, 3}, {1, 0, 0, 2, 3, 4}, {0, 2}, {0, 0, 1}, {2, 1}});
  const Tensor x = tensor<float>(Shape{2, 4, 2}, {1, 1, 0, 1, 2, 1, 0, 1, 1, 1, 0, 1, 2, 1, 0, 1});
  const UniqueWant sorted{
      Shape{2, 3, 2}, {0, 1, 1, 1, 2, 1, 0, 1, 1, 1, 2, 1}, {1, 0, 2}, {1, 0, 2, 0}, {2, 1, 1}};
  check_unique(unique_model(kFloat, {2, 4, 2}, 1, 1), x, sorted);
  check_unique(unique_model(kFloat, {2, 4, 2}, 1, -2), x, sorted);
  // sorted = 0 along axis 1, by hand (the reference implementation takes along axis 0 here).
  check_unique(
      unique_model(kFloat, {2, 4, 2}, 0, 1), x,
      {Shape{2, 3, 2}, {1, 1, 0, 1, 2, 1, 1, 1, 0, 1, 2, 1}, {0, 1, 2}, {0, 1, 2, 1}, {1, 2, 1}});
  // int32 columns [3, 3, 0] and [1, 1, 2]: the second sorts first.
  check_unique(unique_model(kInt32, {3, 2}, 1, 1), tensor<int32_t>(Shape{3, 2}, {3, 1, 3, 1, 0, 2}),
               {Shape{3, 2}, {1, 3, 1, 3, 2, 0}, {1, 0}, {1, 0}, {1, 1}});
}

BOOST_AUTO_TEST_CASE(unique_orders_nan_last_and_compares_integers_exactly) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // NaN equals NaN and sorts last; -0 equals 0 (numpy.unique's rules).
  Tensor f(DType::F64, Shape{5});
  const double values[] = {nan, 0.0, -0.0, nan, 1.0};
  for (int64_t i = 0; i < 5; ++i) f.set_double(i, values[i]);
  const std::vector<Tensor> out = run_cpu(unique_model(kDouble, {5}, 1), {f});
  BOOST_TEST((out[0].shape() == Shape{3}));
  BOOST_TEST(out[0].get_double(0) == 0.0);
  BOOST_TEST(!std::signbit(out[0].get_double(0)));  // the first occurrence's value
  BOOST_TEST(out[0].get_double(1) == 1.0);
  BOOST_TEST(std::isnan(out[0].get_double(2)));
  check_ints(out[1], Shape{3}, {1, 4, 0});
  check_ints(out[2], Shape{5}, {2, 0, 0, 2, 1});
  check_ints(out[3], Shape{3}, {2, 1, 2});
  // 2^53 and 2^53 + 1 are one double but two int64 values.
  const int64_t big = int64_t{1} << 53;
  const std::vector<Tensor> ints = run_cpu(
      unique_model(kInt64, {4}, 1), {tensor<int64_t>(Shape{4}, {big + 1, big, big + 1, -5})});
  BOOST_TEST(ints[0].get_int(0) == -5);
  BOOST_TEST(ints[0].get_int(1) == big);
  BOOST_TEST(ints[0].get_int(2) == big + 1);
  check_ints(ints[1], Shape{3}, {3, 1, 0});
  check_ints(ints[2], Shape{4}, {2, 1, 2, 0});
  check_ints(ints[3], Shape{3}, {1, 1, 2});
  Tensor b(DType::Bool, Shape{3});
  b.set_int(0, 1);
  b.set_int(2, 1);
  check_unique(unique_model(kBool, {3}, 1), b, {Shape{2}, {0, 1}, {1, 0}, {1, 0, 1}, {1, 2}});
}

BOOST_AUTO_TEST_CASE(unique_specializes_the_plan_on_the_input_values) {
  // Only Y, in first-occurrence order (the reference implementation returns it sorted when Y is
  // the only output, against the spec).
  const Model model = one_node("Unique", 11, {{"x", kInt64, {4}}}, {"y", kInt64, {}},
                               [](pb::NodeProto& n) { set_int(n, "sorted", 0); });
  static const std::unique_ptr<Backend> cpu = make_backend("cpu");
  Session session(model, *cpu, DeterminismMode::Strict);
  check_values(session.run(std::vector<Tensor>{tensor<int64_t>(Shape{4}, {7, 3, 7, 3})}).at(0),
               {7, 3});
  check_values(session.run(std::vector<Tensor>{tensor<int64_t>(Shape{4}, {1, 2, 3, 1})}).at(0),
               {1, 2, 3});
  check_values(session.run(std::vector<Tensor>{tensor<int64_t>(Shape{4}, {7, 3, 7, 3})}).at(0),
               {7, 3});
  BOOST_TEST(session.cache_stats().hits == 1);
  BOOST_TEST(session.cache_stats().misses == 2);
}

BOOST_AUTO_TEST_CASE(unique_refuses_bad_attributes_and_inputs_too_large) {
  const Tensor x = tensor<float>(Shape{2, 2}, {1, 2, 3, 4});
  expect_import_error(unique_model(kFloat, {2, 2}, 2), {x}, ErrorCode::ImportInvalidModel,
                      "sorted must be 0 or 1; got 2");
  expect_import_error(unique_model(kFloat, {2, 2}, 1, 2), {x}, ErrorCode::ImportInvalidModel,
                      "axis 2 is out of range for X [2,2]");
  expect_import_error(unique_model(kFloat, {2, 2}, 1, -3), {x}, ErrorCode::ImportInvalidModel,
                      "axis -3 is out of range");
  expect_import_error(after_expands("Unique", 11, {{int64_t{1} << 28, 2}}),
                      {tensor<float>(Shape{1}, {1})}, ErrorCode::ImportUnsupported,
                      "the constant output [268435456,2] exceeds 268435456 elements");
}

// ---- NonMaxSuppression -----------------------------------------------------------------------

Model nms_model(int opset, int64_t batches, int64_t classes, int64_t boxes, bool thresholds,
                const NodeAttrs& attrs = {}) {
  std::vector<Io> inputs = {{"boxes", kFloat, {batches, boxes, 4}},
                            {"scores", kFloat, {batches, classes, boxes}},
                            {"max", kInt64, {1}},
                            {"iou", kFloat, {1}}};
  if (thresholds) inputs.push_back({"score", kFloat, {1}});
  return one_node("NonMaxSuppression", opset, inputs, {"selected", kInt64, {-1, 3}}, attrs);
}

BOOST_AUTO_TEST_CASE(nms_selects_by_score_and_suppresses_by_iou) {
  // ONNX's suppress_by_IOU case: boxes 1 and 2 overlap box 0 beyond IoU 0.5, 4 overlaps 3.
  const Tensor boxes =
      tensor<float>(Shape{1, 6, 4}, {0.0F, 0.0F,  1.0F, 1.0F,  0.0F, 0.1F,   1.0F, 1.1F,
                                     0.0F, -0.1F, 1.0F, 0.9F,  0.0F, 10.0F,  1.0F, 11.0F,
                                     0.0F, 10.1F, 1.0F, 11.1F, 0.0F, 100.0F, 1.0F, 101.0F});
  const Tensor scores = tensor<float>(Shape{1, 1, 6}, {0.9F, 0.75F, 0.6F, 0.95F, 0.5F, 0.3F});
  const std::vector<Tensor> out =
      run_cpu(nms_model(11, 1, 1, 6, true),
              {boxes, scores, tensor<int64_t>(Shape{1}, {3}), tensor<float>(Shape{1}, {0.5F}),
               tensor<float>(Shape{1}, {0.0F})});
  check_ints(out.at(0), Shape{3, 3}, {0, 0, 3, 0, 0, 0, 0, 0, 5});
}

BOOST_AUTO_TEST_CASE(nms_breaks_score_ties_by_box_index) {
  // Boxes 0 to 3 are one box; 1 to 4 score 0.7: box 1 is kept, 2 and 3 suppressed, then the
  // distinct box 4, and box 0 (score 0.5) is suppressed by box 1.
  const Tensor boxes =
      tensor<float>(Shape{1, 5, 4}, {0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 5, 5, 6, 6});
  const Tensor scores = tensor<float>(Shape{1, 1, 5}, {0.5F, 0.7F, 0.7F, 0.7F, 0.7F});
  check_ints(run_cpu(nms_model(11, 1, 1, 5, false), {boxes, scores, tensor<int64_t>(Shape{1}, {10}),
                                                     tensor<float>(Shape{1}, {0.5F})})
                 .at(0),
             Shape{2, 3}, {0, 0, 1, 0, 0, 4});
}

BOOST_AUTO_TEST_CASE(nms_center_point_boxes_per_batch_and_class_with_a_strict_score_threshold) {
  // Version 10, center_point_box 1, at most 2 per class; scores equal to the threshold 0.3 drop.
  const Tensor boxes =
      tensor<float>(Shape{2, 3, 4}, {0.5F, 0.5F, 1, 1, 0.5F, 0.6F, 1, 1, 0.5F, 10.5F, 1, 1,
                                     0.5F, 0.5F, 1, 1, 3,    3,    2, 2, 0.5F, 0.55F, 1, 1});
  const Tensor scores = tensor<float>(
      Shape{2, 2, 3}, {0.9F, 0.8F, 0.7F, 0.1F, 0.2F, 0.3F, 0.4F, 0.6F, 0.5F, 0.3F, 0.3F, 0.9F});
  const Model model =
      nms_model(10, 2, 2, 3, true, [](pb::NodeProto& n) { set_int(n, "center_point_box", 1); });
  check_ints(run_cpu(model, {boxes, scores, tensor<int64_t>(Shape{1}, {2}),
                             tensor<float>(Shape{1}, {0.3F}), tensor<float>(Shape{1}, {0.3F})})
                 .at(0),
             Shape{5, 3}, {0, 0, 0, 0, 0, 2, 1, 0, 1, 1, 0, 2, 1, 1, 2});
}

BOOST_AUTO_TEST_CASE(nms_without_max_output_boxes_selects_none) {
  const Model model = one_node("NonMaxSuppression", 11,
                               {{"boxes", kFloat, {1, 1, 4}}, {"scores", kFloat, {1, 1, 1}}},
                               {"selected", kInt64, {-1, 3}});
  check_ints(run_cpu(model, {tensor<float>(Shape{1, 1, 4}, {0, 0, 1, 1}),
                             tensor<float>(Shape{1, 1, 1}, {0.5F})})
                 .at(0),
             Shape{0, 3}, {});
}

BOOST_AUTO_TEST_CASE(nms_refuses_bad_attributes_shapes_thresholds_and_too_much_work) {
  const Tensor boxes = tensor<float>(Shape{1, 1, 4}, {0, 0, 1, 1});
  const Tensor scores = tensor<float>(Shape{1, 1, 1}, {0.5F});
  const Tensor max = tensor<int64_t>(Shape{1}, {1});
  const Tensor iou = tensor<float>(Shape{1}, {0.5F});
  expect_import_error(
      nms_model(11, 1, 1, 1, false, [](pb::NodeProto& n) { set_int(n, "center_point_box", 2); }),
      {boxes, scores, max, iou}, ErrorCode::ImportInvalidModel,
      "center_point_box must be 0 ([y1, x1, y2, x2]) or 1");
  expect_import_error(nms_model(11, 1, 1, 1, false),
                      {boxes, scores, max, tensor<float>(Shape{1}, {1.5F})},
                      ErrorCode::ImportInvalidModel, "iou_threshold must be in [0, 1]; got 1.5");
  const Model wrong_scores = one_node("NonMaxSuppression", 11,
                                      {{"boxes", kFloat, {1, 1, 4}}, {"scores", kFloat, {1, 1, 2}}},
                                      {"selected", kInt64, {-1, 3}});
  expect_import_error(wrong_scores, {boxes, tensor<float>(Shape{1, 1, 2}, {0.5F, 0.5F})},
                      ErrorCode::ImportInvalidModel,
                      "boxes [1,1,4] and scores [1,1,2] must have shapes");
  // 2^15 boxes, up to 2^14 kept per class: 2^29 IoU comparisons.
  const int64_t n = int64_t{1} << 15;
  expect_import_error(nms_model(11, 1, 1, n, false),
                      {Tensor(DType::F32, Shape{1, n, 4}), Tensor(DType::F32, Shape{1, 1, n}),
                       tensor<int64_t>(Shape{1}, {n / 2}), iou},
                      ErrorCode::ImportUnsupported,
                      "takes up to 536870912 IoU comparisons; supported: up to 268435456");
  // Boxes [1, 2^26 + 1, 4], too large to read at import time.
  const int64_t many = (int64_t{1} << 26) + 1;
  expect_import_error(after_expands("NonMaxSuppression", 11, {{1, many, 4}, {1, 1, many}}),
                      {tensor<float>(Shape{1}, {1})}, ErrorCode::ImportUnsupported,
                      "the constant output [1,67108865,4] exceeds 268435456 elements");
}

// ---- If --------------------------------------------------------------------------------------

// y = If(cond) then [10, 20] (a Constant) else x * x (an outer value), cond a graph input.
Model if_model() {
  pb::ModelProto m = empty_model(16, "if");
  auto* g = m.mutable_graph();
  add_io(g->add_input(), {"cond", kBool, {}});
  add_io(g->add_input(), {"x", kFloat, {2}});
  add_io(g->add_output(), {"y", kFloat, {2}});
  pb::NodeProto* n = g->add_node();
  n->set_op_type("If");
  n->set_name("if");
  n->add_input("cond");
  n->add_output("y");
  auto branch = [&](const std::string& name, const std::function<void(pb::GraphProto&)>& body) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(pb::AttributeProto::GRAPH);
    pb::GraphProto* b = a->mutable_g();
    b->set_name(name);
    body(*b);
  };
  branch("then_branch", [](pb::GraphProto& b) {
    pb::NodeProto* c = b.add_node();
    c->set_op_type("Constant");
    c->add_output("ten_twenty");
    auto* value = c->add_attribute();
    value->set_name("value");
    value->set_type(pb::AttributeProto::TENSOR);
    value->mutable_t()->set_data_type(kFloat);
    value->mutable_t()->add_dims(2);
    value->mutable_t()->add_float_data(10);
    value->mutable_t()->add_float_data(20);
    add_io(b.add_output(), {"ten_twenty", kFloat, {2}});
  });
  branch("else_branch", [](pb::GraphProto& b) {
    pb::NodeProto* mul = b.add_node();
    mul->set_op_type("Mul");
    mul->add_input("x");
    mul->add_input("x");
    mul->add_output("squared");
    add_io(b.add_output(), {"squared", kFloat, {2}});
  });
  return Model::parse(m.SerializeAsString(), "if.onnx");
}

BOOST_AUTO_TEST_CASE(if_lowers_the_branch_its_condition_picks_and_specializes_on_it) {
  const Model model = if_model();
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  Session session(model, *cpu, DeterminismMode::Strict);
  const Tensor x = tensor<float>(Shape{2}, {3, 4});
  const std::vector<Tensor> then = {tensor<bool>(Shape{}, {1}), x};  // bool
  const std::vector<Tensor> otherwise = {tensor<bool>(Shape{}, {0}), x};
  check_values(session.run(then).at(0), {10, 20});
  check_values(session.run(otherwise).at(0), {9, 16});
  check_values(session.run(then).at(0), {10, 20});
  BOOST_TEST(session.cache_stats().misses == 2);  // one plan per condition
  BOOST_TEST(session.cache_stats().hits == 1);
}

// RoiAlign's inputs: X [2, 2, 6, 5] of ((37 i) mod 50) / 10 - 1.5, in `dtype`.
Tensor roi_x(DType dtype) {
  Tensor x(dtype, Shape{2, 2, 6, 5});
  for (int64_t i = 0; i < x.numel(); ++i) {
    x.set_double(i, static_cast<double>(static_cast<float>((i * 37) % 50) / 10.0F - 1.5F));
  }
  return x;
}

Model roi_align(int opset, int elem_type, int64_t rois, const NodeAttrs& attrs) {
  return one_node(
      "RoiAlign", opset,
      {{"X", elem_type, {2, 2, 6, 5}}, {"rois", elem_type, {rois, 4}}, {"b", kInt64, {rois}}},
      {"Y", elem_type, {}}, attrs);
}

// Three RoIs whose adaptive grids differ: 2x2, 3x1 and 1x1 samples per bin.
const std::vector<double> kRois = {0, 0, 4, 4, 1, 1, 5.5, 3, 0.5, 0.2, 1, 1.2};

Tensor rois_of(DType dtype, const std::vector<double>& values) {
  Tensor t(dtype, Shape{static_cast<int64_t>(values.size() / 4), 4});
  for (size_t i = 0; i < values.size(); ++i) t.set_double(static_cast<int64_t>(i), values[i]);
  return t;
}

NodeAttrs adaptive_half_pixel = [](pb::NodeProto& n) {
  set_int(n, "output_height", 2);
  set_int(n, "output_width", 2);
  set_string(n, "coordinate_transformation_mode", "half_pixel");
};

BOOST_AUTO_TEST_CASE(roi_align_sizes_each_rois_adaptive_grid_from_the_rois_values) {
  const Model model = roi_align(22, kFloat, 3, adaptive_half_pixel);
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  Session session(model, *cpu, DeterminismMode::Strict);
  const std::vector<Tensor> inputs = {roi_x(DType::F32), rois_of(DType::F32, kRois),
                                      tensor<int64_t>(Shape{3}, {0, 1, 0})};
  const Tensor y = session.run(inputs).at(0);
  BOOST_TEST((y.shape() == Shape{3, 2, 2, 2}));
  check_values(
      y, {0.85,      0.75,       0.35,    1.5,       1.8499999, 0.5,       0.1,       1.25,
          1.6791667, -0.7666667, 0.3875,  1.0666667, 0.5958334, 0.2333333, 1.1791667, 2.0666668,
          -1.0375,   -0.1125,    0.25625, 0.61875,   -0.0375,   0.8874999, 1.25625,   1.6187501},
      2e-6);
  // The plan is specialized on the RoIs: other RoIs give another plan.
  const std::vector<Tensor> other = {roi_x(DType::F32),
                                     rois_of(DType::F32, {0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1}),
                                     tensor<int64_t>(Shape{3}, {0, 0, 0})};
  BOOST_TEST((session.run(other).at(0).shape() == Shape{3, 2, 2, 2}));
  BOOST_TEST(session.cache_stats().misses == 2);
}

BOOST_AUTO_TEST_CASE(roi_align_max_takes_the_largest_weighted_pixel_and_zero_outside_the_map) {
  // RoI 0 reaches past the top-left corner: its samples above y = -1 read nothing (0).
  const Model model = roi_align(22, kFloat, 2, [](pb::NodeProto& n) {
    set_int(n, "output_height", 3);
    set_int(n, "output_width", 2);
    set_int(n, "sampling_ratio", 2);
    set_string(n, "mode", "max");
    set_string(n, "coordinate_transformation_mode", "output_half_pixel");
    set_float(n, "spatial_scale", 0.75F);
  });
  check_values(
      run_cpu(model, {roi_x(DType::F32), rois_of(DType::F32, {-3, -2.5, 2, 3, 2, 1, 4.5, 5.9}),
                      tensor<int64_t>(Shape{2}, {1, 0})})
          .at(0),
      {0.5,       0.453125,  0.5,       1.3895507, 2.265625,  2.0532227, 1.5,       1.359375,
       1.5,       1.359375,  0.0,       1.9314454, 1.5454395, 2.5142088, 1.6609864, 0.9882812,
       0.5508397, 0.2850293, 0.4261622, 1.4942384, 1.7092973, 1.605957,  0.9442966, 0.4667479},
      2e-6);
}

// Version 10 has no coordinate_transformation_mode: it is version 16's "output_half_pixel" (no
// shift; ONNX 16 calls it the backward-compatible behavior). ONNX 1.23.2's reference applies
// version 16's default "half_pixel" to version 10 as well; the numbers here are its output for
// version 16 with "output_half_pixel".
BOOST_AUTO_TEST_CASE(roi_align_10_averages_without_the_half_pixel_shift) {
  const Model model = roi_align(10, kFloat, 2, [](pb::NodeProto& n) {
    set_int(n, "output_height", 3);
    set_int(n, "output_width", 2);
    set_int(n, "sampling_ratio", 2);
    set_float(n, "spatial_scale", 0.75F);
  });
  check_values(
      run_cpu(model, {roi_x(DType::F32), rois_of(DType::F32, {-3, -2.5, 2, 3, 2, 1, 4.5, 5.9}),
                      tensor<int64_t>(Shape{2}, {1, 0})})
          .at(0),
      {0.125,     -0.0765625, 0.0507812, 0.1540039,  0.484375,  1.433789,  0.375,     0.384375,
       0.5507812, 0.3910645,  -0.421875, -0.0027343, 0.7923828, 2.1551757, 1.7854493, 0.8406248,
       0.4793213, -0.4561034, 0.080957,  0.4173828,  0.8162112, 1.5022459, 1.0880859, 0.4951905},
      2e-6);
}

BOOST_AUTO_TEST_CASE(roi_align_on_f16_computes_in_f32_and_rounds_once) {
  const Model model = roi_align(22, pb::TensorProto::FLOAT16, 3, adaptive_half_pixel);
  const Tensor y = run_cpu(model, {roi_x(DType::F16), rois_of(DType::F16, kRois),
                                   tensor<int64_t>(Shape{3}, {0, 1, 0})})
                       .at(0);
  BOOST_TEST((y.dtype() == DType::F16));
  // ONNX's reference computes in f16 throughout; Volta rounds once: within 2 f16 ULPs of it.
  check_values(y, {0.8496094, 0.75,      0.3498535,  1.5,        1.8496094,  0.5,
                   0.1000366, 1.25,      1.6787109,  -0.7666016, 0.3874512,  1.0673828,
                   0.5961914, 0.2332764, 1.1787109,  2.0664062,  -1.0371094, -0.112793,
                   0.2565918, 0.6186523, -0.0375977, 0.887207,   1.2568359,  1.6191406},
               4e-3);
}

BOOST_AUTO_TEST_CASE(roi_align_refuses_bad_attributes_shapes_and_batch_indices) {
  const std::vector<Tensor> inputs = {roi_x(DType::F32), rois_of(DType::F32, kRois),
                                      tensor<int64_t>(Shape{3}, {0, 1, 0})};
  expect_import_error(
      roi_align(22, kFloat, 3, [](pb::NodeProto& n) { set_string(n, "mode", "sum"); }), inputs,
      ErrorCode::ImportUnsupported, "mode 'sum'; supported: avg, max");
  expect_import_error(
      roi_align(22, kFloat, 3, [](pb::NodeProto& n) { set_int(n, "sampling_ratio", -1); }), inputs,
      ErrorCode::ImportInvalidModel, "sampling_ratio -1 must be");
  const Model five_columns = one_node(
      "RoiAlign", 22, {{"X", kFloat, {2, 2, 6, 5}}, {"rois", kFloat, {1, 5}}, {"b", kInt64, {1}}},
      {"Y", kFloat, {}});
  expect_import_error(five_columns,
                      {roi_x(DType::F32), tensor<float>(Shape{1, 5}, {0, 0, 1, 1, 1}),
                       tensor<int64_t>(Shape{1}, {0})},
                      ErrorCode::ImportInvalidModel, "rois of shape [1,5] must be [num_rois, 4]");
  // A batch index outside [0, N) fails at run time; a negative one is not counted from the end.
  const Model model =
      roi_align(22, kFloat, 3, [](pb::NodeProto& n) { set_int(n, "sampling_ratio", 1); });
  for (const int64_t bad : {2, -1}) {
    BOOST_CHECK_THROW(run_cpu(model, {roi_x(DType::F32), rois_of(DType::F32, kRois),
                                      tensor<int64_t>(Shape{3}, {0, bad, 0})}),
                      VoltaError);
  }
}

}  // namespace
}  // namespace volta::onnx::test
