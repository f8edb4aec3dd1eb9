// The CUDA backend's layout and resampling kernels on a device, against the CPU backend, as each
// op's claim says (cuda_op_claims()): Tile, Pad (every mode, negative pads, a given constant),
// DepthToSpace (DCR, CRD), SpaceToDepth, ReverseSequence (both layouts, both length types, a bad
// length failing in the CPU's words) and Constant (counted copies, nothing allocated per run)
// for every dtype; Resize for every mode, coordinate transformation, nearest mode,
// exclude_outside and extrapolation, ranks 1 to 5; GridSample for every mode, padding and
// align_corners, with grids that hit ties, the edges, infinities and NaN; Det (the linalg
// extension) on batches of matrices, singular, non-finite and finite; Einsum on both of its
// paths (the packed GEMM of two float operands, the label loop) for every dtype.
//
// Without a usable device every case is skipped and the binary prints "SKIPPED: <reason>",
// which CTest reports as skipped (SKIP_REGULAR_EXPRESSION): never a pass without a device.

#define BOOST_TEST_MODULE cuda_device_layout_test
#include <bit>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "device_test_support.h"
#include "resampling_cases.h"
#include "volta/backends/cuda.h"
#include "volta/error.h"
#include "volta/ir/random.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta {
namespace {

using cuda_test::DeviceOrSkip;
BOOST_TEST_GLOBAL_FIXTURE(DeviceOrSkip);
using cuda_test::check_against_cpu;
using cuda_test::cpu;
using cuda_test::device_available;
using cuda_test::error_of;
using cuda_test::gpu;
using cuda_test::op_graph;
using resampling_test::float_data;
using resampling_test::grid_sample_cases;
using resampling_test::grid_values;
using resampling_test::kTransforms;
using resampling_test::random_of;
using resampling_test::resize_attrs;
using resampling_test::resize_cases;
using resampling_test::ResizeCase;

constexpr DType kDTypes[] = {DType::F32, DType::F64, DType::I64, DType::I32, DType::Bool};

std::string name_of(DType dtype) { return std::string(dtype_name(dtype)); }

// ---- Tile, Pad, DepthToSpace, SpaceToDepth ----

BOOST_AUTO_TEST_CASE(tile_matches_the_cpu_for_every_dtype,
                     *boost::unit_test::precondition(device_available)) {
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{}, {}},
      {{7}, {3}},
      {{2, 3}, {2, 1}},
      {{3, 1, 5}, {1, 4, 2}},
      {{2, 3, 4}, {0, 2, 1}},
      {{1, 4097}, {2, 1}},
      {{2, 1, 3, 1, 2}, {1, 3, 1, 2, 2}}};
  uint64_t seed = 100;
  for (DType dtype : kDTypes) {
    for (const auto& [in, repeats] : cases) {
      check_against_cpu(op_graph(OpKind::Tile, {{dtype, in}}, {{"repeats", repeats}}),
                        {random_of(dtype, in, ++seed)},
                        name_of(dtype) + " Tile of " + in.str() + " by " + Shape(repeats).str());
    }
  }
}

BOOST_AUTO_TEST_CASE(pad_matches_the_cpu_in_every_mode,
                     *boost::unit_test::precondition(device_available)) {
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{5}, {2, 3}},
      {{5}, {12, 9}},  // reflect past the axis' length: numpy's period
      {{1, 4}, {2, 1, 3, 2}},
      {{3, 4, 5}, {1, -1, 2, 0, 2, -3}},  // negative pads crop
      {{4, 6}, {-2, -1, -1, -2}},
      {{2, 4097}, {0, 1, 1, 2}},
      {{2, 0, 3}, {1, 1, 0, 0, 2, 1}},
      {{}, {}}};
  uint64_t seed = 200;
  for (DType dtype : kDTypes) {
    for (const std::string mode : {"constant", "reflect", "edge"}) {
      for (const auto& [in, pads] : cases) {
        if (mode != "constant" && in.numel() == 0) continue;  // nothing to repeat
        const Attributes attrs = {{"pads", pads}, {"mode", mode}};
        const std::string what =
            name_of(dtype) + " Pad " + mode + " of " + in.str() + " by " + Shape(pads).str();
        check_against_cpu(op_graph(OpKind::Pad, {{dtype, in}}, attrs),
                          {random_of(dtype, in, ++seed)}, what);
        if (mode != "constant") continue;
        // The constant given as an input: its bytes, NaN payload and all.
        check_against_cpu(op_graph(OpKind::Pad, {{dtype, in}, {dtype, Shape{}}}, attrs),
                          {random_of(dtype, in, ++seed), random_of(dtype, Shape{}, ++seed)},
                          what + " with a constant");
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(depth_and_space_moves_match_the_cpu,
                     *boost::unit_test::precondition(device_available)) {
  uint64_t seed = 300;
  for (DType dtype : kDTypes) {
    for (const auto& [in, block] : std::vector<std::pair<Shape, int64_t>>{
             {{2, 8, 3, 5}, 2}, {{1, 27, 2, 3}, 3}, {{3, 5, 4, 2}, 1}, {{1, 64, 17, 33}, 4}}) {
      for (const std::string mode : {"DCR", "CRD"}) {
        check_against_cpu(
            op_graph(OpKind::DepthToSpace, {{dtype, in}}, {{"blocksize", block}, {"mode", mode}}),
            {random_of(dtype, in, ++seed)},
            name_of(dtype) + " DepthToSpace " + mode + " of " + in.str());
      }
    }
    for (const auto& [in, block] : std::vector<std::pair<Shape, int64_t>>{
             {{2, 3, 4, 6}, 2}, {{1, 2, 9, 6}, 3}, {{2, 1, 3, 5}, 1}, {{1, 3, 68, 132}, 4}}) {
      check_against_cpu(op_graph(OpKind::SpaceToDepth, {{dtype, in}}, {{"blocksize", block}}),
                        {random_of(dtype, in, ++seed)},
                        name_of(dtype) + " SpaceToDepth of " + in.str());
    }
  }
}

// ---- ReverseSequence ----

BOOST_AUTO_TEST_CASE(reverse_sequence_matches_the_cpu_and_fails_on_the_same_length,
                     *boost::unit_test::precondition(device_available)) {
  uint64_t seed = 400;
  for (DType dtype : kDTypes) {
    for (DType length_type : {DType::I64, DType::I32}) {
      for (int64_t batch_axis : {0, 1}) {
        const Shape in = batch_axis == 0 ? Shape{4, 6, 3, 2} : Shape{6, 4, 5};
        const int64_t steps = 6;
        Tensor lengths(length_type, Shape{4});
        for (int64_t e = 0; e < 4; ++e) lengths.set_double(e, static_cast<double>((e * 5) % 7));
        const Graph g = op_graph(OpKind::ReverseSequence, {{dtype, in}, {length_type, Shape{4}}},
                                 {{"batch_axis", batch_axis}, {"time_axis", 1 - batch_axis}});
        const Tensor x = random_of(dtype, in, ++seed);
        const std::string what = name_of(dtype) + " ReverseSequence batch_axis " +
                                 std::to_string(batch_axis) + " " + name_of(length_type);
        check_against_cpu(g, {x, lengths}, what);
        Tensor bad = lengths;
        bad.set_double(2, static_cast<double>(steps + 1));
        bad.set_double(3, -1.0);
        const std::string want = error_of(cpu(), g, {x, bad});
        BOOST_TEST(want.find("sequence_lens[2] = 7") != std::string::npos, want);
        BOOST_TEST(error_of(gpu(), g, {x, bad}) == want, what);
      }
    }
  }
}

// ---- Constant ----

BOOST_AUTO_TEST_CASE(constant_copies_its_value_counted_and_allocates_nothing_per_run,
                     *boost::unit_test::precondition(device_available)) {
  uint64_t seed = 500;
  for (DType dtype : kDTypes) {
    for (const Shape& shape : {Shape{}, Shape{0}, Shape{3, 5}, Shape{4099}}) {
      const Tensor value = random_of(dtype, shape, ++seed);
      Graph g;
      g.set_outputs({g.add(OpKind::Constant, {}, {{"value", value}}, "op")});
      check_against_cpu(g, {}, name_of(dtype) + " Constant " + shape.str());
    }
  }
  // The value goes up once per run, counted, into the arena: a second run allocates nothing.
  Graph g;
  const Tensor value = random_of(DType::F32, Shape{1000}, ++seed);
  const ValueId c = g.add(OpKind::Constant, {}, {{"value", value}}, "c");
  g.set_outputs({g.add(OpKind::Neg, {c}, {}, "neg")});
  const ExecutionPlan plan = compile(g, gpu(), DeterminismMode::Strict, {.optimize = false});
  const std::unique_ptr<ExecutionContext> ctx = gpu().make_context({});
  execute(plan, gpu(), *ctx, {});
  const CudaContext& cuda = cuda_context(*ctx);
  const CudaTransferCounters first = cuda.transfers();
  const int64_t bytes = cuda.device_bytes();
  const std::vector<Tensor> out = execute(plan, gpu(), *ctx, {});
  BOOST_TEST(cuda.transfers().host_to_device_copies == first.host_to_device_copies + 1);
  BOOST_TEST(cuda.transfers().host_to_device_bytes ==
             first.host_to_device_bytes + static_cast<int64_t>(value.nbytes()));
  BOOST_TEST(cuda.device_bytes() == bytes);
  BOOST_TEST(out.at(0).get_double(7) == -value.get_double(7));
  // Folded at compile time (optimize), the constant runs on the device once and becomes a
  // parameter: no Constant step is left, and the result is the same.
  const ExecutionPlan folded = compile(g, gpu(), DeterminismMode::Strict);
  BOOST_TEST(kernel_variants(folded).find("constant_upload_cuda") == std::string::npos,
             kernel_variants(folded));
  const std::unique_ptr<ExecutionContext> fresh = gpu().make_context({});
  const std::vector<Tensor> again = execute(folded, gpu(), *fresh, {});
  BOOST_TEST(std::memcmp(again.at(0).data(), out.at(0).data(), out.at(0).nbytes()) == 0);
}

// ---- Resize ----

BOOST_AUTO_TEST_CASE(resize_nearest_matches_the_cpu_for_every_dtype_and_mode,
                     *boost::unit_test::precondition(device_available)) {
  uint64_t seed = 600;
  for (const ResizeCase& c : resize_cases()) {
    for (const char* transform : kTransforms) {
      for (const char* nearest : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
        for (DType dtype : kDTypes) {
          Attributes attrs = resize_attrs(c, "nearest", transform, nearest, 0);
          if (dtype == DType::Bool && std::string(transform) == "tf_crop_and_resize") {
            attrs["extrapolation_value"] = 1.0;
          }
          check_against_cpu(op_graph(OpKind::Resize, {{dtype, c.in}}, attrs),
                            {random_of(dtype, c.in, ++seed)},
                            name_of(dtype) + " nearest " + transform + " " + nearest + " " +
                                c.in.str() + " to " + c.out.str());
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(resize_linear_and_cubic_match_the_cpu,
                     *boost::unit_test::precondition(device_available)) {
  uint64_t seed = 700;
  for (const ResizeCase& c : resize_cases()) {
    for (const char* transform : kTransforms) {
      for (const char* mode : {"linear", "cubic"}) {
        for (int64_t exclude : {0, 1}) {
          for (DType dtype : {DType::F32, DType::F64}) {
            Attributes attrs = resize_attrs(c, mode, transform, "round_prefer_floor", exclude);
            if (std::string(mode) == "cubic" && exclude == 1) attrs["cubic_coeff_a"] = -0.5;
            check_against_cpu(
                op_graph(OpKind::Resize, {{dtype, c.in}}, attrs), {float_data(dtype, c.in, ++seed)},
                name_of(dtype) + " " + mode + " " + transform + " exclude_outside " +
                    std::to_string(exclude) + " " + c.in.str() + " to " + c.out.str());
          }
        }
      }
    }
  }
}

// ---- GridSample ----

BOOST_AUTO_TEST_CASE(grid_sample_matches_the_cpu_in_every_mode_and_padding,
                     *boost::unit_test::precondition(device_available)) {
  uint64_t seed = 800;
  for (const auto& [in, grid] : grid_sample_cases()) {
    for (const char* mode : {"nearest", "bilinear", "bicubic"}) {
      for (const char* padding : {"zeros", "border", "reflection"}) {
        for (int64_t align : {0, 1}) {
          for (DType dtype : {DType::F32, DType::F64}) {
            check_against_cpu(op_graph(OpKind::GridSample, {{dtype, in}, {dtype, grid}},
                                       {{"mode", std::string(mode)},
                                        {"padding_mode", std::string(padding)},
                                        {"align_corners", align}}),
                              {float_data(dtype, in, ++seed), grid_values(dtype, grid, ++seed)},
                              name_of(dtype) + " " + mode + " " + padding + " align_corners " +
                                  std::to_string(align) + " " + in.str() + " at " + grid.str());
          }
        }
      }
    }
  }
}

// ---- Det ----

BOOST_AUTO_TEST_CASE(det_matches_the_cpu, *boost::unit_test::precondition(device_available)) {
  uint64_t seed = 900;
  for (DType dtype : {DType::F32, DType::F64}) {
    for (const Shape& shape : {Shape{0, 0}, Shape{1, 1}, Shape{6, 2, 2}, Shape{7, 3, 3},
                               Shape{2, 3, 5, 5}, Shape{300, 9, 9}, Shape{0, 4, 4}}) {
      Tensor x = float_data(dtype, shape, ++seed);
      check_against_cpu(op_graph(OpKind::Det, {{dtype, shape}}), {x},
                        name_of(dtype) + " Det of " + shape.str());
      // Mostly finite: every 7th element of float_data is special, which makes most
      // determinants NaN; these matrices keep the LU's arithmetic in play.
      const Tensor finite = random_tensor(dtype, shape, ++seed, -2.0, 2.0);
      check_against_cpu(op_graph(OpKind::Det, {{dtype, shape}}), {finite},
                        name_of(dtype) + " Det of finite " + shape.str());
    }
  }
}

// ---- Einsum ----

BOOST_AUTO_TEST_CASE(einsum_matches_the_cpu_on_the_gemm_and_the_label_loop,
                     *boost::unit_test::precondition(device_available)) {
  struct Case {
    std::string equation;
    std::vector<Shape> shapes;
  };
  const std::vector<Case> cases = {
      {"ij,jk->ik", {{7, 600}, {600, 5}}},                // K past one GEMM slice
      {"bij,bjk->bik", {{3, 4, 5}, {3, 5, 6}}},           // batched
      {"ij,jk->ki", {{4, 3}, {3, 5}}},                    // the product transposed into the output
      {"bij,jk->bki", {{2, 4, 3}, {3, 5}}},               // batch only A has: M holds it
      {"ii,ij->j", {{4, 4}, {4, 3}}},                     // a diagonal
      {"...ij,...jk->...ik", {{2, 1, 3, 4}, {5, 4, 2}}},  // ellipsis broadcasting
      {"ij,ij->", {{3, 4}, {3, 4}}},                      // everything summed
      {"i,j->ij", {{5}, {6}}},                            // nothing summed
      {"ij,jk->ik", {{2, 0}, {0, 3}}},                    // an empty sum
      {"ii->i", {{5, 5}}},
      {"ijk->kj", {{2, 3, 4}}},
      {"ij,jk,kl->il", {{3, 4}, {4, 5}, {5, 2}}},
      {"i,i,i->", {{4099}, {4099}, {4099}}}};
  uint64_t seed = 1000;
  for (DType dtype : {DType::F32, DType::F64, DType::I64, DType::I32}) {
    for (const Case& c : cases) {
      std::vector<TypeInfo> types;
      std::vector<Tensor> inputs;
      for (const Shape& shape : c.shapes) {
        types.push_back({dtype, shape});
        inputs.push_back(dtype == DType::F32 || dtype == DType::F64
                             ? float_data(dtype, shape, ++seed)
                             : random_tensor(dtype, shape, ++seed, -1e6, 1e6));
      }
      check_against_cpu(op_graph(OpKind::Einsum, types, {{"equation", c.equation}}), inputs,
                        name_of(dtype) + " Einsum " + c.equation);
      if (dtype == DType::F32 || dtype == DType::F64) {  // finite values: the sums in play
        for (Tensor& t : inputs) t = random_tensor(dtype, t.shape(), ++seed, -2.0, 2.0);
        check_against_cpu(op_graph(OpKind::Einsum, types, {{"equation", c.equation}}), inputs,
                          name_of(dtype) + " Einsum of finite values " + c.equation);
      }
    }
  }
}

}  // namespace
}  // namespace volta
