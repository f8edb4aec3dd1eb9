// ONNX's signal ops (lower_linalg_signal.cpp): DFT (17, 20) and STFT (17) as MatMuls with DFT
// matrices, MelWeightMatrix (17) as a constant. Expected values come from ONNX 1.23.2's
// reference implementation (onnx/reference/ops/op_dft.py, op_stft.py, op_mel_weight_matrix.py:
// numpy's fft), computed once and pasted here, or from closed forms.
#define BOOST_TEST_MODULE onnx_signal

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <vector>

#include "onnx_test_models.h"

namespace volta::onnx::test {
namespace {

Tensor scalar_i64(int64_t v) { return tensor<int64_t>(Shape{}, {v}); }

// ---- DFT ------------------------------------------------------------------------------------

// [1, 3, 2, 2]: three complex values along axis 1 at each of two positions of axis 2.
Tensor complex_grid() {
  return tensor<float>(Shape{1, 3, 2, 2},
                       {-2, -1.5F, -1, -0.5F, 0, 0.5F, 1, 1.5F, 2, 2.5F, 3, 3.5F});
}
const std::vector<double> kComplexGridDftAxis1 = {0.0,
                                                  1.5,
                                                  3.0,
                                                  4.5,
                                                  -4.732050895690918,
                                                  -1.2679492235183716,
                                                  -4.732050895690918,
                                                  -1.2679492235183716,
                                                  -1.2679492235183716,
                                                  -4.732050895690918,
                                                  -1.2679492235183716,
                                                  -4.732050895690918};

BOOST_AUTO_TEST_CASE(dft_17_transforms_a_complex_input_along_its_axis_attribute) {
  for (const int64_t axis : {1, -3}) {  // the same dim of a rank-4 input
    const Model model =
        one_node("DFT", 17, {{"x", kFloat, {1, 3, 2, 2}}}, {"y", kFloat, {1, 3, 2, 2}},
                 [axis](pb::NodeProto& n) { set_int(n, "axis", axis); });
    check_values(run_cpu(model, {complex_grid()}).at(0), kComplexGridDftAxis1, 1e-5);
  }
}

BOOST_AUTO_TEST_CASE(dft_20_takes_its_axis_as_an_input) {
  const Model model =
      one_node("DFT", 20, {{"x", kFloat, {1, 3, 2, 2}}, {"", 0, {}}, {"axis", kInt64, {}}},
               {"y", kFloat, {1, 3, 2, 2}});
  for (const int64_t axis : {1, -3}) {
    check_values(run_cpu(model, {complex_grid(), scalar_i64(axis)}).at(0), kComplexGridDftAxis1,
                 1e-5);
  }
  // Without the input the axis is -2, the last signal axis: here axis 2, of two values.
  const Model last =
      one_node("DFT", 20, {{"x", kFloat, {1, 3, 2, 2}}}, {"y", kFloat, {1, 3, 2, 2}});
  // y[k] = x[0] + (-1)^k x[1] at each of the three positions of axis 1.
  check_values(run_cpu(last, {complex_grid()}).at(0), {-3, -2, -1, -1, 1, 2, -1, -1, 5, 6, -1, -1},
               1e-6);
}

BOOST_AUTO_TEST_CASE(dft_onesided_is_an_rfft_of_dft_length_truncating_or_zero_padding) {
  const Tensor x = tensor<float>(Shape{2, 5, 1}, {1, -2, 3, 0.5F, 4, -1, 2, 0, 3, -3});
  const auto rfft = [&x](int64_t length, int64_t bins) {
    const Model model =
        one_node("DFT", 20, {{"x", kFloat, {2, 5, 1}}, {"n", kInt64, {}}},
                 {"y", kFloat, {2, bins, 2}}, [](pb::NodeProto& n) { set_int(n, "onesided", 1); });
    return run_cpu(model, {x, scalar_i64(length)}).at(0);
  };
  check_values(rfft(4, 3), {2.5, 0.0, -2.0, 2.5, 5.5, 0.0, 4.0, 0.0, -1.0, 1.0, -6.0, 0.0}, 1e-6);
  check_values(
      rfft(7, 4),
      {6.5, 0.0, -4.968902111053467, 0.15747231245040894, 1.5478394031524658, 0.5150968432426453,
       3.67106294631958, 6.625509738922119, 1.0, 0.0, 0.24697960913181305, -4.166965484619141,
       -1.4450418949127197, 2.741132974624634, -2.8019378185272217, -6.717334747314453},
      1e-5);
}

BOOST_AUTO_TEST_CASE(dft_inverse_divides_by_dft_length) {
  const Model model = one_node("DFT", 17, {{"x", kFloat, {1, 3, 2}}, {"n", kInt64, {}}},
                               {"y", kFloat, {1, 4, 2}}, [](pb::NodeProto& n) {
                                 set_int(n, "inverse", 1);
                                 set_int(n, "axis", 1);
                               });
  const Tensor x = tensor<float>(Shape{1, 3, 2}, {1, 2, -1, 0.5F, 3, -2});
  check_values(run_cpu(model, {x, scalar_i64(4)}).at(0),
               {0.75, 0.125, -0.625, 0.75, 1.25, -0.125, -0.375, 1.25}, 1e-6);
}

BOOST_AUTO_TEST_CASE(dft_onesided_inverse_is_an_irfft_ignoring_the_self_conjugate_imaginary_parts) {
  // Bins 0 and 2 have imaginary parts, which numpy's irfft ignores where the bin is its own
  // conjugate: bin 0 always, bin 2 for the even default length 2 * (3 - 1) = 4, not for 5.
  const Tensor x = tensor<float>(Shape{1, 3, 2}, {4, 1.5F, -1, 2, 0.5F, -3});
  const auto irfft = [](pb::NodeProto& n) {
    set_int(n, "inverse", 1);
    set_int(n, "onesided", 1);
  };
  const Model even =
      one_node("DFT", 20, {{"x", kFloat, {1, 3, 2}}}, {"y", kFloat, {1, 4, 1}}, irfft);
  check_values(run_cpu(even, {x}).at(0), {0.625, -0.125, 1.625, 1.875}, 1e-6);
  const Model odd = one_node("DFT", 20, {{"x", kFloat, {1, 3, 2}}, {"n", kInt64, {}}},
                             {"y", kFloat, {1, 5, 1}}, irfft);
  check_values(run_cpu(odd, {x, scalar_i64(5)}).at(0),
               {0.6000000238418579, 0.45908689498901367, -0.42608577013015747, 2.7969062328338623,
                0.5700927972793579},
               1e-6);
}

BOOST_AUTO_TEST_CASE(dft_matrix_angles_stay_exact_for_long_transforms) {
  // The DFT of an impulse at n = N - 1 is e^{-2 pi i k (N - 1) / N}. Reduced k (N - 1) mod N
  // first, each angle is within an ulp; unreduced (k n up to 1e6) they drift by ~1e-10.
  constexpr int64_t kN = 997;
  Tensor x(DType::F64, Shape{kN, 1});
  x.set_double(kN - 1, 1.0);
  const Model model = one_node("DFT", 17, {{"x", kDouble, {kN, 1}}}, {"y", kDouble, {kN, 2}},
                               [](pb::NodeProto& n) { set_int(n, "axis", 0); });
  const Tensor y = run_cpu(model, {x}).at(0);
  double worst = 0;
  for (int64_t k = 0; k < kN; ++k) {
    const double theta = 2 * std::numbers::pi * static_cast<double>(k) / kN;  // -k (N-1) = k mod N
    worst = std::max({worst, std::abs(y.get_double(2 * k) - std::cos(theta)),
                      std::abs(y.get_double(2 * k + 1) - std::sin(theta))});
  }
  BOOST_TEST(worst <= 1e-14, "worst error " << worst);
}

BOOST_AUTO_TEST_CASE(dft_refuses_what_it_does_not_support) {
  const Tensor x = tensor<float>(Shape{1, 3, 1}, {1, 2, 3});
  const auto with_axis = [](int64_t axis) {
    return [axis](pb::NodeProto& n) { set_int(n, "axis", axis); };
  };
  for (const int64_t axis : {2, -1, 3, -4}) {
    expect_import_error(
        one_node("DFT", 17, {{"x", kFloat, {1, 3, 1}}}, {"y", kFloat, {1, 3, 2}}, with_axis(axis)),
        {x}, ErrorCode::ImportInvalidModel,
        "out of range for an input of rank 3; expected [-3, -2] or [0, 1]");
  }
  const Model lengthed =
      one_node("DFT", 17, {{"x", kFloat, {1, 3, 1}}, {"n", kInt64, {}}}, {"y", kFloat, {1, 3, 2}});
  expect_import_error(lengthed, {x, scalar_i64(0)}, ErrorCode::ImportInvalidModel,
                      "dft_length is 0; it must be at least 1");
  expect_import_error(
      lengthed, {x, scalar_i64(int64_t{1} << 30)}, ErrorCode::ImportUnsupported,
      "dft_length 1073741824 over 3 input values needs a DFT matrix of 3 rows by 1073741824 "
      "bins of 2 parts; supported: at most 268435456 elements");
  expect_import_error(lengthed, {x, scalar_i64(std::numeric_limits<int64_t>::max())},
                      ErrorCode::ImportUnsupported, "supported: at most 268435456 elements");
  expect_import_error(one_node("DFT", 17, {{"x", kFloat, {1, 3, 1}}}, {"y", kFloat, {1, 3, 2}},
                               [](pb::NodeProto& n) { set_int(n, "onesided", 2); }),
                      {x}, ErrorCode::ImportInvalidModel, "onesided must be 0 or 1; got 2");
  expect_import_error(one_node("DFT", 17, {{"x", kFloat, {1, 3, 3}}}, {"y", kFloat, {1, 3, 2}}),
                      {tensor<float>(Shape{1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})},
                      ErrorCode::ImportInvalidModel, "the last 1 (real) or 2 (complex)");
  // Version 20 is newer than the ONNX library, so its lowering checks the dtype itself.
  expect_import_error(one_node("DFT", 20, {{"x", kInt32, {1, 3, 1}}}, {"y", kInt32, {1, 3, 2}}),
                      {tensor<int32_t>(Shape{1, 3, 1}, {1, 2, 3})}, ErrorCode::ImportUnsupported,
                      "input of dtype i32; supported: f32, f64");
}

// ---- STFT -----------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(stft_windows_each_frame_and_keeps_the_onesided_bins_by_default) {
  // 10 samples, frames of the window's 4 every 3: (10 - 4) / 3 + 1 = 3 frames of 4 / 2 + 1 bins.
  const Model model =
      one_node("STFT", 17, {{"s", kFloat, {1, 10, 1}}, {"step", kInt64, {}}, {"w", kFloat, {4}}},
               {"y", kFloat, {1, 3, 3, 2}});
  const Tensor signal = tensor<float>(Shape{1, 10, 1}, {0, 1, 4, 9, -2, 3, 5, -1, 2, 7});
  check_values(
      run_cpu(model, {signal, scalar_i64(3), tensor<float>(Shape{4}, {0.25F, 1, 0.75F, 0.5F})})
          .at(0),
      {8.5, 0.0, -3.0, 3.5, -2.5, 0.0, 5.0, 0.0, 0.0, 4.5, 4.0, 0.0, 5.25, 0.0, -0.25, 4.5, 0.25,
       0.0},
      1e-6);
}

BOOST_AUTO_TEST_CASE(stft_of_a_complex_signal_by_frame_length_with_every_bin) {
  const Model model = one_node(
      "STFT", 17,
      {{"s", kFloat, {2, 6, 2}}, {"step", kInt64, {}}, {"", 0, {}}, {"length", kInt64, {}}},
      {"y", kFloat, {2, 2, 4, 2}}, [](pb::NodeProto& n) { set_int(n, "onesided", 0); });
  Tensor signal(DType::F32, Shape{2, 6, 2});
  for (int64_t i = 0; i < signal.numel(); ++i) signal.set_double(i, static_cast<double>(i % 7 - 3));
  check_values(
      run_cpu(model, {signal, scalar_i64(2), scalar_i64(4)}).at(0),
      {0.0,  -3.0, -1.0, 0.0, -4.0, 3.0, -7.0, -8.0, 2.0, -1.0, -1.0, 0.0, -4.0, 3.0,  7.0,  6.0,
       -1.0, 3.0,  -1.0, 7.0, 3.0,  3.0, 7.0,  -1.0, 1.0, -2.0, -1.0, 0.0, 3.0,  -4.0, -7.0, 6.0},
      1e-6);
}

BOOST_AUTO_TEST_CASE(stft_without_window_or_frame_length_is_one_frame_of_the_whole_signal) {
  const Model model = one_node("STFT", 17, {{"s", kFloat, {1, 5, 1}}, {"step", kInt64, {}}},
                               {"y", kFloat, {1, 1, 3, 2}});
  check_values(
      run_cpu(model, {tensor<float>(Shape{1, 5, 1}, {1, -1, 2, 0, 3}), scalar_i64(1)}).at(0),
      {5.0, 0.0, 0.0, 2.6286556720733643, 0.0, 4.253253936767578}, 1e-6);
}

BOOST_AUTO_TEST_CASE(stft_refuses_inconsistent_frames) {
  const Tensor signal = tensor<float>(Shape{1, 4, 1}, {1, 2, 3, 4});
  const Model framed = one_node(
      "STFT", 17,
      {{"s", kFloat, {1, 4, 1}}, {"step", kInt64, {}}, {"w", kFloat, {2}}, {"length", kInt64, {}}},
      {"y", kFloat, {1, 3, 2, 2}});
  expect_import_error(framed,
                      {signal, scalar_i64(1), tensor<float>(Shape{2}, {1, 1}), scalar_i64(3)},
                      ErrorCode::ImportInvalidModel,
                      "frame_length is 3 but the window has 2 values; they must be equal");
  const Model bare = one_node(
      "STFT", 17,
      {{"s", kFloat, {1, 4, 1}}, {"step", kInt64, {}}, {"", 0, {}}, {"length", kInt64, {}}},
      {"y", kFloat, {1, 1, 3, 2}});
  expect_import_error(bare, {signal, scalar_i64(1), scalar_i64(5)}, ErrorCode::ImportInvalidModel,
                      "frame_length is 5; expected 1 to the signal length 4");
  expect_import_error(bare, {signal, scalar_i64(0), scalar_i64(2)}, ErrorCode::ImportInvalidModel,
                      "frame_step is 0; it must be at least 1");
}

// ---- MelWeightMatrix ------------------------------------------------------------------------

Model mel_model(int64_t output_datatype, int out_type) {
  return one_node("MelWeightMatrix", 17,
                  {{"bins", kInt32, {}},
                   {"n", kInt32, {}},
                   {"rate", kInt32, {}},
                   {"lo", kFloat, {}},
                   {"hi", kFloat, {}}},
                  {"y", out_type, {16, 2}}, [output_datatype](pb::NodeProto& n) {
                    if (output_datatype != 0) set_int(n, "output_datatype", output_datatype);
                  });
}

std::vector<Tensor> mel_inputs(float lo, float hi) {
  return {tensor<int32_t>(Shape{}, {2}), tensor<int32_t>(Shape{}, {30}),
          tensor<int32_t>(Shape{}, {100}), tensor<float>(Shape{}, {lo}),
          tensor<float>(Shape{}, {hi})};
}

BOOST_AUTO_TEST_CASE(mel_weight_matrix_is_triangles_between_mel_spaced_bins) {
  // 2 filters over 30 / 2 + 1 = 16 bins; 10 to 50 Hz at 100 Hz gives edges at bins 3, 6, 9, 12.
  constexpr double kThird = 1.0 / 3.0;
  std::vector<double> want(32, 0.0);
  const std::vector<double> rise_and_fall = {kThird, 2 * kThird, 1, 2 * kThird, kThird};
  for (size_t j = 0; j < rise_and_fall.size(); ++j) {
    want[2 * (4 + j)] = rise_and_fall[j];
    want[2 * (7 + j) + 1] = rise_and_fall[j];
  }
  const Tensor f32 = run_cpu(mel_model(0, kFloat), mel_inputs(10, 50)).at(0);
  BOOST_TEST((f32.dtype() == DType::F32));
  check_values(f32, want, 1e-7);
  const Tensor f64 = run_cpu(mel_model(11, kDouble), mel_inputs(10, 50)).at(0);
  BOOST_TEST((f64.dtype() == DType::F64));
  check_values(f64, want, 1e-15);
  // Integer outputs truncate, as numpy's astype does: only the peaks stay.
  std::vector<double> peaks(32, 0.0);
  peaks[2 * 6] = 1;
  peaks[2 * 9 + 1] = 1;
  check_values(run_cpu(mel_model(6, kInt32), mel_inputs(10, 50)).at(0), peaks);
}

BOOST_AUTO_TEST_CASE(mel_weight_matrix_refuses_edges_outside_the_spectrogram) {
  expect_import_error(mel_model(0, kFloat), mel_inputs(-20, 50), ErrorCode::ImportInvalidModel,
                      "outside the 16 spectrogram bins of sample_rate 100 and dft_length 30");
  expect_import_error(mel_model(0, kFloat), mel_inputs(10, 500), ErrorCode::ImportInvalidModel,
                      "outside the 16 spectrogram bins");
  expect_import_error(mel_model(9, kInt32), mel_inputs(10, 50), ErrorCode::ImportUnsupported,
                      "output_datatype is BOOL; supported: FLOAT, DOUBLE, INT64, INT32, "
                      "FLOAT16, BFLOAT16, INT8, UINT8, INT16, UINT16, UINT32, UINT64");
}

}  // namespace
}  // namespace volta::onnx::test
