// Window arithmetic of the Conv, ConvTranspose and pooling VJP rules (vjp_window.h).

#include "vjp_window.h"

#include <algorithm>

namespace volta::autograd {

WindowAttrs read_window(const AttrReader& attrs, std::vector<int64_t> kernel) {
  const size_t n = kernel.size();
  const auto ints_or = [&](std::string_view name, size_t count, int64_t fill) {
    const std::vector<int64_t>& v = attrs.get_ints(name);
    return v.empty() ? std::vector<int64_t>(count, fill) : v;
  };
  return WindowAttrs{std::move(kernel), ints_or("strides", n, 1), ints_or("dilations", n, 1),
                     ints_or("pads", 2 * n, 0)};
}

std::vector<int64_t> spatial_dims(const Shape& s) {
  return std::vector<int64_t>(s.dims().begin() + 2, s.dims().end());
}

Attributes transposed_window(const WindowAttrs& w, const std::vector<int64_t>& in,
                             const std::vector<int64_t>& out, int64_t group) {
  const int spatial = w.spatial();
  std::vector<int64_t> pads(2 * static_cast<size_t>(spatial)), output_padding;
  for (int a = 0; a < spatial; ++a) {
    const auto i = static_cast<size_t>(a);
    // The transposed window's full output spans padded positions [0, full); the input is
    // [pad_begin, pad_begin + in).
    const int64_t full = w.stride(a) * (out[i] - 1) + w.extent(a);
    const int64_t trim_end = std::max<int64_t>(0, full - w.pad_begin(a) - in[i]);
    pads[i] = w.pad_begin(a);
    pads[i + static_cast<size_t>(spatial)] = trim_end;
    output_padding.push_back(in[i] - (full - w.pad_begin(a) - trim_end));
  }
  return {{"strides", w.strides},
          {"dilations", w.dilations},
          {"pads", pads},
          {"output_padding", output_padding},
          {"group", group}};
}

ValueId window_adjoint_sum(VjpBuilder& b, ValueId g, const WindowAttrs& w,
                           const std::vector<int64_t>& in) {
  const Shape& gs = b.shape(g);
  const std::vector<int64_t> out = spatial_dims(gs);
  // Each (n, c) plane on its own: [N * C, 1, out...] against a [1, 1, kernel...] of ones.
  std::vector<int64_t> planes = {gs[0] * gs[1], 1};
  planes.insert(planes.end(), out.begin(), out.end());
  std::vector<int64_t> ones_shape = {1, 1};
  ones_shape.insert(ones_shape.end(), w.kernel.begin(), w.kernel.end());
  Tensor ones(b.dtype(), Shape(ones_shape));
  for (int64_t i = 0; i < ones.numel(); ++i) ones.set_double(i, 1.0);
  const ValueId as_planes = b.add(OpKind::Reshape, {g}, {{"shape", planes}});
  const ValueId spread = b.add(OpKind::ConvTranspose, {as_planes, b.constant(std::move(ones))},
                               transposed_window(w, in, out, 1));
  std::vector<int64_t> back = {gs[0], gs[1]};
  back.insert(back.end(), in.begin(), in.end());
  return b.add(OpKind::Reshape, {spread}, {{"shape", back}});
}

}  // namespace volta::autograd
