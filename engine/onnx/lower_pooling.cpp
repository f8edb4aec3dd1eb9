// Lowerings of the ONNX pools onto the internal ops, whose window attributes are explicit
// (lower_window.h), and of MaxUnpool, a scatter of X into zeros.
//
// Attributes are read only in the versions that define them, so one a version lacks is left
// unread and reported by the importer.

#include <charconv>
#include <cmath>
#include <string>

#include "lower_window.h"

namespace volta::onnx {
namespace {

// The versions that introduced attributes of the windowed pools.
struct PoolVersions {
  int dilations;  // and ceil_mode for LpPool
  int ceil_mode;
};

// The window attributes every windowed pool shares, for an X of `spatial` spatial dims.
Attributes pool_window(LoweringContext& ctx, PoolVersions versions, int spatial) {
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

// Version 12's int8 and uint8 inputs pool as f32, which holds them exactly: a window's
// maximum is one of its elements, and casts back exactly.
void lower_max_pool(LoweringContext& ctx) {
  const DType dtype = ctx.input_type(0).dtype;
  const bool eight_bit = ctx.since_version() >= 12 && (dtype == DType::U8 || dtype == DType::I8);
  Attributes attrs = pool_window(ctx, {10, 10}, eight_bit ? spatial_dims(ctx) : spatial_rank(ctx));
  const bool indices = ctx.since_version() >= 8 && ctx.has_output(1);
  if (ctx.since_version() >= 8) attrs["storage_order"] = ctx.attr_int("storage_order", 0);
  const ValueId x = eight_bit ? as_dtype(ctx, ctx.input(0), DType::F32) : ctx.input(0);
  const std::vector<ValueId> outs =
      ctx.add_node(OpKind::MaxPool, {x}, std::move(attrs), indices ? 2 : 1);
  ctx.set_output(0, eight_bit ? as_dtype(ctx, outs[0], dtype) : outs[0]);
  if (indices) ctx.set_output(1, outs[1]);
}

void lower_average_pool(LoweringContext& ctx) {
  Attributes attrs = pool_window(ctx, {19, 10}, spatial_rank(ctx));
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
  Attributes attrs = pool_window(ctx, {18, 18}, spatial_rank(ctx));
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

// The unpooled shape [N, C, (D - 1) * stride - pads + kernel ...] that MaxUnpool's indices
// address.
Ints unpooled_shape(LoweringContext& ctx, const Shape& x) {
  const int spatial = x.rank() - 2;
  const Ints kernel = ctx.attr_ints("kernel_shape", std::nullopt);
  if (kernel.size() != static_cast<size_t>(spatial)) {
    ctx.invalid("kernel_shape has " + std::to_string(kernel.size()) + " entries; X has " +
                std::to_string(spatial) + " spatial dims");
  }
  const Ints strides = per_axis(ctx, "strides", spatial, 1);
  const Ints pads = per_axis(ctx, "pads", spatial, 0, 2);
  Ints dims = {x[0], x[1]};
  for (size_t a = 0; a < kernel.size(); ++a) {
    const int64_t extent = x[static_cast<int>(a) + 2];
    dims.push_back((extent - 1) * strides[a] - pads[a] - pads[a + kernel.size()] + kernel[a]);
    if (dims.back() < 0) {
      ctx.invalid("the unpooled shape of X " + x.str() + " with kernel_shape, strides and pads " +
                  "has a negative dim on spatial axis " + std::to_string(a));
    }
  }
  return dims;
}

// MaxUnpool: zeros of the unpooled shape with X's values at I's flat indices (over the whole
// tensor, N and C included); with duplicate indices the last write wins, as in ONNX's reference
// implementation. A larger output_shape pads that at the end of each axis: as in the reference
// implementation (and the ONNX tests made with it), the indices stay those of the unpooled shape.
void lower_max_unpool(LoweringContext& ctx) {
  const TypeInfo x = ctx.input_type(0);
  require_dtype(ctx, OpKind::ScatterND, x.dtype);
  if (x.shape.rank() < 3) {
    ctx.unsupported("X of shape " + x.shape.str() + "; supported: [N, C, D1...Dn], n >= 1");
  }
  if (ctx.input_type(1).shape != x.shape) {
    ctx.invalid("I " + ctx.input_type(1).shape.str() + " must have the shape of X " +
                x.shape.str());
  }
  const Ints unpooled = unpooled_shape(ctx, x.shape);
  const int64_t count = x.shape.numel();
  const ValueId zeros = ctx.add(OpKind::Expand, {scalar_constant(ctx, x.dtype, 0.0)},
                                {{"shape", Ints{Shape(unpooled).numel()}}});
  const ValueId values = ctx.add(OpKind::Reshape, {ctx.input(0)}, {{"shape", Ints{count}}});
  const ValueId indices = ctx.add(OpKind::Reshape, {ctx.input(1)}, {{"shape", Ints{count, 1}}});
  const ValueId scattered =
      ctx.add(OpKind::ScatterND, {zeros, indices, values}, {{"reduction", std::string("none")}});
  ValueId y = ctx.add(OpKind::Reshape, {scattered}, {{"shape", unpooled}});
  if (ctx.has_input(2)) {
    const Ints wanted = ctx.constant_ints(2, "output_shape");
    if (wanted.size() != unpooled.size()) {
      ctx.invalid("output_shape has " + std::to_string(wanted.size()) + " entries; X has rank " +
                  std::to_string(unpooled.size()));
    }
    Ints pads(2 * unpooled.size(), 0);
    for (size_t a = 0; a < unpooled.size(); ++a) {
      if (wanted[a] < unpooled[a]) {
        ctx.invalid("output_shape " + Shape(wanted).str() + " is smaller than the unpooled shape " +
                    Shape(unpooled).str());
      }
      pads[a + unpooled.size()] = wanted[a] - unpooled[a];
    }
    if (wanted != unpooled) {
      y = ctx.add(OpKind::Pad, {y}, {{"pads", pads}, {"mode", std::string("constant")}});
    }
  }
  ctx.set_output(0, y);
}

}  // namespace

void register_pooling_lowerings(LoweringTable& table) {
  table.add("MaxPool", OpKind::MaxPool, 1, &lower_max_pool);
  table.add("AveragePool", OpKind::AveragePool, 1, &lower_average_pool);
  table.add("LpPool", OpKind::LpPool, 1, &lower_lp_pool);
  table.add("GlobalAveragePool", OpKind::GlobalAveragePool, 1,
            &lower_global_pool<OpKind::GlobalAveragePool>);
  table.add("GlobalMaxPool", OpKind::GlobalMaxPool, 1, &lower_global_pool<OpKind::GlobalMaxPool>);
  table.add("GlobalLpPool", OpKind::GlobalLpPool, 1, &lower_global_pool<OpKind::GlobalLpPool>);
  table.add_composite("MaxUnpool", OpFamily::Pooling, 9, &lower_max_unpool);
}

}  // namespace volta::onnx
