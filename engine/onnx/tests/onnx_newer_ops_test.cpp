// ONNX ops of opsets 18 to 24 lowered as composites of internal ops: RMSNormalization (23),
// LpNormalization (1, 22), GroupNormalization (18 per group, 21 per channel), Mish (18), Swish (24)
// and CenterCropPad (18); Col2Im (18); and the scatters' max and min reductions (18). Expected
// values come from ONNX 1.23.2's reference implementation (or numpy for the ops it has none of),
// computed once and pasted here; the stash_type tests check that the first stage runs in the
// precision asked for.
#define BOOST_TEST_MODULE onnx_newer_ops

#include <cmath>
#include <cstdint>

#include "onnx_test_models.h"

namespace volta::onnx::test {
namespace {

// ---- RMSNormalization ------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(rms_normalization_divides_by_the_root_mean_square_of_the_trailing_axes) {
  const Model last = one_node("RMSNormalization", 23, {{"x", kFloat, {2, 3}}, {"w", kFloat, {3}}},
                              {"y", kFloat, {2, 3}});
  const Tensor x = tensor<float>(Shape{2, 3}, {1, -2, 3, 0.5F, 0.25F, -4});
  check_values(run_cpu(last, {x, tensor<float>(Shape{3}, {1, 2, -0.5F})}).at(0),
               {0.4629095494747162, -1.8516381978988647, -0.6943643093109131, 0.2144223004579544,
                0.2144223004579544, 0.8576892018318176},
               1e-6);
  // axis 0 of [2, 2]: one mean over all four; epsilon 0.1; scale [2, 1] broadcast.
  const Model all = one_node("RMSNormalization", 23, {{"x", kFloat, {2, 2}}, {"w", kFloat, {2, 1}}},
                             {"y", kFloat, {2, 2}}, [](pb::NodeProto& n) {
                               set_int(n, "axis", 0);
                               set_float(n, "epsilon", 0.1F);
                             });
  check_values(
      run_cpu(all, {tensor<float>(Shape{2, 2}, {1, 2, 3, 4}), tensor<float>(Shape{2, 1}, {1, 2})})
          .at(0),
      {0.36273813247680664, 0.7254762649536133, 2.17642879486084, 2.901905059814453}, 1e-6);
}

BOOST_AUTO_TEST_CASE(rms_normalization_computes_in_the_stash_type_precision) {
  // Values exact in f32 and f64, so that both models read the same numbers (their mean square,
  // 1.3125, is exact too); scale 1 is exact. Normalized in f32, each is an ulp off the f64
  // value rounded to f32, which tells the precisions apart.
  const std::vector<double> values = {1.0, 1.0, 1.0, 1.5};
  const auto run = [&values](int elem_type, int64_t stash_type) {
    const Model model =
        one_node("RMSNormalization", 23, {{"x", elem_type, {4}}, {"w", elem_type, {4}}},
                 {"y", elem_type, {4}},
                 [stash_type](pb::NodeProto& n) { set_int(n, "stash_type", stash_type); });
    const bool f32 = elem_type == kFloat;
    Tensor x(f32 ? DType::F32 : DType::F64, Shape{4});
    Tensor ones(x.dtype(), Shape{4});
    for (int64_t i = 0; i < 4; ++i) {
      x.set_double(i, values[static_cast<size_t>(i)]);
      ones.set_double(i, 1.0);
    }
    return run_cpu(model, {x, ones}).at(0);
  };
  const Tensor f32 = run(kFloat, 1);
  const Tensor f64_in_f32 = run(kDouble, 1);   // normalized in f32, as the f32 model does it
  const Tensor f64_in_f64 = run(kDouble, 11);  // in f64
  const Tensor f32_in_f64 = run(kFloat, 11);   // in f64, rounded to f32 once
  double mean_square = 0;
  for (double v : values) mean_square += v * v / 4;
  const double rms = std::sqrt(mean_square + static_cast<double>(1e-5F));
  int f32_differs = 0;
  for (int64_t i = 0; i < 4; ++i) {
    BOOST_TEST(f64_in_f32.get_double(i) == f32.get_double(i));
    BOOST_TEST(std::abs(f64_in_f64.get_double(i) - values[static_cast<size_t>(i)] / rms) <= 1e-15);
    BOOST_TEST(f32_in_f64.get_double(i) ==
               static_cast<double>(static_cast<float>(f64_in_f64.get_double(i))));
    f32_differs += f32_in_f64.get_double(i) != f32.get_double(i) ? 1 : 0;
  }
  BOOST_TEST(f32_differs == 4);
}

BOOST_AUTO_TEST_CASE(rms_normalization_refuses_what_it_does_not_support) {
  const Tensor x = tensor<float>(Shape{3}, {1, 2, 3});
  const Tensor w = tensor<float>(Shape{3}, {1, 1, 1});
  const Model bf16 =
      one_node("RMSNormalization", 23, {{"x", kFloat, {3}}, {"w", kFloat, {3}}}, {"y", kFloat, {3}},
               [](pb::NodeProto& n) { set_int(n, "stash_type", 16); });
  expect_import_error(bf16, {x, w}, ErrorCode::ImportUnsupported,
                      "stash_type 16 (BFLOAT16); supported: 1 (FLOAT), 11 (DOUBLE)");
  const Model ints = one_node("RMSNormalization", 23, {{"x", kInt64, {3}}, {"w", kInt64, {3}}},
                              {"y", kInt64, {3}});
  expect_import_error(ints,
                      {tensor<int64_t>(Shape{3}, {1, 2, 3}), tensor<int64_t>(Shape{3}, {1, 1, 1})},
                      ErrorCode::ImportUnsupported, "X is INT64; supported: FLOAT, DOUBLE");
  const Model mixed = one_node("RMSNormalization", 23, {{"x", kFloat, {3}}, {"w", kDouble, {3}}},
                               {"y", kDouble, {3}});
  expect_import_error(mixed, {x, tensor<double>(Shape{3}, {1, 1, 1})}, ErrorCode::ImportUnsupported,
                      "scale is DOUBLE and X FLOAT; supported: scale of X's type");
  const Model axis = one_node("RMSNormalization", 23, {{"x", kFloat, {3}}, {"w", kFloat, {3}}},
                              {"y", kFloat, {3}}, [](pb::NodeProto& n) { set_int(n, "axis", 1); });
  expect_import_error(axis, {x, w}, ErrorCode::ImportInvalidModel,
                      "axis 1 is out of range for rank 1 (valid: [-1, 0])");
  const Model wide = one_node("RMSNormalization", 23, {{"x", kFloat, {3}}, {"w", kFloat, {2, 3}}},
                              {"y", kFloat, {3}});
  expect_import_error(wide, {x, tensor<float>(Shape{2, 3}, {1, 1, 1, 1, 1, 1})},
                      ErrorCode::ImportInvalidModel,
                      "scale of shape [2,3] does not broadcast to X's shape [3]");
}

// ---- LpNormalization ------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(lp_normalization_divides_by_the_norm_and_gives_zero_for_a_zero_norm) {
  for (const int opset : {17, 22}) {
    BOOST_TEST_CONTEXT("opset " << opset) {
      const Model l2 =
          one_node("LpNormalization", opset, {{"x", kFloat, {2, 3}}}, {"y", kFloat, {2, 3}});
      const Tensor y = run_cpu(l2, {tensor<float>(Shape{2, 3}, {3, -4, 0, 0, 0, 0})}).at(0);
      check_values(y, {0.6, -0.8, 0, 0, 0, 0}, 1e-7);
      for (int64_t i = 3; i < 6; ++i) BOOST_TEST(!std::signbit(y.get_double(i)));
    }
  }
  // p 1 sums magnitudes (ONNX's reference sums the signed values, against its own definition).
  const Model l1 = one_node("LpNormalization", 22, {{"x", kDouble, {2, 2}}}, {"y", kDouble, {2, 2}},
                            [](pb::NodeProto& n) {
                              set_int(n, "p", 1);
                              set_int(n, "axis", 0);
                            });
  check_values(run_cpu(l1, {tensor<double>(Shape{2, 2}, {1, -2, 3, 2})}).at(0),
               {0.25, -0.5, 0.75, 0.5});
}

BOOST_AUTO_TEST_CASE(lp_normalization_refuses_other_orders_and_dtypes) {
  const Model p3 = one_node("LpNormalization", 22, {{"x", kFloat, {2}}}, {"y", kFloat, {2}},
                            [](pb::NodeProto& n) { set_int(n, "p", 3); });
  expect_import_error(p3, {tensor<float>(Shape{2}, {1, 2})}, ErrorCode::ImportUnsupported,
                      "p 3; supported: 1, 2");
  const Model ints = one_node("LpNormalization", 22, {{"x", kInt32, {2}}}, {"y", kInt32, {2}});
  expect_import_error(ints, {tensor<int32_t>(Shape{2}, {1, 2})}, ErrorCode::ImportUnsupported,
                      "input is INT32; supported: FLOAT, DOUBLE");
}

// ---- GroupNormalization ---------------------------------------------------------------------

// X [1, 4, 4]: two groups of two channels.
Tensor group_input() {
  return tensor<float>(Shape{1, 4, 4}, {1, 2, 3, 5, 0, 0, 1, -1, 2, 4, 6, 8, 10, 10, 10, 10});
}

Model group_norm(int opset, int64_t affine_size, const NodeAttrs& more = {}) {
  return one_node(
      "GroupNormalization", opset,
      {{"x", kFloat, {1, 4, 4}}, {"scale", kFloat, {affine_size}}, {"bias", kFloat, {affine_size}}},
      {"y", kFloat, {1, 4, 4}}, [more](pb::NodeProto& n) {
        set_int(n, "num_groups", 2);
        if (more) more(n);
      });
}

BOOST_AUTO_TEST_CASE(group_normalization_18_scales_and_shifts_per_group) {
  const std::vector<Tensor> in = {group_input(), tensor<float>(Shape{2}, {2, -1}),
                                  tensor<float>(Shape{2}, {0.5F, 1})};
  const std::vector<double> want = {
      0.08297181656660191, 1.195046972388997,   2.3071221282113914,  4.531272439856181,
      -1.029103339255793,  -1.029103339255793,  0.08297181656660191, -2.141178495078188,
      2.8593382979240127,  2.183215280497099,   1.5070922630701853,  0.8309692456432716,
      0.15484622821635785, 0.15484622821635785, 0.15484622821635785, 0.15484622821635785};
  for (const int opset : {18, 20}) {  // opset 20 still has version 18
    BOOST_TEST_CONTEXT("opset " << opset) {
      check_values(run_cpu(group_norm(opset, 2), in).at(0), want, 2e-6);
    }
  }
}

BOOST_AUTO_TEST_CASE(group_normalization_21_scales_and_shifts_per_channel) {
  const std::vector<Tensor> in = {group_input(), tensor<float>(Shape{4}, {1, 2, 3, -1}),
                                  tensor<float>(Shape{4}, {0, 1, 0, -1})};
  const std::vector<double> want = {
      -0.20851409171669905, 0.3475234861944984,  0.9035610641056958,  2.0156362199280906,
      -0.5291033392557929,  -0.5291033392557929, 0.5829718165666019,  -1.6411784950781878,
      -5.578014893772038,   -3.549645841491297,  -1.5212767892105559, 0.5070922630701853,
      -1.8451537717836421,  -1.8451537717836421, -1.8451537717836421, -1.8451537717836421};
  for (const int opset : {21, 28}) {
    BOOST_TEST_CONTEXT("opset " << opset) {
      check_values(run_cpu(group_norm(opset, 4), in).at(0), want, 2e-6);
    }
  }
  // stash_type 11 normalizes in f64 and rounds to f32 once: as close as f32 can be.
  const Tensor y =
      run_cpu(group_norm(21, 4, [](pb::NodeProto& n) { set_int(n, "stash_type", 11); }), in).at(0);
  check_values(y, want, 1e-6);
  // epsilon is added to the group's variance: the first group's mean is 1.375, its variance
  // 3.234375.
  const Tensor big =
      run_cpu(group_norm(21, 4, [](pb::NodeProto& n) { set_float(n, "epsilon", 100.0F); }), in)
          .at(0);
  BOOST_TEST(std::abs(big.get_double(3) - (5 - 1.375) / std::sqrt(3.234375 + 100)) <= 1e-6);
}

BOOST_AUTO_TEST_CASE(group_normalization_refuses_what_it_does_not_support) {
  const std::vector<Tensor> per_channel = {group_input(), tensor<float>(Shape{4}, {1, 1, 1, 1}),
                                           tensor<float>(Shape{4}, {0, 0, 0, 0})};
  const std::vector<Tensor> per_group = {group_input(), tensor<float>(Shape{2}, {1, 1}),
                                         tensor<float>(Shape{2}, {0, 0})};
  expect_import_error(group_norm(21, 2), per_group, ErrorCode::ImportInvalidModel,
                      "scale must have shape [4] (one per channel); got [2]");
  expect_import_error(group_norm(18, 4), per_channel, ErrorCode::ImportInvalidModel,
                      "scale must have shape [2] (one per group); got [4]");
  expect_import_error(group_norm(21, 4, [](pb::NodeProto& n) { set_int(n, "stash_type", 10); }),
                      per_channel, ErrorCode::ImportUnsupported,
                      "stash_type 10 (FLOAT16); supported: 1 (FLOAT), 11 (DOUBLE)");
  const Model three =
      one_node("GroupNormalization", 21,
               {{"x", kFloat, {1, 4, 4}}, {"scale", kFloat, {4}}, {"bias", kFloat, {4}}},
               {"y", kFloat, {1, 4, 4}}, [](pb::NodeProto& n) { set_int(n, "num_groups", 3); });
  expect_import_error(three, per_channel, ErrorCode::ImportInvalidModel,
                      "num_groups 3 must divide the 4 channels");
  const Model ints =
      one_node("GroupNormalization", 21,
               {{"x", kInt64, {1, 2}}, {"scale", kInt64, {2}}, {"bias", kInt64, {2}}},
               {"y", kInt64, {1, 2}}, [](pb::NodeProto& n) { set_int(n, "num_groups", 1); });
  expect_import_error(ints,
                      {tensor<int64_t>(Shape{1, 2}, {1, 2}), tensor<int64_t>(Shape{2}, {1, 1}),
                       tensor<int64_t>(Shape{2}, {0, 0})},
                      ErrorCode::ImportUnsupported, "X is INT64; supported: FLOAT, DOUBLE");
}

// ---- Mish and Swish ------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(mish_is_x_times_tanh_of_softplus) {
  const std::vector<double> want = {-0.2525014826957089, 0.0, 0.8650983882673103, 30.0};
  for (const int opset : {18, 22}) {
    BOOST_TEST_CONTEXT("opset " << opset) {
      const Model f32 = one_node("Mish", opset, {{"x", kFloat, {4}}}, {"y", kFloat, {4}});
      check_values(run_cpu(f32, {tensor<float>(Shape{4}, {-2, 0, 1, 30})}).at(0), want, 1e-6);
    }
  }
  const Model f64 = one_node("Mish", 22, {{"x", kDouble, {4}}}, {"y", kDouble, {4}});
  check_values(run_cpu(f64, {tensor<double>(Shape{4}, {-2, 0, 1, 30})}).at(0), want, 1e-14);
  const Model ints = one_node("Mish", 22, {{"x", kInt64, {1}}}, {"y", kInt64, {1}});
  expect_import_error(ints, {tensor<int64_t>(Shape{1}, {1})}, ErrorCode::ImportUnsupported,
                      "input 0 is INT64; supported: FLOAT, DOUBLE");
}

BOOST_AUTO_TEST_CASE(swish_is_x_times_sigmoid_of_alpha_x) {
  const Tensor x = tensor<double>(Shape{4}, {-2, 0, 1, 30});
  const Model plain = one_node("Swish", 24, {{"x", kDouble, {4}}}, {"y", kDouble, {4}});
  check_values(run_cpu(plain, {x}).at(0),
               {-0.2384058440442351, 0.0, 0.7310585786300049, 29.999999999997197}, 1e-14);
  const Model half = one_node("Swish", 24, {{"x", kFloat, {4}}}, {"y", kFloat, {4}},
                              [](pb::NodeProto& n) { set_float(n, "alpha", 0.5F); });
  check_values(run_cpu(half, {tensor<float>(Shape{4}, {-2, 0, 1, 30})}).at(0),
               {-0.5378828427399902, 0.0, 0.6224593312018546, 29.99999082293319},
               4e-6);  // 2 ulps at 30
  const Model ints = one_node("Swish", 24, {{"x", kInt32, {1}}}, {"y", kInt32, {1}});
  expect_import_error(ints, {tensor<int32_t>(Shape{1}, {1})}, ErrorCode::ImportUnsupported,
                      "input 0 is INT32; supported: FLOAT, DOUBLE");
}

// ---- CenterCropPad --------------------------------------------------------------------------

Model center_crop_pad(int elem_type, const std::vector<int64_t>& in,
                      const std::vector<int64_t>& out, const std::vector<int64_t>& axes = {}) {
  const auto n_sizes = static_cast<int64_t>(axes.empty() ? in.size() : axes.size());
  return one_node("CenterCropPad", 18, {{"x", elem_type, in}, {"shape", kInt64, {n_sizes}}},
                  {"y", elem_type, out}, [axes](pb::NodeProto& n) {
                    if (!axes.empty()) set_ints(n, "axes", axes);
                  });
}

BOOST_AUTO_TEST_CASE(center_crop_pad_leaves_an_odd_element_at_the_end) {
  // [3, 4] to [2, 7]: one row cropped from the end, three columns padded: one before, two after.
  const Model both = center_crop_pad(kInt64, {3, 4}, {2, 7});
  check_values(run_cpu(both, {tensor<int64_t>(Shape{3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}),
                              tensor<int64_t>(Shape{2}, {2, 7})})
                   .at(0),
               {0, 0, 1, 2, 3, 0, 0, 0, 4, 5, 6, 7, 0, 0});
  // Columns 5 to 2 (axes [-1]): the window starts at 1, rounded down from 1.5.
  const Model crop = center_crop_pad(kFloat, {2, 5}, {2, 2}, {-1});
  check_values(run_cpu(crop, {tensor<float>(Shape{2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}),
                              tensor<int64_t>(Shape{1}, {2})})
                   .at(0),
               {1, 2, 6, 7});
  // Rows 2 to 4, one zero row on each side; the columns as they are.
  const Model pad = center_crop_pad(kDouble, {2, 5}, {4, 5});
  check_values(run_cpu(pad, {tensor<double>(Shape{2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}),
                             tensor<int64_t>(Shape{2}, {4, 5})})
                   .at(0),
               {0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0, 0});
  // Bool data, and a size equal to the input's: nothing to do.
  Tensor flags(DType::Bool, Shape{2});
  flags.set_int(0, 1);
  const Model same = center_crop_pad(kBool, {2}, {2});
  check_values(run_cpu(same, {flags, tensor<int64_t>(Shape{1}, {2})}).at(0), {1, 0});
}

BOOST_AUTO_TEST_CASE(center_crop_pad_refuses_malformed_sizes_and_axes) {
  const Tensor x = tensor<float>(Shape{2, 2}, {1, 2, 3, 4});
  const Model two_for_one =
      one_node("CenterCropPad", 18, {{"x", kFloat, {2, 2}}, {"shape", kInt64, {2}}},
               {"y", kFloat, {2, 2}}, [](pb::NodeProto& n) { set_ints(n, "axes", {0}); });
  expect_import_error(two_for_one, {x, tensor<int64_t>(Shape{2}, {2, 2})},
                      ErrorCode::ImportInvalidModel,
                      "shape holds 2 sizes for 1 axes; it must hold one per axis");
  expect_import_error(center_crop_pad(kFloat, {2, 2}, {2, 2}, {1, -1}),
                      {x, tensor<int64_t>(Shape{2}, {2, 2})}, ErrorCode::ImportInvalidModel,
                      "axes name axis 1 twice");
  expect_import_error(center_crop_pad(kFloat, {2, 2}, {2, 2}, {2}),
                      {x, tensor<int64_t>(Shape{1}, {2})}, ErrorCode::ImportInvalidModel,
                      "axis 2 is out of range for rank 2");
  expect_import_error(center_crop_pad(kFloat, {2, 2}, {2, 2}),
                      {x, tensor<int64_t>(Shape{2}, {2, -1})}, ErrorCode::ImportInvalidModel,
                      "shape holds a negative size -1");
}

// ---- Col2Im (18) --------------------------------------------------------------------------------

Model col2im(const std::vector<int64_t>& input, const std::vector<int64_t>& output,
             const NodeAttrs& attrs = {}) {
  return one_node(
      "Col2Im", 18,
      {{"input", kFloat, input}, {"image_shape", kInt64, {2}}, {"block_shape", kInt64, {2}}},
      {"y", kFloat, output}, attrs);
}

BOOST_AUTO_TEST_CASE(col2im_sums_overlapping_blocks_and_cuts_the_padding) {
  // 2x2 blocks over a 3x3 image at stride 1: each pixel sums the blocks that cover it.
  const Tensor y = run_cpu(col2im({1, 4, 4}, {1, 1, 3, 3}),
                           {Tensor::from<float>(Shape{1, 4, 4}, std::vector<float>(16, 1.0F)),
                            tensor<int64_t>(Shape{2}, {3, 3}), tensor<int64_t>(Shape{2}, {2, 2})})
                       .at(0);
  BOOST_TEST(y.shape().str() == "[1,1,3,3]");
  check_values(y, {1, 2, 1, 2, 4, 2, 1, 2, 1});
  // 1x2 blocks at stride 2 over [1, 5] padded by one in front: the padded row is
  // a0 b0 a1 b1 a2 b2, the pad cut.
  const Model padded = col2im({1, 2, 3}, {1, 1, 1, 5}, [](pb::NodeProto& n) {
    set_ints(n, "strides", {1, 2});
    set_ints(n, "pads", {0, 1, 0, 0});
  });
  check_values(
      run_cpu(padded, {tensor<float>(Shape{1, 2, 3}, {1, 2, 3, 10, 20, 30}),
                       tensor<int64_t>(Shape{2}, {1, 5}), tensor<int64_t>(Shape{2}, {1, 2})})
          .at(0),
      {10, 2, 20, 3, 30});
  expect_import_error(col2im({1, 4, 5}, {1, 1, 3, 3}),
                      {Tensor(DType::F32, Shape{1, 4, 5}), tensor<int64_t>(Shape{2}, {3, 3}),
                       tensor<int64_t>(Shape{2}, {2, 2})},
                      ErrorCode::ImportInvalidModel,
                      "input [1,4,5] must be [N, C * 4, 4] for block [2,2] over image [3,3]");
  expect_import_error(col2im({1, 4, 4}, {1, 1, 1, 3}),
                      {Tensor(DType::F32, Shape{1, 4, 4}), tensor<int64_t>(Shape{2}, {1, 3}),
                       tensor<int64_t>(Shape{2}, {2, 2})},
                      ErrorCode::ImportInvalidModel, "spatial axis 0: input 1, kernel 2");
}

// ---- ScatterElements and ScatterND reduction max / min (18) -------------------------------------

Model scatter(const std::string& op, int opset, const std::string& reduction,
              const std::vector<int64_t>& index_dims) {
  return one_node(op, opset,
                  {{"data", kFloat, {2, 3}},
                   {"indices", kInt64, index_dims},
                   {"updates", kFloat, {index_dims[0], op == "ScatterND" ? 3 : index_dims[1]}}},
                  {"y", kFloat, {2, 3}},
                  [&](pb::NodeProto& n) { set_string(n, "reduction", reduction); });
}

BOOST_AUTO_TEST_CASE(scatter_max_and_min_combine_from_version_18) {
  const Tensor data = tensor<float>(Shape{2, 3}, {1, 5, -2, 0, 4, 8});
  // ScatterElements along axis 0: row 1 then row 0 of each column.
  const Tensor idx = tensor<int64_t>(Shape{2, 3}, {1, 0, 1, 0, 1, 1});
  const Tensor upd = tensor<float>(Shape{2, 3}, {3, 2, 9, -1, 7, 6});
  check_values(run_cpu(scatter("ScatterElements", 18, "max", {2, 3}), {data, idx, upd}).at(0),
               {1, 5, -2, 3, 7, 9});
  check_values(run_cpu(scatter("ScatterElements", 18, "min", {2, 3}), {data, idx, upd}).at(0),
               {-1, 2, -2, 0, 4, 6});
  const Tensor rows = tensor<int64_t>(Shape{2, 1}, {1, 1});
  check_values(run_cpu(scatter("ScatterND", 18, "max", {2, 1}), {data, rows, upd}).at(0),
               {1, 5, -2, 3, 7, 9});
  expect_import_error(scatter("ScatterElements", 16, "max", {2, 3}), {data, idx, upd},
                      ErrorCode::ImportInvalidModel,
                      "reduction \"max\"; version 16 takes \"none\", \"add\", \"mul\"");
}

}  // namespace
}  // namespace volta::onnx::test
