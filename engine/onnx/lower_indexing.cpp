// Lowerings of the ONNX gathers, scatters, TopK, OneHot, Trilu and the layout ops (Tile, Pad,
// DepthToSpace, SpaceToDepth, ReverseSequence). Shape-like inputs (TopK's K, Tile's repeats,
// Pad's pads, OneHot's depth, Trilu's k) must be known at import time and become attributes;
// data inputs stay inputs.

#include <cmath>

#include "lowering.h"

namespace volta::onnx {
namespace {

using Ints = std::vector<int64_t>;

// The one integer of a scalar or one-element input.
int64_t constant_int(LoweringContext& ctx, int i, std::string_view what) {
  const Ints v = ctx.constant_ints(i, what);
  if (v.size() != 1) {
    ctx.invalid(std::string(what) + " must hold one value; got " + std::to_string(v.size()));
  }
  return v[0];
}

// ScatterElements / ScatterND "reduction" (version 16 on; earlier versions replace).
std::string reduction(LoweringContext& ctx) {
  if (ctx.since_version() < 16) return "none";
  std::string r = ctx.attr_string("reduction", "none");
  if (r != "none" && r != "add" && r != "mul") {
    ctx.unsupported("reduction \"" + r + "\"; supported: \"none\", \"add\", \"mul\"");
  }
  return r;
}

void lower_gather_elements(LoweringContext& ctx) {
  ctx.set_output(0, ctx.add(OpKind::GatherElements, {ctx.input(0), ctx.input(1)},
                            {{"axis", ctx.attr_int("axis", 0)}}));
}

void lower_gather_nd(LoweringContext& ctx) {
  const int64_t batch_dims = ctx.since_version() >= 12 ? ctx.attr_int("batch_dims", 0) : 0;
  ctx.set_output(
      0, ctx.add(OpKind::GatherND, {ctx.input(0), ctx.input(1)}, {{"batch_dims", batch_dims}}));
}

// ScatterElements, and the deprecated Scatter (versions 9 and 11) it renames.
void lower_scatter_elements(LoweringContext& ctx) {
  const std::string r = ctx.op_type() == "Scatter" ? "none" : reduction(ctx);
  ctx.set_output(0, ctx.add(OpKind::ScatterElements, {ctx.input(0), ctx.input(1), ctx.input(2)},
                            {{"axis", ctx.attr_int("axis", 0)}, {"reduction", r}}));
}

void lower_scatter_nd(LoweringContext& ctx) {
  ctx.set_output(0, ctx.add(OpKind::ScatterND, {ctx.input(0), ctx.input(1), ctx.input(2)},
                            {{"reduction", reduction(ctx)}}));
}

// Version 1 takes k as an attribute, 10 as input K; 11 adds largest and sorted. Volta always
// returns sorted results, which sorted=0 (order unspecified) allows.
void lower_top_k(LoweringContext& ctx) {
  const int64_t k =
      ctx.since_version() < 10 ? ctx.attr_int("k", std::nullopt) : constant_int(ctx, 1, "K");
  if (k < 0) ctx.invalid("k must be >= 0; got " + std::to_string(k));
  Attributes attrs{{"k", k}, {"axis", ctx.attr_int("axis", -1)}};
  if (ctx.since_version() >= 11) {
    attrs["largest"] = ctx.attr_int("largest", 1);
    attrs["sorted"] = ctx.attr_int("sorted", 1);
  }
  const std::vector<ValueId> outs = ctx.add_node(OpKind::TopK, {ctx.input(0)}, std::move(attrs), 2);
  ctx.set_output(0, outs[0]);
  ctx.set_output(1, outs[1]);
}

// depth is cast to int64 as ONNX specifies. Version 9 leaves negative indices all-off;
// version 11 counts them from depth, as the internal op does: version 9's negative indices
// are first replaced by depth (out of range).
void lower_one_hot(LoweringContext& ctx) {
  const double depth_value = ctx.constant_scalar(1, "depth");
  if (!(depth_value >= 1) || !std::isfinite(depth_value)) {
    ctx.invalid("depth must be a positive number; got " + std::to_string(depth_value));
  }
  const auto depth = static_cast<int64_t>(depth_value);
  ValueId indices = ctx.input(0);
  if (ctx.since_version() < 11) {
    // An index is negative after truncation when it is below the value just above -1.
    const DType dtype = ctx.input_type(0).dtype;
    Tensor bound(dtype, Shape{});
    bound.set_double(0, dtype == DType::F32   ? static_cast<double>(std::nextafter(-1.0F, 0.0F))
                        : dtype == DType::F64 ? std::nextafter(-1.0, 0.0)
                                              : 0.0);
    Tensor past_end(dtype, Shape{});
    past_end.set_double(0, static_cast<double>(depth));
    const ValueId negative = ctx.add(OpKind::Less, {indices, ctx.constant(bound)});
    indices = ctx.add(OpKind::Where, {negative, ctx.constant(past_end), indices});
  }
  ctx.set_output(0, ctx.add(OpKind::OneHot, {indices, ctx.input(2)},
                            {{"depth", depth}, {"axis", ctx.attr_int("axis", -1)}}));
}

void lower_trilu(LoweringContext& ctx) {
  const int64_t k = ctx.has_input(1) ? constant_int(ctx, 1, "k") : 0;
  ctx.set_output(
      0, ctx.add(OpKind::Trilu, {ctx.input(0)}, {{"upper", ctx.attr_int("upper", 1)}, {"k", k}}));
}

// Version 1 repeats one axis (inputs tiles and axis); 6 on give repeats for every axis.
void lower_tile(LoweringContext& ctx) {
  Ints repeats;
  if (ctx.since_version() < 6) {
    const int64_t rank = ctx.input_type(0).shape.rank();
    const int64_t tiles = constant_int(ctx, 1, "tiles");
    int64_t axis = constant_int(ctx, 2, "axis");
    if (axis < -rank || axis >= rank) {
      ctx.invalid("axis " + std::to_string(axis) + " is out of range for rank " +
                  std::to_string(rank));
    }
    if (axis < 0) axis += rank;
    repeats.assign(static_cast<size_t>(rank), 1);
    repeats[static_cast<size_t>(axis)] = tiles;
  } else {
    repeats = ctx.constant_ints(1, "repeats");
  }
  for (int64_t r : repeats) {
    if (r < 0) ctx.invalid("repeats must be >= 0; got " + std::to_string(r));
  }
  ctx.set_output(0, ctx.add(OpKind::Tile, {ctx.input(0)}, {{"repeats", repeats}}));
}

// Pad's float "value" attribute (versions 1 and 2) as a scalar of the data dtype; integer
// data takes only integral values.
Tensor pad_value(LoweringContext& ctx, double value, DType dtype) {
  Tensor t(dtype, Shape{});
  if (is_floating(dtype)) {
    t.set_double(0, value);
  } else if (dtype == DType::Bool) {
    t.set_int(0, value != 0.0 ? 1 : 0);
  } else {
    if (std::trunc(value) != value) {
      ctx.unsupported("value " + std::to_string(value) + " for " + std::string(dtype_name(dtype)) +
                      " data; supported: integral values");
    }
    t.set_double(0, value);
  }
  return t;
}

// Versions 1 and 2 give pads ("paddings" in 1) and value as attributes; 11 on as inputs.
// The constant is only used, and only passed on, in mode "constant".
void lower_pad(LoweringContext& ctx) {
  const std::string mode = ctx.attr_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") {
    ctx.unsupported("mode \"" + mode + "\"; supported: \"constant\", \"reflect\", \"edge\"");
  }
  const bool constant = mode == "constant";
  std::vector<ValueId> inputs = {ctx.input(0)};
  Ints pads;
  if (ctx.since_version() < 11) {
    pads = ctx.attr_ints(ctx.since_version() < 2 ? "paddings" : "pads", std::nullopt);
    const double value = ctx.attr_float("value", 0.0);
    if (constant && ctx.has_attr("value")) {
      inputs.push_back(ctx.constant(pad_value(ctx, value, ctx.input_type(0).dtype)));
    }
  } else {
    pads = ctx.constant_ints(1, "pads");
    if (constant && ctx.has_input(2)) inputs.push_back(ctx.input(2));
  }
  ctx.set_output(0, ctx.add(OpKind::Pad, inputs, {{"pads", pads}, {"mode", mode}}));
}

void lower_depth_to_space(LoweringContext& ctx) {
  const std::string mode = ctx.since_version() >= 11 ? ctx.attr_string("mode", "DCR") : "DCR";
  if (mode != "DCR" && mode != "CRD") {
    ctx.unsupported("mode \"" + mode + "\"; supported: \"DCR\", \"CRD\"");
  }
  ctx.set_output(0,
                 ctx.add(OpKind::DepthToSpace, {ctx.input(0)},
                         {{"blocksize", ctx.attr_int("blocksize", std::nullopt)}, {"mode", mode}}));
}

void lower_space_to_depth(LoweringContext& ctx) {
  ctx.set_output(0, ctx.add(OpKind::SpaceToDepth, {ctx.input(0)},
                            {{"blocksize", ctx.attr_int("blocksize", std::nullopt)}}));
}

void lower_reverse_sequence(LoweringContext& ctx) {
  ctx.set_output(0, ctx.add(OpKind::ReverseSequence, {ctx.input(0), ctx.input(1)},
                            {{"batch_axis", ctx.attr_int("batch_axis", 1)},
                             {"time_axis", ctx.attr_int("time_axis", 0)}}));
}

}  // namespace

void register_indexing_lowerings(LoweringTable& table) {
  using F = OpFamily;
  table.add({"GatherElements", F::Indexing, 11, &lower_gather_elements});
  table.add({"GatherND", F::Indexing, 11, &lower_gather_nd});
  table.add({"ScatterElements", F::Indexing, 11, &lower_scatter_elements});
  table.add({"Scatter", F::Indexing, 9, &lower_scatter_elements});
  table.add({"ScatterND", F::Indexing, 11, &lower_scatter_nd});
  table.add({"TopK", F::Indexing, 1, &lower_top_k});
  table.add({"OneHot", F::Indexing, 9, &lower_one_hot});
  table.add({"Trilu", F::Indexing, 14, &lower_trilu});
  table.add({"Tile", F::Movement, 1, &lower_tile});
  table.add({"Pad", F::Movement, 1, &lower_pad});
  table.add({"DepthToSpace", F::Movement, 1, &lower_depth_to_space});
  table.add({"SpaceToDepth", F::Movement, 1, &lower_space_to_depth});
  table.add({"ReverseSequence", F::Movement, 10, &lower_reverse_sequence});
}

}  // namespace volta::onnx
