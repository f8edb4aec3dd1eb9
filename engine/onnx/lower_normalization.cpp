// Lowerings of the ONNX softmax family, the normalizations, MatMul and Gemm, Dropout (inference),
// the losses and Einsum.
//
// Versions 1 and 11 of Softmax, LogSoftmax and Hardmax coerce the input to 2-D at `axis` and
// normalize each row of that matrix: they become Flatten -> op(axis=1) -> Reshape back, or the
// op itself along the last axis when `axis` is the last one (the same rows). Training-mode
// BatchNormalization is built from primitive ops around the inference op: batch statistics by
// ReduceMean, running statistics by the momentum update.

#include <string>

#include "lowering.h"

namespace volta::onnx {
namespace {

using Ints = std::vector<int64_t>;

// A scalar of `dtype` holding `value`, as a constant node.
ValueId scalar(LoweringContext& ctx, DType dtype, double value) {
  Tensor t(dtype, Shape{});
  t.set_double(0, value);
  return ctx.constant(std::move(t));
}

// The number of outputs to give an internal node: up to the last one the ONNX node declares.
int declared_outputs(const LoweringContext& ctx) {
  int n = 1;
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    if (ctx.has_output(i)) n = i + 1;
  }
  return n;
}

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
      declared_outputs(ctx));
  ctx.set_output(0, outs[0]);
  for (size_t i = 1; i < outs.size(); ++i) {
    const bool f32 = ctx.type_of(outs[i]).dtype == DType::F32;
    ctx.set_output(static_cast<int>(i),
                   f32 ? outs[i] : ctx.add(OpKind::Cast, {outs[i]}, {{"to", std::string("f32")}}));
  }
}

void lower_matmul(LoweringContext& ctx) {
  ctx.set_output(0, ctx.add(OpKind::MatMul, {ctx.input(0), ctx.input(1)}));
}

// Gemm. Before version 7, C broadcasts only with broadcast=1; without it C must already be
// [M, N]. Before version 11, C is required (the ONNX checker enforces it).
void lower_gemm(LoweringContext& ctx) {
  Attributes attrs = {{"alpha", ctx.attr_float("alpha", 1.0)},
                      {"beta", ctx.attr_float("beta", 1.0)},
                      {"transA", ctx.attr_int("transA", 0)},
                      {"transB", ctx.attr_int("transB", 0)}};
  std::vector<ValueId> inputs = {ctx.input(0), ctx.input(1)};
  if (ctx.has_input(2)) inputs.push_back(ctx.input(2));
  const bool broadcast = ctx.since_version() < 7 ? ctx.attr_int("broadcast", 0) != 0 : true;
  const ValueId y = ctx.add(OpKind::Gemm, inputs, std::move(attrs));
  if (!broadcast && ctx.has_input(2) && ctx.input_type(2).shape != ctx.type_of(y).shape) {
    ctx.invalid("C has shape " + ctx.input_type(2).shape.str() + " but broadcast=0 requires the " +
                "output shape " + ctx.type_of(y).shape.str());
  }
  ctx.set_output(0, y);
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
    ctx.set_output(1, ctx.add(OpKind::Expand, {scalar(ctx, mask_type, 1.0)},
                              {{"shape", ctx.input_type(0).shape.dims()}}));
  }
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
    const ValueId kept = ctx.add(OpKind::Mul, {ctx.input(2 + i), scalar(ctx, dtype, momentum)});
    const ValueId added =
        ctx.add(OpKind::Mul, {i == 1 ? batch_mean : batch_var, scalar(ctx, dtype, 1.0 - momentum)});
    ctx.set_output(i, ctx.add(OpKind::Add, {kept, added}));
  }
}

// BatchNormalization before version 9 with spatial=0: statistics, scale and bias per
// activation ([C, D1, ...]), broadcast against X from the right.
void lower_batch_norm_per_activation(LoweringContext& ctx, double epsilon) {
  const DType dtype = ctx.input_type(0).dtype;
  const ValueId centered = ctx.add(OpKind::Sub, {ctx.input(0), ctx.input(3)});
  const ValueId stddev =
      ctx.add(OpKind::Sqrt, {ctx.add(OpKind::Add, {ctx.input(4), scalar(ctx, dtype, epsilon)})});
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
    training = declared_outputs(ctx) > 1;  // the optional outputs exist only in training mode
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
  if (declared_outputs(ctx) > 1) {
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

// SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss: inputs, reduction and ignore_index
// (absent: no label is ignored) carry over; SoftmaxCrossEntropyLoss may declare log_prob.
template <OpKind Op>
void lower_loss(LoweringContext& ctx) {
  std::vector<ValueId> inputs = {ctx.input(0), ctx.input(1)};
  if (ctx.has_input(2)) inputs.push_back(ctx.input(2));
  Attributes attrs = {{"reduction", ctx.attr_string("reduction", std::string("mean"))}};
  attrs["ignore_index"] =
      ctx.has_attr("ignore_index") ? Ints{ctx.attr_int("ignore_index", {})} : Ints{};
  const std::vector<ValueId> outs =
      ctx.add_node(Op, inputs, std::move(attrs), declared_outputs(ctx));
  for (size_t i = 0; i < outs.size(); ++i) ctx.set_output(static_cast<int>(i), outs[i]);
}

void lower_einsum(LoweringContext& ctx) {
  std::vector<ValueId> inputs;
  inputs.reserve(static_cast<size_t>(ctx.num_inputs()));
  for (int i = 0; i < ctx.num_inputs(); ++i) inputs.push_back(ctx.input(i));
  ctx.set_output(0, ctx.add(OpKind::Einsum, inputs,
                            {{"equation", ctx.attr_string("equation", std::nullopt)}}));
}

}  // namespace

void register_normalization_lowerings(LoweringTable& table) {
  using F = OpFamily;
  table.add({"Softmax", F::Normalization, 1, &lower_softmax_like<OpKind::Softmax>});
  table.add({"LogSoftmax", F::Normalization, 1, &lower_softmax_like<OpKind::LogSoftmax>});
  table.add({"Hardmax", F::Normalization, 1, &lower_softmax_like<OpKind::Hardmax>});
  table.add({"LayerNormalization", F::Normalization, 17, &lower_layer_normalization});
  table.add({"BatchNormalization", F::Normalization, 1, &lower_batch_normalization});
  table.add({"InstanceNormalization", F::Normalization, 1, &lower_instance_normalization});
  table.add({"MeanVarianceNormalization", F::Normalization, 9, &lower_mean_variance_normalization});
  table.add({"LRN", F::Normalization, 1, &lower_lrn});
  table.add({"MatMul", F::Linalg, 1, &lower_matmul});
  table.add({"Gemm", F::Linalg, 1, &lower_gemm});
  table.add({"Dropout", F::Movement, 1, &lower_dropout});
  table.add({"SoftmaxCrossEntropyLoss", F::Loss, 12, &lower_loss<OpKind::SoftmaxCrossEntropyLoss>});
  table.add(
      {"NegativeLogLikelihoodLoss", F::Loss, 12, &lower_loss<OpKind::NegativeLogLikelihoodLoss>});
  table.add({"Einsum", F::Linalg, 12, &lower_einsum});
}

}  // namespace volta::onnx
