#include "broadcast_geometry.h"

namespace volta::cuda {

MergedBroadcast merge_broadcast(const Shape& out, const Shape& a, const Shape& b) {
  const std::vector<int64_t> full_a = broadcast_strides(a, out);
  const std::vector<int64_t> full_b = broadcast_strides(b, out);
  MergedBroadcast m;
  for (int d = 0; d < out.rank(); ++d) {
    if (out[d] == 1) continue;
    const auto axis = static_cast<size_t>(d);
    // Dim d joins the previous merged dim when stepping that dim once is, for both operands,
    // stepping d through its whole extent.
    const bool merges = !m.dims.empty() && m.a_strides.back() == full_a[axis] * out[d] &&
                        m.b_strides.back() == full_b[axis] * out[d];
    if (merges) {
      m.dims.back() *= out[d];
      m.a_strides.back() = full_a[axis];
      m.b_strides.back() = full_b[axis];
    } else {
      m.dims.push_back(out[d]);
      m.a_strides.push_back(full_a[axis]);
      m.b_strides.push_back(full_b[axis]);
    }
  }
  if (m.dims.empty()) m = {{1}, {1}, {1}};  // one element
  return m;
}

std::optional<BroadcastGeometry> broadcast_geometry(const MergedBroadcast& merged) {
  if (merged.dims.size() > static_cast<size_t>(kMaxBroadcastDims)) return std::nullopt;
  BroadcastGeometry g;
  g.rank = static_cast<int>(merged.dims.size());
  g.numel = 1;
  for (size_t d = 0; d < merged.dims.size(); ++d) {
    g.dims[d] = merged.dims[d];
    g.a_strides[d] = merged.a_strides[d];
    g.b_strides[d] = merged.b_strides[d];
    g.numel *= merged.dims[d];
  }
  return g;
}

}  // namespace volta::cuda
