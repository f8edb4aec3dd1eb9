// Reference gathers, scatters, TopK, OneHot and Trilu. Each output element is found from its
// multi-index by the op's definition; elements are copied as raw bytes. Scatter reductions
// round once per update, in index order, as the op defines them.

#include <algorithm>
#include <cmath>

#include "ref_util.h"

namespace volta::reference {
namespace {

int attr_axis(const Node& node, std::string_view name, int rank) {
  return *normalize_axis(AttrReader(node).get_int(name), rank);
}

// An index along an axis of `extent` elements, negative ones counting from the end.
int64_t resolve_index(const Tensor& indices, int64_t p, int64_t extent, int axis) {
  const int64_t given = indices.get_int(p);
  const int64_t index = given < 0 ? given + extent : given;
  if (index < 0 || index >= extent) {
    std::vector<int64_t> position(static_cast<size_t>(indices.shape().rank()));
    for (int64_t rest = p, d = indices.shape().rank() - 1; d >= 0; --d) {
      position[static_cast<size_t>(d)] = rest % indices.shape()[static_cast<int>(d)];
      rest /= indices.shape()[static_cast<int>(d)];
    }
    kernel_fail("index " + std::to_string(given) + " at indices position " + Shape(position).str() +
                " is out of range for data axis " + std::to_string(axis) + " of size " +
                std::to_string(extent) + " (valid: [" + std::to_string(-extent) + ", " +
                std::to_string(extent - 1) + "])");
  }
  return index;
}

// ---- Element gathers and scatters ----------------------------------------------------------

// out[p] = data[p with p[axis] = indices[p]].
std::vector<Tensor> gather_elements(const Node& node, RefInputs in, RefOutputTypes out) {
  const Tensor& data = *in[0];
  const Tensor& indices = *in[1];
  const int axis = attr_axis(node, "axis", data.shape().rank());
  Tensor y(out[0].dtype, out[0].shape);
  for_each_index(indices.shape(), [&](const std::vector<int64_t>& index, int64_t flat) {
    std::vector<int64_t> source = index;
    source[static_cast<size_t>(axis)] = resolve_index(indices, flat, data.shape()[axis], axis);
    copy_element(data, flat_offset(source, data.shape()), y, flat);
  });
  return {y};
}

// The k-tuple of data indices at tuple t of `indices` (last axis k), starting at data axis
// `first_axis`.
std::vector<int64_t> index_tuple(const Tensor& indices, int64_t t, const Shape& data,
                                 int first_axis) {
  const int64_t k = indices.shape()[indices.shape().rank() - 1];
  std::vector<int64_t> tuple;
  for (int64_t j = 0; j < k; ++j) {
    const int axis = first_axis + static_cast<int>(j);
    tuple.push_back(resolve_index(indices, t * k + j, data[axis], axis));
  }
  return tuple;
}

// out[b..., t..., s...] = data[b..., indices[b..., t..., :], s...].
std::vector<Tensor> gather_nd(const Node& node, RefInputs in, RefOutputTypes out) {
  const Tensor& data = *in[0];
  const Tensor& indices = *in[1];
  const int b = static_cast<int>(AttrReader(node).get_int("batch_dims"));
  const int q = indices.shape().rank();
  Tensor y(out[0].dtype, out[0].shape);
  for_each_index(y.shape(), [&](const std::vector<int64_t>& index, int64_t flat) {
    // The output index is indices' leading q - 1 axes, then the slice axes.
    int64_t tuple = 0;
    for (int d = 0; d < q - 1; ++d)
      tuple = tuple * indices.shape()[d] + index[static_cast<size_t>(d)];
    std::vector<int64_t> source(index.begin(), index.begin() + b);
    for (int64_t v : index_tuple(indices, tuple, data.shape(), b)) source.push_back(v);
    source.insert(source.end(), index.begin() + (q - 1), index.end());
    copy_element(data, flat_offset(source, data.shape()), y, flat);
  });
  return {y};
}

// numpy.maximum and numpy.minimum: NaN propagates (the target's first); of equals the target
// stays. The update replaces the target when it is NaN (the target not) or strictly beyond it.
template <class V>
bool update_wins(const std::string& reduction, V target, V update) {
  if (target != target) return false;
  if (update != update) return true;
  return reduction == "max" ? update > target : update < target;
}

// target = update, target + update, target * update (in the data dtype: rounded once), or the
// max or min of the two.
void apply_update(Tensor& y, int64_t at, const Tensor& updates, int64_t from,
                  const std::string& reduction) {
  if (reduction == "none") {
    copy_element(updates, from, y, at);
  } else if (reduction == "max" || reduction == "min") {
    const bool wins = is_floating(y.dtype())
                          ? update_wins(reduction, y.get_double(at), updates.get_double(from))
                          : update_wins(reduction, y.get_int(at), updates.get_int(from));
    if (wins) copy_element(updates, from, y, at);
  } else if (is_floating(y.dtype())) {
    const double a = y.get_double(at), u = updates.get_double(from);
    y.set_double(at, reduction == "add" ? a + u : a * u);
  } else {
    const int64_t a = y.get_int(at), u = updates.get_int(from);
    y.set_int(at, reduction == "add" ? wrapping_add(a, u) : wrapping_mul(a, u));
  }
}

// Every index is resolved (and checked) before the first update is applied.
std::vector<Tensor> scatter_elements(const Node& node, RefInputs in, RefOutputTypes) {
  const Tensor& indices = *in[1];
  const Tensor& updates = *in[2];
  const int axis = attr_axis(node, "axis", in[0]->shape().rank());
  const std::string& reduction = AttrReader(node).get_string("reduction");
  std::vector<int64_t> targets;
  for_each_index(indices.shape(), [&](const std::vector<int64_t>& index, int64_t flat) {
    std::vector<int64_t> target = index;
    target[static_cast<size_t>(axis)] = resolve_index(indices, flat, in[0]->shape()[axis], axis);
    targets.push_back(flat_offset(target, in[0]->shape()));
  });
  Tensor y = *in[0];
  for (size_t p = 0; p < targets.size(); ++p) {
    apply_update(y, targets[p], updates, static_cast<int64_t>(p), reduction);
  }
  return {y};
}

std::vector<Tensor> scatter_nd(const Node& node, RefInputs in, RefOutputTypes) {
  const Tensor& indices = *in[1];
  const Tensor& updates = *in[2];
  const Shape& shape = in[0]->shape();
  const std::string& reduction = AttrReader(node).get_string("reduction");
  const int64_t k = indices.shape()[indices.shape().rank() - 1];
  const int64_t tuples = indices.numel() / k;
  const Shape slice(std::vector<int64_t>(shape.dims().begin() + k, shape.dims().end()));
  std::vector<std::vector<int64_t>> starts;
  for (int64_t t = 0; t < tuples; ++t) starts.push_back(index_tuple(indices, t, shape, 0));
  Tensor y = *in[0];
  for (int64_t t = 0; t < tuples; ++t) {
    for_each_index(slice, [&](const std::vector<int64_t>& index, int64_t flat) {
      std::vector<int64_t> target = starts[static_cast<size_t>(t)];
      target.insert(target.end(), index.begin(), index.end());
      apply_update(y, flat_offset(target, shape), updates, t * slice.numel() + flat, reduction);
    });
  }
  return {y};
}

// ---- TopK ----------------------------------------------------------------------------------

// Whether element a ranks strictly before element b: the larger (smaller with
// largest = 0) value, NaN above every number. Equal values keep their order (stable sort).
bool ranks_before(const Tensor& x, int64_t a, int64_t b, bool largest) {
  if (is_floating(x.dtype())) {
    const double va = x.get_double(a), vb = x.get_double(b);
    if (std::isnan(va) || std::isnan(vb)) {
      if (std::isnan(va) && std::isnan(vb)) return false;
      return std::isnan(va) == largest;
    }
    return largest ? va > vb : va < vb;
  }
  // u64 above 2^63 reads back negative: order_flip restores its order.
  const int64_t flip = order_flip(x.dtype());
  const int64_t va = x.get_int(a) ^ flip, vb = x.get_int(b) ^ flip;
  return largest ? va > vb : va < vb;
}

std::vector<Tensor> top_k(const Node& node, RefInputs in, RefOutputTypes out) {
  const Tensor& x = *in[0];
  const int axis = attr_axis(node, "axis", x.shape().rank());
  const bool largest = AttrReader(node).get_int("largest") != 0;
  const AxisView rows = view_around_axis(x.shape(), axis);
  const int64_t k = out[0].shape[axis];
  Tensor values(out[0].dtype, out[0].shape);
  Tensor indices(out[1].dtype, out[1].shape);
  for (int64_t o = 0; o < rows.outer; ++o) {
    for (int64_t i = 0; i < rows.inner; ++i) {
      std::vector<int64_t> order(static_cast<size_t>(rows.extent));
      for (int64_t j = 0; j < rows.extent; ++j) order[static_cast<size_t>(j)] = j;
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return ranks_before(x, rows.at(o, a, i), rows.at(o, b, i), largest);
      });
      for (int64_t j = 0; j < k; ++j) {
        const int64_t at = (o * k + j) * rows.inner + i;
        copy_element(x, rows.at(o, order[static_cast<size_t>(j)], i), values, at);
        indices.set_int(at, order[static_cast<size_t>(j)]);
      }
    }
  }
  return {values, indices};
}

// ---- OneHot and Trilu ----------------------------------------------------------------------

// out[..., d, ...] (d on the new axis) = values[1] if the index there selects class d, else
// values[0]. Float indices truncate toward zero; negative ones count from depth; NaN and
// out-of-range indices select nothing.
std::vector<Tensor> one_hot(const Node& node, RefInputs in, RefOutputTypes out) {
  const Tensor& indices = *in[0];
  const Tensor& values = *in[1];
  const int axis = attr_axis(node, "axis", out[0].shape.rank());
  const int64_t depth = AttrReader(node).get_int("depth");
  Tensor y(out[0].dtype, out[0].shape);
  for_each_index(y.shape(), [&](const std::vector<int64_t>& index, int64_t flat) {
    std::vector<int64_t> at = index;
    at.erase(at.begin() + axis);
    const int64_t p = flat_offset(at, indices.shape());
    bool selected = false;
    if (is_floating(indices.dtype())) {
      const double v = std::trunc(indices.get_double(p));
      const double cls = v < 0 ? v + static_cast<double>(depth) : v;
      selected = cls == static_cast<double>(index[static_cast<size_t>(axis)]);
    } else {
      const int64_t v = indices.get_int(p);
      selected = (v < 0 ? v + depth : v) == index[static_cast<size_t>(axis)];
    }
    copy_element(values, selected ? 1 : 0, y, flat);
  });
  return {y};
}

// Keeps element (..., i, j) where j - i >= k (upper) or j - i <= k (lower).
std::vector<Tensor> trilu(const Node& node, RefInputs in, RefOutputTypes out) {
  const Tensor& x = *in[0];
  const AttrReader attrs(node);
  const bool upper = attrs.get_int("upper") != 0;
  const int64_t k = attrs.get_int("k");
  const int rank = x.shape().rank();
  Tensor y(out[0].dtype, out[0].shape);  // zero-filled: 0, 0.0, false
  for_each_index(x.shape(), [&](const std::vector<int64_t>& index, int64_t flat) {
    // Compared in double: k may be near the int64 limits.
    const double diff = static_cast<double>(index[static_cast<size_t>(rank - 1)]) -
                        static_cast<double>(index[static_cast<size_t>(rank - 2)]);
    const double kk = static_cast<double>(k);
    if (upper ? diff >= kk : diff <= kk) copy_element(x, flat, y, flat);
  });
  return {y};
}

}  // namespace

void register_indexing(RefTable& table) {
  using K = OpKind;
  register_kernel(table, K::GatherElements, gather_elements);
  register_kernel(table, K::GatherND, gather_nd);
  register_kernel(table, K::ScatterElements, scatter_elements);
  register_kernel(table, K::ScatterND, scatter_nd);
  register_kernel(table, K::TopK, top_k);
  register_kernel(table, K::OneHot, one_hot);
  register_kernel(table, K::Trilu, trilu);
}

}  // namespace volta::reference
