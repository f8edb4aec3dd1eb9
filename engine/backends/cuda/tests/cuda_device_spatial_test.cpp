// The CUDA backend's pooling and convolution kernels on a device, against the CPU backend as
// each op's claim says (every bit, or every bit but NaN payloads): the spatial cases of
// spatial_cases.h in f32 and f64 on uniform values, ties of both zeros and special values; CNN-
// sized layers; the same bits run after run and whatever the batch around an image.
//
// Without a usable device every case is skipped and the binary prints "SKIPPED: <reason>",
// which CTest reports as skipped (SKIP_REGULAR_EXPRESSION): never a pass without a device.

#define BOOST_TEST_MODULE cuda_device_spatial_test
#include <boost/test/unit_test.hpp>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "device_test_support.h"
#include "spatial_cases.h"

namespace volta {
namespace {

using namespace spatial_test;  // NOLINT(google-build-using-namespace): this test's cases
using cuda_test::DeviceOrSkip;
BOOST_TEST_GLOBAL_FIXTURE(DeviceOrSkip);
using cuda_test::cpu;
using cuda_test::device_available;
using cuda_test::gpu;
using cuda_test::run_on;

void check_against_cpu(const SpatialCase& c, DType dtype, const std::vector<Tensor>& inputs,
                       const std::string& what) {
  const Graph graph = case_graph(c, dtype);
  const CrossBackendExactness claim = claim_of(c.op);
  const std::vector<Tensor> want = run_on(cpu(), graph, inputs);
  const std::vector<Tensor> got = run_on(gpu(), graph, inputs, std::byte{0xff});
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    const std::string breach = first_breach(claim, got[k], want[k]);
    BOOST_CHECK_MESSAGE(breach.empty(), c.name << " " << dtype_name(dtype) << " " << what << " ("
                                               << cross_backend_exactness_name(claim)
                                               << "), output " << k << ": " << breach);
  }
}

BOOST_AUTO_TEST_CASE(every_spatial_case_matches_the_cpu,
                     *boost::unit_test::precondition(device_available)) {
  uint64_t seed = 5000;
  for (const SpatialCase& c : all_cases()) {
    for (DType dtype : {DType::F32, DType::F64}) {
      for (Values values : {Values::Uniform, Values::Ties, Values::Specials}) {
        check_against_cpu(c, dtype, case_inputs(c, dtype, seed += 10, values), values_name(values));
      }
    }
  }
}

// Layers of a small CNN's sizes: a 3x3 convolution with B, a strided one, a depthwise one, the
// stem's max pool, a transposed upsampling, global pools over 7x7 and over planes of several
// tree leaves.
BOOST_AUTO_TEST_CASE(cnn_sized_layers_match_the_cpu,
                     *boost::unit_test::precondition(device_available)) {
  const std::vector<SpatialCase> layers = {
      {"Conv 3x3 64->64",
       OpKind::Conv,
       {{2, 64, 28, 28}, {64, 64, 3, 3}, {64}},
       {{"pads", Ints{1, 1, 1, 1}}}},
      {"Conv 3x3 stride 2",
       OpKind::Conv,
       {{2, 32, 29, 29}, {48, 32, 3, 3}},
       {{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}}},
      {"Conv depthwise",
       OpKind::Conv,
       {{2, 96, 28, 28}, {96, 1, 3, 3}, {96}},
       {{"group", int64_t{96}}, {"pads", Ints{1, 1, 1, 1}}}},
      {"MaxPool stem",
       OpKind::MaxPool,
       {{2, 64, 112, 112}},
       {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}},
       2},
      {"ConvTranspose 2x up",
       OpKind::ConvTranspose,
       {{2, 64, 14, 14}, {64, 32, 4, 4}, {32}},
       {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}},
      {"GlobalAveragePool 7x7", OpKind::GlobalAveragePool, {{8, 512, 7, 7}}, {}},
      {"GlobalAveragePool 300x300", OpKind::GlobalAveragePool, {{1, 4, 300, 300}}, {}},
      {"GlobalMaxPool 300x300", OpKind::GlobalMaxPool, {{1, 4, 300, 300}}, {}},
  };
  uint64_t seed = 7000;
  for (const SpatialCase& c : layers) {
    for (DType dtype : {DType::F32, DType::F64}) {
      check_against_cpu(c, dtype, case_inputs(c, dtype, seed += 10, Values::Uniform), "uniform");
    }
  }
}

bool same_bytes(const Tensor& a, const Tensor& b, size_t bytes) {
  return std::memcmp(a.data(), b.data(), bytes) == 0;
}

// The same bits on every run, and an image's outputs the same alone or in a batch of 5.
BOOST_AUTO_TEST_CASE(outputs_repeat_and_do_not_depend_on_the_batch,
                     *boost::unit_test::precondition(device_available)) {
  const std::vector<SpatialCase> cases = {
      {"Conv",
       OpKind::Conv,
       {{5, 16, 12, 12}, {24, 8, 3, 3}, {24}},
       {{"group", int64_t{2}}, {"pads", Ints{1, 1, 1, 1}}}},
      {"ConvTranspose",
       OpKind::ConvTranspose,
       {{5, 16, 6, 6}, {16, 8, 3, 3}},
       {{"strides", Ints{2, 2}}}},
      {"AveragePool", OpKind::AveragePool, {{5, 16, 12, 12}}, {{"kernel_shape", Ints{3, 3}}}},
      {"GlobalAveragePool", OpKind::GlobalAveragePool, {{5, 16, 40, 40}}, {}},
  };
  uint64_t seed = 9000;
  for (const SpatialCase& c : cases) {
    const Graph batch = case_graph(c, DType::F32);
    const std::vector<Tensor> inputs = case_inputs(c, DType::F32, seed += 10, Values::Uniform);
    const std::vector<Tensor> first = run_on(gpu(), batch, inputs);
    for (int run = 0; run < 5; ++run) {
      const std::vector<Tensor> again = run_on(gpu(), batch, inputs, std::byte{0xff});
      BOOST_CHECK_MESSAGE(same_bytes(again[0], first[0], first[0].nbytes()),
                          c.name << ": run " << run << " differs");
    }
    // Image 0 alone: its X slice, the same W and B.
    SpatialCase single = c;
    single.inputs[0][0] = 1;
    std::vector<Tensor> one = inputs;
    one[0] = Tensor(DType::F32, single.inputs[0]);
    std::memcpy(one[0].data(), inputs[0].data(), one[0].nbytes());
    const std::vector<Tensor> alone = run_on(gpu(), case_graph(single, DType::F32), one);
    BOOST_CHECK_MESSAGE(same_bytes(alone[0], first[0], alone[0].nbytes()),
                        c.name << ": image 0 alone differs from image 0 in a batch of 5");
  }
}

}  // namespace
}  // namespace volta
