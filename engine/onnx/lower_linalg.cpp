// ONNX lowerings of MatMul, Gemm, Einsum and Det onto the internal ops of the same names (RNN,
// GRU and LSTM, unrolled onto them: lower_linalg_rnn.cpp).

#include <string>

#include "lowering.h"

namespace volta::onnx {
namespace {

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

void lower_einsum(LoweringContext& ctx) {
  std::vector<ValueId> inputs;
  inputs.reserve(static_cast<size_t>(ctx.num_inputs()));
  for (int i = 0; i < ctx.num_inputs(); ++i) inputs.push_back(ctx.input(i));
  ctx.set_output(0, ctx.add(OpKind::Einsum, inputs,
                            {{"equation", ctx.attr_string("equation", std::nullopt)}}));
}

void lower_det(LoweringContext& ctx) {
  require_dtype(ctx, OpKind::Det, ctx.input_type(0).dtype);
  ctx.set_output(0, ctx.add(OpKind::Det, {ctx.input(0)}));
}

}  // namespace

void register_linalg_lowerings(LoweringTable& table) {
  table.add("MatMul", OpKind::MatMul, 1, &lower_matmul);
  table.add("Gemm", OpKind::Gemm, 1, &lower_gemm);
  table.add("Einsum", OpKind::Einsum, 12, &lower_einsum);
  table.add("Det", OpKind::Det, 11, &lower_det);
}

}  // namespace volta::onnx
