// CPU kernels of the ops added for ONNX import in the normalization slice (the losses, Einsum,
// Hardmax, LRN, MeanVarianceNormalization, BatchNormalization, InstanceNormalization) against
// hand-checked values, where their semantics are easy to get subtly wrong.
#define BOOST_TEST_MODULE cpu_loss
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>

#include "expect_error.h"
#include "test_util.h"

namespace volta::test {
namespace {

using Ints = std::vector<int64_t>;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Tensor labels(Shape shape, const std::vector<int64_t>& values, DType dtype = DType::I64) {
  Tensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_int(i, values[static_cast<size_t>(i)]);
  return t;
}

Attributes loss_attrs(const std::string& reduction, std::optional<int64_t> ignore = std::nullopt) {
  Attributes a = {{"reduction", reduction}};
  if (ignore) a["ignore_index"] = Ints{*ignore};
  return a;
}

// The NegativeLogLikelihoodLoss examples of the ONNX spec: N=2, C=3, d1=2.
const Tensor kInput = filled(DType::F32, {2, 3, 2}, {1, 2, 2, 2, 3, 2, 0, 1, 2, 2, 1, 2});
const Tensor kTarget = labels({2, 2}, {2, 1, 0, 2});
const Tensor kWeight = filled(DType::F32, {3}, {0.2, 0.3, 0.1});

Tensor nll(const std::vector<Tensor>& inputs, const Attributes& attrs) {
  return run_op(OpKind::NegativeLogLikelihoodLoss, inputs, attrs)[0];
}

}  // namespace

BOOST_AUTO_TEST_SUITE(losses)

BOOST_AUTO_TEST_CASE(nll_follows_the_onnx_examples) {
  check_close(nll({kInput, kTarget}, loss_attrs("none")),
              filled(DType::F32, {2, 2}, {-3, -2, 0, -2}));
  // -3 * 0.1 - 2 * 0.3 - 0 * 0.2 - 2 * 0.1 = -1.1, over the weights 0.1 + 0.3 + 0.2 + 0.1.
  check_close(nll({kInput, kTarget, kWeight}, loss_attrs("sum")), filled(DType::F32, {}, {-1.1}));
  check_close(nll({kInput, kTarget, kWeight}, loss_attrs("mean")),
              filled(DType::F32, {}, {-1.1 / 0.7}));
  check_close(nll({kInput, kTarget}, loss_attrs("mean")), filled(DType::F32, {}, {-7.0 / 4}));
}

// The sum over samples runs in double (the op table's Wide accumulator): 1e8 + 1 - 1e8 is 1,
// where an f32 sum gives 0 (1e8 + 1 rounds to 1e8).
BOOST_AUTO_TEST_CASE(nll_sums_f32_losses_in_double) {
  const Tensor input = filled(DType::F32, {3, 1}, {-1e8, -1, 1e8});
  const Tensor target = labels({3}, {0, 0, 0});
  check_close(nll({input, target}, loss_attrs("sum")), filled(DType::F32, {}, {1}), 0, 0);
  check_close(nll({input, target}, loss_attrs("mean")), filled(DType::F32, {}, {1.0 / 3}), 0, 1e-7);
}

BOOST_AUTO_TEST_CASE(ignored_labels_count_for_nothing_in_the_mean) {
  // Ignoring label 2 leaves samples (0, 1) = -2 and (1, 0) = 0.
  check_close(nll({kInput, kTarget}, loss_attrs("none", 2)),
              filled(DType::F32, {2, 2}, {0, -2, 0, 0}));
  check_close(nll({kInput, kTarget}, loss_attrs("mean", 2)), filled(DType::F32, {}, {-1}));
  // Weighted: (-2 * 0.3 - 0 * 0.2) / (0.3 + 0.2).
  check_close(nll({kInput, kTarget, kWeight}, loss_attrs("mean", 2)),
              filled(DType::F32, {}, {-1.2}));
  // An ignore_index outside [0, C) marks those samples only; every sample ignored leaves
  // 0 / 0 for the mean.
  const Tensor all_ignored = labels({2, 2}, {-1, -1, -1, -1}, DType::I32);
  check_close(nll({kInput, all_ignored}, loss_attrs("sum", -1)), filled(DType::F32, {}, {0}));
  check_close(nll({kInput, all_ignored}, loss_attrs("mean", -1)), filled(DType::F32, {}, {kNaN}));
}

BOOST_AUTO_TEST_CASE(a_label_outside_the_classes_is_an_error) {
  const Tensor bad = labels({2, 2}, {2, 1, 3, 0});
  expect_error(
      [&] {
        nll({kInput, bad}, loss_attrs("mean", -1));
      },
      ErrorCode::KernelFailure,
      "node 'op' (NegativeLogLikelihoodLoss) on backend 'cpu': label 3 at labels "
      "position [1,0] is out of range for 3 classes (valid: [0, 2], or ignore_index -1)");
}

BOOST_AUTO_TEST_CASE(softmax_cross_entropy_is_nll_of_log_softmax) {
  // One sample, scores {0, ln 3}: probabilities {1/4, 3/4}.
  const Tensor scores = filled(DType::F64, {1, 2}, {0, std::log(3.0)});
  const std::vector<Tensor> out =
      run_op(OpKind::SoftmaxCrossEntropyLoss, {scores, labels({1}, {1})}, loss_attrs("mean"), 2);
  check_close(out[0], filled(DType::F64, {}, {-std::log(0.75)}), 1e-15, 1e-15);
  check_close(out[1], filled(DType::F64, {1, 2}, {std::log(0.25), std::log(0.75)}), 1e-15, 1e-15);
  // Along axis 1 of [N, C, d]: sample (0, d=1) has scores {5, 5} (class 0 picked): -ln(1/2).
  const Tensor scores3 = filled(DType::F32, {1, 2, 2}, {0, 5, std::log(3.0), 5});
  check_close(run_op(OpKind::SoftmaxCrossEntropyLoss, {scores3, labels({1, 2}, {1, 0})},
                     loss_attrs("none"))[0],
              filled(DType::F32, {1, 2}, {-std::log(0.75), std::log(2.0)}));
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(einsum)

Tensor einsum(const std::string& equation, const std::vector<Tensor>& inputs) {
  return run_op(OpKind::Einsum, inputs, {{"equation", equation}})[0];
}

BOOST_AUTO_TEST_CASE(diagonals_traces_and_implicit_output_order) {
  const Tensor m = filled(DType::F64, {2, 2}, {1, 2, 3, 4});
  check_close(einsum("ii->i", {m}), filled(DType::F64, {2}, {1, 4}));
  check_close(einsum("ii", {m}), filled(DType::F64, {}, {5}));
  // Implicit output: the letters in alphabetical order, so "ba" is the transpose.
  check_close(einsum("ba", {m}), filled(DType::F64, {2, 2}, {1, 3, 2, 4}));
  check_close(einsum("ij,jk", {m, m}), filled(DType::F64, {2, 2}, {7, 10, 15, 22}));
  check_close(einsum("i j , j k -> k i", {m, m}), filled(DType::F64, {2, 2}, {7, 15, 10, 22}));
}

BOOST_AUTO_TEST_CASE(ellipsis_axes_broadcast) {
  // [2, 1, 2] batches against [3, 2]: the batch axes broadcast to [2, 3].
  const Tensor a = filled(DType::F32, {2, 1, 2}, {1, 2, 3, 4});
  const Tensor b = filled(DType::F32, {3, 2}, {1, 0, 0, 1, 1, 1});
  check_close(einsum("...i,...i->...", {a, b}), filled(DType::F32, {2, 3}, {1, 2, 3, 3, 4, 7}));
}

BOOST_AUTO_TEST_CASE(integers_wrap) {
  const Tensor big = filled(DType::I32, {2}, {65536, 3});
  check_close(einsum("i,i", {big, big}), filled(DType::I32, {}, {9}));  // 2^32 wraps to 0
}

BOOST_AUTO_TEST_CASE(a_bad_equation_names_the_problem) {
  const Tensor m = filled(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  expect_error_containing([&] { einsum("ij,jk->ik", {m}); }, ErrorCode::VerifyShape,
                          {"has 2 input terms for 1 inputs"});
  expect_error_containing([&] { einsum("ii", {m}); }, ErrorCode::VerifyShape,
                          {"has extent 3 where another axis with its label has 2"});
  expect_error_containing([&] { einsum("ij->ik", {m}); }, ErrorCode::VerifyShape,
                          {"names 'k', which no input term has"});
  expect_error_containing([&] { einsum("i2", {m}); }, ErrorCode::VerifyShape,
                          {"holds '2'; supported: letters"});
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(normalizations)

BOOST_AUTO_TEST_CASE(hardmax_takes_the_first_maximum_and_the_first_nan) {
  const Tensor x = filled(DType::F32, {3, 3}, {1, 3, 3, kNaN, 2, kNaN, 0, 0, 0});
  check_close(run_op(OpKind::Hardmax, {x}, {{"axis", int64_t{1}}})[0],
              filled(DType::F32, {3, 3}, {0, 1, 0, 1, 0, 0, 1, 0, 0}));
  check_close(run_op(OpKind::Hardmax, {x}, {{"axis", int64_t{0}}})[0],
              filled(DType::F32, {3, 3}, {0, 1, 0, 1, 0, 1, 0, 0, 0}));
}

BOOST_AUTO_TEST_CASE(lrn_sums_the_channel_window) {
  // size 2: the window of channel c is [c, c + 1]; alpha / size = 1.5.
  const Tensor x = filled(DType::F64, {1, 3}, {1, 2, 3});
  check_close(run_op(OpKind::LRN, {x},
                     {{"size", int64_t{2}}, {"alpha", 3.0}, {"beta", 1.0}, {"bias", 1.0}})[0],
              filled(DType::F64, {1, 3}, {1 / 8.5, 2 / 20.5, 3 / 14.5}), 1e-15, 1e-15);
}

BOOST_AUTO_TEST_CASE(mean_variance_normalization_adds_epsilon_to_the_deviation) {
  const Tensor x = filled(DType::F64, {2, 2}, {1, 10, 3, 20});
  // Column 0 has mean 2 and deviation 1, column 1 mean 15 and deviation 5.
  const double a = 1 / (1 + 1e-9), b = 5 / (5 + 1e-9);
  check_close(run_op(OpKind::MeanVarianceNormalization, {x}, {{"axes", Ints{0}}})[0],
              filled(DType::F64, {2, 2}, {-a, -b, a, b}), 1e-15, 1e-15);
}

// f32 statistics and the division run in double: each output is the double formula rounded
// once to f32 (one ULP allows for the double sums' order), where f32 statistics drift by
// microunits over groups of 360 elements.
BOOST_AUTO_TEST_CASE(mean_variance_normalization_of_f32_is_the_double_formula_rounded) {
  const Tensor x = uniform(DType::F32, {2, 3, 4, 30}, 21, 1000.0, 1003.0);
  Tensor want(DType::F32, x.shape());
  for (int64_t c = 0; c < 3; ++c) {  // axes {0, 2, 3}: one group per channel
    double sum = 0, squares = 0;
    const auto at = [c](int64_t n, int64_t i) { return (n * 3 + c) * 120 + i; };
    for (int64_t n = 0; n < 2; ++n) {
      for (int64_t i = 0; i < 120; ++i) sum += x.get_double(at(n, i));
    }
    const double mean = sum / 240;
    for (int64_t n = 0; n < 2; ++n) {
      for (int64_t i = 0; i < 120; ++i) squares += std::pow(x.get_double(at(n, i)) - mean, 2);
    }
    const double denominator = std::sqrt(squares / 240) + 1e-9;
    for (int64_t n = 0; n < 2; ++n) {
      for (int64_t i = 0; i < 120; ++i) {
        want.set_double(at(n, i), (x.get_double(at(n, i)) - mean) / denominator);
      }
    }
  }
  check_close(run_op(OpKind::MeanVarianceNormalization, {x}, {{"axes", Ints{0, 2, 3}}})[0], want, 0,
              1.2e-7);
}

BOOST_AUTO_TEST_CASE(batch_and_instance_normalization) {
  // InstanceNormalization's ONNX example: planes {-1, 0, 1} and {2, 3, 4}, variance 2/3.
  const Tensor x = filled(DType::F32, {1, 2, 1, 3}, {-1, 0, 1, 2, 3, 4});
  const Tensor scale = filled(DType::F32, {2}, {1, 1.5});
  const Tensor bias = filled(DType::F32, {2}, {0, 1});
  const double s = 1 / std::sqrt(2.0 / 3 + 1e-5);
  check_close(run_op(OpKind::InstanceNormalization, {x, scale, bias})[0],
              filled(DType::F32, {1, 2, 1, 3}, {-s, 0, s, 1 - 1.5 * s, 1, 1 + 1.5 * s}));
  // BatchNormalization with given statistics: channel 1 has mean 3 and variance 4 - epsilon.
  const Tensor mean = filled(DType::F32, {2}, {0, 3});
  const Tensor var = filled(DType::F32, {2}, {1, 4});
  check_close(
      run_op(OpKind::BatchNormalization, {x, scale, bias, mean, var}, {{"epsilon", 0.0}})[0],
      filled(DType::F32, {1, 2, 1, 3}, {-1, 0, 1, 1 - 0.75, 1, 1 + 0.75}));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace volta::test
