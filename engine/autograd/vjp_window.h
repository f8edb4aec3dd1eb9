#pragma once
// Internal to autograd: window arithmetic shared by the VJP rules of Conv, ConvTranspose and the
// windowed pools (vjp_convolution.cpp, vjp_pooling.cpp). Window attributes are explicit in the
// IR (the ONNX importer resolves auto_pad into pads), so the rules only see kernel, strides,
// dilations and pads [begin..., end...].

#include <vector>

#include "vjp.h"

namespace volta::autograd {

struct WindowAttrs {
  std::vector<int64_t> kernel, strides, dilations, pads;
  int spatial() const { return static_cast<int>(kernel.size()); }
  int64_t pad_begin(int a) const { return pads[static_cast<size_t>(a)]; }
  int64_t pad_end(int a) const { return pads[static_cast<size_t>(a) + kernel.size()]; }
  int64_t stride(int a) const { return strides[static_cast<size_t>(a)]; }
  int64_t dilation(int a) const { return dilations[static_cast<size_t>(a)]; }
  int64_t extent(int a) const { return (kernel[static_cast<size_t>(a)] - 1) * dilation(a) + 1; }
};

// The node's window over `kernel`; empty strides / dilations / pads take their defaults.
WindowAttrs read_window(const AttrReader& attrs, std::vector<int64_t> kernel);

// Spatial dims of an [N, C, D...] shape.
std::vector<int64_t> spatial_dims(const Shape& s);

// The ConvTranspose attributes (strides, dilations, pads, output_padding, group) that map the
// gradient of a window op's output (spatial dims `out`) back onto its input (spatial dims `in`):
// output position o, tap k lands on input o * stride - pad_begin + k * dilation. The transposed
// window's full span is trimmed by pad_begin in front; its end is trimmed or extended (with
// zeros: positions no window read) so the result has exactly the input's dims.
Attributes transposed_window(const WindowAttrs& w, const std::vector<int64_t>& in,
                             const std::vector<int64_t>& out, int64_t group);

// The sum, over every window that reads input position i, of that window's entry of `g`
// (spatial dims `out`), at each i of an input of spatial dims `in`: the adjoint of gathering
// windows, with every tap weighted 1. `g` is [N, C, out...]; the result [N, C, in...].
ValueId window_adjoint_sum(VjpBuilder& b, ValueId g, const WindowAttrs& w,
                           const std::vector<int64_t>& in);

}  // namespace volta::autograd
