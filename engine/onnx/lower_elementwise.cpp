// ONNX lowerings of the elementwise arithmetic and math ops, Min, Max, Sum, Mean, Cast,
// CastLike, BitCast, Clip and Where onto the internal elementwise ops, and of the generalized
// cosine windows (constants); the helpers the activation and logical lowerings share with them
// (lower_elementwise.h).

#include "lower_elementwise.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>

namespace volta::onnx {

using K = OpKind;

// "FLOAT, DOUBLE": the ONNX names of a dtype set.
std::string onnx_names(DTypeSet set) {
  std::string out;
  for (int d = 0; d < kDTypeCount; ++d) {
    if (!set.contains(static_cast<DType>(d))) continue;
    out += (out.empty() ? "" : ", ") + onnx_type_name(onnx_from_dtype(static_cast<DType>(d)));
  }
  return out;
}

std::string onnx_name(DType dtype) { return onnx_type_name(onnx_from_dtype(dtype)); }

ValueId add_op(LoweringContext& ctx, OpKind op, std::vector<ValueId> inputs, Attributes attrs) {
  const OpSchema& schema = op_schema(op);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputSpec& spec = schema.inputs[std::min(i, schema.inputs.size() - 1)];
    const DTypeSet allowed = importable(schema.find_type_param(spec.type_param)->allowed);
    const DType dtype = ctx.type_of(inputs[i]).dtype;
    if (!allowed.contains(dtype)) {
      ctx.unsupported("input " + std::to_string(i) + " is " + onnx_name(dtype) +
                      "; supported: " + onnx_names(allowed));
    }
  }
  return ctx.add(op, std::move(inputs), std::move(attrs));
}

void drop_consumed_inputs(LoweringContext& ctx) {
  if (ctx.has_attr("consumed_inputs")) ctx.consume_attr("consumed_inputs");
}

Tensor scalar_of(DType dtype, double value) {
  Tensor t(dtype, Shape{});
  t.set_double(0, value);
  return t;
}

namespace {

// ---- Operands of binary ops ---------------------------------------------------------------

// Before version 7, B broadcasts to A only with broadcast=1, and then by the legacy rule: B's
// dims match a run of A's dims starting at `axis` (default: A's trailing dims), a size-1 dim
// matching any. Padding B's shape with trailing 1s turns that into numpy broadcasting. With
// broadcast=0 the shapes must be equal.
std::pair<ValueId, ValueId> legacy_operands(LoweringContext& ctx) {
  const ValueId a = ctx.input(0);
  ValueId b = ctx.input(1);
  drop_consumed_inputs(ctx);
  const Shape sa = ctx.input_type(0).shape;
  const Shape sb = ctx.input_type(1).shape;
  const int64_t broadcast = ctx.attr_int("broadcast", 0);
  if (broadcast != 0 && broadcast != 1) ctx.invalid("broadcast must be 0 or 1");
  if (broadcast == 0) {
    if (ctx.has_attr("axis"))
      ctx.unsupported("axis without broadcast=1; supported: axis only with broadcast=1");
    if (sa != sb) {
      ctx.invalid("A " + sa.str() + " and B " + sb.str() +
                  " differ in shape without broadcast=1 (before version 7, operands broadcast "
                  "only when broadcast=1)");
    }
    return {a, b};
  }
  const int64_t axis = ctx.attr_int("axis", sa.rank() - sb.rank());
  const int64_t first = axis < 0 ? axis + sa.rank() : axis;
  bool fits = sb.rank() <= sa.rank() && first >= 0 && first + sb.rank() <= sa.rank();
  for (int d = 0; fits && d < sb.rank(); ++d) {
    fits = sb[d] == 1 || sb[d] == sa[static_cast<int>(first) + d];
  }
  if (!fits) {
    ctx.invalid("B " + sb.str() + " does not broadcast to A " + sa.str() + " at axis " +
                std::to_string(axis) +
                " (legacy broadcasting: B's dims match A's dims from axis on, or are 1)");
  }
  const int64_t trailing = sa.rank() - first - sb.rank();
  if (trailing > 0) {
    std::vector<int64_t> dims = sb.dims();
    dims.insert(dims.end(), static_cast<size_t>(trailing), 1);
    b = ctx.add(K::Reshape, {b}, {{"shape", dims}, {"allowzero", int64_t{1}}});
  }
  return {a, b};
}

}  // namespace

std::pair<ValueId, ValueId> binary_operands(LoweringContext& ctx) {
  if (ctx.since_version() < 7) return legacy_operands(ctx);
  return {ctx.input(0), ctx.input(1)};
}

namespace {

// ---- Variadic ops -------------------------------------------------------------------------

// All inputs must have one shape before version 8 (variadic ops broadcast from version 8).
void require_equal_shapes(LoweringContext& ctx) {
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    if (ctx.input_type(i).shape != ctx.input_type(0).shape) {
      ctx.invalid("input " + std::to_string(i) + " has shape " + ctx.input_type(i).shape.str() +
                  ", input 0 " + ctx.input_type(0).shape.str() +
                  " (before version 8 all inputs have one shape)");
    }
  }
}

std::vector<ValueId> variadic_inputs(LoweringContext& ctx) {
  drop_consumed_inputs(ctx);
  if (ctx.since_version() < 8) require_equal_shapes(ctx);
  std::vector<ValueId> inputs;
  inputs.reserve(static_cast<size_t>(ctx.num_inputs()));
  for (int i = 0; i < ctx.num_inputs(); ++i) inputs.push_back(ctx.input(i));
  if (inputs.empty()) ctx.invalid("needs at least one input");
  return inputs;
}

template <OpKind kOp>
void lower_extremum(LoweringContext& ctx) {
  ctx.set_output(0, add_op(ctx, kOp, variadic_inputs(ctx)));
}

// Sum and Mean: a left-to-right chain of Add; Mean divides by the count in the input dtype.
ValueId chained_sum(LoweringContext& ctx, const std::vector<ValueId>& inputs) {
  ValueId sum = inputs[0];
  for (size_t i = 1; i < inputs.size(); ++i) sum = add_op(ctx, K::Add, {sum, inputs[i]});
  return sum;
}

void lower_sum(LoweringContext& ctx) {
  const std::vector<ValueId> inputs = variadic_inputs(ctx);
  const ValueId sum = chained_sum(ctx, inputs);
  ctx.set_output(0, inputs.size() == 1 ? add_op(ctx, K::Identity, {sum}) : sum);
}

void lower_mean(LoweringContext& ctx) {
  const std::vector<ValueId> inputs = variadic_inputs(ctx);
  const ValueId sum = chained_sum(ctx, inputs);
  const DType dtype = ctx.type_of(sum).dtype;
  if (!is_floating(dtype)) {
    ctx.unsupported("inputs are " + onnx_name(dtype) + "; supported: FLOAT, DOUBLE");
  }
  const ValueId count = ctx.constant(scalar_of(dtype, static_cast<double>(inputs.size())));
  ctx.set_output(0, add_op(ctx, K::Div, {sum, count}));
}

// ---- Arithmetic ---------------------------------------------------------------------------

// Pow of one float dtype maps directly. Otherwise (an integer base, or from version 12 an
// exponent of another dtype) ONNX's result is numpy's: the power computed in double, then
// converted to the base's dtype (integers truncate). Integer operands are exact in double up
// to 2^53 in magnitude; an integer result out of its dtype's range is a Cast error.
void lower_pow(LoweringContext& ctx) {
  const auto [x, y] = binary_operands(ctx);
  const DType base = ctx.type_of(x).dtype;
  const DType exponent = ctx.type_of(y).dtype;
  if (base == exponent && is_floating(base)) {
    ctx.set_output(0, add_op(ctx, K::Pow, {x, y}));
    return;
  }
  if (base == DType::Bool || exponent == DType::Bool) {
    ctx.unsupported("operands are " + onnx_name(base) + " and " + onnx_name(exponent) +
                    "; supported: FLOAT, DOUBLE, INT32, INT64");
  }
  auto to_f64 = [&ctx](ValueId v) {
    return ctx.type_of(v).dtype == DType::F64
               ? v
               : add_op(ctx, K::Cast, {v}, {{"to", std::string(dtype_name(DType::F64))}});
  };
  ValueId power = add_op(ctx, K::Pow, {to_f64(x), to_f64(y)});
  if (base != DType::F64) {
    power = add_op(ctx, K::Cast, {power}, {{"to", std::string(dtype_name(base))}});
  }
  ctx.set_output(0, power);
}

void lower_mod(LoweringContext& ctx) {
  const int64_t fmod = ctx.attr_int("fmod", 0);
  if (fmod != 0 && fmod != 1) {
    ctx.invalid("fmod is " + std::to_string(fmod) + "; it must be 0 or 1");
  }
  ctx.set_output(0, add_op(ctx, K::Mod, {ctx.input(0), ctx.input(1)}, {{"fmod", fmod}}));
}

// ---- Conversion and selection -------------------------------------------------------------

// Version 1 names the target type ("FLOAT"); later versions give its TensorProto code.
DType cast_target(LoweringContext& ctx) {
  if (ctx.since_version() >= 6) return attr_dtype(ctx, ctx.attr_int("to", std::nullopt), "to");
  const std::string name = ctx.attr_string("to", std::nullopt);
  for (int code = 0; code < kDTypeCount; ++code) {
    if (name == onnx_name(static_cast<DType>(code))) return static_cast<DType>(code);
  }
  ctx.unsupported("to is \"" + name + "\"; supported: " + onnx_tensor_types());
}

ValueId cast_to(LoweringContext& ctx, ValueId x, DType to) {
  return add_op(ctx, K::Cast, {x}, {{"to", std::string(dtype_name(to))}});
}

// Version 19's saturate and version 24's round_mode apply only to casts to the float8 types,
// which Volta refuses: for every target Volta has they change nothing.
void consume_float8_attrs(LoweringContext& ctx) {
  if (ctx.since_version() >= 19) ctx.attr_int("saturate", 1);
  if (ctx.since_version() >= 24) ctx.attr_string("round_mode", "up");
}

void lower_cast(LoweringContext& ctx) {
  const DType to = cast_target(ctx);
  consume_float8_attrs(ctx);
  ctx.set_output(0, cast_to(ctx, ctx.input(0), to));
}

void lower_cast_like(LoweringContext& ctx) {
  consume_float8_attrs(ctx);
  ctx.set_output(0, cast_to(ctx, ctx.input(0), ctx.input_type(1).dtype));
}

// ONNX requires the target to have the input's width: a model that asks for another is invalid.
void lower_bit_cast(LoweringContext& ctx) {
  const DType to = attr_dtype(ctx, ctx.attr_int("to", std::nullopt), "to");
  const DType from = ctx.input_type(0).dtype;
  if (dtype_size(from) != dtype_size(to)) {
    ctx.invalid("to is " + onnx_name(to) + " (" + std::to_string(8 * dtype_size(to)) +
                " bits), the input " + onnx_name(from) + " (" +
                std::to_string(8 * dtype_size(from)) + " bits): BitCast keeps the width");
  }
  ctx.set_output(0, add_op(ctx, K::BitCast, {ctx.input(0)}, {{"to", std::string(dtype_name(to))}}));
}

// Before version 11 the bounds are attributes (version 6 defaults them to +-FLT_MAX); from
// version 11 they are optional inputs, which must be known at import time.
void lower_clip(LoweringContext& ctx) {
  double lo = -kInf;
  double hi = kInf;
  if (ctx.since_version() < 11) {
    drop_consumed_inputs(ctx);
    const bool v6 = ctx.since_version() >= 6;
    lo = ctx.attr_float("min", v6 ? -FLT_MAX : -kInf);
    hi = ctx.attr_float("max", v6 ? FLT_MAX : kInf);
  } else {
    if (ctx.has_input(1)) lo = ctx.constant_scalar(1, "Clip min");
    if (ctx.has_input(2)) hi = ctx.constant_scalar(2, "Clip max");
  }
  ctx.set_output(0, add_op(ctx, K::Clip, {ctx.input(0)}, {{"min", lo}, {"max", hi}}));
}

void lower_where(LoweringContext& ctx) {
  ctx.set_output(0, add_op(ctx, K::Where, {ctx.input(0), ctx.input(1), ctx.input(2)}));
}

// ---- Windows ------------------------------------------------------------------------------

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
  check_constant_size(ctx, out.shape());
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

// ---- Bit operations -----------------------------------------------------------------------

void lower_bit_shift(LoweringContext& ctx) {
  const std::string direction = ctx.attr_string("direction", std::nullopt);
  if (direction != "LEFT" && direction != "RIGHT") {
    ctx.invalid("direction is \"" + direction + "\"; ONNX allows \"LEFT\" and \"RIGHT\"");
  }
  const auto [x, y] = binary_operands(ctx);
  ctx.set_output(0, add_op(ctx, K::BitShift, {x, y},
                           {{"direction", std::string(direction == "LEFT" ? "left" : "right")}}));
}

// ---- ai.onnx.ml -------------------------------------------------------------------------

// Binarizer: 1 where X > threshold, else 0, in X's type (NaN gives 0). An integer X compares
// with floor(threshold), which is exactly X > threshold; past X's range, with X itself.
void lower_binarizer(LoweringContext& ctx) {
  const DType dtype = ctx.input_type(0).dtype;
  if (dtype != DType::F32 && dtype != DType::F64 && dtype != DType::I64 && dtype != DType::I32) {
    ctx.unsupported("X is " + std::string(dtype_name(dtype)) +
                    "; Binarizer takes f32, f64, i64 and i32");
  }
  const ValueId x = ctx.input(0);
  const double threshold = ctx.attr_float("threshold", 0.0);
  ValueId above = kNoValue;
  const double range = dtype == DType::I32 ? 0x1p31 : 0x1p63;  // integers lie in [-range, range)
  if (is_integer(dtype) && std::floor(threshold) >= range) {
    above = ctx.add(K::Greater, {x, x});  // none is above
  } else if (is_integer(dtype) && std::floor(threshold) < -range) {
    above = ctx.add(K::GreaterOrEqual, {x, x});  // all are
  } else {
    const double bound = is_integer(dtype) ? std::floor(threshold) : threshold;
    above = ctx.add(K::Greater, {x, scalar_constant(ctx, dtype, bound)});
  }
  ctx.set_output(0, ctx.add(K::Where, {above, scalar_constant(ctx, dtype, 1.0),
                                       scalar_constant(ctx, dtype, 0.0)}));
}

}  // namespace

void register_elementwise_lowerings(LoweringTable& table) {
  table.add("Add", K::Add, 1, &lower_binary<K::Add>);
  table.add_ml_composite("Binarizer", OpFamily::Elementwise, 1, &lower_binarizer);
  table.add("Sub", K::Sub, 1, &lower_binary<K::Sub>);
  table.add("Mul", K::Mul, 1, &lower_binary<K::Mul>);
  table.add("Div", K::Div, 1, &lower_binary<K::Div>);
  table.add("Pow", K::Pow, 1, &lower_pow);
  table.add("Mod", K::Mod, 10, &lower_mod);
  table.add("BitShift", K::BitShift, 11, &lower_bit_shift);
  table.add("BitwiseAnd", K::BitwiseAnd, 18, &lower_binary<K::BitwiseAnd>);
  table.add("BitwiseOr", K::BitwiseOr, 18, &lower_binary<K::BitwiseOr>);
  table.add("BitwiseXor", K::BitwiseXor, 18, &lower_binary<K::BitwiseXor>);
  table.add("BitwiseNot", K::BitwiseNot, 18, &lower_unary<K::BitwiseNot>);
  table.add("Neg", K::Neg, 1, &lower_unary<K::Neg>);
  table.add("Abs", K::Abs, 1, &lower_unary<K::Abs>);
  table.add("Sqrt", K::Sqrt, 1, &lower_unary<K::Sqrt>);
  table.add("Reciprocal", K::Reciprocal, 1, &lower_unary<K::Reciprocal>);
  table.add("Exp", K::Exp, 1, &lower_unary<K::Exp>);
  table.add("Log", K::Log, 1, &lower_unary<K::Log>);
  table.add("Floor", K::Floor, 1, &lower_unary<K::Floor>);
  table.add("Ceil", K::Ceil, 1, &lower_unary<K::Ceil>);
  table.add("Round", K::Round, 11, &lower_unary<K::Round>);
  table.add("Sign", K::Sign, 9, &lower_unary<K::Sign>);
  table.add("Sin", K::Sin, 7, &lower_unary<K::Sin>);
  table.add("Cos", K::Cos, 7, &lower_unary<K::Cos>);
  table.add("Tan", K::Tan, 7, &lower_unary<K::Tan>);
  table.add("Asin", K::Asin, 7, &lower_unary<K::Asin>);
  table.add("Acos", K::Acos, 7, &lower_unary<K::Acos>);
  table.add("Atan", K::Atan, 7, &lower_unary<K::Atan>);
  table.add("Sinh", K::Sinh, 9, &lower_unary<K::Sinh>);
  table.add("Cosh", K::Cosh, 9, &lower_unary<K::Cosh>);
  table.add("Asinh", K::Asinh, 9, &lower_unary<K::Asinh>);
  table.add("Acosh", K::Acosh, 9, &lower_unary<K::Acosh>);
  table.add("Atanh", K::Atanh, 9, &lower_unary<K::Atanh>);
  table.add("Min", K::Min, 1, &lower_extremum<K::Min>);
  table.add("Max", K::Max, 1, &lower_extremum<K::Max>);
  table.add_composite("Sum", OpFamily::Elementwise, 1, &lower_sum);
  table.add_composite("Mean", OpFamily::Elementwise, 1, &lower_mean);
  table.add("Cast", K::Cast, 1, &lower_cast);
  table.add("CastLike", K::Cast, 15, &lower_cast_like);
  table.add("BitCast", K::BitCast, 26, &lower_bit_cast);
  table.add("Clip", K::Clip, 1, &lower_clip);
  table.add("Where", K::Where, 9, &lower_where);
  table.add_composite("HannWindow", OpFamily::Elementwise, 17, &lower_hann);
  table.add_composite("HammingWindow", OpFamily::Elementwise, 17, &lower_hamming);
  table.add_composite("BlackmanWindow", OpFamily::Elementwise, 17, &lower_blackman);
}

}  // namespace volta::onnx
