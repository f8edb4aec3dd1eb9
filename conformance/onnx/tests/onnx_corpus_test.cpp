// The onnx suite's building blocks: discovering the corpus and its floor, naming each test's
// op and family, tolerance overrides, the assert_allclose-style comparison, and the
// expectations file with its categories.
#define BOOST_TEST_MODULE onnx_corpus
#include "volta/conformance/onnx_corpus.h"

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <map>

#include "fake_corpus.h"
#include "volta/conformance/onnx_expectations.h"
#include "volta/conformance/onnx_tolerances.h"
#include "volta/error.h"

namespace volta::conformance {
namespace {

namespace fs = std::filesystem;
using testing::FakeCorpus;

// Families for the ops the fake corpus uses; everything else is not lowered.
std::optional<OpFamily> fake_family(std::string_view op) {
  static const std::map<std::string, OpFamily, std::less<>> kFamilies = {
      {"Abs", OpFamily::Elementwise},
      {"Softmax", OpFamily::Normalization},
      {"Split", OpFamily::Movement}};
  const auto it = kFamilies.find(op);
  return it == kFamilies.end() ? std::nullopt : std::optional<OpFamily>(it->second);
}

bool message_has(const VoltaError& e, std::string_view part) {
  return e.code() == ErrorCode::InvalidArgument &&
         std::string_view(e.what()).find(part) != std::string_view::npos;
}

const OnnxTest& by_id(const std::vector<OnnxTest>& tests, std::string_view id) {
  const auto it =
      std::find_if(tests.begin(), tests.end(), [&](const OnnxTest& t) { return t.id == id; });
  BOOST_REQUIRE_MESSAGE(it != tests.end(), "no test " << id);
  return *it;
}

// --- principal op -----------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(snake_case_splits_words_and_keeps_acronyms_whole) {
  BOOST_TEST(snake_case("ReduceLogSumExp") == "reduce_log_sum_exp");
  BOOST_TEST(snake_case("LSTM") == "lstm");
  BOOST_TEST(snake_case("MatMulInteger") == "mat_mul_integer");
  BOOST_TEST(snake_case("QLinearConv") == "q_linear_conv");
  BOOST_TEST(snake_case("Conv") == "conv");
}

BOOST_AUTO_TEST_CASE(the_onnx_library_names_every_default_domain_op_once_sorted) {
  const std::vector<std::string>& names = onnx_op_names();
  BOOST_TEST(std::is_sorted(names.begin(), names.end()));
  BOOST_TEST((std::adjacent_find(names.begin(), names.end()) == names.end()));
  for (std::string_view op : {"Abs", "ReduceLogSumExp", "Softmax", "Loop", "LSTM"}) {
    BOOST_TEST(std::binary_search(names.begin(), names.end(), op), op);
  }
}

BOOST_AUTO_TEST_CASE(principal_op_follows_the_rules_in_order) {
  const std::vector<std::string>& names = onnx_op_names();
  using V = std::vector<std::string>;
  // One node: its op, whatever the name says.
  BOOST_TEST(principal_op("node", "test_greater_equal", V{"GreaterOrEqual"}, "", names) ==
             "GreaterOrEqual");
  // An expanded function body: the op of its one-node sibling.
  BOOST_TEST(principal_op("node", "test_softmax_example_expanded", V{"Exp", "ReduceSum", "Div"},
                          "Softmax", names) == "Softmax");
  // The longest op whose snake_case or lower-case spelling starts the name at a boundary.
  BOOST_TEST(principal_op("node", "test_reduce_log_sum_exp_do_not_keepdims",
                          V{"ReduceSum", "Exp", "Log"}, "", names) == "ReduceLogSumExp");
  BOOST_TEST(principal_op("node", "test_layer_normalization_2d_axis0_expanded",
                          V{"Constant", "Shape", "ReduceMean"}, "", names) == "LayerNormalization");
  BOOST_TEST(principal_op("node", "test_and2d", V{"Cast", "And", "Cast"}, "", names) == "And");
  BOOST_TEST(principal_op("node", "test_sinh_example", V{"Identity", "Sinh", "Identity"}, "",
                          names) == "Sinh");
  // Other folders, or no name match: the first op that is not plumbing, else the first op.
  BOOST_TEST(principal_op("pytorch-converted", "test_GLU", V{"Split", "Sigmoid", "Mul"}, "",
                          names) == "Split");
  BOOST_TEST(principal_op("pytorch-converted", "test_AvgPool1d",
                          V{"Unsqueeze", "AveragePool", "Squeeze"}, "", names) == "AveragePool");
  BOOST_TEST(principal_op("pytorch-operator", "test_operator_view", V{"Constant", "Reshape"}, "",
                          names) == "Constant");
  BOOST_TEST(principal_op("simple", "test_empty", V{}, "", names).empty());
}

// --- discovery and the floor ---------------------------------------------------------------

// Seven test directories over the four folders.
void fill(FakeCorpus& c) {
  c.add_data_set(c.add_model("node", "test_abs", {"Abs"}), 0, {}, {});
  c.add_data_set(c.add_model("node", "test_softmax_example", {"Softmax"}), 0, {}, {});
  c.add_data_set(c.add_model("node", "test_softmax_example_expanded", {"Exp", "ReduceSum", "Div"}),
                 0, {}, {});
  c.add_model("node", "test_no_data", {"Abs"});
  fs::create_directories(c.root() / "node" / "test_no_model");
  c.add_data_set(c.add_model("pytorch-converted", "test_GLU", {"Split", "Sigmoid", "Mul"}, 9), 0,
                 {}, {});
  c.add_data_set(c.add_model("simple", "test_sequence_model1", {"SequenceEmpty", "SequenceAt"}), 0,
                 {}, {});
}

BOOST_AUTO_TEST_CASE(discovery_finds_every_directory_sorted_with_op_and_family) {
  FakeCorpus c;
  fill(c);
  const std::vector<OnnxTest> tests = discover_onnx_corpus(c.root(), fake_family, 7);
  std::vector<std::string> ids;
  ids.reserve(tests.size());
  for (const OnnxTest& t : tests) ids.push_back(t.id);
  const std::vector<std::string> expected = {"node/test_abs",
                                             "node/test_no_data",
                                             "node/test_no_model",
                                             "node/test_softmax_example",
                                             "node/test_softmax_example_expanded",
                                             "pytorch-converted/test_GLU",
                                             "simple/test_sequence_model1"};
  BOOST_TEST(ids == expected, boost::test_tools::per_element());

  const OnnxTest& abs = by_id(tests, "node/test_abs");
  BOOST_TEST(abs.folder == "node");
  BOOST_TEST(abs.name == "test_abs");
  BOOST_TEST(abs.op == "Abs");
  BOOST_TEST(abs.family == "elementwise");
  BOOST_TEST(abs.opset == 13);
  BOOST_TEST(abs.problem.empty());
  BOOST_TEST(abs.data_sets.size() == 1u);

  const OnnxTest& expanded = by_id(tests, "node/test_softmax_example_expanded");
  BOOST_TEST(expanded.op == "Softmax");
  BOOST_TEST(expanded.family == "normalization");
  BOOST_TEST(expanded.op_types == (std::vector<std::string>{"Exp", "ReduceSum", "Div"}),
             boost::test_tools::per_element());

  const OnnxTest& glu = by_id(tests, "pytorch-converted/test_GLU");
  BOOST_TEST(glu.op == "Split");
  BOOST_TEST(glu.family == "movement");
  BOOST_TEST(glu.opset == 9);
  BOOST_TEST(by_id(tests, "simple/test_sequence_model1").family == std::string(kOnnxOtherFamily));
}

BOOST_AUTO_TEST_CASE(a_directory_that_cannot_run_is_kept_with_its_problem) {
  FakeCorpus c;
  fill(c);
  FakeCorpus::write_file(c.root() / "node" / "test_garbage" / "model.onnx", "not a protobuf \xff");
  const std::vector<OnnxTest> tests = discover_onnx_corpus(c.root(), fake_family, 8);
  BOOST_TEST(by_id(tests, "node/test_no_model").problem.starts_with("no model.onnx in "));
  BOOST_TEST(by_id(tests, "node/test_no_data").problem.starts_with("no test_data_set_N directory"));
  BOOST_TEST(by_id(tests, "node/test_garbage").problem.ends_with("is not a readable ONNX model"));
  BOOST_TEST(by_id(tests, "node/test_garbage").family == std::string(kOnnxOtherFamily));
}

BOOST_AUTO_TEST_CASE(data_sets_are_ordered_by_number_and_other_directories_ignored) {
  FakeCorpus c;
  const fs::path dir = c.add_model("node", "test_abs", {"Abs"});
  for (int n : {10, 2, 0}) c.add_data_set(dir, n, {}, {});
  fs::create_directories(dir / "test_data_set_x");
  fs::create_directories(dir / "scratch");
  const std::vector<OnnxTest> tests = discover_onnx_corpus(c.root(), fake_family, 1);
  BOOST_REQUIRE_EQUAL(tests.size(), 1u);
  std::vector<std::string> names;
  for (const fs::path& p : tests[0].data_sets) names.push_back(p.filename().string());
  const std::vector<std::string> expected = {"test_data_set_0", "test_data_set_2",
                                             "test_data_set_10"};
  BOOST_TEST(names == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(fewer_directories_than_the_floor_is_a_loud_error) {
  FakeCorpus c;
  fill(c);
  BOOST_CHECK_EXCEPTION(
      discover_onnx_corpus(c.root(), fake_family, 8), VoltaError, [&](const VoltaError& e) {
        return message_has(e, "holds 7 test directories, fewer than the corpus floor of 8");
      });
  // The real floor is the ONNX 1.12 count.
  BOOST_TEST(kOnnxCorpusFloor == 1072);
  BOOST_CHECK_EXCEPTION(discover_onnx_corpus(c.root(), fake_family), VoltaError,
                        [&](const VoltaError& e) { return message_has(e, "floor of 1072"); });
}

BOOST_AUTO_TEST_CASE(a_missing_root_or_folder_is_a_loud_error) {
  BOOST_CHECK_EXCEPTION(discover_onnx_corpus("/nonexistent/onnx-data", fake_family, 0), VoltaError,
                        [](const VoltaError& e) {
                          return message_has(e, "'/nonexistent/onnx-data' is not a directory");
                        });
  FakeCorpus c;
  fs::remove_all(c.root() / "simple");
  BOOST_CHECK_EXCEPTION(
      discover_onnx_corpus(c.root(), fake_family, 0), VoltaError,
      [](const VoltaError& e) { return message_has(e, "has no simple/ folder"); });
}

// --- tolerances and comparison -------------------------------------------------------------

Tensor f32(Shape shape, std::initializer_list<float> v) {
  return Tensor::from<float>(std::move(shape), v);
}

CaseOutcome judge(const std::vector<Tensor>& got, const std::vector<Tensor>& want,
                  const OnnxTolerance& tol = {}) {
  CaseOutcome out;
  compare_onnx_outputs(got, want, tol, "data set 0", out);
  return out;
}

BOOST_AUTO_TEST_CASE(the_defaults_are_assert_allclose_rtol_1e3_atol_1e7) {
  const OnnxTolerance d;
  BOOST_TEST(d.rtol == 1e-3);
  BOOST_TEST(d.atol == 1e-7);
  BOOST_TEST(d.str() == "rtol=0.001 atol=1e-07");
  // |got - want| <= atol + rtol * |want|
  BOOST_TEST(judge({f32(Shape{2}, {1000.9f, 0.0f})}, {f32(Shape{2}, {1000.0f, 0.0f})}).outcome ==
             Outcome::Pass);
  const CaseOutcome far = judge({f32(Shape{2}, {1001.2f, 0.0f})}, {f32(Shape{2}, {1000.0f, 0.0f})});
  BOOST_TEST(far.outcome == Outcome::FailNumeric);
  BOOST_TEST(far.message.starts_with("data set 0, output 0: element 0 is 1001.2, expected 1000"));
  BOOST_TEST(*far.max_abs == 1.2, boost::test_tools::tolerance(1e-4));
  BOOST_TEST(far.tolerance_key == "onnx-default");
  BOOST_TEST(far.tolerance == "rtol=0.001 atol=1e-07");
  // Near zero only atol counts.
  BOOST_TEST(judge({f32(Shape{1}, {9e-8f})}, {f32(Shape{1}, {0.0f})}).outcome == Outcome::Pass);
  BOOST_TEST(judge({f32(Shape{1}, {3e-7f})}, {f32(Shape{1}, {0.0f})}).outcome ==
             Outcome::FailNumeric);
}

BOOST_AUTO_TEST_CASE(nan_positions_and_infinities_must_match) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  BOOST_TEST(judge({f32(Shape{2}, {nan, inf})}, {f32(Shape{2}, {nan, inf})}).outcome ==
             Outcome::Pass);
  BOOST_TEST(judge({f32(Shape{2}, {nan, 1})}, {f32(Shape{2}, {1, 1})}).outcome ==
             Outcome::FailNumeric);
  BOOST_TEST(judge({f32(Shape{1}, {-inf})}, {f32(Shape{1}, {inf})}).outcome ==
             Outcome::FailNumeric);
}

BOOST_AUTO_TEST_CASE(integers_are_exact_and_dtype_shape_and_count_come_first) {
  const Tensor ints = Tensor::from<int64_t>(Shape{2}, {1000, 7});
  const Tensor off_by_one = Tensor::from<int64_t>(Shape{2}, {1001, 7});
  BOOST_TEST(judge({ints}, {ints}).outcome == Outcome::Pass);
  BOOST_TEST(judge({off_by_one}, {ints}).outcome == Outcome::FailNumeric);

  const Tensor f64 = Tensor::from<double>(Shape{2}, {1, 2});
  const CaseOutcome dtype = judge({f64}, {f32(Shape{2}, {1, 2})});
  BOOST_TEST(dtype.outcome == Outcome::FailDType);
  BOOST_TEST(dtype.message == "data set 0, output 0: dtype f64, expected f32");
  BOOST_TEST(judge({f32(Shape{1, 2}, {1, 2})}, {f32(Shape{2}, {1, 2})}).outcome ==
             Outcome::FailShape);
  const CaseOutcome count = judge({f64, f64}, {f64});
  BOOST_TEST(count.outcome == Outcome::FailShape);
  BOOST_TEST(count.message == "data set 0: the model gave 2 outputs, the data set expects 1");
  // The first failing output decides; the errors cover every output.
  const CaseOutcome second =
      judge({f32(Shape{1}, {1}), f32(Shape{1}, {5})}, {f32(Shape{1}, {1}), f32(Shape{1}, {4})});
  BOOST_TEST(second.message.starts_with("data set 0, output 1: "));
  BOOST_TEST(*second.max_abs == 1.0);
}

BOOST_AUTO_TEST_CASE(a_tolerance_row_overrides_by_pattern_and_backend_with_a_reason) {
  const OnnxTolerances table = OnnxTolerances::parse(
      "# comment\n"
      "node/test_gelu*\treference\t0.01\t1e-5\tthe reference rounds erf in double\n"
      "node/test_gelu_tanh*\t*\t0.002\t0\ttanh approximation\n");
  const OnnxTolerance ref = table.lookup("node/test_gelu_tanh_1", "reference");
  BOOST_TEST(ref.rtol == 0.01);
  BOOST_TEST(ref.atol == 1e-5);
  BOOST_TEST(ref.key == "tolerances.tsv:2");
  BOOST_TEST(ref.reason == "the reference rounds erf in double");
  BOOST_TEST(table.lookup("node/test_gelu_tanh_1", "cpu").key == "tolerances.tsv:3");
  BOOST_TEST(table.lookup("node/test_gelu_default", "cpu").key == "onnx-default");
  // A looser tolerance lets a result through that the defaults fail.
  BOOST_TEST(judge({f32(Shape{1}, {1.005f})}, {f32(Shape{1}, {1.0f})}, ref).outcome ==
             Outcome::Pass);
  // The checked-in table parses.
  BOOST_CHECK_NO_THROW(OnnxTolerances::builtin());
}

BOOST_AUTO_TEST_CASE(a_bad_tolerance_row_names_its_line) {
  auto bad = [](std::string_view tsv, std::string_view part) {
    BOOST_CHECK_EXCEPTION(OnnxTolerances::parse(tsv), VoltaError,
                          [&](const VoltaError& e) { return message_has(e, part); });
  };
  bad("node/x\tcpu\t0.1\t0\n", "line 1: expected 5 tab-separated fields, found 4");
  bad("\nnode/x\tgpu\t0.1\t0\twhy\n", "line 2: unknown backend 'gpu'");
  bad("node/x\tcpu\t-1\t0\twhy\n", "'-1' is not a non-negative number");
  bad("\tcpu\t0.1\t0\twhy\n", "pattern and reason must not be empty");
}

// --- expectations ------------------------------------------------------------------------------

constexpr std::string_view kExpectations =
    "# header\n"
    "node/test_cast_STRING*\t*\tUNSUPPORTED\tunsupported-by-design\tstrings\t#4\t2999-12-31\n"
    "node/test_gelu\treference\tFAIL_NUMERIC\tfailing\terf rounding\t#12\t2999-12-31\n"
    "node/test_bitshift_left_uint8\tcpu\tUNSUPPORTED\tnot-yet-implemented\tuint8\t#4\t2999-12-31\n";

BOOST_AUTO_TEST_CASE(expectations_carry_backend_and_category) {
  const std::vector<OnnxExpectation> all = parse_onnx_expectations(kExpectations, "e.tsv");
  BOOST_REQUIRE_EQUAL(all.size(), 3u);
  BOOST_TEST(all[0].backend == "*");
  BOOST_TEST(all[0].category == OnnxCategory::UnsupportedByDesign);
  BOOST_TEST(all[1].category == OnnxCategory::Failing);
  BOOST_TEST(all[1].outcome == Outcome::FailNumeric);
  BOOST_TEST(all[2].line == 4);
  BOOST_TEST(onnx_category_name(OnnxCategory::NotYetImplemented) == "not-yet-implemented");

  // Per backend, as the harness judges them, the category leading the reason.
  const std::vector<Expectation> cpu = onnx_expectations_for(all, "cpu");
  BOOST_REQUIRE_EQUAL(cpu.size(), 2u);
  BOOST_TEST(cpu[0].pattern == "node/test_cast_STRING*");
  BOOST_TEST(cpu[0].reason == "unsupported-by-design: strings");
  BOOST_TEST(cpu[1].pattern == "node/test_bitshift_left_uint8");
  const std::vector<Expectation> ref = onnx_expectations_for(all, "reference");
  BOOST_REQUIRE_EQUAL(ref.size(), 2u);
  BOOST_TEST(ref[1].reason == "failing: erf rounding");
  BOOST_TEST(ref[1].issue == "#12");
}

BOOST_AUTO_TEST_CASE(a_bad_expectation_names_its_line_and_the_columns) {
  auto bad = [](std::string_view tsv, std::string_view part) {
    BOOST_CHECK_EXCEPTION(parse_onnx_expectations(tsv, "e.tsv"), VoltaError,
                          [&](const VoltaError& e) {
                            return message_has(e, part) && message_has(e, "(columns: test pattern");
                          });
  };
  bad("node/x\t*\tUNSUPPORTED\tfailing\twhy\t#4\n", "e.tsv:1: expected 7 tab-separated fields");
  bad("node/x\t*\tERROR\tfailing\twhy\t#4\t2999-01-01\n", "'ERROR' cannot be expected");
  bad("node/x\t*\tCRASH\tfailing\twhy\t#4\t2999-01-01\n", "'CRASH' cannot be expected");
  bad("node/x\t*\tPASS\tfailing\twhy\t#4\t2999-01-01\n", "'PASS' cannot be expected");
  bad("node/x\t*\tUNSUPPORTED\tfailing\twhy\t#4\t2999-01-01\n",
      "category failing expects a FAIL_* outcome, not UNSUPPORTED");
  bad("node/x\t*\tUNSUPPORTED\twontfix\twhy\t#4\t2999-01-01\n", "unknown category 'wontfix'");
  bad("node/x\tgpu\tUNSUPPORTED\tfailing\twhy\t#4\t2999-01-01\n", "unknown backend 'gpu'");
  bad("node/x\t*\tUNSUPPORTED\tnot-yet-implemented\t\t#4\t2999-01-01\n",
      "reason and issue must not be empty");
  bad("node/x\t*\tUNSUPPORTED\tnot-yet-implemented\twhy\t#4\tsoon\n", "expiry 'soon'");
  BOOST_CHECK_EXCEPTION(
      load_onnx_expectations("/nonexistent/onnx.tsv"), VoltaError,
      [](const VoltaError& e) { return message_has(e, "cannot read the ONNX expectations file"); });
}

}  // namespace
}  // namespace volta::conformance
