#pragma once
// Einsum's equation, resolved against its operands' shapes: the attribute resolution that the
// shape function, the engine's kernel and the reference engine share (as op_helpers.h does for
// the other ops), so all three read an equation the same way.

#include <span>
#include <string_view>
#include <vector>

#include "volta/ir/shape.h"

namespace volta {

// Every distinct index of the equation is a label numbered from 0: the letters in order of
// first appearance, then one label per axis the ellipsis stands for. Labels that are not in
// the output are summed over.
struct EinsumEquation {
  std::vector<int64_t> label_extent;           // per label: its size (after broadcasting)
  std::vector<std::vector<int>> operand_axes;  // per operand, per axis: the label of that axis
  std::vector<int> output_labels;              // per output axis: its label
  std::vector<int> summed_labels;              // labels absent from the output, in label order

  Shape output_shape() const;
  // Per label, the element stride of `operand` along it: the sum of the strides of the axes
  // carrying it (a label repeated within an operand walks its diagonal), 0 on axes of extent 1
  // broadcast against a larger label, and 0 for labels the operand does not have.
  std::vector<int64_t> label_strides(int operand, const Shape& shape) const;
};

// Parses `equation` (numpy's einsum grammar: letters, ',', '->', '...', spaces) for operands
// of the given shapes. Throws ShapeError naming what is wrong: a term count that differs from
// the operand count, a term whose letters and ellipsis do not match its operand's rank, a
// label with two different extents, an output label that is repeated or not an input label.
//
// Implicit mode (no "->"): the output is the ellipsis axes, then the letters that appear
// exactly once, in ASCII order. Ellipsis axes broadcast numpy-style (right-aligned, extent 1
// stretches); lettered axes must agree exactly.
EinsumEquation parse_einsum_equation(std::string_view equation, std::span<const Shape> operands);

// The product of the labels' extents.
int64_t einsum_extent(const std::vector<int>& labels, const EinsumEquation& eq);
// The strides of a contiguous row-major layout of `labels`, per label (0 for the others).
std::vector<int64_t> einsum_packed_strides(const std::vector<int>& labels,
                                           const EinsumEquation& eq);
// a, then b, then c.
std::vector<int> joined_labels(std::vector<int> a, const std::vector<int>& b,
                               const std::vector<int>& c);

// A two-operand equation as one batched GEMM, as the CPU and CUDA kernels both run it:
// Y[b, m, n] = sum over k of A[b, m, k] * B[b, k, n]: b are the output labels both operands
// have, m and n those only A or only B has, k every summed label. A summed label only one
// operand has gets stride 0 in the other, whose value then multiplies each term of that sum
// once, which is the same sum.
struct EinsumGemm {
  std::vector<int> batch, m, n;
  int64_t batches = 0, rows = 0, cols = 0, depth = 0;
  bool product_is_output = false;  // [batch, M, N] is the output's label order
};
EinsumGemm einsum_gemm(const EinsumEquation& eq);

}  // namespace volta
