// Lowerings of ONNX Conv, ConvTranspose and the pools onto the internal ops, whose window
// attributes are explicit: auto_pad, ConvTranspose's output_shape and absent defaults are
// resolved here from the (static) input shapes, so kernels never see them.
//
// Attributes are read only in the versions that define them, so one a version lacks is left
// unread and reported by the importer.

#include <charconv>
#include <cmath>
#include <string>

#include "lowering.h"

namespace volta::onnx {
namespace {

using Ints = std::vector<int64_t>;

// The spatial rank of X ([N, C, D1...Dn]); only float inputs and 1 to 3 spatial dims.
int spatial_rank(LoweringContext& ctx) {
  const TypeInfo& x = ctx.input_type(0);
  if (x.dtype != DType::F32 && x.dtype != DType::F64) {
    ctx.unsupported("input dtype " + std::string(dtype_name(x.dtype)) +
                    "; supported: float, double");
  }
  if (x.shape.rank() < 3 || x.shape.rank() > 5) {
    ctx.unsupported("input shape " + x.shape.str() +
                    "; supported: [N, C, D1...Dn] with 1 to 3 spatial dims");
  }
  return x.shape.rank() - 2;
}

// An attribute with one entry per spatial axis (`per` entries for pads), `fill` if absent.
Ints per_axis(LoweringContext& ctx, std::string_view name, int spatial, int64_t fill, int per = 1) {
  const auto want = static_cast<size_t>(spatial) * static_cast<size_t>(per);
  Ints v = ctx.attr_ints(name, Ints(want, fill));
  if (v.size() != want) {
    ctx.invalid(std::string(name) + " has " + std::to_string(v.size()) +
                " entries; the input has " + std::to_string(spatial) + " spatial dims (expected " +
                std::to_string(want) + ")");
  }
  return v;
}

// The kernel's spatial dims from W, checked against kernel_shape when that is given.
Ints weight_kernel(LoweringContext& ctx, int spatial) {
  const Shape& w = ctx.input_type(1).shape;
  if (w.rank() != spatial + 2) {
    ctx.invalid("W " + w.str() + " must have rank " + std::to_string(spatial + 2));
  }
  Ints kernel(w.dims().begin() + 2, w.dims().end());
  if (ctx.has_attr("kernel_shape") && ctx.attr_ints("kernel_shape", std::nullopt) != kernel) {
    ctx.invalid("kernel_shape differs from W's spatial dims " + Shape(kernel).str());
  }
  return kernel;
}

enum class AutoPad { NotSet, SameUpper, SameLower, Valid };

AutoPad read_auto_pad(LoweringContext& ctx) {
  const std::string mode = ctx.attr_string("auto_pad", "NOTSET");
  if (mode == "NOTSET") return AutoPad::NotSet;
  if (mode == "SAME_UPPER") return AutoPad::SameUpper;
  if (mode == "SAME_LOWER") return AutoPad::SameLower;
  if (mode == "VALID") return AutoPad::Valid;
  ctx.unsupported("auto_pad '" + mode + "'; supported: NOTSET, SAME_UPPER, SAME_LOWER, VALID");
}

// Splits a total padding: SAME_UPPER puts the odd one at the end, otherwise at the begin.
void split_padding(Ints& pads, size_t axis, int64_t total, AutoPad mode) {
  const int64_t begin = mode == AutoPad::SameUpper ? total / 2 : total - total / 2;
  pads[axis] = begin;
  pads[axis + pads.size() / 2] = total - begin;
}

// Explicit pads of a Conv or a pool. SAME_*: the output is ceil(in / stride) per axis, the
// input padded by as much as that needs; VALID: no padding.
Ints resolve_pads(LoweringContext& ctx, AutoPad mode, const Ints& kernel, const Ints& strides,
                  const Ints& dilations) {
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

// X, W and B when given.
std::vector<ValueId> conv_inputs(LoweringContext& ctx) {
  std::vector<ValueId> inputs = {ctx.input(0), ctx.input(1)};
  if (ctx.has_input(2)) inputs.push_back(ctx.input(2));
  return inputs;
}

void lower_conv(LoweringContext& ctx) {
  const int spatial = spatial_rank(ctx);
  const Ints kernel = weight_kernel(ctx, spatial);
  const Ints strides = per_axis(ctx, "strides", spatial, 1);
  const Ints dilations = per_axis(ctx, "dilations", spatial, 1);
  const Ints pads = resolve_pads(ctx, read_auto_pad(ctx), kernel, strides, dilations);
  ctx.set_output(0, ctx.add(OpKind::Conv, conv_inputs(ctx),
                            {{"kernel_shape", kernel},
                             {"strides", strides},
                             {"dilations", dilations},
                             {"pads", pads},
                             {"group", ctx.attr_int("group", 1)}}));
}

// Output size = stride * (in - 1) + output_padding + dilated kernel - pads. Given an output
// shape (output_shape, or in * stride for SAME_*), the pads it implies are split as auto_pad
// says; an output larger than the unpadded one grows output_padding instead (pads >= 0).
void lower_conv_transpose(LoweringContext& ctx) {
  const int spatial = spatial_rank(ctx);
  const Ints kernel = weight_kernel(ctx, spatial);
  const Ints strides = per_axis(ctx, "strides", spatial, 1);
  const Ints dilations = per_axis(ctx, "dilations", spatial, 1);
  Ints output_padding = per_axis(ctx, "output_padding", spatial, 0);
  const AutoPad mode = read_auto_pad(ctx);
  const Shape& x = ctx.input_type(0).shape;
  std::optional<Ints> out;
  Ints pads(static_cast<size_t>(2 * spatial), 0);
  if (ctx.has_attr("output_shape")) {
    out = ctx.attr_ints("output_shape", std::nullopt);
    if (out->size() != static_cast<size_t>(spatial)) {
      ctx.unsupported("output_shape " + Shape(*out).str() +
                      "; supported: one size per spatial dim (" + std::to_string(spatial) + ")");
    }
    if (ctx.has_attr("pads")) ctx.consume_attr("pads");  // the spec ignores them here
  } else if (mode == AutoPad::NotSet) {
    pads = per_axis(ctx, "pads", spatial, 0, 2);
  } else if (ctx.has_attr("pads")) {
    ctx.invalid("pads cannot be given together with auto_pad");
  } else if (mode != AutoPad::Valid) {
    out = Ints(static_cast<size_t>(spatial));
    for (size_t a = 0; a < out->size(); ++a) (*out)[a] = x[static_cast<int>(a) + 2] * strides[a];
  }
  if (out) {
    for (size_t a = 0; a < kernel.size(); ++a) {
      const int64_t full = strides[a] * (x[static_cast<int>(a) + 2] - 1) + output_padding[a] +
                           (kernel[a] - 1) * dilations[a] + 1;
      const int64_t total = full - (*out)[a];
      if (total < 0) output_padding[a] -= total;
      split_padding(pads, a, std::max<int64_t>(total, 0), mode);
    }
  }
  ctx.set_output(0, ctx.add(OpKind::ConvTranspose, conv_inputs(ctx),
                            {{"kernel_shape", kernel},
                             {"strides", strides},
                             {"dilations", dilations},
                             {"pads", pads},
                             {"output_padding", output_padding},
                             {"group", ctx.attr_int("group", 1)}}));
}

// The versions that introduced attributes of the windowed pools.
struct PoolVersions {
  int dilations;  // and ceil_mode for LpPool
  int ceil_mode;
};

// The window attributes every windowed pool shares.
Attributes pool_window(LoweringContext& ctx, PoolVersions versions) {
  const int spatial = spatial_rank(ctx);
  const Ints kernel = ctx.attr_ints("kernel_shape", std::nullopt);
  if (kernel.size() != static_cast<size_t>(spatial)) {
    ctx.invalid("kernel_shape has " + std::to_string(kernel.size()) + " entries; the input has " +
                std::to_string(spatial) + " spatial dims");
  }
  const int version = ctx.since_version();
  const Ints strides = per_axis(ctx, "strides", spatial, 1);
  const Ints dilations = version >= versions.dilations ? per_axis(ctx, "dilations", spatial, 1)
                                                       : Ints(static_cast<size_t>(spatial), 1);
  int64_t ceil_mode = version >= versions.ceil_mode ? ctx.attr_int("ceil_mode", 0) : 0;
  const AutoPad mode = read_auto_pad(ctx);
  // SAME_* and VALID fix the output size themselves; with their pads floor mode gives it.
  if (mode != AutoPad::NotSet) ceil_mode = 0;
  return {{"kernel_shape", kernel},
          {"strides", strides},
          {"dilations", dilations},
          {"pads", resolve_pads(ctx, mode, kernel, strides, dilations)},
          {"ceil_mode", ceil_mode}};
}

void lower_max_pool(LoweringContext& ctx) {
  Attributes attrs = pool_window(ctx, {10, 10});
  const bool indices = ctx.since_version() >= 8 && ctx.has_output(1);
  if (ctx.since_version() >= 8) attrs["storage_order"] = ctx.attr_int("storage_order", 0);
  const std::vector<ValueId> outs =
      ctx.add_node(OpKind::MaxPool, {ctx.input(0)}, std::move(attrs), indices ? 2 : 1);
  ctx.set_output(0, outs[0]);
  if (indices) ctx.set_output(1, outs[1]);
}

void lower_average_pool(LoweringContext& ctx) {
  Attributes attrs = pool_window(ctx, {19, 10});
  if (ctx.since_version() >= 7) attrs["count_include_pad"] = ctx.attr_int("count_include_pad", 0);
  ctx.set_output(0, ctx.add(OpKind::AveragePool, {ctx.input(0)}, std::move(attrs)));
}

// p: a float in version 1, an integer from version 2; Volta takes integers >= 1.
int64_t read_p(LoweringContext& ctx) {
  if (ctx.since_version() >= 2) {
    const int64_t p = ctx.attr_int("p", 2);
    if (p < 1) ctx.unsupported("p = " + std::to_string(p) + "; supported: integers >= 1");
    return p;
  }
  const double p = ctx.attr_float("p", 2.0);
  if (!(p >= 1.0 && p <= 1e9) || p != std::floor(p)) {
    char text[32];
    const std::to_chars_result end = std::to_chars(text, text + sizeof(text), p);
    ctx.unsupported("p = " + std::string(text, end.ptr) + "; supported: integers >= 1");
  }
  return static_cast<int64_t>(p);
}

void lower_lp_pool(LoweringContext& ctx) {
  Attributes attrs = pool_window(ctx, {18, 18});
  attrs["p"] = read_p(ctx);
  ctx.set_output(0, ctx.add(OpKind::LpPool, {ctx.input(0)}, std::move(attrs)));
}

template <OpKind Op>
void lower_global_pool(LoweringContext& ctx) {
  spatial_rank(ctx);
  Attributes attrs;
  if constexpr (Op == OpKind::GlobalLpPool) attrs["p"] = read_p(ctx);
  ctx.set_output(0, ctx.add(Op, {ctx.input(0)}, std::move(attrs)));
}

}  // namespace

void register_spatial_lowerings(LoweringTable& table) {
  using F = OpFamily;
  table.add({"Conv", F::Convolution, 1, &lower_conv});
  table.add({"ConvTranspose", F::Convolution, 1, &lower_conv_transpose});
  table.add({"MaxPool", F::Pooling, 1, &lower_max_pool});
  table.add({"AveragePool", F::Pooling, 1, &lower_average_pool});
  table.add({"LpPool", F::Pooling, 1, &lower_lp_pool});
  table.add({"GlobalAveragePool", F::Pooling, 1, &lower_global_pool<OpKind::GlobalAveragePool>});
  table.add({"GlobalMaxPool", F::Pooling, 1, &lower_global_pool<OpKind::GlobalMaxPool>});
  table.add({"GlobalLpPool", F::Pooling, 1, &lower_global_pool<OpKind::GlobalLpPool>});
}

}  // namespace volta::onnx
