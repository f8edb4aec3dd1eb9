#pragma once
// Internal to the CPU convolution kernels (convolution.cpp, convolution_grad_filter.cpp): the
// node's window padded to three spatial dims, the window arithmetic and im2col they share.

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "cpu_kernel.h"

namespace volta::cpu::conv {

using Dims3 = std::array<int64_t, 3>;

inline int64_t product(const Dims3& d) { return d[0] * d[1] * d[2]; }

// Spatial attributes of the node, padded to three dims.
struct Geometry {
  int64_t batch = 0, channels_in = 0, channels_out = 0, group = 1;
  Dims3 in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1}, stride{1, 1, 1}, dilation{1, 1, 1},
      pad{0, 0, 0};  // pad: the begin pads
  int64_t taps() const { return product(kernel); }
};

// `out` is the spatial output (Conv: Y, ConvTranspose: also Y, ConvGradFilter: dY); W's
// spatial dims are the kernel (ConvGradFilter: dW's).
inline Geometry geometry(const AttrReader& attrs, const Shape& x, const Shape& w, const Shape& y) {
  const int spatial = x.rank() - 2;
  const int skip = 3 - spatial;
  Geometry g;
  g.batch = x[0];
  g.channels_in = x[1];
  g.channels_out = y[1];
  g.group = attrs.get_int("group");
  const std::vector<int64_t>& strides = attrs.get_ints("strides");
  const std::vector<int64_t>& dilations = attrs.get_ints("dilations");
  const std::vector<int64_t>& pads = attrs.get_ints("pads");
  for (int a = 0; a < spatial; ++a) {
    const auto i = static_cast<size_t>(a);
    const auto d = static_cast<size_t>(a) + static_cast<size_t>(skip);
    g.in[d] = x[a + 2];
    g.out[d] = y[a + 2];
    g.kernel[d] = w[a + 2];
    if (!strides.empty()) g.stride[d] = strides[i];
    if (!dilations.empty()) g.dilation[d] = dilations[i];
    if (!pads.empty()) g.pad[d] = pads[i];
  }
  return g;
}

// The j in [0, n) with 0 <= j * step + offset < size, as [lo, hi).
struct Range {
  int64_t lo, hi;
};
inline Range valid_range(int64_t n, int64_t step, int64_t offset, int64_t size) {
  const int64_t lo = offset >= 0 ? 0 : (-offset + step - 1) / step;
  const int64_t last = size - 1 - offset;  // j * step <= last
  const int64_t hi = last < 0 ? 0 : last / step + 1;
  const int64_t clamped_lo = std::min(lo, n);
  return {clamped_lo, std::clamp(hi, clamped_lo, n)};
}

// Kernel tap `tap` (row-major over the kernel) as indices (kd, kh, kw), the width offset its
// reads take (output ow reads input ow * stride + w_offset), and per axis the output positions
// whose read lands inside the input (the direct kernels of Conv and ConvGradFilter).
struct TapReads {
  int64_t kd, kh, kw, w_offset;
  Range rd, rh, rw;
};
inline TapReads tap_reads(const Geometry& g, int64_t tap) {
  const int64_t kw = tap % g.kernel[2];
  const int64_t kh = (tap / g.kernel[2]) % g.kernel[1];
  const int64_t kd = tap / (g.kernel[2] * g.kernel[1]);
  const int64_t w_offset = kw * g.dilation[2] - g.pad[2];
  return {kd,
          kh,
          kw,
          w_offset,
          valid_range(g.out[0], g.stride[0], kd * g.dilation[0] - g.pad[0], g.in[0]),
          valid_range(g.out[1], g.stride[1], kh * g.dilation[1] - g.pad[1], g.in[1]),
          valid_range(g.out[2], g.stride[2], w_offset, g.in[2])};
}

// Column-matrix elements per step of images: bounds the scratch memory, set by the shape.
inline constexpr int64_t kColumnBudget = int64_t{1} << 22;

inline int64_t images_per_step(int64_t batch, int64_t column_elements) {
  return std::clamp<int64_t>(kColumnBudget / std::max<int64_t>(column_elements, 1), 1,
                             std::max<int64_t>(batch, 1));
}

// Rows per im2col / col2im task: about kElementwiseChunk elements each.
inline int64_t rows_per_task(int64_t row_length) {
  return std::max<int64_t>(1, kElementwiseChunk / std::max<int64_t>(row_length, 1));
}

// Row r = (c, kd, kh, kw) of one image's column matrix: col[r][o] = X[c][o * stride - pad +
// k * dilation], 0 where that falls into the padding.
template <class T>
void im2col_row(const Geometry& g, const T* x_channel, int64_t tap, T* row) {
  const int64_t kw = tap % g.kernel[2];
  const int64_t kh = (tap / g.kernel[2]) % g.kernel[1];
  const int64_t kd = tap / (g.kernel[2] * g.kernel[1]);
  const int64_t w_offset = kw * g.dilation[2] - g.pad[2];  // input column of output column 0
  const Range rw = valid_range(g.out[2], g.stride[2], w_offset, g.in[2]);
  for (int64_t od = 0; od < g.out[0]; ++od) {
    const int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dilation[0];
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      const int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dilation[1];
      T* dst = row + (od * g.out[1] + oh) * g.out[2];
      if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1]) {
        std::fill(dst, dst + g.out[2], T(0));
        continue;
      }
      const T* src = x_channel + (id * g.in[1] + ih) * g.in[2];
      std::fill(dst, dst + rw.lo, T(0));
      if (g.stride[2] == 1 && rw.lo < rw.hi) {
        std::copy(src + rw.lo + w_offset, src + rw.hi + w_offset, dst + rw.lo);
      } else {
        for (int64_t ow = rw.lo; ow < rw.hi; ++ow) dst[ow] = src[ow * g.stride[2] + w_offset];
      }
      std::fill(dst + rw.hi, dst + g.out[2], T(0));
    }
  }
}

}  // namespace volta::cpu::conv
