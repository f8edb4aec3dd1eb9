// ONNX Attention (23, 24, 25), RotaryEmbedding (23) and FlexAttention (ai.onnx.preview 1),
// lowered as composites
// (lower_attention.cpp), against numbers from ONNX 1.23.2's reference implementation
// (onnx.reference, run once on the same inputs; pasted below), and the diagnostics for what Volta
// does not take.
#define BOOST_TEST_MODULE onnx_attention
#include <cmath>
#include <limits>
#include <tuple>

#include "onnx_test_models.h"

namespace volta::onnx::test {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kTol = 1e-6;

// Values exact in f32: ((k * a + b) mod 11 - 5) / 8 for element k. The reference's inputs were
// made the same way.
Tensor pattern(const Shape& shape, int64_t a, int64_t b, double divisor = 8.0,
               DType dtype = DType::F32) {
  Tensor t(dtype, shape);
  for (int64_t k = 0; k < t.numel(); ++k) {
    t.set_double(k, static_cast<double>((k * a + b) % 11 - 5) / divisor);
  }
  return t;
}

Tensor bool_mask(const Shape& shape, std::initializer_list<int64_t> values) {
  Tensor t(DType::Bool, shape);
  int64_t k = 0;
  for (int64_t v : values) t.set_int(k++, v);
  return t;
}

// check_values, with -inf where the reference has it.
void check_close(const Tensor& got, const std::vector<double>& want) {
  BOOST_REQUIRE_EQUAL(got.numel(), static_cast<int64_t>(want.size()));
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double g = got.get_double(i);
    const double w = want[static_cast<size_t>(i)];
    BOOST_CHECK_MESSAGE(g == w || std::abs(g - w) <= kTol,
                        "element " << i << ": got " << g << ", want " << w);
  }
}

// One Attention node; inputs and outputs with an empty name are left out of it.
Model attention(int opset, const std::vector<Io>& inputs, const std::vector<Io>& outputs,
                const NodeAttrs& attrs) {
  return one_node("Attention", opset, inputs, outputs, attrs);
}

const Io kNone{"", kFloat, {}};

BOOST_AUTO_TEST_CASE(four_d_heads_with_a_short_float_mask_give_each_qk_output_mode) {
  // Q [1,2,2,4], K [1,2,3,4], V [1,2,3,2]; the mask [2,2] is shorter than the 3 keys, so the
  // third key is masked; softcap 2.
  const std::vector<Tensor> in = {pattern({1, 2, 2, 4}, 3, 1), pattern({1, 2, 3, 4}, 5, 2),
                                  pattern({1, 2, 3, 2}, 7, 3), pattern({2, 2}, 2, 4, 32.0)};
  const std::vector<double> y = {-0.043578363955020905, 0.07454231381416321, -0.025787197053432465,
                                 0.027099184691905975,  -0.329272985458374,  -0.0802721157670021,
                                 -0.3190840780735016,   -0.10744242370128632};
  const std::vector<std::vector<double>> qk = {
      // 0: the raw product
      {0.0546874925494194, 0.1953125, -0.1796874850988388, -0.0625, 0.2734374701976776, 0.09375,
       0.125, -0.1171874925494194, -0.1015624925494194, 0.0781249925494194, -0.0546874925494194,
       -0.1015625},
      // 1: soft-capped
      {0.05467386916279793, 0.19469396770000458, -0.17920556664466858, -0.062479663640260696,
       0.2717463970184326, 0.09368139505386353, 0.1248374953866005, -0.1170535683631897,
       -0.10147528350353241, 0.0780852809548378, -0.05467386916279793, -0.101475290954113},
      // 2: plus the mask
      {0.023423869162797928, 0.22594396770000458, -kInf, 0.031270336359739304, 0.4279963970184326,
       -kInf, 0.0935874953866005, -0.0858035683631897, -kInf, 0.1718352735042572,
       0.10157613456249237, -kInf},
      // 3: the probabilities
      {0.4495423138141632, 0.5504577159881592, 0.0, 0.4020991921424866, 0.5979008078575134, 0.0,
       0.5447279214859009, 0.4552721381187439, 0.0, 0.5175575613975525, 0.4824424088001251, 0.0}};
  for (int64_t mode = 0; mode < 4; ++mode) {
    BOOST_TEST_CONTEXT("qk_matmul_output_mode " << mode) {
      const Model model =
          attention(23,
                    {{"q", kFloat, {1, 2, 2, 4}},
                     {"k", kFloat, {1, 2, 3, 4}},
                     {"v", kFloat, {1, 2, 3, 2}},
                     {"mask", kFloat, {2, 2}}},
                    {{"y", kFloat, {1, 2, 2, 2}}, kNone, kNone, {"qk", kFloat, {1, 2, 2, 3}}},
                    [&](pb::NodeProto& n) {
                      set_float(n, "softcap", 2.0F);
                      set_int(n, "qk_matmul_output_mode", mode);
                    });
      const std::vector<Tensor> out = run_cpu(model, in);
      check_close(out.at(0), y);
      check_close(out.at(1), qk[static_cast<size_t>(mode)]);
    }
  }
}

BOOST_AUTO_TEST_CASE(three_d_grouped_query_heads_attend_causally_after_past_keys) {
  // 2 query heads share 1 key/value head; one past key shifts the causal frontier by one; the
  // bool mask [2,3] leaves the first query only key 0. scale 0.5.
  const Model model = attention(23,
                                {{"q", kFloat, {1, 2, 4}},
                                 {"k", kFloat, {1, 2, 2}},
                                 {"v", kFloat, {1, 2, 2}},
                                 {"mask", kBool, {2, 3}},
                                 {"past_k", kFloat, {1, 1, 1, 2}},
                                 {"past_v", kFloat, {1, 1, 1, 2}}},
                                {{"y", kFloat, {1, 2, 4}},
                                 {"present_k", kFloat, {1, 1, 3, 2}},
                                 {"present_v", kFloat, {1, 1, 3, 2}}},
                                [](pb::NodeProto& n) {
                                  set_int(n, "is_causal", 1);
                                  set_int(n, "q_num_heads", 2);
                                  set_int(n, "kv_num_heads", 1);
                                  set_float(n, "scale", 0.5F);
                                });
  const std::vector<Tensor> out =
      run_cpu(model, {pattern({1, 2, 4}, 3, 2), pattern({1, 2, 2}, 5, 1), pattern({1, 2, 2}, 4, 3),
                      bool_mask(Shape{2, 3}, {1, 0, 1, 0, 1, 1}), pattern({1, 1, 1, 2}, 2, 5),
                      pattern({1, 1, 1, 2}, 6, 7)});
  check_close(out.at(0), {0.25, -0.375, 0.25, -0.375, -0.4382323920726776, 0.0617675855755806,
                          -0.4375, 0.0625});
  check_close(out.at(1), {0.0, 0.25, -0.5, 0.125, -0.625, 0.0});
  check_close(out.at(2), {0.25, -0.375, -0.25, 0.25, -0.625, -0.125});
}

BOOST_AUTO_TEST_CASE(nonpad_kv_seqlen_pads_per_batch_and_empty_rows_are_zero) {
  // Version 24: batch 0 has 3 valid keys (causal offset 1), batch 1 has 1 (offset -1: its first
  // query may attend no key, so its probabilities and output row are zeros, not NaN).
  const Model model =
      attention(24,
                {{"q", kFloat, {2, 1, 2, 2}},
                 {"k", kFloat, {2, 1, 3, 2}},
                 {"v", kFloat, {2, 1, 3, 2}},
                 kNone,
                 kNone,
                 kNone,
                 {"nonpad", kInt64, {2}}},
                {{"y", kFloat, {2, 1, 2, 2}}, kNone, kNone, {"probs", kFloat, {2, 1, 2, 3}}},
                [](pb::NodeProto& n) {
                  set_int(n, "is_causal", 1);
                  set_int(n, "qk_matmul_output_mode", 3);
                });
  const std::vector<Tensor> out =
      run_cpu(model, {pattern({2, 1, 2, 2}, 3, 4), pattern({2, 1, 3, 2}, 5, 6),
                      pattern({2, 1, 3, 2}, 7, 1), tensor<int64_t>(Shape{2}, {3, 1})});
  check_close(out.at(0), {-0.29084524512290955, -0.1827460378408432, -0.1786881685256958,
                          -0.09202031046152115, 0.0, 0.0, 0.625, 0.125});
  check_close(out.at(1), {0.442253977060318, 0.5577460527420044, 0.0, 0.42666754126548767,
                          0.2898333668708801, 0.2834991216659546, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0});
}

BOOST_AUTO_TEST_CASE(a_window_after_past_keys_with_softmax_in_double) {
  // Version 25: each query sees the keys one position either side of it (one past key: query i
  // sits at position i + 1); the softmax runs in double.
  const Model model = attention(25,
                                {{"q", kFloat, {1, 1, 3, 2}},
                                 {"k", kFloat, {1, 1, 3, 2}},
                                 {"v", kFloat, {1, 1, 3, 2}},
                                 kNone,
                                 {"past_k", kFloat, {1, 1, 1, 2}},
                                 {"past_v", kFloat, {1, 1, 1, 2}}},
                                {{"y", kFloat, {1, 1, 3, 2}}}, [](pb::NodeProto& n) {
                                  set_int(n, "left_window_size", 1);
                                  set_int(n, "right_window_size", 1);
                                  set_int(n, "softmax_precision", kDouble);
                                });
  const std::vector<Tensor> out = run_cpu(
      model, {pattern({1, 1, 3, 2}, 4, 2), pattern({1, 1, 3, 2}, 3, 3), pattern({1, 1, 3, 2}, 5, 4),
              pattern({1, 1, 1, 2}, 7, 1), pattern({1, 1, 1, 2}, 2, 2)});
  check_close(out.at(0), {-0.25402769446372986, 0.22813664376735687, -0.25117364525794983,
                          0.37382638454437256, -0.2989097833633423, 0.3260902166366577});
}

BOOST_AUTO_TEST_CASE(attention_refusals_name_what_is_supported) {
  const std::vector<Io> qkv = {
      {"q", kFloat, {1, 2, 2, 4}}, {"k", kFloat, {1, 2, 3, 4}}, {"v", kFloat, {1, 2, 3, 2}}};
  const std::vector<Tensor> qkv_values = {Tensor(DType::F32, Shape{1, 2, 2, 4}),
                                          Tensor(DType::F32, Shape{1, 2, 3, 4}),
                                          Tensor(DType::F32, Shape{1, 2, 3, 2})};
  const std::vector<Io> y = {{"y", kFloat, {1, 2, 2, 2}}};
  auto with = [&](int opset, const NodeAttrs& attrs) { return attention(opset, qkv, y, attrs); };
  expect_import_error(with(23, [](pb::NodeProto& n) { set_int(n, "softmax_precision", 7); }),
                      qkv_values, ErrorCode::ImportInvalidModel,
                      "softmax_precision 7; expected FLOAT (1), FLOAT16 (10), DOUBLE (11) or "
                      "BFLOAT16 (16)");
  expect_import_error(with(23, [](pb::NodeProto& n) { set_float(n, "scale", -1.0F); }), qkv_values,
                      ErrorCode::ImportUnsupported, "supported: scale >= 0");
  expect_import_error(with(23, [](pb::NodeProto& n) { set_int(n, "qk_matmul_output_mode", 4); }),
                      qkv_values, ErrorCode::ImportInvalidModel,
                      "qk_matmul_output_mode 4; expected 0, 1, 2 or 3");
  expect_import_error(with(25, [](pb::NodeProto& n) { set_int(n, "q_num_heads", 2); }), qkv_values,
                      ErrorCode::ImportInvalidModel, "q_num_heads and kv_num_heads are for 3-D");
  expect_import_error(with(25, [](pb::NodeProto& n) { set_int(n, "left_window_size", -2); }),
                      qkv_values, ErrorCode::ImportInvalidModel, "must be -1 (unbounded)");

  // A float mask of another dtype than Q's.
  std::vector<Io> masked = qkv;
  masked.push_back({"mask", kDouble, {2, 3}});
  std::vector<Tensor> masked_values = qkv_values;
  masked_values.emplace_back(DType::F64, Shape{2, 3});
  expect_import_error(attention(23, masked, y, {}), masked_values, ErrorCode::ImportUnsupported,
                      "attn_mask of dtype f64 with Q of f32; supported: bool, or Q's dtype");

  // 3-D inputs without their head counts, or whose hidden size does not split into them.
  const Model three_d =
      attention(23, {{"q", kFloat, {1, 2, 8}}, {"k", kFloat, {1, 3, 8}}, {"v", kFloat, {1, 3, 8}}},
                {{"y", kFloat, {1, 2, 8}}}, {});
  const std::vector<Tensor> three_d_values = {Tensor(DType::F32, Shape{1, 2, 8}),
                                              Tensor(DType::F32, Shape{1, 3, 8}),
                                              Tensor(DType::F32, Shape{1, 3, 8})};
  expect_import_error(three_d, three_d_values, ErrorCode::ImportInvalidModel,
                      "need the attributes q_num_heads and kv_num_heads");
  const Model ungrouped =
      attention(23, {{"q", kFloat, {1, 2, 8}}, {"k", kFloat, {1, 3, 8}}, {"v", kFloat, {1, 3, 8}}},
                {{"y", kFloat, {1, 2, 8}}}, [](pb::NodeProto& n) {
                  set_int(n, "q_num_heads", 4);
                  set_int(n, "kv_num_heads", 3);
                });
  expect_import_error(ungrouped, three_d_values, ErrorCode::ImportInvalidModel,
                      "K of shape [1,3,8] does not split into 3 heads");

  // An external cache (nonpad_kv_seqlen) with past keys.
  const Model both_caches = attention(24,
                                      {qkv[0],
                                       qkv[1],
                                       qkv[2],
                                       kNone,
                                       {"past_k", kFloat, {1, 2, 1, 4}},
                                       {"past_v", kFloat, {1, 2, 1, 2}},
                                       {"nonpad", kInt64, {1}}},
                                      y, {});
  std::vector<Tensor> both_values = qkv_values;
  both_values.emplace_back(DType::F32, Shape{1, 2, 1, 4});
  both_values.emplace_back(DType::F32, Shape{1, 2, 1, 2});
  both_values.push_back(tensor<int64_t>(Shape{1}, {3}));
  expect_import_error(both_caches, both_values, ErrorCode::ImportInvalidModel,
                      "cannot be combined with past_key");
}

BOOST_AUTO_TEST_CASE(query_heads_must_be_a_multiple_of_key_value_heads) {
  const Model model = attention(
      23, {{"q", kFloat, {1, 3, 2, 4}}, {"k", kFloat, {1, 2, 3, 4}}, {"v", kFloat, {1, 2, 3, 2}}},
      {{"y", kFloat, {1, 3, 2, 2}}}, {});
  expect_import_error(model,
                      {Tensor(DType::F32, Shape{1, 3, 2, 4}), Tensor(DType::F32, Shape{1, 2, 3, 4}),
                       Tensor(DType::F32, Shape{1, 2, 3, 2})},
                      ErrorCode::ImportInvalidModel,
                      "3 query heads are not a multiple of 2 key/value heads");
}

BOOST_AUTO_TEST_CASE(rotary_embedding_4d_gathers_the_caches_at_the_positions) {
  // [batch 1, heads 2, seq 2, head 4], rotating the two halves; cos and sin at positions 3, 1.
  const Model model = one_node("RotaryEmbedding", 23,
                               {{"x", kFloat, {1, 2, 2, 4}},
                                {"cos", kFloat, {5, 2}},
                                {"sin", kFloat, {5, 2}},
                                {"pos", kInt64, {1, 2}}},
                               {"y", kFloat, {1, 2, 2, 4}});
  const std::vector<Tensor> out =
      run_cpu(model, {pattern({1, 2, 2, 4}, 3, 1), pattern({5, 2}, 2, 3), pattern({5, 2}, 5, 4),
                      tensor<int64_t>(Shape{1, 2}, {3, 1})});
  check_close(out.at(0), {0.1875, -0.09375, 0.21875, 0.0625, 0.0, 0.234375, 0.1875, -0.3125,
                          0.28125, 0.078125, 0.0625, -0.046875, 0.125, 0.265625, 0.1875, -0.09375});
}

BOOST_AUTO_TEST_CASE(rotary_embedding_3d_interleaved_rotates_the_first_features_only) {
  // [batch 1, seq 2, 2 heads of 6]: the first 4 features of each head as even/odd pairs, the
  // last 2 unchanged; the caches are given per batch and position.
  const Model model =
      one_node("RotaryEmbedding", 23,
               {{"x", kFloat, {1, 2, 12}}, {"cos", kFloat, {1, 2, 2}}, {"sin", kFloat, {1, 2, 2}}},
               {"y", kFloat, {1, 2, 12}}, [](pb::NodeProto& n) {
                 set_int(n, "interleaved", 1);
                 set_int(n, "rotary_embedding_dim", 4);
                 set_int(n, "num_heads", 2);
               });
  const std::vector<Tensor> out = run_cpu(
      model, {pattern({1, 2, 12}, 4, 1), pattern({1, 2, 2}, 3, 2), pattern({1, 2, 2}, 6, 5)});
  check_close(out.at(0),
              {0.1875,    -0.0,     -0.234375, -0.3125,   0.125,    0.625,     0.09375,  -0.09375,
               -0.078125, 0.390625, 0.375,     -0.5,      -0.0625,  0.1875,    0.296875, 0.109375,
               0.625,     -0.25,    0.171875,  -0.203125, 0.265625, -0.171875, -0.5,     0.0});
}

BOOST_AUTO_TEST_CASE(rotary_embedding_refusals_name_what_is_supported) {
  const std::vector<Tensor> values = {Tensor(DType::F32, Shape{1, 2, 12}),
                                      Tensor(DType::F32, Shape{1, 2, 3}),
                                      Tensor(DType::F32, Shape{1, 2, 3})};
  const std::vector<Io> inputs = {
      {"x", kFloat, {1, 2, 12}}, {"cos", kFloat, {1, 2, 3}}, {"sin", kFloat, {1, 2, 3}}};
  const Io y{"y", kFloat, {1, 2, 12}};
  expect_import_error(one_node("RotaryEmbedding", 23, inputs, y), values,
                      ErrorCode::ImportInvalidModel, "needs num_heads dividing its hidden size");
  expect_import_error(one_node("RotaryEmbedding", 23, inputs, y,
                               [](pb::NodeProto& n) {
                                 set_int(n, "num_heads", 2);
                                 set_int(n, "rotary_embedding_dim", 3);
                               }),
                      values, ErrorCode::ImportInvalidModel,
                      "rotary_embedding_dim 3 must be even and at most the head size 6");
  const Model ints =
      one_node("RotaryEmbedding", 23,
               {{"x", kInt32, {1, 2, 12}}, {"cos", kInt32, {1, 2, 3}}, {"sin", kInt32, {1, 2, 3}}},
               {"y", kInt32, {1, 2, 12}}, [](pb::NodeProto& n) { set_int(n, "num_heads", 2); });
  expect_import_error(ints,
                      {Tensor(DType::I32, Shape{1, 2, 12}), Tensor(DType::I32, Shape{1, 2, 3}),
                       Tensor(DType::I32, Shape{1, 2, 3})},
                      ErrorCode::ImportUnsupported,
                      "input of dtype i32; supported: {f32,f64,f16,bf16}");
}

// ---- FlexAttention ----

// One FlexAttention node of ai.onnx.preview in a model of default opset 26 that imports opset
// `preview` of the node's `domain` (of the preview domain when that is the default; 0: none).
Model flex_attention(const std::vector<Io>& inputs, const Io& output, const NodeAttrs& attrs,
                     int preview = 1, const std::string& domain = "ai.onnx.preview") {
  pb::ModelProto m = empty_model(26, "flex");
  if (preview > 0) {
    auto* o = m.add_opset_import();
    o->set_domain(domain.empty() ? "ai.onnx.preview" : domain);
    o->set_version(preview);
  }
  return with_one_node(m, "FlexAttention", domain, inputs, output, attrs, "flex.onnx");
}

// Graph attribute `name` of n: y = op(x, c), x of type `x` (and `elem` declared for it), c the
// f32 constant `values` of shape `dims`; `inputs` formal inputs (the first is x).
void set_modifier(pb::NodeProto& n, const std::string& name, const std::string& op, const Io& x,
                  const std::vector<int64_t>& dims, const std::vector<float>& values,
                  int inputs = 1) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(pb::AttributeProto::GRAPH);
  pb::GraphProto* g = a->mutable_g();
  g->set_name(name);
  for (int i = 0; i < inputs; ++i)
    add_io(g->add_input(), {x.name + std::to_string(i), x.elem_type, x.dims});
  add_io(g->add_output(), {"out", x.elem_type, x.dims});
  pb::TensorProto* c = g->add_initializer();
  c->set_name("c");
  c->set_data_type(kFloat);
  for (int64_t d : dims) c->add_dims(d);
  for (float v : values) c->add_float_data(v);
  pb::NodeProto* node = g->add_node();
  node->set_op_type(op);
  node->add_input(x.name + "0");
  node->add_input("c");
  node->add_output("out");
}

BOOST_AUTO_TEST_CASE(flex_attention_shares_kv_heads_and_applies_both_modifiers) {
  // 4 query heads share 2 KV heads; score_mod adds a causal bias (-inf above the diagonal),
  // prob_mod doubles the probabilities; scale 0.5.
  const Io scores{"s", kFloat, {1, 4, 2, 3}};
  const float inf = std::numeric_limits<float>::infinity();
  const Model model = flex_attention(
      {{"q", kFloat, {1, 4, 2, 4}}, {"k", kFloat, {1, 2, 3, 4}}, {"v", kFloat, {1, 2, 3, 2}}},
      {"y", kFloat, {1, 4, 2, 2}}, [&](pb::NodeProto& n) {
        set_float(n, "scale", 0.5F);
        set_modifier(n, "score_mod", "Add", scores, {2, 3}, {0, -inf, -inf, 0, 0, -inf});
        set_modifier(n, "prob_mod", "Mul", {"p", kFloat, {1, 4, 2, 3}}, {}, {2.0F});
      });
  const std::vector<Tensor> out = run_cpu(
      model,
      {pattern({1, 4, 2, 4}, 3, 1), pattern({1, 2, 3, 4}, 5, 2), pattern({1, 2, 3, 2}, 7, 3)});
  check_close(out.at(0),
              {-0.5, 1.25, -0.06259746849536896, 0.08359326422214508, -0.5, 1.25,
               -0.054086536169052124, 0.060897454619407654, -1.0, 0.75, -0.5769261121749878,
               -0.37819695472717285, -1.0, 0.75, -0.6802588105201721, -0.10264318436384201});
}

BOOST_AUTO_TEST_CASE(flex_attention_in_double_and_with_softmax_in_double) {
  const Model f64 = flex_attention(
      {{"q", kDouble, {2, 1, 2, 3}}, {"k", kDouble, {2, 1, 2, 3}}, {"v", kDouble, {2, 1, 2, 3}}},
      {"y", kDouble, {2, 1, 2, 3}}, {});
  check_close(run_cpu(f64, {pattern({2, 1, 2, 3}, 3, 1, 8.0, DType::F64),
                            pattern({2, 1, 2, 3}, 5, 2, 8.0, DType::F64),
                            pattern({2, 1, 2, 3}, 7, 3, 8.0, DType::F64)})
                  .at(0),
              {-0.3122180926193708, 0.5627819073806292, 0.06278190738062919, -0.3239282944072842,
               0.5510717055927158, 0.051071705592715795, -0.5549258575331758, 0.32007414246682414,
               -0.1799258575331758, -0.5728348712829013, 0.30216512871709866, -0.1978348712829014});
  const Model wide = flex_attention(
      {{"q", kFloat, {1, 1, 2, 2}}, {"k", kFloat, {1, 1, 3, 2}}, {"v", kFloat, {1, 1, 3, 2}}},
      {"y", kFloat, {1, 1, 2, 2}}, [](pb::NodeProto& n) { set_int(n, "softmax_precision", 11); });
  check_close(run_cpu(wide, {pattern({1, 1, 2, 2}, 3, 1), pattern({1, 1, 3, 2}, 5, 2),
                             pattern({1, 1, 3, 2}, 7, 3)})
                  .at(0),
              {0.1388036608695984, 0.07206322252750397, 0.1056843027472496, 0.0998859852552414});
}

BOOST_AUTO_TEST_CASE(flex_attention_refusals_name_what_is_wrong) {
  const std::vector<Io> inputs = {
      {"q", kFloat, {1, 2, 2, 4}}, {"k", kFloat, {1, 1, 3, 4}}, {"v", kFloat, {1, 1, 3, 2}}};
  const std::vector<Tensor> values = {Tensor(DType::F32, Shape{1, 2, 2, 4}),
                                      Tensor(DType::F32, Shape{1, 1, 3, 4}),
                                      Tensor(DType::F32, Shape{1, 1, 3, 2})};
  const Io y{"y", kFloat, {1, 2, 2, 2}};
  const Io scores{"s", kFloat, {1, 2, 2, 3}};
  expect_import_error(flex_attention(inputs, y, {}, 2), values, ErrorCode::ImportUnsupported,
                      "imports opset 2 of ai.onnx.preview; Volta reads its opset 1");
  // A node of a domain the model does not import, and FlexAttention in the default domain,
  // which has none: the checker refuses both models.
  for (const auto& [preview, domain, fragment] :
       {std::tuple{0, "ai.onnx.preview", "No opset import for domain 'ai.onnx.preview'"},
        std::tuple{1, "", "No Op registered for FlexAttention with domain_version of 26"}}) {
    try {
      flex_attention(inputs, y, {}, preview, domain);
      BOOST_FAIL("expected I-INVALID-MODEL");
    } catch (const VoltaError& e) {
      BOOST_TEST((e.code() == ErrorCode::ImportInvalidModel));
      BOOST_TEST(e.message().find(fragment) != std::string::npos, e.message());
    }
  }
  expect_import_error(flex_attention(inputs, y, {}, 1, "com.example"), values,
                      ErrorCode::ImportUnsupported,
                      "domain 'com.example' is not supported; supported: the default domain");
  expect_import_error(
      flex_attention(
          inputs, y,
          [&](pb::NodeProto& n) { set_modifier(n, "score_mod", "Add", scores, {}, {1.0F}, 2); }),
      values, ErrorCode::ImportInvalidModel, "takes 2 input(s); the node gives it 1");
  expect_import_error(
      flex_attention(
          inputs, y,
          [&](pb::NodeProto& n) {
            set_modifier(n, "score_mod", "Add", {"s", kDouble, {1, 2, 2, 3}}, {}, {1.0F});
          }),
      values, ErrorCode::ImportInvalidModel,
      "input 's0' of its graph attribute is DOUBLE; the node gives it f32");
  expect_import_error(
      flex_attention(inputs, y,
                     [&](pb::NodeProto& n) {
                       // Broadcasting adds a dim.
                       set_modifier(n, "score_mod", "Add", scores, {2, 1, 1, 1, 1}, {1.0F, 2.0F});
                     }),
      values, ErrorCode::ImportInvalidModel,
      "score_mod must give one output of its input's type f32[1,2,2,3]; it "
      "gives 1, the first f32[2,1,2,2,3]");
  expect_import_error(flex_attention({{"q", kFloat, {2, 2, 4}}, inputs[1], inputs[2]}, y, {}),
                      {Tensor(DType::F32, Shape{2, 2, 4}), values[1], values[2]},
                      ErrorCode::ImportInvalidModel, "Q, K and V must be rank 4");
  expect_import_error(
      flex_attention(inputs, y, [](pb::NodeProto& n) { set_int(n, "softmax_precision", 7); }),
      values, ErrorCode::ImportInvalidModel,
      "softmax_precision 7; expected FLOAT (1), FLOAT16 (10), DOUBLE (11) or BFLOAT16 (16)");
}

}  // namespace
}  // namespace volta::onnx::test
