// VJP rules of the movement family: a view's gradient is reshaped back, a permutation's is
// permuted back, a broadcast's is summed back, a join's is sliced apart, a slice's padded back,
// a gather's scattered back, a rearrangement's rearranged back.

#include <algorithm>
#include <string>
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

// The gradient of an op that only moves elements of input 0 (each output element a copy of one
// input element, or Pad's fill): the node's own op, run on the input's flat positions + 1 (so a
// fill, 0, marks no source), says where each output element came from; g is scatter-added
// there, in index order, so an element copied several times (Pad's edge and reflect) sums its
// gradients deterministically. Slot 0 collects the fills and is dropped.
ValueId routed_gradient(VjpBuilder& b) {
  const Shape in = b.shape(b.input(0));
  const int64_t n_in = in.numel(), n_out = b.shape(b.output()).numel();
  Tensor positions(DType::I64, in);
  for (int64_t i = 0; i < n_in; ++i) positions.set_int(i, i + 1);
  const ValueId sources = b.add(b.node().op, {b.constant(std::move(positions))}, b.node().attrs);
  const ValueId flat_sources =
      b.add(OpKind::Reshape, {sources}, {{"shape", std::vector<int64_t>{n_out}}});
  const ValueId flat_g =
      b.add(OpKind::Reshape, {b.grad()}, {{"shape", std::vector<int64_t>{n_out}}});
  const ValueId slots =
      b.add(OpKind::ScatterElements,
            {b.constant(Tensor(b.dtype(), Shape{n_in + 1})), flat_sources, flat_g},
            {{"axis", int64_t{0}}, {"reduction", std::string("add")}});
  const ValueId kept = b.add(OpKind::Slice, {slots},
                             {{"starts", std::vector<int64_t>{1}},
                              {"ends", std::vector<int64_t>{n_in + 1}},
                              {"axes", std::vector<int64_t>{0}}});
  return b.add(OpKind::Reshape, {kept}, {{"shape", in.dims()}});
}

// Slice with unit steps: the gradient padded with zeros back to the input's shape. Other steps
// have no rule yet and are refused by name.
void slice_vjp(VjpBuilder& b) {
  const Shape& in = b.shape(b.input(0));
  const AttrReader at = b.attrs();
  const std::vector<int64_t>& starts = at.get_ints("starts");
  std::vector<int64_t> axes = at.get_ints("axes");
  const std::vector<int64_t>& steps = at.get_ints("steps");
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (std::any_of(steps.begin(), steps.end(), [](int64_t s) { return s != 1; })) {
    b.set(0, routed_gradient(b));
    return;
  }
  const Shape& out = b.shape(b.output());
  std::vector<int64_t> pads(static_cast<size_t>(2 * in.rank()), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int axis = static_cast<int>(axes[i] < 0 ? axes[i] + in.rank() : axes[i]);
    const int64_t dim = in[axis];
    const int64_t start = std::clamp(starts[i] < 0 ? starts[i] + dim : starts[i], int64_t{0}, dim);
    pads[static_cast<size_t>(axis)] = start;
    pads[static_cast<size_t>(axis) + static_cast<size_t>(in.rank())] = dim - start - out[axis];
  }
  b.set(0, b.add(OpKind::Pad, {b.grad()}, {{"pads", pads}}));
}

// Pad: in constant mode without cropping, the gradient is the slice of g where the data went;
// edge and reflect modes (an input element copied to several places) and negative pads are
// routed.
void pad_vjp(VjpBuilder& b) {
  const Shape& in = b.shape(b.input(0));
  const AttrReader at = b.attrs();
  const std::vector<int64_t>& pads = at.get_ints("pads");
  const bool cropping = std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p < 0; });
  if (at.get_string("mode") != "constant" || cropping) {
    b.set(0, routed_gradient(b));
    return;
  }
  std::vector<int64_t> starts, ends, axes;
  for (int a = 0; a < in.rank(); ++a) {
    starts.push_back(pads[static_cast<size_t>(a)]);
    ends.push_back(pads[static_cast<size_t>(a)] + in[a]);
    axes.push_back(a);
  }
  b.set(0, b.add(OpKind::Slice, {b.grad()}, {{"starts", starts}, {"ends", ends}, {"axes", axes}}));
}

// Tile: g viewed as [r0, d0, r1, d1, ...] and summed over the repeats.
void tile_vjp(VjpBuilder& b) {
  const Shape& in = b.shape(b.input(0));
  const std::vector<int64_t>& repeats = b.attrs().get_ints("repeats");
  std::vector<int64_t> split, axes;
  for (int a = 0; a < in.rank(); ++a) {
    split.push_back(repeats[static_cast<size_t>(a)]);
    split.push_back(in[a]);
    axes.push_back(2 * a);
  }
  const ValueId blocks = b.add(OpKind::Reshape, {b.grad()}, {{"shape", split}});
  const ValueId summed =
      b.add(OpKind::ReduceSum, {blocks}, {{"axes", axes}, {"keepdims", int64_t{0}}});
  b.set(0, b.add(OpKind::Reshape, {summed}, {{"shape", in.dims()}}));
}

// Gather along axis: the gradient rows added back at their indices into zeros, in index order
// (ScatterND with reduction add, which applies updates in order: deterministic, no atomics).
// The gathered axis is moved to the front for the scatter and back after it.
void gather_vjp(VjpBuilder& b) {
  const Shape& data = b.shape(b.input(0));
  const ValueId indices = b.input(1);
  const int rank = data.rank();
  const int ind_rank = b.shape(indices).rank();
  int64_t axis = b.attrs().get_int("axis");
  if (axis < 0) axis += rank;
  // g is data[:axis] + indices + data[axis+1:]; bring the index dims to the front.
  std::vector<int64_t> to_front;
  to_front.reserve(static_cast<size_t>(rank) + static_cast<size_t>(ind_rank));
  for (int i = 0; i < ind_rank; ++i) to_front.push_back(axis + i);
  for (int64_t a = 0; a < axis; ++a) to_front.push_back(a);
  for (int64_t a = axis + ind_rank; a < rank - 1 + ind_rank; ++a) to_front.push_back(a);
  const ValueId updates = b.add(OpKind::Transpose, {b.grad()}, {{"perm", to_front}});
  // The zeros to scatter into: data with its axis first.
  std::vector<int64_t> moved = {data[static_cast<int>(axis)]};
  for (int a = 0; a < rank; ++a) {
    if (a != axis) moved.push_back(data[a]);
  }
  const ValueId zeros = b.add(OpKind::Expand, {b.scalar(0.0)}, {{"shape", moved}});
  const ValueId tuples =
      b.add(OpKind::Unsqueeze, {indices}, {{"axes", std::vector<int64_t>{ind_rank}}});
  const ValueId scattered =
      b.add(OpKind::ScatterND, {zeros, tuples, updates}, {{"reduction", std::string("add")}});
  std::vector<int64_t> back;
  for (int64_t a = 1; a <= axis; ++a) back.push_back(a);
  back.push_back(0);
  for (int64_t a = axis + 1; a < rank; ++a) back.push_back(a);
  b.set(0, axis == 0 ? scattered : b.add(OpKind::Transpose, {scattered}, {{"perm", back}}));
}

// DepthToSpace and SpaceToDepth only move elements, so each one's gradient moves them back. DCR
// and SpaceToDepth are each other's inverse; DepthToSpace's CRD mode, y[n, c, h b + i, w b + j]
// = x[n, c b^2 + i b + j, h, w], is undone by viewing g as [N, C', H, b, W, b] and bringing
// (i, j) next to c.
void depth_to_space_vjp(VjpBuilder& b) {
  const int64_t block = b.attrs().get_int("blocksize");
  if (b.attrs().get_string("mode") == "DCR") {
    b.set(0, b.add(OpKind::SpaceToDepth, {b.grad()}, {{"blocksize", block}}));
    return;
  }
  const Shape x = b.shape(b.input(0));
  const int64_t channels = x[1] / (block * block);
  const ValueId blocks =
      b.add(OpKind::Reshape, {b.grad()},
            {{"shape", std::vector<int64_t>{x[0], channels, x[2], block, x[3], block}}});
  const ValueId moved =
      b.add(OpKind::Transpose, {blocks}, {{"perm", std::vector<int64_t>{0, 1, 3, 5, 2, 4}}});
  b.set(0, b.add(OpKind::Reshape, {moved}, {{"shape", x.dims()}}));
}

void space_to_depth_vjp(VjpBuilder& b) {
  b.set(0, b.add(OpKind::DepthToSpace, {b.grad()},
                 {{"blocksize", b.attrs().get_int("blocksize")}, {"mode", std::string("DCR")}}));
}

// ReverseSequence swaps time steps t and len - 1 - t below each entry's length and leaves the
// rest: its own inverse, so the gradient is reversed the same way.
void reverse_sequence_vjp(VjpBuilder& b) {
  b.set(0, b.add(OpKind::ReverseSequence, {b.grad(), b.input(1)}, b.node().attrs));
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
  t[static_cast<size_t>(op_index(OpKind::Slice))] = {&slice_vjp, 0b1};
  t[static_cast<size_t>(op_index(OpKind::Pad))] = {&pad_vjp, 0b1};
  t[static_cast<size_t>(op_index(OpKind::Tile))] = {&tile_vjp, 0b1};
  t[static_cast<size_t>(op_index(OpKind::Gather))] = {&gather_vjp, 0b1};
  t[static_cast<size_t>(op_index(OpKind::DepthToSpace))] = {&depth_to_space_vjp, 0b1};
  t[static_cast<size_t>(op_index(OpKind::SpaceToDepth))] = {&space_to_depth_vjp, 0b1};
  t[static_cast<size_t>(op_index(OpKind::ReverseSequence))] = {&reverse_sequence_vjp, 0b1};
}

}  // namespace volta::autograd
