// VJP rules of the movement family: a view's gradient is reshaped back, a permutation's is
// permuted back, a broadcast's is summed back, a join's is sliced apart.

#include <vector>

#include "vjp.h"

namespace volta::autograd {
namespace {

// Reshape, Flatten, Squeeze, Unsqueeze, Identity: the same elements in another shape.
void same_elements_vjp(VjpBuilder& b) {
  const Shape& in = b.shape(b.input(0));
  if (b.shape(b.grad()) == in) {
    b.set(0, b.add(OpKind::Identity, {b.grad()}));
  } else {
    b.set(0, b.add(OpKind::Reshape, {b.grad()}, {{"shape", in.dims()}}));
  }
}

// Transpose by perm (default: reversed axes): the gradient goes back by the inverse perm.
void transpose_vjp(VjpBuilder& b) {
  const int rank = b.shape(b.input(0)).rank();
  std::vector<int64_t> perm = b.attrs().get_ints("perm");
  if (perm.empty()) {
    for (int a = rank - 1; a >= 0; --a) perm.push_back(a);
  }
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  b.set(0, b.add(OpKind::Transpose, {b.grad()}, {{"perm", inverse}}));
}

void expand_vjp(VjpBuilder& b) { b.set(0, b.sum_to(b.grad(), b.shape(b.input(0)))); }

// Concat along axis: input i's gradient is its slice of g.
void concat_vjp(VjpBuilder& b) {
  const int rank = b.shape(b.output()).rank();
  int64_t axis = b.attrs().get_int("axis");
  if (axis < 0) axis += rank;
  int64_t offset = 0;
  for (int i = 0; i < b.num_inputs(); ++i) {
    const int64_t extent = b.shape(b.input(i))[static_cast<int>(axis)];
    if (b.wants(i)) {
      b.set(i, b.add(OpKind::Slice, {b.grad()},
                     {{"starts", std::vector<int64_t>{offset}},
                      {"ends", std::vector<int64_t>{offset + extent}},
                      {"axes", std::vector<int64_t>{axis}}}));
    }
    offset += extent;
  }
}

// Split along axis: the outputs' gradients joined back, zeros for an output the loss ignores.
void split_vjp(VjpBuilder& b) {
  std::vector<ValueId> parts;
  for (size_t o = 0; o < b.node().outputs.size(); ++o) {
    const ValueId g = b.grad(static_cast<int>(o));
    if (g.valid()) {
      parts.push_back(g);
    } else {
      const Shape& s = b.shape(b.output(static_cast<int>(o)));
      parts.push_back(b.add(OpKind::Expand, {b.scalar(0.0)}, {{"shape", s.dims()}}));
    }
  }
  b.set(0, b.add(OpKind::Concat, parts, {{"axis", b.attrs().get_int("axis")}}));
}

}  // namespace

void register_movement_vjps(VjpTable& t) {
  for (OpKind op :
       {OpKind::Reshape, OpKind::Flatten, OpKind::Squeeze, OpKind::Unsqueeze, OpKind::Identity}) {
    t[static_cast<size_t>(op_index(op))] = {&same_elements_vjp, 0b1};
  }
  t[static_cast<size_t>(op_index(OpKind::Transpose))] = {&transpose_vjp, 0b1};
  t[static_cast<size_t>(op_index(OpKind::Expand))] = {&expand_vjp, 0b1};
  t[static_cast<size_t>(op_index(OpKind::Concat))] = {&concat_vjp, kAllInputs};
  t[static_cast<size_t>(op_index(OpKind::Split))] = {&split_vjp, 0b1};
}

}  // namespace volta::autograd
