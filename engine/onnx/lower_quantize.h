#pragma once
// Internal to the ONNX importer: what the quantization lowerings share
// (lower_elementwise_quantize.cpp, lower_linalg_quantized.cpp, lower_convolution_quantized.cpp).
//
// Every quantized ONNX op is a composition of exact internal ops in the order of ONNX's
// reference implementation, so it keeps every guarantee of those ops:
// - integer operands minus their zero points are held exactly, in f32 for one element and in
//   f64 for sums of products: each product of two such differences is below 2^17 and every
//   partial sum of fewer than 2^36 of them is an integer below 2^53, so an f64 MatMul or Conv
//   gives the exact sum in any summation order; int32_accumulator then wraps it to 32 bits as
//   ONNX's int32 accumulator does;
// - scaling is one f32 (or f64) multiply or divide, rounding is Round (half to even), and
//   saturation is Clip to the quantized type's range before the Cast to it.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <vector>

#include "lowering.h"

namespace volta::onnx {

// The quantized types these lowerings produce and read: u8, i8, u16, i16.
inline constexpr DTypeSet kQuantizedTypes = {DType::U8, DType::I8, DType::U16, DType::I16};

// The range of quantized type `dtype`; I-UNSUPPORTED naming `what` for any other type.
struct QuantRange {
  double lo = 0;
  double hi = 0;
};
QuantRange quant_range(LoweringContext& ctx, DType dtype, std::string_view what);

// A scale or zero point `param` of X (shape `x`) made to broadcast against X: a scalar or
// one-element tensor as a scalar; with block_size 0, a 1-D [x[axis]] reshaped to put its
// entries on `axis`; with block_size > 0, a tensor of X's rank whose `axis` holds one entry per
// block of block_size (the last block may be short), repeated over each block.
ValueId along_axis(LoweringContext& ctx, ValueId param, const Shape& x, int64_t axis,
                   int64_t block_size, std::string_view what);

// `x` (an ONNX input of an integer type) minus zero point `zero_point` (nullopt: 0), in dtype
// `wide` (f32 or f64); zero_point must broadcast against x already.
ValueId minus_zero_point(LoweringContext& ctx, ValueId x, std::optional<ValueId> zero_point,
                         DType wide);

// Round(v) (half to even) plus zero_point (nullopt: 0), saturated to `dtype`'s range and cast
// to it. v and zero_point in the same float dtype.
ValueId round_saturate(LoweringContext& ctx, ValueId v, std::optional<ValueId> zero_point,
                       DType dtype, std::string_view what);

// An exact f64 integer sum wrapped to int32 as ONNX's int32 accumulator wraps (two's
// complement): through i64, whose Cast to i32 wraps.
ValueId int32_accumulator(LoweringContext& ctx, ValueId exact_sum);

// Refuses a reduction of k products whose f64 partial sums could exceed 2^53.
void check_exact_sum(LoweringContext& ctx, int64_t k);

// Refuses the scales at `inputs` unless they share one dtype of `allowed`.
void require_scales(LoweringContext& ctx, std::initializer_list<int> inputs, DTypeSet allowed);

// The scale dtypes of a quantized op: f32, and from `halves_since` on f16 and bf16 too.
DTypeSet scale_types(const LoweringContext& ctx, int halves_since);

// Refuses input i unless it is u8 or i8 (the integer MatMul and Conv operands), naming `what`.
void require_eight_bit(LoweringContext& ctx, int i, std::string_view what);

// The QLinear ops' output: the int32 accumulator times `multiplier` (the scales' combination,
// in their dtype) in f64, plus the zero point when given, rounded half to even and saturated
// to y_dtype, as ONNX's reference requantizes.
ValueId requantize(LoweringContext& ctx, ValueId accumulator, ValueId multiplier,
                   std::optional<ValueId> y_zero_point, DType y_dtype);

}  // namespace volta::onnx
