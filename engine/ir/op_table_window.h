#pragma once
// Internal: the window attributes Conv, ConvTranspose and the pools share
// (op_table_convolution.cpp, op_table_pooling.cpp).
//
// Layout is NCHW with 1 to 3 spatial dims. Window attributes are explicit: the ONNX importer
// resolves auto_pad, ConvTranspose's output_shape and the like into pads before it builds
// these ops, so kernels only ever see kernel_shape, strides, dilations and pads. An empty
// strides / dilations list means all ones, empty pads all zeros; pads are [begin..., end...].

#include <string>

#include "op_table_builders.h"

namespace volta::op_table {

[[noreturn]] inline void shape_fail(const std::string& message) { throw ShapeError(message); }

inline std::string ints_str(const std::vector<int64_t>& v) { return Shape(v).str(); }

// Spatial dims of an [N, C, D1, ..., Dn] input, 1 <= n <= 3.
inline int spatial_rank(const Shape& x, std::string_view op) {
  if (x.rank() < 3 || x.rank() > 5) {
    shape_fail(std::string(op) + " needs an input [N, C, D1...Dn] with 1 to 3 spatial dims, got " +
               x.str());
  }
  return x.rank() - 2;
}

// One entry per spatial axis (`count` per axis for pads), or `fill` everywhere when empty.
inline std::vector<int64_t> per_axis(const AttrReader& attrs, std::string_view name, int spatial,
                                     int64_t fill, int count = 1) {
  const std::vector<int64_t>& given = attrs.get_ints(name);
  const auto want = static_cast<size_t>(spatial) * static_cast<size_t>(count);
  if (given.empty()) return std::vector<int64_t>(want, fill);
  if (given.size() != want) {
    shape_fail(std::string(name) + " " + ints_str(given) + " has " + std::to_string(given.size()) +
               " entries, the input has " + std::to_string(spatial) + " spatial dims (expected " +
               std::to_string(want) + ")");
  }
  return given;
}

struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;
  int64_t extent(int a) const {  // the dilated kernel's span along spatial axis a
    const auto i = static_cast<size_t>(a);
    return (kernel[i] - 1) * dilations[i] + 1;
  }
  int64_t pad_begin(int a) const { return pads[static_cast<size_t>(a)]; }
  int64_t pad_end(int a) const { return pads[static_cast<size_t>(a) + kernel.size()]; }
};

inline Window read_window(const AttrReader& attrs, std::vector<int64_t> kernel) {
  const int spatial = static_cast<int>(kernel.size());
  for (int64_t k : kernel) {
    if (k < 1) shape_fail("kernel " + ints_str(kernel) + " has a dim below 1");
  }
  return Window{std::move(kernel), per_axis(attrs, "strides", spatial, 1),
                per_axis(attrs, "dilations", spatial, 1), per_axis(attrs, "pads", spatial, 0, 2)};
}

inline AttrSpec ints_min(std::string_view name, double min) {
  return {name, AttrType::Ints, AttrValue{std::vector<int64_t>{}}, min};
}

inline std::vector<AttrSpec> window_attrs(bool kernel_required) {
  AttrSpec kernel = ints_min("kernel_shape", 1.0);
  if (kernel_required) kernel.default_value = std::nullopt;
  return {std::move(kernel), ints_min("strides", 1.0), ints_min("dilations", 1.0),
          ints_min("pads", 0.0)};
}

}  // namespace volta::op_table
