// Lowerings of the ONNX shape and data-movement ops, and of the ops whose outputs are fully
// known at import time (Shape, Size, Range, ConstantOfShape, EyeLike, NonZero): with static
// shapes those become constants, computed here.

#include <cmath>

#include "lowering.h"

namespace volta::onnx {
namespace {

using Ints = std::vector<int64_t>;
constexpr int64_t kMaxConstantElements = int64_t{1} << 28;

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

void check_size(LoweringContext& ctx, const Shape& shape) {
  if (shape.numel() > kMaxConstantElements) {
    ctx.unsupported("the constant output " + shape.str() + " exceeds " +
                    std::to_string(kMaxConstantElements) + " elements");
  }
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
  check_size(ctx, out.shape());
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
  const Tensor& start = ctx.constant_input(0, "start");
  const Tensor& limit = ctx.constant_input(1, "limit");
  const Tensor& delta = ctx.constant_input(2, "delta");
  const DType dtype = start.dtype();
  if (is_floating(dtype)) {
    const double s = start.get_double(0), l = limit.get_double(0), d = delta.get_double(0);
    if (d == 0) ctx.invalid("delta is zero");
    const auto n = static_cast<int64_t>(std::max(std::ceil((l - s) / d), 0.0));
    Tensor out(dtype, Shape{n});
    check_size(ctx, out.shape());
    for (int64_t i = 0; i < n; ++i) out.set_double(i, s + static_cast<double>(i) * d);
    ctx.set_output_constant(0, std::move(out));
    return;
  }
  const int64_t s = start.get_int(0), l = limit.get_int(0), d = delta.get_int(0);
  if (d == 0) ctx.invalid("delta is zero");
  const int64_t n = std::max<int64_t>((l - s + (d > 0 ? d - 1 : d + 1)) / d, 0);
  Tensor out(dtype, Shape{n});
  check_size(ctx, out.shape());
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
  ctx.set_output(
      0, ctx.add(OpKind::Gather, {data, ctx.constant(int64_vector(picked))}, {{"axis", axis}}));
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

void lower_split(LoweringContext& ctx) {
  Attributes attrs{{"axis", ctx.attr_int("axis", 0)}};
  std::optional<Ints> split;
  if (ctx.since_version() >= 13) {
    if (ctx.has_input(1)) split = ctx.constant_ints(1, "split");
  } else {
    if (ctx.has_attr("split")) split = ctx.attr_ints("split", std::nullopt);
    if (ctx.since_version() < 2 && ctx.has_input(1)) split = ctx.constant_ints(1, "split");
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

// The generalized cosine windows of ONNX 17: w[n] = sum_k (-1)^k a_k cos(2 pi k n / N),
// N = size for a periodic window and size - 1 for a symmetric one; computed in double.
template <int kTerms>
void lower_window(LoweringContext& ctx, const double (&a)[kTerms]) {
  const int64_t size = static_cast<int64_t>(ctx.constant_scalar(0, "size"));
  if (size < 0) ctx.invalid("size is negative");
  const DType dtype = attr_dtype(ctx, ctx.attr_int("output_datatype", 1), "output_datatype");
  const bool periodic = ctx.attr_int("periodic", 1) != 0;
  const double n_total = static_cast<double>(periodic ? size : size - 1);
  Tensor out(dtype, Shape{size});
  check_size(ctx, out.shape());
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  for (int64_t n = 0; n < size; ++n) {
    double w = 0.0;
    for (int k = 0; k < kTerms; ++k) {
      const double term = a[k] * std::cos(kTwoPi * k * static_cast<double>(n) / n_total);
      w += (k % 2 == 0) ? term : -term;
    }
    out.set_double(n, w);
  }
  ctx.set_output_constant(0, std::move(out));
}

void lower_hann(LoweringContext& ctx) { lower_window<2>(ctx, {0.5, 0.5}); }
void lower_hamming(LoweringContext& ctx) { lower_window<2>(ctx, {25.0 / 46.0, 21.0 / 46.0}); }
void lower_blackman(LoweringContext& ctx) { lower_window<3>(ctx, {0.42, 0.5, 0.08}); }

}  // namespace

void register_core_lowerings(LoweringTable& table) {
  using F = OpFamily;
  table.add({"Identity", F::Movement, 1, &lower_identity});
  table.add({"Constant", F::Movement, 1, &lower_constant});
  table.add({"Shape", F::Movement, 1, &lower_shape});
  table.add({"Size", F::Movement, 1, &lower_size});
  table.add({"ConstantOfShape", F::Movement, 9, &lower_constant_of_shape});
  table.add({"Range", F::Movement, 11, &lower_range});
  table.add({"EyeLike", F::Movement, 9, &lower_eye_like});
  table.add({"NonZero", F::Indexing, 9, &lower_nonzero});
  table.add({"Compress", F::Indexing, 9, &lower_compress});
  table.add({"Reshape", F::Movement, 1, &lower_reshape});
  table.add({"Transpose", F::Movement, 1, &lower_transpose});
  table.add({"Concat", F::Movement, 1, &lower_concat});
  table.add({"Split", F::Movement, 1, &lower_split});
  table.add({"Slice", F::Movement, 1, &lower_slice});
  table.add({"Gather", F::Movement, 1, &lower_gather});
  table.add({"Expand", F::Movement, 8, &lower_expand});
  table.add({"Squeeze", F::Movement, 1, &lower_squeeze});
  table.add({"Unsqueeze", F::Movement, 1, &lower_unsqueeze});
  table.add({"Flatten", F::Movement, 1, &lower_flatten});
  table.add({"HannWindow", F::Elementwise, 17, &lower_hann});
  table.add({"HammingWindow", F::Elementwise, 17, &lower_hamming});
  table.add({"BlackmanWindow", F::Elementwise, 17, &lower_blackman});
}

}  // namespace volta::onnx
