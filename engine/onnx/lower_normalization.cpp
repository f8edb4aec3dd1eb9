// Lowerings of the ONNX softmax family and the normalizations.
//
// Versions 1 and 11 of Softmax, LogSoftmax and Hardmax coerce the input to 2-D at `axis` and
// normalize each row of that matrix: they become Flatten -> op(axis=1) -> Reshape back, or the
// op itself along the last axis when `axis` is the last one (the same rows). Training-mode
// BatchNormalization is built from primitive ops around the inference op: batch statistics by
// ReduceMean, running statistics by the momentum update. LpNormalization, RMSNormalization and
// GroupNormalization are composites of internal ops; the last two, newer than the ONNX library,
// follow ONNX's function bodies: the first stage (the statistics and the normalized values) in
// stash_type's precision, cast back to X's type before the scale and bias.

#include <string>

#include "lowering.h"

namespace volta::onnx {
namespace {

// Softmax, LogSoftmax, Hardmax. From version 13 along `axis` (default -1); before, over the
// input coerced to 2-D at `axis` (default 1).
template <OpKind Op>
void lower_softmax_like(LoweringContext& ctx) {
  const ValueId x = ctx.input(0);
  if (ctx.since_version() >= 13) {
    ctx.set_output(0, ctx.add(Op, {x}, {{"axis", ctx.attr_int("axis", -1)}}));
    return;
  }
  const Shape shape = ctx.input_type(0).shape;
  const int64_t axis = ctx.attr_int("axis", 1);
  const int rank = shape.rank();
  if (axis < -rank || axis > rank) {
    ctx.invalid("axis " + std::to_string(axis) + " is out of range for rank " +
                std::to_string(rank) + " (valid: [" + std::to_string(-rank) + ", " +
                std::to_string(rank) + "])");
  }
  if ((axis < 0 ? axis + rank : axis) == rank - 1) {  // the rows are the last axis already
    ctx.set_output(0, ctx.add(Op, {x}, {{"axis", int64_t{-1}}}));
    return;
  }
  const ValueId rows = ctx.add(OpKind::Flatten, {x}, {{"axis", axis}});
  const ValueId y = ctx.add(Op, {rows}, {{"axis", int64_t{1}}});
  ctx.set_output(
      0, ctx.add(OpKind::Reshape, {y}, {{"shape", shape.dims()}, {"allowzero", int64_t{1}}}));
}

// LayerNormalization (17). stash_type 1 (float) is the only statistics type Volta has: f32
// inputs compute everything in f32; f64 inputs compute in f64 (more precise than the spec's f32
// statistics) and Mean / InvStdDev are rounded to f32, their declared type.
void lower_layer_normalization(LoweringContext& ctx) {
  const int64_t stash_type = ctx.attr_int("stash_type", 1);
  if (stash_type != 1) {
    ctx.unsupported("stash_type " + std::to_string(stash_type) + " (" + onnx_type_name(stash_type) +
                    "); supported: 1 (FLOAT)");
  }
  std::vector<ValueId> inputs = {ctx.input(0), ctx.input(1)};
  if (ctx.has_input(2)) inputs.push_back(ctx.input(2));
  const std::vector<ValueId> outs = ctx.add_node(
      OpKind::LayerNormalization, inputs,
      {{"axis", ctx.attr_int("axis", -1)}, {"epsilon", ctx.attr_float("epsilon", 1e-5)}},
      ctx.declared_outputs());
  ctx.set_output(0, outs[0]);
  for (size_t i = 1; i < outs.size(); ++i) {
    const bool f32 = ctx.type_of(outs[i]).dtype == DType::F32;
    ctx.set_output(static_cast<int>(i),
                   f32 ? outs[i] : ctx.add(OpKind::Cast, {outs[i]}, {{"to", std::string("f32")}}));
  }
}

// epsilon's default, an f32 attribute: the function bodies cast its f32 value to the stash type.
constexpr double kDefaultEpsilon = static_cast<double>(1e-5F);

// The dtype of a float input (f32, f64, or a half computed in f32); other dtypes are refused
// naming the supported ones.
DType float_input(LoweringContext& ctx, int i, std::string_view name) {
  const DType dtype = ctx.input_type(i).dtype;
  if (!(kFloatTypes | kHalfTypes).contains(dtype)) {
    ctx.unsupported(std::string(name) + " is " + onnx_type_name(onnx_from_dtype(dtype)) +
                    "; supported: FLOAT, DOUBLE, FLOAT16, BFLOAT16");
  }
  return dtype;
}

// The precision of a normalization's first stage (stash_type, default 1): FLOAT or DOUBLE.
DType stash_dtype(LoweringContext& ctx) {
  const int64_t stash_type = ctx.attr_int("stash_type", onnx_from_dtype(DType::F32));
  const std::optional<DType> dtype = dtype_from_onnx(stash_type);
  if (dtype && kFloatTypes.contains(*dtype)) return *dtype;
  ctx.unsupported("stash_type " + std::to_string(stash_type) + " (" + onnx_type_name(stash_type) +
                  "); supported: 1 (FLOAT), 11 (DOUBLE)");
}

// `axis` in [-rank, rank), made non-negative.
int64_t checked_axis(LoweringContext& ctx, int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) {
    ctx.invalid("axis " + std::to_string(axis) + " is out of range for rank " +
                std::to_string(rank) + " (valid: [" + std::to_string(-rank) + ", " +
                std::to_string(rank - 1) + "])");
  }
  return axis < 0 ? axis + rank : axis;
}

// Input i (scale, bias) has X's dtype.
void require_same_dtype(LoweringContext& ctx, int i, std::string_view name, DType dtype) {
  const DType got = ctx.input_type(i).dtype;
  if (got != dtype) {
    ctx.unsupported(std::string(name) + " is " + onnx_type_name(onnx_from_dtype(got)) + " and X " +
                    onnx_type_name(onnx_from_dtype(dtype)) + "; supported: " + std::string(name) +
                    " of X's type");
  }
}

// RMSNormalization (23): Normalized = X / sqrt(mean(X^2 over axes axis..) + epsilon) in
// stash_type's precision, cast to X's type, then Y = Normalized * scale (scale broadcasts to X).
void lower_rms_normalization(LoweringContext& ctx) {
  const DType dtype = float_input(ctx, 0, "X");
  require_same_dtype(ctx, 1, "scale", dtype);
  const DType stash = stash_dtype(ctx);
  const Shape shape = ctx.input_type(0).shape;
  const int64_t axis = checked_axis(ctx, ctx.attr_int("axis", -1), shape.rank());
  const double epsilon = ctx.attr_float("epsilon", kDefaultEpsilon);
  Ints axes;
  for (int64_t a = axis; a < shape.rank(); ++a) axes.push_back(a);
  const ValueId x = as_dtype(ctx, ctx.input(0), stash);
  const ValueId mean_square = ctx.add(OpKind::ReduceMean, {ctx.add(OpKind::Mul, {x, x})},
                                      {{"axes", axes}, {"keepdims", int64_t{1}}});
  const ValueId rms = ctx.add(
      OpKind::Sqrt, {ctx.add(OpKind::Add, {mean_square, scalar_constant(ctx, stash, epsilon)})});
  const ValueId normalized = as_dtype(ctx, ctx.add(OpKind::Div, {x, rms}), dtype);
  const ValueId y = ctx.add(OpKind::Mul, {normalized, ctx.input(1)});
  if (ctx.type_of(y).shape != shape) {
    ctx.invalid("scale of shape " + ctx.input_type(1).shape.str() +
                " does not broadcast to X's shape " + shape.str());
  }
  ctx.set_output(0, y);
}

// LpNormalization: X / ||X||_p along axis, p 1 or 2; 0 where the norm is 0 (not 0/0), as ONNX
// defines it.
void lower_lp_normalization(LoweringContext& ctx) {
  const DType dtype = float_input(ctx, 0, "input");
  const int64_t p = ctx.attr_int("p", 2);
  if (p != 1 && p != 2) ctx.unsupported("p " + std::to_string(p) + "; supported: 1, 2");
  const int64_t axis = checked_axis(ctx, ctx.attr_int("axis", -1), ctx.input_type(0).shape.rank());
  const ValueId x = ctx.input(0);
  const ValueId norm = ctx.add(p == 1 ? OpKind::ReduceL1 : OpKind::ReduceL2, {x},
                               {{"axes", Ints{axis}}, {"keepdims", int64_t{1}}});
  const ValueId zero = scalar_constant(ctx, dtype, 0.0);
  const ValueId norm_is_zero = ctx.add(OpKind::Equal, {norm, zero});
  const ValueId divisor =
      ctx.add(OpKind::Where, {norm_is_zero, scalar_constant(ctx, dtype, 1.0), norm});
  ctx.set_output(0,
                 ctx.add(OpKind::Where, {norm_is_zero, zero, ctx.add(OpKind::Div, {x, divisor})}));
}

// A 1-D constant of `size` copies of `value`.
ValueId filled(LoweringContext& ctx, DType dtype, int64_t size, double value) {
  Tensor t(dtype, Shape{size});
  for (int64_t i = 0; i < size; ++i) t.set_double(i, value);
  return ctx.constant(std::move(t));
}

// GroupNormalization (18, 21): the channels of each instance in num_groups groups, each group
// normalized by its mean and biased variance: InstanceNormalization of X as
// [N, num_groups, C / num_groups * D1 * ...]. Version 18 scales and shifts per group, which is
// InstanceNormalization's own scale and B, in X's type. Version 21 normalizes in stash_type's
// precision, casts back to X's type, and scales and shifts per channel.
void lower_group_normalization(LoweringContext& ctx) {
  const bool per_channel = ctx.since_version() >= 21;
  const DType dtype = float_input(ctx, 0, "X");
  const DType stash = per_channel ? stash_dtype(ctx) : dtype;
  const Shape shape = ctx.input_type(0).shape;
  if (shape.rank() < 2) ctx.invalid("X must have rank >= 2 ([N, C, ...]); got " + shape.str());
  const int64_t channels = shape[1];
  const int64_t groups = ctx.attr_int("num_groups", std::nullopt);
  if (groups < 1 || channels % groups != 0) {
    ctx.invalid("num_groups " + std::to_string(groups) + " must divide the " +
                std::to_string(channels) + " channels");
  }
  const double epsilon = ctx.attr_float("epsilon", kDefaultEpsilon);
  const Shape affine{per_channel ? channels : groups};
  for (const auto& [i, name] : {std::pair<int, const char*>{1, "scale"}, {2, "bias"}}) {
    require_same_dtype(ctx, i, name, dtype);
    if (ctx.input_type(i).shape != affine) {
      ctx.invalid(std::string(name) + " must have shape " + affine.str() + " (one per " +
                  (per_channel ? "channel" : "group") + "); got " + ctx.input_type(i).shape.str());
    }
  }
  int64_t group_size = channels / groups;
  for (int a = 2; a < shape.rank(); ++a) group_size *= shape[a];
  const Attributes grouped_shape = {{"shape", Ints{shape[0], groups, group_size}},
                                    {"allowzero", int64_t{1}}};
  const Attributes x_shape = {{"shape", shape.dims()}, {"allowzero", int64_t{1}}};
  const ValueId grouped =
      ctx.add(OpKind::Reshape, {as_dtype(ctx, ctx.input(0), stash)}, grouped_shape);
  if (!per_channel) {
    const ValueId y = ctx.add(OpKind::InstanceNormalization, {grouped, ctx.input(1), ctx.input(2)},
                              {{"epsilon", epsilon}});
    ctx.set_output(0, ctx.add(OpKind::Reshape, {y}, x_shape));
    return;
  }
  const ValueId normalized =
      ctx.add(OpKind::InstanceNormalization,
              {grouped, filled(ctx, stash, groups, 1.0), filled(ctx, stash, groups, 0.0)},
              {{"epsilon", epsilon}});
  const ValueId unstashed = ctx.add(OpKind::Reshape, {as_dtype(ctx, normalized, dtype)}, x_shape);
  Ints channel_dims(static_cast<size_t>(shape.rank() - 1), 1);  // [C, 1, ...] lines up with axis 1
  channel_dims[0] = channels;
  const ValueId scale = ctx.add(OpKind::Reshape, {ctx.input(1)}, {{"shape", channel_dims}});
  const ValueId bias = ctx.add(OpKind::Reshape, {ctx.input(2)}, {{"shape", channel_dims}});
  ctx.set_output(0, ctx.add(OpKind::Add, {ctx.add(OpKind::Mul, {unstashed, scale}), bias}));
}

// Training-mode BatchNormalization: Y normalized by the batch's mean and biased variance over
// every axis but 1; running_mean / running_var = input * momentum + batch * (1 - momentum).
void lower_batch_norm_training(LoweringContext& ctx, double epsilon, double momentum) {
  const TypeInfo& x_type = ctx.input_type(0);
  const int rank = x_type.shape.rank();
  if (rank < 2) ctx.invalid("X must have rank >= 2 ([N, C, ...]); got " + x_type.shape.str());
  Ints axes = {0};
  for (int a = 2; a < rank; ++a) axes.push_back(a);
  const Ints channels = {x_type.shape[1]};
  const ValueId x = ctx.input(0);
  const Attributes reduce = {{"axes", axes}, {"keepdims", int64_t{1}}};
  const ValueId mean_kept = ctx.add(OpKind::ReduceMean, {x}, reduce);
  const ValueId centered = ctx.add(OpKind::Sub, {x, mean_kept});
  const ValueId var_kept =
      ctx.add(OpKind::ReduceMean, {ctx.add(OpKind::Mul, {centered, centered})}, reduce);
  const ValueId batch_mean = ctx.add(OpKind::Reshape, {mean_kept}, {{"shape", channels}});
  const ValueId batch_var = ctx.add(OpKind::Reshape, {var_kept}, {{"shape", channels}});
  ctx.set_output(
      0, ctx.add(OpKind::BatchNormalization, {x, ctx.input(1), ctx.input(2), batch_mean, batch_var},
                 {{"epsilon", epsilon}}));
  for (int i = 1; i <= 2; ++i) {
    if (!ctx.has_output(i)) continue;
    const DType dtype = ctx.input_type(2 + i).dtype;
    const ValueId kept =
        ctx.add(OpKind::Mul, {ctx.input(2 + i), scalar_constant(ctx, dtype, momentum)});
    const ValueId added = ctx.add(OpKind::Mul, {i == 1 ? batch_mean : batch_var,
                                                scalar_constant(ctx, dtype, 1.0 - momentum)});
    ctx.set_output(i, ctx.add(OpKind::Add, {kept, added}));
  }
}

// BatchNormalization before version 9 with spatial=0: statistics, scale and bias per
// activation ([C, D1, ...]), broadcast against X from the right.
void lower_batch_norm_per_activation(LoweringContext& ctx, double epsilon) {
  const DType dtype = ctx.input_type(0).dtype;
  const ValueId centered = ctx.add(OpKind::Sub, {ctx.input(0), ctx.input(3)});
  const ValueId stddev = ctx.add(
      OpKind::Sqrt, {ctx.add(OpKind::Add, {ctx.input(4), scalar_constant(ctx, dtype, epsilon)})});
  const ValueId normalized = ctx.add(OpKind::Div, {centered, stddev});
  ctx.set_output(
      0, ctx.add(OpKind::Add, {ctx.add(OpKind::Mul, {normalized, ctx.input(1)}), ctx.input(2)}));
}

void lower_batch_normalization(LoweringContext& ctx) {
  const int version = ctx.since_version();
  const double epsilon = ctx.attr_float("epsilon", 1e-5);
  const double momentum = ctx.attr_float("momentum", 0.9);
  if (version < 6) ctx.consume_attr("consumed_inputs");
  const bool spatial = version < 9 ? ctx.attr_int("spatial", 1) != 0 : true;
  bool training = false;
  if (version < 7) {
    training = ctx.attr_int("is_test", 0) == 0;
  } else if (version < 14) {
    training = ctx.declared_outputs() > 1;  // the optional outputs exist only in training mode
  } else {
    training = ctx.attr_int("training_mode", 0) != 0;
  }
  for (int i = 3; i < ctx.num_outputs(); ++i) {
    if (ctx.has_output(i)) {
      ctx.unsupported("output " + std::to_string(i) +
                      " (saved_mean / saved_var); supported: Y, and in training mode the running "
                      "mean and variance");
    }
  }
  if (training && !spatial) {
    ctx.unsupported(
        "training mode with spatial=0; supported: spatial=1, or spatial=0 in test "
        "mode");
  }
  if (training) {
    lower_batch_norm_training(ctx, epsilon, momentum);
    return;
  }
  if (ctx.declared_outputs() > 1) {
    ctx.invalid("the running mean and variance outputs exist only in training mode");
  }
  if (!spatial) {
    lower_batch_norm_per_activation(ctx, epsilon);
    return;
  }
  ctx.set_output(0, ctx.add(OpKind::BatchNormalization,
                            {ctx.input(0), ctx.input(1), ctx.input(2), ctx.input(3), ctx.input(4)},
                            {{"epsilon", epsilon}}));
}

void lower_instance_normalization(LoweringContext& ctx) {
  if (ctx.since_version() < 6) ctx.consume_attr("consumed_inputs");
  ctx.set_output(0,
                 ctx.add(OpKind::InstanceNormalization, {ctx.input(0), ctx.input(1), ctx.input(2)},
                         {{"epsilon", ctx.attr_float("epsilon", 1e-5)}}));
}

void lower_mean_variance_normalization(LoweringContext& ctx) {
  ctx.set_output(0, ctx.add(OpKind::MeanVarianceNormalization, {ctx.input(0)},
                            {{"axes", ctx.attr_ints("axes", Ints{0, 2, 3})}}));
}

void lower_lrn(LoweringContext& ctx) {
  ctx.set_output(0, ctx.add(OpKind::LRN, {ctx.input(0)},
                            {{"alpha", ctx.attr_float("alpha", 1e-4)},
                             {"beta", ctx.attr_float("beta", 0.75)},
                             {"bias", ctx.attr_float("bias", 1.0)},
                             {"size", ctx.attr_int("size", std::nullopt)}}));
}

}  // namespace

void register_normalization_lowerings(LoweringTable& table) {
  table.add("Softmax", OpKind::Softmax, 1, &lower_softmax_like<OpKind::Softmax>);
  table.add("LogSoftmax", OpKind::LogSoftmax, 1, &lower_softmax_like<OpKind::LogSoftmax>);
  table.add("Hardmax", OpKind::Hardmax, 1, &lower_softmax_like<OpKind::Hardmax>);
  table.add("LayerNormalization", OpKind::LayerNormalization, 17, &lower_layer_normalization);
  table.add("BatchNormalization", OpKind::BatchNormalization, 1, &lower_batch_normalization);
  table.add("InstanceNormalization", OpKind::InstanceNormalization, 1,
            &lower_instance_normalization);
  table.add("MeanVarianceNormalization", OpKind::MeanVarianceNormalization, 9,
            &lower_mean_variance_normalization);
  table.add("LRN", OpKind::LRN, 1, &lower_lrn);
  table.add_composite("RMSNormalization", OpFamily::Normalization, 23, &lower_rms_normalization);
  table.add_composite("LpNormalization", OpFamily::Normalization, 1, &lower_lp_normalization);
  table.add_composite("GroupNormalization", OpFamily::Normalization, 18,
                      &lower_group_normalization);
}

}  // namespace volta::onnx
