#pragma once
// The pooling and convolution problems that both the host emulation test
// (cuda_spatial_emulation_test.cpp) and the device test (cuda_device_spatial_test.cpp) hold
// against the CPU backend: 1-D to 3-D windows with strides, dilations, asymmetric pads,
// ceil_mode, groups, depthwise, sums crossing the GEMM's K slices and the tree's leaves, empty
// and one-element tensors; and their inputs (uniform values, ties of both zeros, special values).

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "volta/backends/cuda.h"
#include "volta/ir/graph.h"
#include "volta/ir/random.h"
#include "volta/ir/shape.h"

namespace volta::spatial_test {

using Ints = std::vector<int64_t>;

struct SpatialCase {
  std::string name;
  OpKind op;
  std::vector<Shape> inputs;
  Attributes attrs;
  int outputs = 1;
};

inline Graph case_graph(const SpatialCase& c, DType dtype) {
  Graph g;
  std::vector<ValueId> ids;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    ids.push_back(g.add_input("in" + std::to_string(i), dtype, c.inputs[i]));
  }
  g.set_outputs(g.add_node(c.op, ids, c.attrs, "op", c.outputs));
  return g;
}

// Windows of the three pools, each also as MaxPool with its Indices both storage orders.
inline std::vector<SpatialCase> window_cases() {
  struct Window {
    std::string name;
    Shape x;
    Attributes attrs;
  };
  const std::vector<Window> windows = {
      {"1-D stride 2 pads",
       {2, 3, 11},
       {{"kernel_shape", Ints{3}}, {"strides", Ints{2}}, {"pads", Ints{1, 1}}}},
      {"2-D dilated ceil",
       {1, 2, 7, 9},
       {{"kernel_shape", Ints{3, 2}},
        {"strides", Ints{2, 1}},
        {"dilations", Ints{1, 2}},
        {"pads", Ints{1, 0, 2, 1}},
        {"ceil_mode", int64_t{1}}}},
      {"2-D plain", {3, 4, 8, 8}, {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}}},
      {"2-D ceil dilated pads",
       {1, 1, 10, 10},
       {{"kernel_shape", Ints{3, 3}},
        {"strides", Ints{3, 3}},
        {"dilations", Ints{2, 2}},
        {"pads", Ints{1, 1, 1, 1}},
        {"ceil_mode", int64_t{1}}}},
      {"3-D",
       {1, 2, 5, 6, 7},
       {{"kernel_shape", Ints{2, 3, 2}},
        {"strides", Ints{1, 2, 2}},
        {"pads", Ints{0, 1, 1, 1, 0, 1}}}},
      {"3-D dilated ceil",
       {2, 1, 6, 5, 9},
       {{"kernel_shape", Ints{2, 2, 3}},
        {"strides", Ints{2, 1, 3}},
        {"dilations", Ints{2, 1, 2}},
        {"pads", Ints{1, 0, 1, 0, 1, 1}},
        {"ceil_mode", int64_t{1}}}},
      {"one element", {1, 1, 1, 1}, {{"kernel_shape", Ints{1, 1}}}},
      {"empty batch", {0, 2, 5, 5}, {{"kernel_shape", Ints{2, 2}}}},
  };
  std::vector<SpatialCase> cases;
  for (const Window& w : windows) {
    cases.push_back({"MaxPool " + w.name, OpKind::MaxPool, {w.x}, w.attrs});
    for (int64_t order : {0, 1}) {
      Attributes attrs = w.attrs;
      attrs["storage_order"] = order;
      cases.push_back({"MaxPool+Indices storage_order " + std::to_string(order) + " " + w.name,
                       OpKind::MaxPool,
                       {w.x},
                       attrs,
                       2});
    }
    for (int64_t include_pad : {0, 1}) {
      Attributes attrs = w.attrs;
      attrs["count_include_pad"] = include_pad;
      cases.push_back(
          {"AveragePool count_include_pad " + std::to_string(include_pad) + " " + w.name,
           OpKind::AveragePool,
           {w.x},
           attrs});
    }
    for (int64_t p : {1, 2}) {
      Attributes attrs = w.attrs;
      attrs["p"] = p;
      cases.push_back(
          {"LpPool p " + std::to_string(p) + " " + w.name, OpKind::LpPool, {w.x}, attrs});
    }
  }
  return cases;
}

// Planes of one element, of a few lanes, across one and several tree leaves; no planes.
inline std::vector<SpatialCase> global_cases() {
  const std::vector<Shape> shapes = {{2, 3, 5, 7}, {1, 2, 4097}, {2, 1, 3, 50, 70},
                                     {1, 1, 1},    {3, 2, 1, 3}, {0, 3, 4, 4}};
  std::vector<SpatialCase> cases;
  for (const Shape& x : shapes) {
    cases.push_back({"GlobalAveragePool " + x.str(), OpKind::GlobalAveragePool, {x}, {}});
    cases.push_back({"GlobalMaxPool " + x.str(), OpKind::GlobalMaxPool, {x}, {}});
    for (int64_t p : {1, 2}) {
      cases.push_back({"GlobalLpPool p " + std::to_string(p) + " " + x.str(),
                       OpKind::GlobalLpPool,
                       {x},
                       {{"p", p}}});
    }
  }
  return cases;
}

inline std::vector<SpatialCase> conv_cases() {
  return {
      {"Conv 2-D pads B",
       OpKind::Conv,
       {{2, 3, 9, 8}, {4, 3, 3, 3}, {4}},
       {{"pads", Ints{1, 1, 1, 1}}}},
      {"Conv 2-D groups strides dilations",
       OpKind::Conv,
       {{1, 4, 11, 10}, {6, 2, 3, 2}},
       {{"group", int64_t{2}},
        {"strides", Ints{2, 3}},
        {"dilations", Ints{2, 1}},
        {"pads", Ints{2, 0, 1, 1}}}},
      {"Conv 1-D",
       OpKind::Conv,
       {{3, 5, 20}, {2, 5, 4}},
       {{"strides", Ints{2}}, {"pads", Ints{3, 0}}}},
      {"Conv 3-D B",
       OpKind::Conv,
       {{1, 2, 5, 6, 4}, {3, 2, 2, 3, 2}, {3}},
       {{"pads", Ints{1, 0, 1, 0, 1, 1}}, {"strides", Ints{1, 2, 1}}}},
      {"Conv depthwise x2 B",
       OpKind::Conv,
       {{2, 4, 7, 7}, {8, 1, 3, 3}, {8}},
       {{"group", int64_t{4}}, {"pads", Ints{1, 1, 1, 1}}}},
      {"Conv depthwise strided",
       OpKind::Conv,
       {{1, 3, 9, 6}, {3, 1, 2, 3}},
       {{"group", int64_t{3}}, {"strides", Ints{2, 2}}, {"pads", Ints{0, 1, 1, 2}}}},
      {"Conv K past a slice B",
       OpKind::Conv,
       {{1, 64, 6, 6}, {5, 64, 3, 3}, {5}},
       {{"pads", Ints{1, 1, 1, 1}}}},
      {"Conv 1x1", OpKind::Conv, {{2, 8, 5, 5}, {3, 8, 1, 1}}, {}},
      {"Conv one element", OpKind::Conv, {{1, 1, 1}, {1, 1, 1}}, {}},
      {"Conv empty batch", OpKind::Conv, {{0, 3, 5, 5}, {2, 3, 3, 3}}, {}},
      {"Conv no input channels B", OpKind::Conv, {{1, 0, 4, 4}, {3, 0, 3, 3}, {3}}, {}},
      {"ConvTranspose no input channels B",
       OpKind::ConvTranspose,
       {{1, 0, 3, 3}, {0, 2, 2, 2}, {2}},
       {}},
      {"ConvTranspose 2-D strides pads output_padding B",
       OpKind::ConvTranspose,
       {{2, 3, 4, 5}, {3, 2, 3, 3}, {2}},
       {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 0, 1}}, {"output_padding", Ints{1, 0}}}},
      {"ConvTranspose groups dilations",
       OpKind::ConvTranspose,
       {{1, 4, 5, 5}, {4, 3, 2, 2}},
       {{"group", int64_t{2}}, {"dilations", Ints{2, 1}}, {"strides", Ints{1, 2}}}},
      {"ConvTranspose 1-D K past a slice",
       OpKind::ConvTranspose,
       {{2, 600, 3}, {600, 2, 3}},
       {{"strides", Ints{3}}}},
      {"ConvTranspose 3-D B",
       OpKind::ConvTranspose,
       {{1, 2, 3, 3, 2}, {2, 2, 2, 2, 2}, {2}},
       {{"strides", Ints{2, 1, 2}}, {"pads", Ints{0, 1, 0, 1, 0, 0}}}},
      {"ConvTranspose depthwise-like groups",
       OpKind::ConvTranspose,
       {{1, 3, 4, 4}, {3, 1, 3, 3}},
       {{"group", int64_t{3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}},
  };
}

// ConvGradFilter: X and dY (Conv's output of X, or fewer positions), dW's kernel_shape.
inline std::vector<SpatialCase> grad_filter_cases() {
  const OpKind op = OpKind::ConvGradFilter;
  return {
      {"ConvGradFilter 2-D pads",
       op,
       {{2, 3, 9, 8}, {2, 4, 9, 8}},
       {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}}},
      {"ConvGradFilter groups strides dilations",
       op,
       {{1, 4, 11, 10}, {1, 6, 5, 4}},
       {{"kernel_shape", Ints{3, 2}},
        {"group", int64_t{2}},
        {"strides", Ints{2, 3}},
        {"dilations", Ints{2, 1}},
        {"pads", Ints{2, 0, 1, 1}}}},
      {"ConvGradFilter 1-D",
       op,
       {{3, 5, 20}, {3, 2, 10}},
       {{"kernel_shape", Ints{4}}, {"strides", Ints{2}}, {"pads", Ints{3, 0}}}},
      {"ConvGradFilter 3-D",
       op,
       {{2, 2, 5, 6, 4}, {2, 3, 5, 3, 4}},
       {{"kernel_shape", Ints{2, 3, 2}},
        {"strides", Ints{1, 2, 1}},
        {"pads", Ints{1, 0, 1, 0, 1, 1}}}},
      {"ConvGradFilter depthwise x2",
       op,
       {{2, 4, 7, 7}, {2, 8, 7, 7}},
       {{"kernel_shape", Ints{3, 3}}, {"group", int64_t{4}}, {"pads", Ints{1, 1, 1, 1}}}},
      {"ConvGradFilter depthwise strided rows past 8",
       op,
       {{3, 3, 9, 30}, {3, 3, 5, 15}},
       {{"kernel_shape", Ints{2, 3}},
        {"group", int64_t{3}},
        {"strides", Ints{2, 2}},
        {"pads", Ints{0, 1, 1, 2}}}},
      {"ConvGradFilter K past a slice",
       op,
       {{6, 2, 12, 12}, {6, 3, 10, 10}},
       {{"kernel_shape", Ints{3, 3}}}},
      {"ConvGradFilter steps of one image",
       op,
       {{3, 16, 131, 131}, {3, 2, 129, 129}},
       {{"kernel_shape", Ints{3, 3}}}},
      {"ConvGradFilter fewer positions than fit",
       op,
       {{1, 2, 8, 8}, {1, 2, 5, 6}},
       {{"kernel_shape", Ints{3, 3}}}},
      {"ConvGradFilter empty batch",
       op,
       {{0, 3, 5, 5}, {0, 2, 3, 3}},
       {{"kernel_shape", Ints{3, 3}}}},
  };
}

inline std::vector<SpatialCase> all_cases() {
  std::vector<SpatialCase> cases = window_cases();
  for (std::vector<SpatialCase> more : {global_cases(), conv_cases(), grad_filter_cases()}) {
    cases.insert(cases.end(), more.begin(), more.end());
  }
  return cases;
}

enum class Values { Uniform, Ties, Specials };
inline const char* values_name(Values v) {
  return v == Values::Uniform ? "uniform" : v == Values::Ties ? "ties" : "specials";
}

// Uniform in [-2, 2); Ties: the integers -2 ... 1 with zeros of both signs; Specials: uniform
// with every 11th element a NaN (two payloads), an infinity of either sign or a -0.
inline Tensor case_input(DType dtype, const Shape& shape, uint64_t seed, Values values) {
  Tensor t = random_tensor(dtype, shape, seed, -2.0, 2.0);
  const auto adjust = [&](auto* v) {
    using T = std::remove_pointer_t<decltype(v)>;
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (values == Values::Ties) {
        v[i] = std::floor(v[i]);
        if (v[i] == T(0) && i % 2 == 1) v[i] = -T(0);
      } else if (values == Values::Specials && i % 11 == 5) {
        const int64_t kind = (i / 11) % 5;
        const T inf = std::numeric_limits<T>::infinity();
        const T nan = std::numeric_limits<T>::quiet_NaN();
        v[i] = kind == 0 ? nan : kind == 1 ? -nan : kind == 2 ? inf : kind == 3 ? -inf : -T(0);
      }
    }
  };
  if (dtype == DType::F64) {
    adjust(t.data_as<double>());
  } else {
    adjust(t.data_as<float>());
  }
  return t;
}

inline std::vector<Tensor> case_inputs(const SpatialCase& c, DType dtype, uint64_t seed,
                                       Values values) {
  std::vector<Tensor> inputs;
  for (const Shape& shape : c.inputs) inputs.push_back(case_input(dtype, shape, ++seed, values));
  return inputs;
}

// Element i of an f32, f64 or i64 tensor: its bits, and whether it is NaN.
struct Element {
  uint64_t bits;
  bool nan;
  double value;
};
inline Element element(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::I64) {
    const int64_t v = t.data_as<int64_t>()[i];
    return {static_cast<uint64_t>(v), false, static_cast<double>(v)};
  }
  if (t.dtype() == DType::F64) {
    const double v = t.data_as<double>()[i];
    return {std::bit_cast<uint64_t>(v), v != v, v};
  }
  const float v = t.data_as<float>()[i];
  return {std::bit_cast<uint32_t>(v), v != v, static_cast<double>(v)};
}

// The first element where `got` breaks `claim` against `want`, or empty.
inline std::string first_breach(CrossBackendExactness claim, const Tensor& got,
                                const Tensor& want) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    return "type " + got.shape().str() + " vs " + want.shape().str();
  }
  for (int64_t i = 0; i < got.numel(); ++i) {
    const Element g = element(got, i);
    const Element w = element(want, i);
    const bool nan_aside =
        claim == CrossBackendExactness::BitwiseExceptNanPayload && g.nan && w.nan;
    if (g.bits != w.bits && !nan_aside) {
      char text[160];
      std::snprintf(text, sizeof text, "element %lld: got %.17g (0x%llx), cpu %.17g (0x%llx)",
                    static_cast<long long>(i), g.value, static_cast<unsigned long long>(g.bits),
                    w.value, static_cast<unsigned long long>(w.bits));
      return text;
    }
  }
  return {};
}

inline CrossBackendExactness claim_of(OpKind op) {
  for (const CudaOpClaim& c : cuda_op_claims()) {
    if (c.op == op) return c.exactness;
  }
  return CrossBackendExactness::NotClaimed;
}

}  // namespace volta::spatial_test
