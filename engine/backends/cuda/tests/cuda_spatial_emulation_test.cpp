// The pooling and convolution kernels' per-element code (kernels/spatial_element.h) compiled for
// the host and run over every output of every spatial case (spatial_cases.h), against the CPU
// backend's outputs as strictly as each op's claim (every bit; NaN's sign and payload aside where
// the claim says so: x86 picks which operand's NaN propagates by instruction). The device runs the
// same code with the same IEEE operations, so this checks on a machine without a GPU what only
// the kernels' indexing and order could get wrong; cuda_device_spatial_test checks the device.
// Also: the geometry the kernels get from a node, and the refusals of what they do not take.

#define BOOST_TEST_MODULE cuda_spatial_emulation_test
#include <boost/test/unit_test.hpp>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "kernels/spatial_element.h"
#include "spatial_cases.h"
#include "spatial_geometry.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta {
namespace {

using namespace spatial_test;  // NOLINT(google-build-using-namespace): this test's cases
using cuda::ConvGeometry;
using cuda::PoolGeometry;

const Backend& backend(const char* name) {
  static const std::unique_ptr<Backend> cpu = make_backend("cpu");
  static const std::unique_ptr<Backend> gpu = make_backend("cuda");
  return std::string(name) == "cpu" ? *cpu : *gpu;
}

std::vector<Tensor> run_cpu(const Graph& graph, const std::vector<Tensor>& inputs) {
  const Backend& cpu = backend("cpu");
  const ExecutionPlan plan = compile(graph, cpu, DeterminismMode::Strict, {.optimize = false});
  const std::unique_ptr<ExecutionContext> ctx = cpu.make_context({.threads = 4});
  return execute(plan, cpu, *ctx, inputs);
}

cuda::PoolOp pool_op(const Node& node) {
  const AttrReader attrs(node);
  if (node.op == OpKind::MaxPool) return cuda::PoolOp::Max;
  if (node.op == OpKind::AveragePool) {
    return attrs.get_int("count_include_pad") != 0 ? cuda::PoolOp::AverageIncludePad
                                                   : cuda::PoolOp::Average;
  }
  return attrs.get_int("p") == 1 ? cuda::PoolOp::L1 : cuda::PoolOp::L2;
}

cuda::GlobalPoolOp global_op(const Node& node) {
  if (node.op == OpKind::GlobalMaxPool) return cuda::GlobalPoolOp::Max;
  if (node.op == OpKind::GlobalAveragePool) return cuda::GlobalPoolOp::Average;
  return AttrReader(node).get_int("p") == 1 ? cuda::GlobalPoolOp::L1 : cuda::GlobalPoolOp::L2;
}

// What the CUDA kernels' threads compute, one call per output element, on the host.
template <class T>
std::vector<Tensor> emulate(const Node& node, const std::vector<Tensor>& in,
                            const std::vector<Tensor>& like) {
  std::vector<Tensor> out;
  out.reserve(like.size());
  for (const Tensor& t : like) out.emplace_back(t.dtype(), t.shape());
  T* y = out[0].data_as<T>();
  const T* x = in[0].data_as<T>();
  const int64_t n = out[0].numel();
  switch (op_schema(node.op).family) {
    case OpFamily::Pooling:
      if (node.op == OpKind::GlobalMaxPool || node.op == OpKind::GlobalAveragePool ||
          node.op == OpKind::GlobalLpPool) {
        const int64_t size = n == 0 ? 0 : in[0].numel() / n;
        for (int64_t p = 0; p < n; ++p) {
          y[p] = cuda::spatial::global_pool_element(global_op(node), x + p * size, size);
        }
      } else {
        const PoolGeometry g = cuda::pool_geometry(node, in[0].shape(), out[0].shape());
        const int64_t in_size = cuda::spatial::volume(g.in);
        const int64_t out_size = cuda::spatial::volume(g.out);
        const bool column_major =
            node.op == OpKind::MaxPool && AttrReader(node).get_int("storage_order") != 0;
        for (int64_t i = 0; i < n; ++i) {
          const T* xp = x + (i / out_size) * in_size;
          if (node.op == OpKind::MaxPool) {
            int64_t within = 0;
            y[i] = cuda::spatial::max_pool_element(g, xp, i % out_size, column_major, &within);
            if (out.size() > 1) out[1].data_as<int64_t>()[i] = (i / out_size) * in_size + within;
          } else {
            y[i] = cuda::spatial::sum_pool_element(pool_op(node), g, xp, i % out_size);
          }
        }
      }
      break;
    default: {
      if (node.op == OpKind::ConvGradFilter) {
        const ConvGeometry g =
            cuda::conv_geometry(node, in[0].shape(), out[0].shape(), in[1].shape());
        for (int64_t i = 0; i < n; ++i) {
          y[i] = cuda::spatial::conv_grad_filter_element(g, x, in[1].data_as<T>(), i);
        }
        break;
      }
      const ConvGeometry g =
          cuda::conv_geometry(node, in[0].shape(), in[1].shape(), out[0].shape());
      const T* w = in[1].data_as<T>();
      const T* bias = in.size() > 2 ? in[2].data_as<T>() : nullptr;
      for (int64_t i = 0; i < n; ++i) {
        y[i] = node.op == OpKind::Conv ? cuda::spatial::conv_element(g, x, w, bias, i)
                                       : cuda::spatial::conv_transpose_element(g, x, w, bias, i);
      }
    }
  }
  return out;
}

BOOST_AUTO_TEST_CASE(every_element_is_the_cpu_backends) {
  uint64_t seed = 1000;
  for (const SpatialCase& c : all_cases()) {
    for (DType dtype : {DType::F32, DType::F64}) {
      for (Values values : {Values::Uniform, Values::Ties, Values::Specials}) {
        const Graph graph = case_graph(c, dtype);
        const std::vector<Tensor> inputs = case_inputs(c, dtype, seed += 10, values);
        const std::vector<Tensor> want = run_cpu(graph, inputs);
        const std::vector<Tensor> got = dtype == DType::F64
                                            ? emulate<double>(graph.node(0), inputs, want)
                                            : emulate<float>(graph.node(0), inputs, want);
        for (size_t k = 0; k < want.size(); ++k) {
          const std::string breach = first_breach(claim_of(c.op), got[k], want[k]);
          BOOST_CHECK_MESSAGE(breach.empty(), c.name << " " << dtype_name(dtype) << " "
                                                     << values_name(values) << ", output " << k
                                                     << ": " << breach);
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(the_geometry_pads_the_spatial_dims_at_the_front) {
  const SpatialCase pool{"",
                         OpKind::MaxPool,
                         {{2, 3, 7, 9}},
                         {{"kernel_shape", Ints{3, 2}},
                          {"strides", Ints{2, 1}},
                          {"dilations", Ints{1, 2}},
                          {"pads", Ints{1, 0, 2, 1}}}};
  const Graph g = case_graph(pool, DType::F32);
  const PoolGeometry p = cuda::pool_geometry(g.node(0), Shape{2, 3, 7, 9}, Shape{2, 3, 4, 8});
  BOOST_TEST(p.planes == 6);
  BOOST_TEST((Ints(p.in, p.in + 3) == Ints{1, 7, 9}));
  BOOST_TEST((Ints(p.out, p.out + 3) == Ints{1, 4, 8}));
  BOOST_TEST((Ints(p.kernel, p.kernel + 3) == Ints{1, 3, 2}));
  BOOST_TEST((Ints(p.stride, p.stride + 3) == Ints{1, 2, 1}));
  BOOST_TEST((Ints(p.dilation, p.dilation + 3) == Ints{1, 1, 2}));
  BOOST_TEST((Ints(p.pad_begin, p.pad_begin + 3) == Ints{0, 1, 0}));
  BOOST_TEST((Ints(p.pad_end, p.pad_end + 3) == Ints{0, 2, 1}));

  const SpatialCase conv{"", OpKind::Conv, {{1, 4, 11}, {4, 1, 3}}, {{"group", int64_t{4}}}};
  const Graph cg = case_graph(conv, DType::F32);
  const ConvGeometry c =
      cuda::conv_geometry(cg.node(0), Shape{1, 4, 11}, Shape{4, 1, 3}, Shape{1, 4, 9});
  BOOST_TEST((Ints(c.in, c.in + 3) == Ints{1, 1, 11}));
  BOOST_TEST((Ints(c.kernel, c.kernel + 3) == Ints{1, 1, 3}));
  BOOST_TEST((Ints(c.stride, c.stride + 3) == Ints{1, 1, 1}));
  BOOST_TEST((Ints(c.pad, c.pad + 3) == Ints{0, 0, 0}));
  BOOST_TEST(c.depthwise);
  BOOST_TEST(c.group == 4);
}

BOOST_AUTO_TEST_CASE(taps_inside_clamp_to_the_input_and_the_kernel) {
  using cuda::spatial::taps_inside;
  // start -3, dilation 2: taps 2, 3, 4 land on 1, 3, 5 of an input of 6.
  BOOST_TEST(taps_inside(-3, 5, 2, 6).lo == 2);
  BOOST_TEST(taps_inside(-3, 5, 2, 6).hi == 5);
  BOOST_TEST(taps_inside(4, 3, 1, 6).hi == 2);        // runs past the end
  BOOST_TEST(taps_inside(-9, 3, 1, 6).count() == 0);  // all before the input
  BOOST_TEST(taps_inside(7, 3, 1, 6).count() == 0);   // all after it
}

// Each case selects its dtype's kernel, without workspace; LpPool's and GlobalLpPool's p other
// than 1 and 2 are refused naming it.
BOOST_AUTO_TEST_CASE(selection_takes_the_floats_and_refuses_the_rest_by_name) {
  const Backend& gpu = backend("cuda");
  for (const SpatialCase& c : all_cases()) {
    for (DType dtype : {DType::F32, DType::F64}) {
      const Graph g = case_graph(c, dtype);
      const KernelSelection s = gpu.select_kernel(g, g.node(0));
      const auto* choice = std::get_if<KernelChoice>(&s);
      BOOST_REQUIRE_MESSAGE(choice != nullptr, c.name);
      BOOST_TEST(choice->variant.starts_with(std::string(dtype_name(dtype)) + "_"), c.name);
      BOOST_TEST(choice->workspace_bytes == 0);
    }
  }
  for (OpKind op : {OpKind::LpPool, OpKind::GlobalLpPool}) {
    Attributes attrs = {{"p", int64_t{3}}};
    if (op == OpKind::LpPool) attrs["kernel_shape"] = Ints{2, 2};
    const Graph g = case_graph({"", op, {{1, 2, 4, 4}}, attrs}, DType::F32);
    const KernelSelection s = gpu.select_kernel(g, g.node(0));
    const auto* refused = std::get_if<KernelUnsupported>(&s);
    BOOST_REQUIRE(refused != nullptr);
    BOOST_TEST(refused->reason == "no CUDA kernel for " + std::string(op_name(op)) +
                                      " with p 3 (supported: p 1 and 2; the CPU's std::pow for "
                                      "other p has no bit-equal device counterpart)");
  }
}

}  // namespace
}  // namespace volta
