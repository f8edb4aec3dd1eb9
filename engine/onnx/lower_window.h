#pragma once
// Internal to the ONNX importer: how the Conv and pool lowerings (lower_convolution*.cpp,
// lower_pooling.cpp) read window attributes. The internal ops' window attributes are explicit:
// auto_pad, ConvTranspose's output_shape and absent defaults are resolved from the (static)
// input shapes, so kernels never see them.

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "lowering.h"

namespace volta::onnx {

// The spatial rank of X ([N, C, D1...Dn]): 1 to 3 spatial dims.
inline int spatial_dims(LoweringContext& ctx) {
  const TypeInfo& x = ctx.input_type(0);
  if (x.shape.rank() < 3 || x.shape.rank() > 5) {
    ctx.unsupported("input shape " + x.shape.str() +
                    "; supported: [N, C, D1...Dn] with 1 to 3 spatial dims");
  }
  return x.shape.rank() - 2;
}

// spatial_dims of a float X (f32, f64, or a half computed in f32).
inline int spatial_rank(LoweringContext& ctx) {
  const DType x = ctx.input_type(0).dtype;
  if (!(kFloatTypes | kHalfTypes).contains(x)) {
    ctx.unsupported("input dtype " + std::string(dtype_name(x)) +
                    "; supported: " + (kFloatTypes | kHalfTypes).str());
  }
  return spatial_dims(ctx);
}

// An attribute with one entry per spatial axis (`per` entries for pads), `fill` if absent.
inline Ints per_axis(LoweringContext& ctx, std::string_view name, int spatial, int64_t fill,
                     int per = 1) {
  const auto want = static_cast<size_t>(spatial) * static_cast<size_t>(per);
  Ints v = ctx.attr_ints(name, Ints(want, fill));
  if (v.size() != want) {
    ctx.invalid(std::string(name) + " has " + std::to_string(v.size()) +
                " entries; the input has " + std::to_string(spatial) + " spatial dims (expected " +
                std::to_string(want) + ")");
  }
  return v;
}

enum class AutoPad { NotSet, SameUpper, SameLower, Valid };

inline AutoPad read_auto_pad(LoweringContext& ctx) {
  const std::string mode = ctx.attr_string("auto_pad", "NOTSET");
  if (mode == "NOTSET") return AutoPad::NotSet;
  if (mode == "SAME_UPPER") return AutoPad::SameUpper;
  if (mode == "SAME_LOWER") return AutoPad::SameLower;
  if (mode == "VALID") return AutoPad::Valid;
  ctx.unsupported("auto_pad '" + mode + "'; supported: NOTSET, SAME_UPPER, SAME_LOWER, VALID");
}

// Splits a total padding: SAME_UPPER puts the odd one at the end, otherwise at the begin.
inline void split_padding(Ints& pads, size_t axis, int64_t total, AutoPad mode) {
  const int64_t begin = mode == AutoPad::SameUpper ? total / 2 : total - total / 2;
  pads[axis] = begin;
  pads[axis + pads.size() / 2] = total - begin;
}

// Explicit pads of a Conv or a pool. SAME_*: the output is ceil(in / stride) per axis, the
// input padded by as much as that needs; VALID: no padding.
inline Ints resolve_pads(LoweringContext& ctx, AutoPad mode, const Ints& kernel,
                         const Ints& strides, const Ints& dilations) {
  const int spatial = static_cast<int>(kernel.size());
  if (mode == AutoPad::NotSet) return per_axis(ctx, "pads", spatial, 0, 2);
  if (ctx.has_attr("pads")) ctx.invalid("pads cannot be given together with auto_pad");
  Ints pads(static_cast<size_t>(2 * spatial), 0);
  if (mode == AutoPad::Valid) return pads;
  const Shape& x = ctx.input_type(0).shape;
  for (size_t a = 0; a < kernel.size(); ++a) {
    const int64_t size = x[static_cast<int>(a) + 2];
    const int64_t out = (size + strides[a] - 1) / strides[a];
    const int64_t extent = (kernel[a] - 1) * dilations[a] + 1;
    split_padding(pads, a, std::max<int64_t>(0, (out - 1) * strides[a] + extent - size), mode);
  }
  return pads;
}

// The kernel's spatial dims from W (input `w_input`), checked against kernel_shape when that is
// given.
inline Ints weight_kernel(LoweringContext& ctx, int spatial, int w_input = 1) {
  const Shape& w = ctx.input_type(w_input).shape;
  if (w.rank() != spatial + 2) {
    ctx.invalid("W " + w.str() + " must have rank " + std::to_string(spatial + 2));
  }
  Ints kernel(w.dims().begin() + 2, w.dims().end());
  if (ctx.has_attr("kernel_shape") && ctx.attr_ints("kernel_shape", std::nullopt) != kernel) {
    ctx.invalid("kernel_shape differs from W's spatial dims " + Shape(kernel).str());
  }
  return kernel;
}

// The window positions per spatial axis of `kernel` (dilated) sliding over `input` padded by
// `pads` ([begins..., ends...]): (padded - extent) / stride + 1. I-INVALID-MODEL naming the axis
// when one window does not fit or a size, stride, dilation or pad is out of range.
inline Ints window_positions(LoweringContext& ctx, const Ints& input, const Ints& kernel,
                             const Ints& strides, const Ints& dilations, const Ints& pads) {
  Ints positions(input.size());
  for (size_t a = 0; a < input.size(); ++a) {
    const int64_t begin = pads[a];
    const int64_t end = pads[a + input.size()];
    const int64_t extent = dilations[a] * (kernel[a] - 1) + 1;
    if (input[a] < 1 || kernel[a] < 1 || strides[a] < 1 || dilations[a] < 1 || begin < 0 ||
        end < 0 || input[a] + begin + end < extent) {
      ctx.invalid("spatial axis " + std::to_string(a) + ": input " + std::to_string(input[a]) +
                  ", kernel " + std::to_string(kernel[a]) + ", stride " +
                  std::to_string(strides[a]) + ", dilation " + std::to_string(dilations[a]) +
                  " and pads " + std::to_string(begin) + ", " + std::to_string(end) +
                  " do not fit one window (sizes, strides and dilations positive, pads not "
                  "negative)");
    }
    positions[a] = (input[a] + begin + end - extent) / strides[a] + 1;
  }
  return positions;
}

// The internal Conv's attributes for an ONNX Conv-like node (X input 0, W input `w_input`):
// kernel from W, strides, dilations, explicit pads and group (lower_convolution.cpp).
Attributes conv_attributes(LoweringContext& ctx, int spatial, int w_input = 1);

}  // namespace volta::onnx
