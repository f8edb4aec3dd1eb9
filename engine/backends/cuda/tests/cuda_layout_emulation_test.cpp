// The layout kernels' index arithmetic (kernels/layout_kernel.cuh) run on the host against the
// CPU backend: Tile, Pad (every mode, negative pads, a given constant), DepthToSpace (DCR, CRD),
// SpaceToDepth and ReverseSequence, each output element copied from where the device code says,
// compared byte for byte. The geometry is built by the backend's own layout_launch.h functions.
// The device tests (cuda_device_layout_test) check what nvcc makes of it.

#define BOOST_TEST_MODULE cuda_layout_emulation_test
#include <cuda_runtime_api.h>

#include <boost/test/unit_test.hpp>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

// NOLINTBEGIN(bugprone-reserved-identifier): the CUDA names the kernel is written with, which
// cuda_runtime_api.h defines as device attributes a host compiler does not know.
#undef __device__
#undef __forceinline__
#define __device__
#define __forceinline__ inline
// NOLINTEND(bugprone-reserved-identifier)

#include "kernels/layout_kernel.cuh"
#include "kernels/layout_launch.h"
#include "resampling_cases.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta {
namespace {

using resampling_test::random_of;
namespace detail = cuda::layout_detail;

const Backend& cpu() {
  static const std::unique_ptr<Backend> backend = make_backend("cpu");
  return *backend;
}

constexpr DType kDTypes[] = {DType::F32, DType::F64, DType::I64, DType::I32, DType::Bool};

Graph one_node(OpKind op, const std::vector<TypeInfo>& inputs, Attributes attrs) {
  Graph g;
  std::vector<ValueId> ids;
  for (size_t i = 0; i < inputs.size(); ++i) {
    ids.push_back(g.add_input("in" + std::to_string(i), inputs[i].dtype, inputs[i].shape));
  }
  g.set_outputs({g.add(op, ids, std::move(attrs), "op")});
  return g;
}

// Output element i copied from input element source(i), or from `constant` (zero bytes when
// null) where source(i) < 0; checked against the CPU byte for byte.
void check(const Graph& g, const std::vector<Tensor>& inputs,
           const std::function<int64_t(int64_t)>& source, const Tensor* constant,
           const std::string& what) {
  const ExecutionPlan plan = compile(g, cpu(), DeterminismMode::Strict, {.optimize = false});
  const std::unique_ptr<ExecutionContext> ctx = cpu().make_context({.threads = 3});
  const Tensor want = execute(plan, cpu(), *ctx, inputs).at(0);
  const size_t size = dtype_size(want.dtype());
  const std::vector<std::byte> zeros(size);
  const auto* x = static_cast<const std::byte*>(inputs[0].data());
  const auto* w = static_cast<const std::byte*>(want.data());
  for (int64_t i = 0; i < want.numel(); ++i) {
    const int64_t at = source(i);
    const std::byte* from = at >= 0               ? x + static_cast<size_t>(at) * size
                            : constant != nullptr ? static_cast<const std::byte*>(constant->data())
                                                  : zeros.data();
    if (std::memcmp(from, w + static_cast<size_t>(i) * size, size) != 0) {
      BOOST_ERROR(what << ": element " << i << " differs (source " << at << ")");
      return;
    }
  }
}

BOOST_AUTO_TEST_CASE(tile_reads_where_the_cpu_does) {
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
      const Graph g = one_node(OpKind::Tile, {{dtype, in}}, {{"repeats", repeats}});
      const Shape out = g.value(g.outputs()[0]).shape;
      const std::optional<cuda::LayoutAxes> axes = cuda::layout_axes(g.node(0), in, out);
      BOOST_REQUIRE(axes.has_value());
      check(
          g, {random_of(dtype, in, ++seed)},
          [&](int64_t i) { return detail::tile_source(*axes, i); }, nullptr,
          std::string(dtype_name(dtype)) + " Tile of " + in.str());
    }
  }
}

BOOST_AUTO_TEST_CASE(pad_reads_where_the_cpu_does_in_every_mode) {
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{5}, {2, 3}},
      {{5}, {12, 9}},
      {{1, 4}, {2, 1, 3, 2}},
      {{3, 4, 5}, {1, -1, 2, 0, 2, -3}},
      {{4, 6}, {-2, -1, -1, -2}},
      {{2, 4097}, {0, 1, 1, 2}},
      {{2, 0, 3}, {1, 1, 0, 0, 2, 1}},
      {{2, 1}, {3, 4, 5, 6}},
      {{}, {}}};
  uint64_t seed = 200;
  for (DType dtype : kDTypes) {
    for (const std::string mode : {"constant", "reflect", "edge"}) {
      for (const auto& [in, pads] : cases) {
        if (mode != "constant" && in.numel() == 0) continue;
        const std::string what = std::string(dtype_name(dtype)) + " Pad " + mode + " of " +
                                 in.str() + " by " + Shape(pads).str();
        for (bool given : {false, true}) {
          if (given && mode != "constant") continue;
          std::vector<TypeInfo> types = {{dtype, in}};
          std::vector<Tensor> inputs = {random_of(dtype, in, ++seed)};
          if (given) {
            types.push_back({dtype, Shape{}});
            inputs.push_back(random_of(dtype, Shape{}, ++seed));
          }
          const Graph g = one_node(OpKind::Pad, types, {{"pads", pads}, {"mode", mode}});
          const Shape out = g.value(g.outputs()[0]).shape;
          const std::optional<cuda::LayoutAxes> axes = cuda::layout_axes(g.node(0), in, out);
          BOOST_REQUIRE(axes.has_value());
          const cuda::PadMode m = cuda::pad_mode(g.node(0));
          check(
              g, inputs, [&](int64_t i) { return detail::pad_source(m, *axes, i); },
              given ? &inputs[1] : nullptr, what + (given ? " with a constant" : ""));
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(depth_and_space_moves_read_where_the_cpu_does) {
  uint64_t seed = 300;
  for (DType dtype : kDTypes) {
    for (const auto& [in, block] : std::vector<std::pair<Shape, int64_t>>{
             {{2, 8, 3, 5}, 2}, {{1, 27, 2, 3}, 3}, {{3, 5, 4, 2}, 1}, {{1, 64, 17, 33}, 4}}) {
      for (const std::string mode : {"DCR", "CRD"}) {
        const Graph g =
            one_node(OpKind::DepthToSpace, {{dtype, in}}, {{"blocksize", block}, {"mode", mode}});
        const Shape out = g.value(g.outputs()[0]).shape;
        const cuda::SpaceDepthOp op = cuda::space_depth_op(g.node(0));
        const cuda::SpaceDepthGeometry geometry = cuda::space_depth_geometry(g.node(0), in, out);
        check(
            g, {random_of(dtype, in, ++seed)},
            [&](int64_t i) { return detail::space_depth_source(op, geometry, i); }, nullptr,
            std::string(dtype_name(dtype)) + " DepthToSpace " + mode + " of " + in.str());
      }
    }
    for (const auto& [in, block] : std::vector<std::pair<Shape, int64_t>>{
             {{2, 3, 4, 6}, 2}, {{1, 2, 9, 6}, 3}, {{2, 1, 3, 5}, 1}, {{1, 3, 68, 132}, 4}}) {
      const Graph g = one_node(OpKind::SpaceToDepth, {{dtype, in}}, {{"blocksize", block}});
      const Shape out = g.value(g.outputs()[0]).shape;
      const cuda::SpaceDepthGeometry geometry = cuda::space_depth_geometry(g.node(0), in, out);
      check(
          g, {random_of(dtype, in, ++seed)},
          [&](int64_t i) {
            return detail::space_depth_source(cuda::SpaceDepthOp::SpaceToDepth, geometry, i);
          },
          nullptr, std::string(dtype_name(dtype)) + " SpaceToDepth of " + in.str());
    }
  }
}

BOOST_AUTO_TEST_CASE(reverse_sequence_reads_where_the_cpu_does) {
  uint64_t seed = 400;
  for (DType dtype : kDTypes) {
    for (int64_t batch_axis : {0, 1}) {
      const Shape in = batch_axis == 0 ? Shape{4, 6, 3, 2} : Shape{6, 4, 5};
      std::vector<int64_t> lengths;
      for (int64_t e = 0; e < 4; ++e) lengths.push_back((e * 5) % 7);
      Tensor lens(DType::I64, Shape{4});
      std::memcpy(lens.data(), lengths.data(), lens.nbytes());
      const Graph g = one_node(OpKind::ReverseSequence, {{dtype, in}, {DType::I64, Shape{4}}},
                               {{"batch_axis", batch_axis}, {"time_axis", 1 - batch_axis}});
      const cuda::ReverseSequenceGeometry geometry = cuda::reverse_sequence_geometry(g.node(0), in);
      check(
          g, {random_of(dtype, in, ++seed), lens},
          [&](int64_t i) { return detail::reverse_sequence_source(geometry, lengths.data(), i); },
          nullptr,
          std::string(dtype_name(dtype)) + " ReverseSequence batch_axis " +
              std::to_string(batch_axis));
    }
  }
}

}  // namespace
}  // namespace volta
