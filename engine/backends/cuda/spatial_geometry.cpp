#include "spatial_geometry.h"

#include <algorithm>
#include <cstddef>
#include <vector>

#include "volta/ir/op_schema.h"

namespace volta::cuda {
namespace {

// Axis a of `spatial` lands at index a + (3 - spatial) of the three-dim arrays.
int first_axis(const Shape& x) { return kSpatialDims - (x.rank() - 2); }

// Sets dims[first + a] = values[a + offset] for each spatial axis a; empty values: unchanged.
void place(int64_t* dims, const std::vector<int64_t>& values, int spatial, int first,
           int offset = 0) {
  if (values.empty()) return;
  for (int a = 0; a < spatial; ++a)
    dims[first + a] = values[static_cast<size_t>(a) + static_cast<size_t>(offset)];
}

}  // namespace

PoolGeometry pool_geometry(const Node& node, const Shape& x, const Shape& y) {
  const AttrReader attrs(node);
  const int spatial = x.rank() - 2;
  const int first = first_axis(x);
  PoolGeometry g;
  g.planes = x[0] * x[1];
  for (int a = 0; a < spatial; ++a) {
    g.in[first + a] = x[a + 2];
    g.out[first + a] = y[a + 2];
  }
  place(g.kernel, attrs.get_ints("kernel_shape"), spatial, first);
  place(g.stride, attrs.get_ints("strides"), spatial, first);
  place(g.dilation, attrs.get_ints("dilations"), spatial, first);
  place(g.pad_begin, attrs.get_ints("pads"), spatial, first);
  place(g.pad_end, attrs.get_ints("pads"), spatial, first, spatial);
  return g;
}

ConvGeometry conv_geometry(const Node& node, const Shape& x, const Shape& w, const Shape& y) {
  const AttrReader attrs(node);
  const int spatial = x.rank() - 2;
  const int first = first_axis(x);
  ConvGeometry g;
  g.batch = x[0];
  g.channels_in = x[1];
  g.channels_out = y[1];
  g.group = attrs.get_int("group");
  for (int a = 0; a < spatial; ++a) {
    g.in[first + a] = x[a + 2];
    g.out[first + a] = y[a + 2];
    g.kernel[first + a] = w[a + 2];
  }
  place(g.stride, attrs.get_ints("strides"), spatial, first);
  place(g.dilation, attrs.get_ints("dilations"), spatial, first);
  place(g.pad, attrs.get_ints("pads"), spatial, first);
  const bool direct_kind = node.op == OpKind::Conv || node.op == OpKind::ConvGradFilter;
  g.depthwise = direct_kind && g.group > 1 && g.channels_in == g.group;
  if (node.op == OpKind::ConvGradFilter) {
    const int64_t taps = g.kernel[0] * g.kernel[1] * g.kernel[2];
    g.images_per_step =
        grad_images_per_step(g.batch, g.channels_in * taps * g.out[0] * g.out[1] * g.out[2]);
  }
  return g;
}

int64_t grad_images_per_step(int64_t batch, int64_t column_elements) {
  constexpr int64_t kCpuColumnBudget = int64_t{1} << 22;  // the CPU's conv::kColumnBudget
  return std::clamp<int64_t>(kCpuColumnBudget / std::max<int64_t>(column_elements, 1), 1,
                             std::max<int64_t>(batch, 1));
}

}  // namespace volta::cuda
