// VJP rules of the indexing family. A gather's gradient is its output gradient added back at the
// gathered positions into zeros with the matching scatter (reduction add), which applies the
// updates in index order: repeated indices sum in a fixed order, with no atomics, at any thread
// count. A scatter's gradient is the reverse: the data keeps g where nothing was written, each
// update gathers g from where it went.

#include <string>
#include <vector>

#include "vjp.h"

namespace volta::autograd {
namespace {

ValueId zeros(VjpBuilder& b, const Shape& shape) {
  return b.add(OpKind::Expand, {b.scalar(0.0)}, {{"shape", shape.dims()}});
}

// GatherElements: out[p] = data[p with p[axis] = indices[p]]; data gets each g[p] added at that
// position (ScatterElements add over zeros, in index order).
void gather_elements_vjp(VjpBuilder& b) {
  b.set(0, b.add(OpKind::ScatterElements, {zeros(b, b.shape(b.input(0))), b.input(1), b.grad()},
                 {{"axis", b.attrs().get_int("axis")}, {"reduction", std::string("add")}}));
}

// Index tuples with batch_dims leading batch coordinates made explicit: [B..., rest..., k]
// becomes [B..., rest..., batch_dims + k], so ScatterND (which has no batch_dims) addresses the
// same elements as GatherND did. The coordinates depend on the shape alone: a constant.
ValueId with_batch_coordinates(VjpBuilder& b, ValueId indices, int64_t batch_dims) {
  if (batch_dims == 0) return indices;
  const Shape is = b.shape(indices);
  std::vector<int64_t> coord_dims(is.dims().begin(), is.dims().end() - 1);
  coord_dims.push_back(batch_dims);
  Tensor coords(b.value(indices).dtype, Shape(coord_dims));
  const Shape positions(std::vector<int64_t>(is.dims().begin(), is.dims().end() - 1));
  const std::vector<int64_t> strides = positions.strides();
  for (int64_t p = 0; p < positions.numel(); ++p) {
    for (int64_t a = 0; a < batch_dims; ++a) {
      const auto u = static_cast<size_t>(a);
      coords.set_int(p * batch_dims + a, p / strides[u] % positions[static_cast<int>(a)]);
    }
  }
  return b.add(OpKind::Concat, {b.constant(std::move(coords)), indices},
               {{"axis", int64_t{is.rank() - 1}}});
}

// GatherND: the gathered slices added back at their index tuples (ScatterND add over zeros, in
// index order); batch_dims become explicit leading coordinates of each tuple.
void gather_nd_vjp(VjpBuilder& b) {
  const ValueId tuples = with_batch_coordinates(b, b.input(1), b.attrs().get_int("batch_dims"));
  b.set(0, b.add(OpKind::ScatterND, {zeros(b, b.shape(b.input(0))), tuples, b.grad()},
                 {{"reduction", std::string("add")}}));
}

// The gather that reads what a scatter node writes, and the attributes both need.
struct ScatterPair {
  OpKind scatter, gather;
  Attributes gather_attrs;
  Attributes scatter_attrs(const std::string& reduction) const {
    Attributes a = gather_attrs;
    a["reduction"] = reduction;
    return a;
  }
};

// reduction mul: out[q] = data[q] * P[q], P[q] the product of the updates at position q (1 where
// there are none), so d data = g * P. Update k at q gets g[q] * data[q] * the product of the
// other updates at q, formed without dividing by a zero: with Z[q] zero updates at q and N[q]
// the product of the nonzero ones, that is N[q] / u[k] when Z[q] = 0, N[q] for the one zero
// update when Z[q] = 1, and 0 otherwise. Every product and count is a scatter over ones or
// zeros in index order.
void scatter_mul_vjp(VjpBuilder& b, const ScatterPair& ops) {
  const ValueId data = b.input(0), indices = b.input(1), u = b.input(2), g = b.grad();
  const Shape data_shape = b.shape(data);
  const ValueId ones = b.add(OpKind::Expand, {b.scalar(1.0)}, {{"shape", data_shape.dims()}});
  if (b.wants(0)) {
    b.set(0, b.mul(g, b.add(ops.scatter, {ones, indices, u}, ops.scatter_attrs("mul"))));
  }
  if (!b.wants(2)) return;
  const ValueId is_zero = b.add(OpKind::Equal, {u, b.scalar(0.0)});
  const ValueId nonzero = b.add(OpKind::Where, {is_zero, b.scalar(1.0), u});
  const ValueId zero_count =
      b.add(ops.scatter,
            {zeros(b, data_shape), indices,
             b.add(OpKind::Cast, {is_zero}, {{"to", std::string(dtype_name(b.dtype()))}})},
            ops.scatter_attrs("add"));
  const auto at_update = [&](ValueId v) {
    return b.add(ops.gather, {v, indices}, ops.gather_attrs);
  };
  const ValueId product =
      at_update(b.add(ops.scatter, {ones, indices, nonzero}, ops.scatter_attrs("mul")));
  const ValueId zeros_here = at_update(zero_count);
  const ValueId none_zero = b.add(OpKind::Equal, {zeros_here, b.scalar(0.0)});
  const ValueId only_this_zero =
      b.add(OpKind::And, {is_zero, b.add(OpKind::Equal, {zeros_here, b.scalar(1.0)})});
  const ValueId others =
      b.add(OpKind::Where, {none_zero, b.div(product, nonzero), b.where(only_this_zero, product)});
  b.set(2, b.mul(at_update(b.mul(g, data)), others));
}

// A constant [shape] of int64 counting 0, 1, ... in row-major order: each element's number.
ValueId element_numbers(VjpBuilder& b, const Shape& shape) {
  Tensor numbers(DType::I64, shape);
  for (int64_t i = 0; i < numbers.numel(); ++i) numbers.set_int(i, i);
  return b.constant(std::move(numbers));
}

// reduction max / min: out[q] is the first of data[q], then the updates at q in index order,
// that equals out[q] (an equal later value never replaces it). d data = g where data[q] is
// out[q]; update k gets g[q] where it is that first value: it equals out[q], data[q] does not,
// and no earlier update at q does, the earliest equal update being a scatter min of the
// updates' numbers.
void scatter_extreme_vjp(VjpBuilder& b, const ScatterPair& ops) {
  const ValueId data = b.input(0), indices = b.input(1), u = b.input(2), g = b.grad();
  const ValueId data_kept = b.add(OpKind::Equal, {data, b.output(0)});
  if (b.wants(0)) b.set(0, b.where(data_kept, g));
  if (!b.wants(2)) return;
  const auto at_update = [&](ValueId v) {
    return b.add(ops.gather, {v, indices}, ops.gather_attrs);
  };
  const Shape updates = b.shape(u);
  const ValueId own = element_numbers(b, updates);
  Tensor past_last(DType::I64, Shape{});
  past_last.set_int(0, updates.numel());
  const ValueId none = b.constant(std::move(past_last));
  const ValueId equal = b.add(OpKind::Equal, {u, at_update(b.output(0))});
  const ValueId first_equal =
      b.add(ops.scatter,
            {b.add(OpKind::Expand, {none}, {{"shape", b.shape(data).dims()}}), indices,
             b.add(OpKind::Where, {equal, own, none})},
            ops.scatter_attrs("min"));
  const ValueId won = b.add(OpKind::And, {b.add(OpKind::Equal, {at_update(first_equal), own}),
                                          b.add(OpKind::Not, {at_update(data_kept)})});
  b.set(2, b.where(won, at_update(g)));
}

// The scatters. reduction add: out = data + the updates at their positions, so d data = g and
// each update gathers g. reduction none: out = data with the updates written in index order, the
// last write to a position winning; d data is g with the written positions zeroed, and an
// update gets g only where it won: a repeated position's earlier updates are overwritten and
// get 0. The winners are found by scattering each update's own number the same way and reading
// back which number each position kept. reduction mul: see scatter_mul_vjp; max and min:
// scatter_extreme_vjp.
void scatter_vjp(VjpBuilder& b) {
  const OpKind op = b.node().op;
  const bool elements = op == OpKind::ScatterElements;
  const AttrReader at = b.attrs();
  const ScatterPair ops{op, elements ? OpKind::GatherElements : OpKind::GatherND,
                        elements ? Attributes{{"axis", at.get_int("axis")}} : Attributes{}};
  const std::string& reduction = at.get_string("reduction");
  if (reduction == "mul") {
    scatter_mul_vjp(b, ops);
    return;
  }
  if (reduction == "max" || reduction == "min") {
    scatter_extreme_vjp(b, ops);
    return;
  }
  const ValueId indices = b.input(1), g = b.grad();
  const Shape updates = b.shape(b.input(2));
  if (reduction == "add") {
    if (b.wants(0)) b.set(0, b.add(OpKind::Identity, {g}));
    if (b.wants(2)) b.set(2, b.add(ops.gather, {g, indices}, ops.gather_attrs));
    return;
  }
  if (b.wants(0)) {
    b.set(0, b.add(ops.scatter, {g, indices, zeros(b, updates)}, ops.scatter_attrs("none")));
  }
  if (b.wants(2)) {
    const ValueId own = element_numbers(b, updates);
    Tensor none(DType::I64, Shape{});
    none.set_int(0, -1);
    const ValueId unwritten =
        b.add(OpKind::Expand, {b.constant(std::move(none))}, {{"shape", b.shape(g).dims()}});
    const ValueId kept = b.add(ops.scatter, {unwritten, indices, own}, ops.scatter_attrs("none"));
    const ValueId won =
        b.add(OpKind::Equal, {b.add(ops.gather, {kept, indices}, ops.gather_attrs), own});
    b.set(2, b.where(won, b.add(ops.gather, {g, indices}, ops.gather_attrs)));
  }
}

// TopK: each value's gradient goes back to the element its Indices output names (distinct
// within a line, so the add over zeros only places them).
void top_k_vjp(VjpBuilder& b) {
  b.set(0, b.add(OpKind::ScatterElements, {zeros(b, b.shape(b.input(0))), b.output(1), b.grad()},
                 {{"axis", b.attrs().get_int("axis")}, {"reduction", std::string("add")}}));
}

// Trilu keeps a triangle and zeroes the rest: the gradient keeps the same triangle.
void trilu_vjp(VjpBuilder& b) { b.set(0, b.add(OpKind::Trilu, {b.grad()}, b.node().attrs)); }

}  // namespace

void register_indexing_vjps(VjpTable& t) {
  const auto add = [&](OpKind op, VjpRule rule, uint32_t inputs) {
    t[static_cast<size_t>(op_index(op))] = {rule, inputs};
  };
  add(OpKind::GatherElements, &gather_elements_vjp, 0b1);
  add(OpKind::GatherND, &gather_nd_vjp, 0b1);
  add(OpKind::ScatterElements, &scatter_vjp, 0b101);
  add(OpKind::ScatterND, &scatter_vjp, 0b101);
  add(OpKind::TopK, &top_k_vjp, 0b1);
  add(OpKind::Trilu, &trilu_vjp, 0b1);
}

}  // namespace volta::autograd
