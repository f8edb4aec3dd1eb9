// Reference Conv, ConvTranspose and ConvGradFilter: every output element computed on its own
// from the definition, N-D index arithmetic (ref_window.h), sums in double rounded once when
// stored. ConvTranspose is written as a gather (which input taps land on this output?), the
// engine as a scatter, so the two formulations check each other; ConvGradFilter is a sum over
// images and window positions per weight, the engine's a GEMM over im2col columns.

#include <cmath>
#include <optional>
#include <span>
#include <vector>

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

// dW[m, c, k] = sum over n and window positions o of X[n, channel, o * stride - pad_begin + k *
// dilation] * dY[n, m, o], where channel is c of m's group and X is zero in the padding.
std::vector<Tensor> conv_grad_filter(const Node& node, RefInputs in, RefOutputTypes out) {
  const AttrReader attrs(node);
  const Tensor& x = *in[0];
  const Tensor& dy = *in[1];
  const Spatial s = read_spatial(attrs, attrs.get_ints("kernel_shape"));
  const Shape positions(spatial_dims(dy.shape()));
  const int64_t group_in = out[0].shape[1];
  const int64_t group_out = dy.shape()[1] / attrs.get_int("group");
  Tensor dw(out[0].dtype, out[0].shape);
  for_each_index(dw.shape(), [&](const std::vector<int64_t>& w_index, int64_t flat) {
    const int64_t m = w_index[0];
    const int64_t channel = (m / group_out) * group_in + w_index[1];
    const std::span<const int64_t> k(w_index.begin() + 2, w_index.end());
    double sum = 0.0;
    for (int64_t n = 0; n < x.shape()[0]; ++n) {
      for_each_index(positions, [&](const std::vector<int64_t>& o, int64_t o_flat) {
        std::vector<int64_t> out_index = {n, m};
        out_index.insert(out_index.end(), o.begin(), o.end());
        // Zero padding is data, as in Conv: a padded tap adds 0 * dY (NaN for a non-finite dY).
        const auto pos = tap_position(s, x.shape(), out_index, k);
        const double value = pos ? x.get_double(x_offset(x.shape(), n, channel, *pos)) : 0.0;
        sum += value * dy.get_double((n * dy.shape()[1] + m) * positions.numel() + o_flat);
      });
    }
    dw.set_double(flat, sum);
  });
  return {dw};
}

}  // namespace

void register_convolution(RefTable& table) {
  register_kernel(table, OpKind::Conv, conv);
  register_kernel(table, OpKind::ConvTranspose, conv_transpose);
  register_kernel(table, OpKind::ConvGradFilter, conv_grad_filter);
}

}  // namespace volta::reference
