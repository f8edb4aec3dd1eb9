#pragma once
// Attribute resolution shared by shape functions, the engine's kernels and the reference
// engine, so all three read an op's attributes the same way. Each throws ShapeError on
// attributes the input cannot accept.

#include <cstdint>
#include <vector>

#include "volta/ir/op_schema.h"

namespace volta {

// Reduce*: sorted unique axes; empty axes reduce every axis unless noop_with_empty_axes,
// in which case the op is the identity (noop) and does not even apply its map (|x|, x^2).
struct ReduceAxes {
  bool noop = false;
  std::vector<int> axes;
  bool reduces(int axis) const;
};
ReduceAxes resolve_reduce_axes(const AttrReader& attrs, int rank);
// Slice: per input axis, the first index, step and element count (ONNX clamping rules).
struct SliceRange {
  int64_t start, step, count;  // per axis, after ONNX clamping
};
std::vector<SliceRange> resolve_slice(const AttrReader& attrs, const Shape& input);
// Transpose: perm, defaulting to reversed axes.
std::vector<int> resolve_perm(const AttrReader& attrs, int rank);
// PermutedMatMul: perm_a and perm_b, each a permutation of its operand's axes (both operands of
// rank >= 2), and perm_y, one of the product's axes that leaves the last axis last.
struct MatMulPerms {
  std::vector<int> a, b, y;
};
MatMulPerms resolve_matmul_perms(const AttrReader& attrs, int rank_a, int rank_b);
// `s` with its axes in the order `perm` lists them, as Transpose permutes them.
Shape permute_shape(const Shape& s, const std::vector<int>& perm);
// Split: output sizes along the axis (the split attribute, or an even split).
std::vector<int64_t> resolve_split(const AttrReader& attrs, int64_t dim, int num_outputs);

}  // namespace volta
