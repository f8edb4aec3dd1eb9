// Lowerings of ONNX QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear as compositions
// of exact internal ops (lower_quantize.h says why they keep every guarantee), and the helpers
// the quantized MatMul and Conv lowerings share.
//
// Versions: QuantizeLinear and DequantizeLinear 10 (per-tensor), 13 (axis), 19 (f16 / bf16
// scales; saturate, which only float8 outputs read), 21 (block_size; QuantizeLinear's
// output_dtype; 16-bit types), 23 (QuantizeLinear's precision, DequantizeLinear's
// output_dtype). Float8 and 4-bit types are not Volta dtypes: refused naming them on import.

#include <string>

#include "lower_elementwise.h"
#include "lower_quantize.h"

namespace volta::onnx {

QuantRange quant_range(LoweringContext& ctx, DType dtype, std::string_view what) {
  switch (dtype) {
    case DType::U8:
      return {0, 255};
    case DType::I8:
      return {-128, 127};
    case DType::U16:
      return {0, 65535};
    case DType::I16:
      return {-32768, 32767};
    default:
      ctx.unsupported(std::string(what) + " of dtype " + std::string(dtype_name(dtype)) +
                      "; supported: " + kQuantizedTypes.str());
  }
}

ValueId along_axis(LoweringContext& ctx, ValueId param, const Shape& x, int64_t axis,
                   int64_t block_size, std::string_view what) {
  const Shape p = ctx.type_of(param).shape;
  if (p.rank() == 0) return param;
  if (p.numel() == 1) return ctx.add(OpKind::Reshape, {param}, {{"shape", Ints{}}});
  const std::optional<int> a = normalize_axis(axis, x.rank());
  if (!a) {
    ctx.invalid("axis " + std::to_string(axis) + " is out of range for input " + x.str());
  }
  Ints dims(static_cast<size_t>(x.rank()), 1);
  if (block_size == 0) {
    if (p.rank() != 1 || p[0] != x[*a]) {
      ctx.invalid(std::string(what) + " " + p.str() + " must be a scalar or 1-D with " +
                  std::to_string(x[*a]) + " entries (input " + x.str() + ", axis " +
                  std::to_string(*a) + ")");
    }
    dims[static_cast<size_t>(*a)] = p[0];
    return ctx.add(OpKind::Reshape, {param}, {{"shape", dims}});
  }
  if (block_size < 0) ctx.invalid("block_size must be >= 0; got " + std::to_string(block_size));
  const int64_t blocks = (x[*a] + block_size - 1) / block_size;
  Shape want = x;
  want[*a] = blocks;
  if (p != want) {
    ctx.invalid(std::string(what) + " " + p.str() + " must be " + want.str() + ": input " +
                x.str() + " in blocks of " + std::to_string(block_size) + " along axis " +
                std::to_string(*a));
  }
  // [.., blocks, ..] -> [.., blocks, 1, ..] -> [.., blocks, block_size, ..] -> [.., x[a], ..]
  Ints split(p.dims().begin(), p.dims().end());
  split.insert(split.begin() + *a + 1, 1);
  Ints spread = split;
  spread[static_cast<size_t>(*a) + 1] = block_size;
  Ints joined(p.dims().begin(), p.dims().end());
  joined[static_cast<size_t>(*a)] = blocks * block_size;
  ValueId v = ctx.add(OpKind::Reshape, {param}, {{"shape", split}});
  v = ctx.add(OpKind::Expand, {v}, {{"shape", spread}});
  v = ctx.add(OpKind::Reshape, {v}, {{"shape", joined}});
  if (blocks * block_size != x[*a]) {
    v = ctx.add(OpKind::Slice, {v},
                {{"starts", Ints{0}}, {"ends", Ints{x[*a]}}, {"axes", Ints{*a}}});
  }
  return v;
}

ValueId minus_zero_point(LoweringContext& ctx, ValueId x, std::optional<ValueId> zero_point,
                         DType wide) {
  const ValueId wide_x = as_dtype(ctx, x, wide);
  if (!zero_point) return wide_x;
  return ctx.add(OpKind::Sub, {wide_x, as_dtype(ctx, *zero_point, wide)});
}

ValueId round_saturate(LoweringContext& ctx, ValueId v, std::optional<ValueId> zero_point,
                       DType dtype, std::string_view what) {
  const QuantRange range = quant_range(ctx, dtype, what);
  ValueId q = ctx.add(OpKind::Round, {v});
  if (zero_point) q = ctx.add(OpKind::Add, {q, *zero_point});
  q = ctx.add(OpKind::Clip, {q}, {{"min", range.lo}, {"max", range.hi}});
  return as_dtype(ctx, q, dtype);
}

ValueId int32_accumulator(LoweringContext& ctx, ValueId exact_sum) {
  return as_dtype(ctx, as_dtype(ctx, exact_sum, DType::I64), DType::I32);
}

void check_exact_sum(LoweringContext& ctx, int64_t k) {
  constexpr int64_t kMaxTerms = int64_t{1} << 36;  // 2^36 * 2^17 = 2^53
  if (k >= kMaxTerms) {
    ctx.unsupported("a sum of " + std::to_string(k) + " products; supported: fewer than 2^36, " +
                    "which Volta's f64 accumulator sums exactly");
  }
}

void require_eight_bit(LoweringContext& ctx, int i, std::string_view what) {
  constexpr DTypeSet kEightBit = {DType::U8, DType::I8};
  const DType d = ctx.input_type(i).dtype;
  if (!kEightBit.contains(d)) {
    ctx.unsupported(std::string(what) + " of dtype " + std::string(dtype_name(d)) +
                    "; supported: " + kEightBit.str());
  }
}

ValueId requantize(LoweringContext& ctx, ValueId accumulator, ValueId multiplier,
                   std::optional<ValueId> y_zero_point, DType y_dtype) {
  ValueId y = ctx.add(
      OpKind::Mul, {as_dtype(ctx, accumulator, DType::F64), as_dtype(ctx, multiplier, DType::F64)});
  if (y_zero_point) y = ctx.add(OpKind::Add, {y, as_dtype(ctx, *y_zero_point, DType::F64)});
  return round_saturate(ctx, y, std::nullopt, y_dtype, "y");
}

void require_scales(LoweringContext& ctx, std::initializer_list<int> inputs, DTypeSet allowed) {
  const DType first = ctx.input_type(*inputs.begin()).dtype;
  for (const int i : inputs) {
    const DType d = ctx.input_type(i).dtype;
    if (d != first || !allowed.contains(d)) {
      ctx.unsupported("a scale of dtype " + std::string(dtype_name(d)) + "; supported: " +
                      (inputs.size() > 1 ? "all scales of one dtype of " : "") + allowed.str());
    }
  }
}

DTypeSet scale_types(const LoweringContext& ctx, int halves_since) {
  return ctx.since_version() >= halves_since ? DTypeSet{DType::F32, DType::F16, DType::BF16}
                                             : DTypeSet{DType::F32};
}

namespace {

// The zero point input `i` when given, checked to have the quantized operand's dtype.
std::optional<ValueId> zero_point_input(LoweringContext& ctx, int i, DType quantized) {
  if (!ctx.has_input(i)) return std::nullopt;
  if (ctx.input_type(i).dtype != quantized) {
    ctx.invalid("the zero point is " + std::string(dtype_name(ctx.input_type(i).dtype)) +
                " but the quantized tensor is " + std::string(dtype_name(quantized)));
  }
  return ctx.input(i);
}

struct AxisAttrs {
  int64_t axis = 1;
  int64_t block_size = 0;
};

AxisAttrs read_axis_attrs(LoweringContext& ctx) {
  AxisAttrs a;
  if (ctx.since_version() >= 13) a.axis = ctx.attr_int("axis", 1);
  if (ctx.since_version() >= 21) a.block_size = ctx.attr_int("block_size", 0);
  return a;
}

// y = saturate(round(x / y_scale) + y_zero_point), the division in x's dtype (or `precision`'s).
void lower_quantize_linear(LoweringContext& ctx) {
  const int v = ctx.since_version();
  const TypeInfo& x = ctx.input_type(0);
  const DTypeSet inputs = v >= 19 ? DTypeSet{DType::F32, DType::I32, DType::F16, DType::BF16}
                                  : DTypeSet{DType::F32, DType::I32};
  if (!inputs.contains(x.dtype)) {
    ctx.unsupported("x of dtype " + std::string(dtype_name(x.dtype)) +
                    "; supported: " + inputs.str());
  }
  require_scales(ctx, {1}, scale_types(ctx, 19));
  const AxisAttrs axis = read_axis_attrs(ctx);
  if (v >= 19) attr_flag(ctx, "saturate", 1);  // read by float8 outputs only
  std::optional<DType> out;
  if (v >= 21 && ctx.has_attr("output_dtype")) {
    out = attr_dtype(ctx, ctx.attr_int("output_dtype", std::nullopt), "output_dtype");
  }
  const bool has_zero_point = ctx.has_input(2);
  if (has_zero_point) {
    const DType zp = ctx.input_type(2).dtype;
    if (out && *out != zp) {
      ctx.invalid("output_dtype " + std::string(dtype_name(*out)) + " differs from the zero " +
                  "point's dtype " + std::string(dtype_name(zp)));
    }
    out = zp;
  }
  const DType y_dtype = out.value_or(DType::U8);
  quant_range(ctx, y_dtype, "output");  // refuses other types before any node is added
  // As numpy promotes (ONNX's reference): int32 / f32 in f64, a float by a float of its own
  // dtype in that dtype, mixed halves in f32; unless `precision` says.
  const DType scale_dtype = ctx.input_type(1).dtype;
  DType divide_in = x.dtype == scale_dtype ? x.dtype : DType::F32;
  if (x.dtype == DType::I32) divide_in = DType::F64;
  if (v >= 23 && ctx.has_attr("precision")) {
    divide_in = attr_dtype(ctx, ctx.attr_int("precision", std::nullopt), "precision");
    if (!kFloatTypes.contains(divide_in) && !kHalfTypes.contains(divide_in)) {
      ctx.unsupported("precision " + std::string(dtype_name(divide_in)) +
                      "; supported: f32, f64, f16, bf16");
    }
  }
  const ValueId scale =
      along_axis(ctx, ctx.input(1), x.shape, axis.axis, axis.block_size, "y_scale");
  ValueId q = ctx.add(OpKind::Div,
                      {as_dtype(ctx, ctx.input(0), divide_in), as_dtype(ctx, scale, divide_in)});
  const DType round_in = divide_in == DType::F64 ? DType::F64 : DType::F32;  // halves: exact
  q = as_dtype(ctx, q, round_in);
  std::optional<ValueId> zero_point;
  if (has_zero_point) {
    zero_point = as_dtype(
        ctx, along_axis(ctx, ctx.input(2), x.shape, axis.axis, axis.block_size, "y_zero_point"),
        round_in);
  }
  ctx.set_output(0, round_saturate(ctx, q, zero_point, y_dtype, "output"));
}

// y = (x - x_zero_point) * x_scale: the difference in f32 (exact for 8- and 16-bit x), one f32
// multiply, then the scale's dtype (or output_dtype). An int32 x with a zero point follows
// numpy's promotion to f64.
void lower_dequantize_linear(LoweringContext& ctx) {
  const int v = ctx.since_version();
  const TypeInfo& x = ctx.input_type(0);
  const DTypeSet inputs = v >= 21
                              ? DTypeSet{DType::U8, DType::I8, DType::I32, DType::U16, DType::I16}
                              : DTypeSet{DType::U8, DType::I8, DType::I32};
  if (!inputs.contains(x.dtype)) {
    ctx.unsupported("x of dtype " + std::string(dtype_name(x.dtype)) +
                    "; supported: " + inputs.str());
  }
  require_scales(ctx, {1}, scale_types(ctx, 19));
  const AxisAttrs axis = read_axis_attrs(ctx);
  DType y_dtype = ctx.input_type(1).dtype;
  if (v >= 23 && ctx.has_attr("output_dtype")) {
    y_dtype = attr_dtype(ctx, ctx.attr_int("output_dtype", std::nullopt), "output_dtype");
    if (y_dtype != DType::F32 && !kHalfTypes.contains(y_dtype)) {
      ctx.unsupported("output_dtype " + std::string(dtype_name(y_dtype)) +
                      "; supported: f32, f16, bf16");
    }
  }
  std::optional<ValueId> zero_point = zero_point_input(ctx, 2, x.dtype);
  if (zero_point) {
    zero_point = along_axis(ctx, *zero_point, x.shape, axis.axis, axis.block_size, "x_zero_point");
  }
  const DType wide = x.dtype == DType::I32 && zero_point ? DType::F64 : DType::F32;
  const ValueId dx = minus_zero_point(ctx, ctx.input(0), zero_point, wide);
  const ValueId scale =
      along_axis(ctx, ctx.input(1), x.shape, axis.axis, axis.block_size, "x_scale");
  const ValueId y = ctx.add(OpKind::Mul, {dx, as_dtype(ctx, scale, wide)});
  ctx.set_output(0, as_dtype(ctx, y, y_dtype));
}

// DynamicQuantizeLinear 11, as ONNX's reference computes it: the range [min(0, min x),
// max(0, max x)] mapped onto u8 (a range of 0 gives scale 1 / 255), the zero point rounded
// after saturation, then QuantizeLinear's formula.
void lower_dynamic_quantize_linear(LoweringContext& ctx) {
  const TypeInfo& x = ctx.input_type(0);
  if (x.dtype != DType::F32) {
    ctx.unsupported("x of dtype " + std::string(dtype_name(x.dtype)) + "; supported: f32");
  }
  if (x.shape.numel() == 0) ctx.unsupported("an empty x; supported: x with elements");
  const Attributes all = {{"axes", Ints{}}, {"keepdims", int64_t{0}}};
  const ValueId zero = scalar_constant(ctx, DType::F32, 0.0);
  const ValueId hi = ctx.add(OpKind::Max, {ctx.add(OpKind::ReduceMax, {ctx.input(0)}, all), zero});
  const ValueId lo = ctx.add(OpKind::Min, {ctx.add(OpKind::ReduceMin, {ctx.input(0)}, all), zero});
  const ValueId range = ctx.add(
      OpKind::Where, {ctx.add(OpKind::Equal, {hi, lo}), scalar_constant(ctx, DType::F32, 1.0),
                      ctx.add(OpKind::Sub, {hi, lo})});
  const ValueId scale = ctx.add(OpKind::Div, {range, scalar_constant(ctx, DType::F32, 255.0)});
  const ValueId initial = ctx.add(OpKind::Sub, {zero, ctx.add(OpKind::Div, {lo, scale})});
  const ValueId zero_point =
      ctx.add(OpKind::Round, {ctx.add(OpKind::Clip, {initial}, {{"min", 0.0}, {"max", 255.0}})});
  const ValueId y = round_saturate(ctx, ctx.add(OpKind::Div, {ctx.input(0), scale}), zero_point,
                                   DType::U8, "output");
  ctx.set_output(0, y);
  if (ctx.has_output(1)) ctx.set_output(1, scale);
  if (ctx.has_output(2)) ctx.set_output(2, as_dtype(ctx, zero_point, DType::U8));
}

}  // namespace

void register_elementwise_quantize_lowerings(LoweringTable& table) {
  table.add_composite("QuantizeLinear", OpFamily::Elementwise, 10, &lower_quantize_linear);
  table.add_composite("DequantizeLinear", OpFamily::Elementwise, 10, &lower_dequantize_linear);
  table.add_composite("DynamicQuantizeLinear", OpFamily::Elementwise, 11,
                      &lower_dynamic_quantize_linear);
}

}  // namespace volta::onnx
