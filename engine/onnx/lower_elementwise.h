#pragma once
// Internal to the ONNX importer: what the elementwise, activation and logical lowerings share
// (lower_elementwise.cpp, lower_activation.cpp, lower_logical.cpp).
//
// Old versions differ in three ways, all handled here: version 1 carries the legacy
// `consumed_inputs` attribute (no meaning for Volta: read and dropped); before version 7 the
// binary ops broadcast only with broadcast=1 and by the legacy rule (binary_operands); and
// attribute defaults move between versions (Selu, Clip). Attributes ONNX declares as float
// are passed on with their f32 values, so f64 kernels see the same constants as ONNX.

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "lowering.h"

namespace volta::onnx {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// The f32 value of an ONNX float attribute default such as 0.01.
constexpr double f32(double v) { return static_cast<double>(static_cast<float>(v)); }

// "FLOAT, DOUBLE": the ONNX names of a dtype set; onnx_name names one dtype.
std::string onnx_names(DTypeSet set);
std::string onnx_name(DType dtype);

// Adds `op` after checking each operand's dtype against the op's type constraints, so that
// a dtype Volta has no kernel for is reported as unsupported, with the supported ones.
ValueId add_op(LoweringContext& ctx, OpKind op, std::vector<ValueId> inputs, Attributes attrs = {});

// Version 1's `consumed_inputs` said which inputs an op may overwrite: no meaning here.
void drop_consumed_inputs(LoweringContext& ctx);

Tensor scalar_of(DType dtype, double value);

// The operands of a binary op: before version 7, B broadcasts to A only with broadcast=1, and
// then by the legacy rule (lower_elementwise.cpp).
std::pair<ValueId, ValueId> binary_operands(LoweringContext& ctx);

template <OpKind kOp>
void lower_unary(LoweringContext& ctx) {
  drop_consumed_inputs(ctx);
  ctx.set_output(0, add_op(ctx, kOp, {ctx.input(0)}));
}

template <OpKind kOp>
void lower_binary(LoweringContext& ctx) {
  const auto [a, b] = binary_operands(ctx);
  ctx.set_output(0, add_op(ctx, kOp, {a, b}));
}

// A unary op with one float attribute, passed on with ONNX's default when absent.
template <OpKind kOp>
void lower_unary_alpha(LoweringContext& ctx, double default_alpha) {
  drop_consumed_inputs(ctx);
  const double alpha = ctx.attr_float("alpha", default_alpha);
  ctx.set_output(0, add_op(ctx, kOp, {ctx.input(0)}, {{"alpha", alpha}}));
}

}  // namespace volta::onnx
