#pragma once
// Internal to the reference engine: the N-D window arithmetic its Conv, ConvTranspose and
// pooling kernels share (ops/convolution.cpp, ops/pooling.cpp).

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "ref_util.h"

namespace volta::reference {

// Window attributes over the spatial axes; empty lists take their documented defaults.
struct Spatial {
  std::vector<int64_t> kernel, strides, dilations, pads;  // pads: begin..., end...
  size_t rank() const { return kernel.size(); }
  int64_t pad_begin(size_t a) const { return pads[a]; }
  int64_t pad_end(size_t a) const { return pads[a + rank()]; }
};

inline std::vector<int64_t> ints_or(const AttrReader& attrs, std::string_view name, size_t n,
                                    int64_t fill) {
  const std::vector<int64_t>& v = attrs.get_ints(name);
  return v.empty() ? std::vector<int64_t>(n, fill) : v;
}

inline Spatial read_spatial(const AttrReader& attrs, std::vector<int64_t> kernel) {
  const size_t n = kernel.size();
  return Spatial{std::move(kernel), ints_or(attrs, "strides", n, 1),
                 ints_or(attrs, "dilations", n, 1), ints_or(attrs, "pads", 2 * n, 0)};
}

inline std::vector<int64_t> spatial_dims(const Shape& s) {
  return std::vector<int64_t>(s.dims().begin() + 2, s.dims().end());
}

// Offset of X[n, c, pos...].
inline int64_t x_offset(const Shape& x, int64_t n, int64_t c, const std::vector<int64_t>& pos) {
  int64_t offset = n * x[1] + c;
  for (size_t a = 0; a < pos.size(); ++a) offset = offset * x[static_cast<int>(a) + 2] + pos[a];
  return offset;
}

// The input position tap k of output o reads, or nullopt when it is in the padding.
inline std::optional<std::vector<int64_t>> tap_position(const Spatial& s, const Shape& x,
                                                        std::span<const int64_t> out_index,
                                                        std::span<const int64_t> k) {
  std::vector<int64_t> pos(s.rank());
  for (size_t a = 0; a < s.rank(); ++a) {
    pos[a] = out_index[a + 2] * s.strides[a] - s.pad_begin(a) + k[a] * s.dilations[a];
    if (pos[a] < 0 || pos[a] >= x[static_cast<int>(a) + 2]) return std::nullopt;
  }
  return pos;
}

}  // namespace volta::reference
