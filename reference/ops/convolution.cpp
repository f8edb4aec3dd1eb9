// Reference Conv and ConvTranspose: every output element computed on its own from the
// definition, N-D index arithmetic (ref_window.h), sums in double rounded once when stored.
// ConvTranspose is written as a gather (which input taps land on this output?), the engine
// as a scatter, so the two formulations check each other.

#include <cmath>
#include <optional>
#include <span>

#include "ref_window.h"

namespace volta::reference {
namespace {

std::vector<Tensor> conv(const Node& node, RefInputs in, RefOutputTypes out) {
  const AttrReader attrs(node);
  const Tensor& x = *in[0];
  const Tensor& w = *in[1];
  const Tensor* b = optional_input(in, 2);
  const Spatial s = read_spatial(attrs, spatial_dims(w.shape()));
  const Shape kernel(s.kernel);
  const int64_t group_in = w.shape()[1];
  const int64_t group_out = w.shape()[0] / attrs.get_int("group");
  Tensor y(out[0].dtype, out[0].shape);
  for_each_index(y.shape(), [&](const std::vector<int64_t>& o, int64_t flat) {
    const int64_t n = o[0], m = o[1];
    const int64_t first_channel = (m / group_out) * group_in;
    double sum = b != nullptr ? b->get_double(m) : 0.0;
    for (int64_t c = 0; c < group_in; ++c) {
      for_each_index(kernel, [&](const std::vector<int64_t>& k, int64_t tap) {
        const auto pos = tap_position(s, x.shape(), o, k);
        // Zero padding is data (the numerics policy): a padded tap adds 0 * w, which is NaN
        // for a NaN or infinite weight.
        const double value =
            pos ? x.get_double(x_offset(x.shape(), n, first_channel + c, *pos)) : 0.0;
        sum += value * w.get_double((m * group_in + c) * kernel.numel() + tap);
      });
    }
    y.set_double(flat, sum);
  });
  return {y};
}

// Output o receives input i through tap k when o = i * stride - pad_begin + k * dilation.
std::vector<Tensor> conv_transpose(const Node& node, RefInputs in, RefOutputTypes out) {
  const AttrReader attrs(node);
  const Tensor& x = *in[0];
  const Tensor& w = *in[1];
  const Tensor* b = optional_input(in, 2);
  const Spatial s = read_spatial(attrs, spatial_dims(w.shape()));
  const Shape kernel(s.kernel);
  const int64_t group_in = x.shape()[1] / attrs.get_int("group");
  const int64_t group_out = w.shape()[1];
  Tensor y(out[0].dtype, out[0].shape);
  for_each_index(y.shape(), [&](const std::vector<int64_t>& o, int64_t flat) {
    const int64_t n = o[0], m = o[1];
    const int64_t first_channel = (m / group_out) * group_in;
    double sum = b != nullptr ? b->get_double(m) : 0.0;
    for (int64_t c = 0; c < group_in; ++c) {
      const int64_t channel = first_channel + c;
      for_each_index(kernel, [&](const std::vector<int64_t>& k, int64_t tap) {
        std::vector<int64_t> pos(s.rank());
        for (size_t a = 0; a < s.rank(); ++a) {
          const int64_t t = o[a + 2] + s.pad_begin(a) - k[a] * s.dilations[a];
          if (t < 0 || t % s.strides[a] != 0 ||
              t / s.strides[a] >= x.shape()[static_cast<int>(a) + 2])
            return;
          pos[a] = t / s.strides[a];
        }
        sum += x.get_double(x_offset(x.shape(), n, channel, pos)) *
               w.get_double((channel * group_out + m % group_out) * kernel.numel() + tap);
      });
    }
    y.set_double(flat, sum);
  });
  return {y};
}

}  // namespace

void register_convolution(RefTable& table) {
  register_kernel(table, OpKind::Conv, conv);
  register_kernel(table, OpKind::ConvTranspose, conv_transpose);
}

}  // namespace volta::reference
