// Lowerings of the ONNX gathers, scatters, TopK, OneHot and Trilu, and of NonZero and Compress,
// whose output shapes depend on values known at import time. Shape-like inputs (TopK's K,
// OneHot's depth, Trilu's k) must be known at import time and become attributes; data inputs
// stay inputs.

#include <cmath>

#include "lowering.h"

namespace volta::onnx {
namespace {

using Ints = std::vector<int64_t>;

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
      ctx.since_version() < 10 ? ctx.attr_int("k", std::nullopt) : ctx.constant_int(1, "K");
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
  const int64_t k = ctx.has_input(1) ? ctx.constant_int(1, "k") : 0;
  ctx.set_output(
      0, ctx.add(OpKind::Trilu, {ctx.input(0)}, {{"upper", ctx.attr_int("upper", 1)}, {"k", k}}));
}

// The indices of the non-zero elements, one row per axis: a data-dependent shape, so the
// input must be known at import time.
Tensor nonzero_indices(const Tensor& t) {
  const Shape& shape = t.shape();
  std::vector<int64_t> flat;
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (t.get_double(i) != 0.0) flat.push_back(i);
  }
  const int64_t rank = shape.rank();
  const auto count = static_cast<int64_t>(flat.size());
  Tensor out(DType::I64, Shape{rank, count});
  for (int64_t j = 0; j < count; ++j) {
    int64_t rest = flat[static_cast<size_t>(j)];
    for (int64_t d = rank - 1; d >= 0; --d) {
      out.set_int(d * count + j, rest % shape[static_cast<int>(d)]);
      rest /= shape[static_cast<int>(d)];
    }
  }
  return out;
}

void lower_nonzero(LoweringContext& ctx) {
  ctx.set_output_constant(0, nonzero_indices(ctx.constant_input(
                                 0, "the input (its non-zero count is the output shape)")));
}

// Compress = Gather of the positions where the (import-time) condition holds.
void lower_compress(LoweringContext& ctx) {
  const Tensor& condition = ctx.constant_input(1, "condition (it decides the output shape)");
  ValueId data = ctx.input(0);
  int64_t axis = 0;
  if (ctx.has_attr("axis")) {
    axis = ctx.attr_int("axis", {});
  } else {
    data = ctx.add(OpKind::Reshape, {data}, {{"shape", Ints{-1}}});
  }
  const Shape shape = ctx.type_of(data).shape;
  const int64_t rank = shape.rank();
  if (axis < -rank || axis >= rank) ctx.invalid("axis out of range");
  const int64_t extent = shape[static_cast<int>(axis < 0 ? axis + rank : axis)];
  if (condition.numel() > extent) ctx.invalid("condition is longer than the axis");
  Ints picked;
  for (int64_t i = 0; i < condition.numel(); ++i) {
    if (condition.get_double(i) != 0.0) picked.push_back(i);
  }
  ctx.set_output(0, ctx.add(OpKind::Gather,
                            {data, ctx.constant(Tensor::from<int64_t>(
                                       Shape{static_cast<int64_t>(picked.size())}, picked))},
                            {{"axis", axis}}));
}

}  // namespace

void register_indexing_lowerings(LoweringTable& table) {
  table.add("GatherElements", OpKind::GatherElements, 11, &lower_gather_elements);
  table.add("GatherND", OpKind::GatherND, 11, &lower_gather_nd);
  table.add("ScatterElements", OpKind::ScatterElements, 11, &lower_scatter_elements);
  table.add("Scatter", OpKind::ScatterElements, 9, &lower_scatter_elements);
  table.add("ScatterND", OpKind::ScatterND, 11, &lower_scatter_nd);
  table.add("TopK", OpKind::TopK, 1, &lower_top_k);
  table.add("OneHot", OpKind::OneHot, 9, &lower_one_hot);
  table.add("Trilu", OpKind::Trilu, 14, &lower_trilu);
  table.add_composite("NonZero", OpFamily::Indexing, 9, &lower_nonzero);
  table.add_composite("Compress", OpFamily::Indexing, 9, &lower_compress);
}

}  // namespace volta::onnx
