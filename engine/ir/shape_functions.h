#pragma once
// Internal: the shape functions the op table points at (engine/ir/shape_functions.cpp).

#include "volta/ir/op_schema.h"

namespace volta::shape_fn {

std::vector<TypeInfo> same_as_input0(const InferContext& ctx);
std::vector<TypeInfo> broadcast(const InferContext& ctx);          // all inputs, dtype of input 0
std::vector<TypeInfo> broadcast_to_bool(const InferContext& ctx);  // comparisons, And/Or
std::vector<TypeInfo> where(const InferContext& ctx);
std::vector<TypeInfo> cast(const InferContext& ctx);
std::vector<TypeInfo> bit_cast(const InferContext& ctx);  // `to` of input 0's width
std::vector<TypeInfo> matmul(const InferContext& ctx);
std::vector<TypeInfo> gemm(const InferContext& ctx);
std::vector<TypeInfo> softmax(const InferContext& ctx);
std::vector<TypeInfo> layer_normalization(const InferContext& ctx);
std::vector<TypeInfo> reduce(const InferContext& ctx);
std::vector<TypeInfo> arg_reduce(const InferContext& ctx);
std::vector<TypeInfo> cumsum(const InferContext& ctx);
std::vector<TypeInfo> reshape(const InferContext& ctx);
std::vector<TypeInfo> transpose(const InferContext& ctx);
std::vector<TypeInfo> concat(const InferContext& ctx);
std::vector<TypeInfo> split(const InferContext& ctx);
std::vector<TypeInfo> slice(const InferContext& ctx);
std::vector<TypeInfo> gather(const InferContext& ctx);
std::vector<TypeInfo> expand(const InferContext& ctx);
std::vector<TypeInfo> squeeze(const InferContext& ctx);
std::vector<TypeInfo> unsqueeze(const InferContext& ctx);
std::vector<TypeInfo> flatten(const InferContext& ctx);
std::vector<TypeInfo> constant(const InferContext& ctx);

// Checks shared by the family files' own shape functions; each throws ShapeError.
void require_rank_at_least(const Shape& x, int rank, std::string_view layout);
// Inputs first..last (scale, bias, statistics, weights) hold one value per channel of axis 1.
void require_per_channel(const InferContext& ctx, int first, int last);

}  // namespace volta::shape_fn
