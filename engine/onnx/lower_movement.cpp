// Lowerings of the ONNX shape and data-movement ops (the layout ops Tile, Pad, DepthToSpace,
// SpaceToDepth and ReverseSequence, and inference-mode Dropout, included), and of the ops whose
// outputs are fully known at import time (Shape, Size, Range, ConstantOfShape, EyeLike): with
// static shapes those become constants, computed here. Shape-like inputs (Tile's repeats, Pad's
// pads) must be known at import time and become attributes.

#include <algorithm>
#include <cmath>

#include "lowering.h"

namespace volta::onnx {
namespace {

Tensor int64_vector(const Ints& values) {
  return Tensor::from<int64_t>(Shape{static_cast<int64_t>(values.size())}, values);
}

// Attribute before `attr_until` (exclusive), optional input `input` from then on.
std::optional<Ints> ints_attr_or_input(LoweringContext& ctx, int attr_until, std::string_view attr,
                                       int input, std::string_view what) {
  if (ctx.since_version() < attr_until) {
    if (!ctx.has_attr(attr)) return std::nullopt;
    return ctx.attr_ints(attr, std::nullopt);
  }
  if (!ctx.has_input(input)) return std::nullopt;
  return ctx.constant_ints(input, what);
}

void lower_identity(LoweringContext& ctx) { ctx.set_output(0, ctx.input(0)); }

void lower_constant(LoweringContext& ctx) {
  if (ctx.has_attr("value")) {
    ctx.set_output_constant(0, ctx.attr_tensor("value"));
  } else if (ctx.has_attr("value_float")) {
    ctx.set_output_constant(
        0, Tensor::from<float>(Shape{}, {static_cast<float>(ctx.attr_float("value_float", {}))}));
  } else if (ctx.has_attr("value_floats")) {
    const std::vector<double> v = ctx.attr_floats("value_floats", {});
    Tensor t(DType::F32, Shape{static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i) t.set_double(static_cast<int64_t>(i), v[i]);
    ctx.set_output_constant(0, std::move(t));
  } else if (ctx.has_attr("value_int")) {
    ctx.set_output_constant(0, Tensor::from<int64_t>(Shape{}, {ctx.attr_int("value_int", {})}));
  } else if (ctx.has_attr("value_ints")) {
    ctx.set_output_constant(0, int64_vector(ctx.attr_ints("value_ints", {})));
  } else {
    for (const char* attr : {"sparse_value", "value_string", "value_strings"}) {
      if (ctx.has_attr(attr)) {
        ctx.unsupported("attribute '" + std::string(attr) +
                        "' is not supported; supported: value, value_float(s), value_int(s)");
      }
    }
    ctx.invalid("no value attribute");
  }
}

void lower_shape(LoweringContext& ctx) {
  const Shape shape = ctx.input_type(0).shape;
  const int64_t rank = shape.rank();
  int64_t start = ctx.since_version() >= 15 ? ctx.attr_int("start", 0) : 0;
  int64_t end = ctx.since_version() >= 15 ? ctx.attr_int("end", rank) : rank;
  auto clamp = [rank](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
  start = clamp(start);
  end = clamp(end);
  Ints dims;
  for (int64_t d = start; d < end; ++d) dims.push_back(shape[static_cast<int>(d)]);
  ctx.set_output_constant(0, int64_vector(dims));
}

void lower_size(LoweringContext& ctx) {
  ctx.set_output_constant(0, Tensor::from<int64_t>(Shape{}, {ctx.input_type(0).shape.numel()}));
}

void lower_constant_of_shape(LoweringContext& ctx) {
  const Ints dims = ctx.constant_ints(0, "the output shape");
  for (int64_t d : dims) {
    if (d < 0) ctx.invalid("negative dimension in the output shape");
  }
  Tensor value = ctx.has_attr("value") ? ctx.attr_tensor("value") : Tensor(DType::F32, Shape{1});
  if (value.numel() != 1) ctx.invalid("'value' must hold one element");
  Tensor out(value.dtype(), Shape(dims));
  check_constant_size(ctx, out.shape());
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (is_floating(value.dtype())) {
      out.set_double(i, value.get_double(0));
    } else {
      out.set_int(i, value.get_int(0));
    }
  }
  ctx.set_output_constant(0, std::move(out));
}

// Range: ceil((limit - start) / delta) elements start + i * delta, in the inputs' dtype.
void lower_range(LoweringContext& ctx) {
  // Version 27's stash_type applies only to float16 and bfloat16 inputs, which Volta refuses.
  if (ctx.since_version() >= 27) ctx.attr_int("stash_type", 1);
  const Tensor& start = ctx.constant_input(0, "start");
  const Tensor& limit = ctx.constant_input(1, "limit");
  const Tensor& delta = ctx.constant_input(2, "delta");
  const DType dtype = start.dtype();
  if (is_floating(dtype)) {
    const double s = start.get_double(0), l = limit.get_double(0), d = delta.get_double(0);
    if (d == 0) ctx.invalid("delta is zero");
    const auto n = static_cast<int64_t>(std::max(std::ceil((l - s) / d), 0.0));
    Tensor out(dtype, Shape{n});
    check_constant_size(ctx, out.shape());
    for (int64_t i = 0; i < n; ++i) out.set_double(i, s + static_cast<double>(i) * d);
    ctx.set_output_constant(0, std::move(out));
    return;
  }
  const int64_t s = start.get_int(0), l = limit.get_int(0), d = delta.get_int(0);
  if (d == 0) ctx.invalid("delta is zero");
  const int64_t n = std::max<int64_t>((l - s + (d > 0 ? d - 1 : d + 1)) / d, 0);
  Tensor out(dtype, Shape{n});
  check_constant_size(ctx, out.shape());
  for (int64_t i = 0; i < n; ++i) out.set_int(i, s + i * d);
  ctx.set_output_constant(0, std::move(out));
}

void lower_eye_like(LoweringContext& ctx) {
  const TypeInfo& in = ctx.input_type(0);
  if (in.shape.rank() != 2) ctx.invalid("input must be 2-D; got " + in.shape.str());
  const DType dtype =
      ctx.has_attr("dtype") ? attr_dtype(ctx, ctx.attr_int("dtype", {}), "dtype") : in.dtype;
  const int64_t k = ctx.attr_int("k", 0);
  Tensor out(dtype, in.shape);
  for (int64_t r = 0; r < in.shape[0]; ++r) {
    const int64_t c = r + k;
    if (c >= 0 && c < in.shape[1]) out.set_int(r * in.shape[1] + c, 1);
  }
  ctx.set_output_constant(0, std::move(out));
}

void lower_reshape(LoweringContext& ctx) {
  const Ints shape = ctx.since_version() < 5 ? ctx.attr_ints("shape", std::nullopt)
                                             : ctx.constant_ints(1, "the target shape");
  if (ctx.since_version() < 5) ctx.consume_attr("consumed_inputs");
  const int64_t allowzero = ctx.since_version() >= 14 ? ctx.attr_int("allowzero", 0) : 0;
  ctx.set_output(
      0, ctx.add(OpKind::Reshape, {ctx.input(0)}, {{"shape", shape}, {"allowzero", allowzero}}));
}

void lower_transpose(LoweringContext& ctx) {
  Attributes attrs;
  if (ctx.has_attr("perm")) attrs["perm"] = ctx.attr_ints("perm", std::nullopt);
  ctx.set_output(0, ctx.add(OpKind::Transpose, {ctx.input(0)}, std::move(attrs)));
}

void lower_concat(LoweringContext& ctx) {
  std::vector<ValueId> inputs;
  inputs.reserve(static_cast<size_t>(ctx.num_inputs()));
  for (int i = 0; i < ctx.num_inputs(); ++i) inputs.push_back(ctx.input(i));
  // Version 1 defaults axis to 1; from 4 it is required.
  const int64_t axis =
      ctx.attr_int("axis", ctx.since_version() < 4 ? std::optional<int64_t>(1) : std::nullopt);
  ctx.set_output(0, ctx.add(OpKind::Concat, inputs, {{"axis", axis}}));
}

// Split 18's num_outputs: parts of ceil(extent / n), the last one what remains.
Ints equal_split(LoweringContext& ctx, int64_t axis, int64_t n) {
  const Shape& shape = ctx.input_type(0).shape;
  if (axis < -shape.rank() || axis >= shape.rank()) {
    ctx.invalid("axis " + std::to_string(axis) + " is out of range for rank " +
                std::to_string(shape.rank()));
  }
  const int64_t extent = shape[static_cast<int>(axis < 0 ? axis + shape.rank() : axis)];
  if (n < 1 || n != ctx.num_outputs()) {
    ctx.invalid("num_outputs " + std::to_string(n) + " must equal the node's " +
                std::to_string(ctx.num_outputs()) + " outputs");
  }
  const int64_t part = (extent + n - 1) / n;
  const int64_t last = extent - part * (n - 1);
  if (last < 0 || (last == 0 && extent > 0)) {
    ctx.unsupported("num_outputs " + std::to_string(n) + " on an axis of " +
                    std::to_string(extent) + " leaves the last part empty");
  }
  Ints sizes(static_cast<size_t>(n), part);
  sizes.back() = last;
  return sizes;
}

void lower_split(LoweringContext& ctx) {
  const int64_t axis = ctx.attr_int("axis", 0);
  Attributes attrs{{"axis", axis}};
  std::optional<Ints> split;
  if (ctx.since_version() >= 13) {
    if (ctx.has_input(1)) split = ctx.constant_ints(1, "split");
  } else {
    if (ctx.has_attr("split")) split = ctx.attr_ints("split", std::nullopt);
    if (ctx.since_version() < 2 && ctx.has_input(1)) split = ctx.constant_ints(1, "split");
  }
  // Version 18: num_outputs equal parts instead of sizes, the last one smaller when the axis
  // does not divide.
  if (ctx.since_version() >= 18 && ctx.has_attr("num_outputs")) {
    if (split) ctx.invalid("takes either the split input or num_outputs, not both");
    split = equal_split(ctx, axis, ctx.attr_int("num_outputs", std::nullopt));
  }
  if (split) attrs["split"] = *split;
  const std::vector<ValueId> outs =
      ctx.add_node(OpKind::Split, {ctx.input(0)}, std::move(attrs), ctx.num_outputs());
  for (int i = 0; i < ctx.num_outputs(); ++i) ctx.set_output(i, outs[static_cast<size_t>(i)]);
}

void lower_slice(LoweringContext& ctx) {
  Attributes attrs;
  if (ctx.since_version() < 10) {
    attrs["starts"] = ctx.attr_ints("starts", std::nullopt);
    attrs["ends"] = ctx.attr_ints("ends", std::nullopt);
    if (ctx.has_attr("axes")) attrs["axes"] = ctx.attr_ints("axes", std::nullopt);
  } else {
    attrs["starts"] = ctx.constant_ints(1, "starts");
    attrs["ends"] = ctx.constant_ints(2, "ends");
    if (ctx.has_input(3)) attrs["axes"] = ctx.constant_ints(3, "axes");
    if (ctx.has_input(4)) attrs["steps"] = ctx.constant_ints(4, "steps");
  }
  ctx.set_output(0, ctx.add(OpKind::Slice, {ctx.input(0)}, std::move(attrs)));
}

void lower_gather(LoweringContext& ctx) {
  ctx.set_output(0, ctx.add(OpKind::Gather, {ctx.input(0), ctx.input(1)},
                            {{"axis", ctx.attr_int("axis", 0)}}));
}

void lower_expand(LoweringContext& ctx) {
  ctx.set_output(0, ctx.add(OpKind::Expand, {ctx.input(0)},
                            {{"shape", ctx.constant_ints(1, "the target shape")}}));
}

void lower_squeeze(LoweringContext& ctx) {
  Attributes attrs;
  if (const std::optional<Ints> axes = ints_attr_or_input(ctx, 13, "axes", 1, "axes")) {
    attrs["axes"] = *axes;
  }
  ctx.set_output(0, ctx.add(OpKind::Squeeze, {ctx.input(0)}, std::move(attrs)));
}

void lower_unsqueeze(LoweringContext& ctx) {
  const std::optional<Ints> axes = ints_attr_or_input(ctx, 13, "axes", 1, "axes");
  if (!axes) ctx.invalid("axes are required");
  ctx.set_output(0, ctx.add(OpKind::Unsqueeze, {ctx.input(0)}, {{"axes", *axes}}));
}

void lower_flatten(LoweringContext& ctx) {
  ctx.set_output(0, ctx.add(OpKind::Flatten, {ctx.input(0)}, {{"axis", ctx.attr_int("axis", 1)}}));
}

// Dropout in inference is the identity and its mask all ones (bool from version 10, the data's
// type before). Training mode drops at random, which Volta does not do: versions 1 and 6 train
// unless is_test=1; from version 12 training_mode (an input) says, and training with ratio 0
// drops nothing, so it is the identity too.
void lower_dropout(LoweringContext& ctx) {
  const int version = ctx.since_version();
  bool training = false;
  if (version < 7) {
    if (version < 6) ctx.consume_attr("consumed_inputs");
    ctx.attr_float("ratio", 0.5);
    training = ctx.attr_int("is_test", 0) == 0;
  } else if (version < 12) {
    ctx.attr_float("ratio", 0.5);
  } else {
    ctx.attr_int("seed", 0);  // the random stream of training mode: no effect in inference
    if (ctx.has_input(2)) {
      training = ctx.constant_scalar(2, "training_mode") != 0.0;
      if (training && ctx.has_input(1)) training = ctx.constant_scalar(1, "ratio") != 0.0;
    }
  }
  if (training) {
    ctx.unsupported(
        "training-mode Dropout is random; supported: inference (is_test=1 before "
        "version 7, training_mode false or ratio 0 from version 12)");
  }
  const ValueId x = ctx.input(0);
  ctx.set_output(0, x);
  if (ctx.has_output(1)) {
    const DType mask_type = version < 10 ? ctx.input_type(0).dtype : DType::Bool;
    ctx.set_output(1, ctx.add(OpKind::Expand, {scalar_constant(ctx, mask_type, 1.0)},
                              {{"shape", ctx.input_type(0).shape.dims()}}));
  }
}

// Version 1 repeats one axis (inputs tiles and axis); 6 on give repeats for every axis.
void lower_tile(LoweringContext& ctx) {
  Ints repeats;
  if (ctx.since_version() < 6) {
    const int64_t rank = ctx.input_type(0).shape.rank();
    const int64_t tiles = ctx.constant_int(1, "tiles");
    int64_t axis = ctx.constant_int(2, "axis");
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

// Pad 18's axes input: `pads` then holds the begins and ends of those axes only.
Ints pads_of_axes(LoweringContext& ctx, const Ints& pads) {
  const Ints axes = ctx.constant_ints(3, "axes");
  const int64_t rank = ctx.input_type(0).shape.rank();
  if (pads.size() != 2 * axes.size()) {
    ctx.invalid("pads holds " + std::to_string(pads.size()) + " values for " +
                std::to_string(axes.size()) + " axes; it must hold two per axis");
  }
  Ints full(static_cast<size_t>(2 * rank), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank) {
      ctx.invalid("axis " + std::to_string(axes[i]) + " is out of range for rank " +
                  std::to_string(rank));
    }
    full[static_cast<size_t>(axis)] = pads[i];
    full[static_cast<size_t>(axis + rank)] = pads[i + axes.size()];
  }
  return full;
}

// Versions 1 and 2 give pads ("paddings" in 1) and value as attributes; 11 on as inputs.
// The constant is only used, and only passed on, in mode "constant".
// Pad 19's "wrap": the axis continued periodically, out[i] = x[(i - begin) mod n] (negative
// pads crop): one Gather of constant indices per padded axis, an exact copy.
ValueId wrap_pad(LoweringContext& ctx, ValueId x, const Ints& pads) {
  const Shape& shape = ctx.input_type(0).shape;
  const int64_t rank = shape.rank();
  for (int64_t axis = 0; axis < rank; ++axis) {
    const int64_t begin = pads[static_cast<size_t>(axis)];
    const int64_t end = pads[static_cast<size_t>(axis + rank)];
    if (begin == 0 && end == 0) continue;
    const int64_t n = shape[static_cast<int>(axis)];
    const int64_t out = n + begin + end;
    if (n == 0 || out < 0) {
      ctx.invalid("wrap pads " + std::to_string(begin) + ", " + std::to_string(end) +
                  " on an axis of " + std::to_string(n));
    }
    Tensor indices(DType::I64, Shape{out});
    for (int64_t i = 0; i < out; ++i) indices.set_int(i, (((i - begin) % n) + n) % n);
    x = ctx.add(OpKind::Gather, {x, ctx.constant(std::move(indices))}, {{"axis", axis}});
  }
  return x;
}

void lower_pad(LoweringContext& ctx) {
  const std::string mode = ctx.attr_string("mode", "constant");
  const bool wrap = ctx.since_version() >= 19 && mode == "wrap";
  if (mode != "constant" && mode != "reflect" && mode != "edge" && !wrap) {
    ctx.unsupported("mode \"" + mode + "\"; supported: \"constant\", \"reflect\", \"edge\"" +
                    (ctx.since_version() >= 19 ? ", \"wrap\"" : ""));
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
    if (ctx.since_version() >= 18 && ctx.has_input(3)) pads = pads_of_axes(ctx, pads);
  }
  if (wrap) {
    if (static_cast<int64_t>(pads.size()) != 2 * ctx.input_type(0).shape.rank()) {
      ctx.invalid("pads holds " + std::to_string(pads.size()) + " values for rank " +
                  std::to_string(ctx.input_type(0).shape.rank()));
    }
    return ctx.set_output(0, wrap_pad(ctx, ctx.input(0), pads));
  }
  ctx.set_output(0, ctx.add(OpKind::Pad, inputs, {{"pads", pads}, {"mode", mode}}));
}

// CenterCropPad (18): each axis of `axes` (default: all) cropped or zero-padded to its size in
// `shape`, centred. An odd difference leaves the extra element at the end: the crop window
// starts rounded down, and the extra padding goes after. One Pad does both (negative pads crop):
// begin = diff / 2 rounded toward zero, end = the rest, for diff = target - size.
void lower_center_crop_pad(LoweringContext& ctx) {
  const Shape shape = ctx.input_type(0).shape;
  const int64_t rank = shape.rank();
  const Ints target = ctx.constant_ints(1, "shape");
  Ints axes;
  if (ctx.has_attr("axes")) {
    axes = ctx.attr_ints("axes", std::nullopt);
  } else {
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  if (target.size() != axes.size()) {
    ctx.invalid("shape holds " + std::to_string(target.size()) + " sizes for " +
                std::to_string(axes.size()) + " axes; it must hold one per axis");
  }
  Ints pads(static_cast<size_t>(2 * rank), 0);
  std::vector<bool> named(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank) {
      ctx.invalid("axis " + std::to_string(axes[i]) + " is out of range for rank " +
                  std::to_string(rank));
    }
    if (named[static_cast<size_t>(axis)]) {
      ctx.invalid("axes name axis " + std::to_string(axis) + " twice");
    }
    named[static_cast<size_t>(axis)] = true;
    if (target[i] < 0) ctx.invalid("shape holds a negative size " + std::to_string(target[i]));
    const int64_t diff = target[i] - shape[static_cast<int>(axis)];
    pads[static_cast<size_t>(axis)] = diff / 2;
    pads[static_cast<size_t>(axis + rank)] = diff - diff / 2;
  }
  if (std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; })) {
    ctx.set_output(0, ctx.input(0));
    return;
  }
  ctx.set_output(
      0, ctx.add(OpKind::Pad, {ctx.input(0)}, {{"pads", pads}, {"mode", std::string("constant")}}));
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

// SpaceToDepth 28's CRD mode: the blocks' offsets after the channel, not before (Volta's
// SpaceToDepth is DCR): its definition's Reshape, Transpose and Reshape, an exact copy.
ValueId space_to_depth_crd(LoweringContext& ctx, int64_t block) {
  const Shape& s = ctx.input_type(0).shape;
  if (s.rank() != 4 || block < 1 || s[2] % block != 0 || s[3] % block != 0) {
    ctx.invalid("CRD needs a 4-D input whose H and W divide by blocksize " + std::to_string(block) +
                "; got " + s.str());
  }
  const ValueId blocks =
      ctx.add(OpKind::Reshape, {ctx.input(0)},
              {{"shape", Ints{s[0], s[1], s[2] / block, block, s[3] / block, block}}});
  const ValueId moved = ctx.add(OpKind::Transpose, {blocks}, {{"perm", Ints{0, 1, 3, 5, 2, 4}}});
  return ctx.add(OpKind::Reshape, {moved},
                 {{"shape", Ints{s[0], s[1] * block * block, s[2] / block, s[3] / block}}});
}

void lower_space_to_depth(LoweringContext& ctx) {
  // Version 28 adds DepthToSpace's modes; Volta's SpaceToDepth is DCR.
  const std::string mode = ctx.since_version() >= 28 ? ctx.attr_string("mode", "DCR") : "DCR";
  if (mode != "DCR" && mode != "CRD") {
    ctx.unsupported("mode \"" + mode + "\"; supported: \"DCR\", \"CRD\"");
  }
  if (mode == "CRD") {
    return ctx.set_output(0, space_to_depth_crd(ctx, ctx.attr_int("blocksize", std::nullopt)));
  }
  ctx.set_output(0, ctx.add(OpKind::SpaceToDepth, {ctx.input(0)},
                            {{"blocksize", ctx.attr_int("blocksize", std::nullopt)}}));
}

void lower_reverse_sequence(LoweringContext& ctx) {
  ctx.set_output(0, ctx.add(OpKind::ReverseSequence, {ctx.input(0), ctx.input(1)},
                            {{"batch_axis", ctx.attr_int("batch_axis", 1)},
                             {"time_axis", ctx.attr_int("time_axis", 0)}}));
}

}  // namespace

void register_movement_lowerings(LoweringTable& table) {
  table.add("Identity", OpKind::Identity, 1, &lower_identity);
  table.add("Constant", OpKind::Constant, 1, &lower_constant);
  table.add_composite("Shape", OpFamily::Movement, 1, &lower_shape);
  table.add_composite("Size", OpFamily::Movement, 1, &lower_size);
  table.add_composite("ConstantOfShape", OpFamily::Movement, 9, &lower_constant_of_shape);
  table.add_composite("Range", OpFamily::Movement, 11, &lower_range);
  table.add_composite("EyeLike", OpFamily::Movement, 9, &lower_eye_like);
  table.add("Reshape", OpKind::Reshape, 1, &lower_reshape);
  table.add("Transpose", OpKind::Transpose, 1, &lower_transpose);
  table.add("Concat", OpKind::Concat, 1, &lower_concat);
  table.add("Split", OpKind::Split, 1, &lower_split);
  table.add("Slice", OpKind::Slice, 1, &lower_slice);
  table.add("Gather", OpKind::Gather, 1, &lower_gather);
  table.add("Expand", OpKind::Expand, 8, &lower_expand);
  table.add("Squeeze", OpKind::Squeeze, 1, &lower_squeeze);
  table.add("Unsqueeze", OpKind::Unsqueeze, 1, &lower_unsqueeze);
  table.add("Flatten", OpKind::Flatten, 1, &lower_flatten);
  table.add_composite("Dropout", OpFamily::Movement, 1, &lower_dropout);
  table.add("Tile", OpKind::Tile, 1, &lower_tile);
  table.add("Pad", OpKind::Pad, 1, &lower_pad);
  table.add_composite("CenterCropPad", OpFamily::Movement, 18, &lower_center_crop_pad);
  table.add("DepthToSpace", OpKind::DepthToSpace, 1, &lower_depth_to_space);
  table.add("SpaceToDepth", OpKind::SpaceToDepth, 1, &lower_space_to_depth);
  table.add("ReverseSequence", OpKind::ReverseSequence, 10, &lower_reverse_sequence);
}

}  // namespace volta::onnx
