#include "indexing_geometry.h"

#include <algorithm>
#include <vector>

namespace volta::cuda {
namespace {

int64_t product(const Shape& shape, int first, int last) {
  int64_t p = 1;
  for (int a = first; a < last; ++a) p *= shape[a];
  return p;
}

}  // namespace

ElementsGeometry elements_geometry(const Shape& data, const Shape& indices, int axis) {
  ElementsGeometry g;
  g.rank = data.rank();
  g.axis = axis;
  const std::vector<int64_t> strides = data.strides();
  for (int a = 0; a < g.rank; ++a) {
    g.index_dims[a] = indices[a];
    g.data_strides[a] = strides[static_cast<size_t>(a)];
  }
  g.dim = data[axis];
  g.numel = indices.numel();
  return g;
}

IndexTuples axis_tuples(const ElementsGeometry& g) {
  IndexTuples t;
  t.k = 1;
  t.dims[0] = g.dim;
  t.strides[0] = g.data_strides[g.axis];
  t.tuples = g.numel;
  return t;
}

IndexTuples nd_tuples(const Shape& data, const Shape& indices, int batch_dims) {
  IndexTuples t;
  t.k = static_cast<int>(indices[indices.rank() - 1]);
  const std::vector<int64_t> strides = data.strides();
  for (int j = 0; j < t.k; ++j) {
    t.dims[j] = data[batch_dims + j];
    t.strides[j] = strides[static_cast<size_t>(batch_dims) + static_cast<size_t>(j)];
  }
  t.tuples = t.k == 0 ? 0 : indices.numel() / t.k;
  t.tuples_per_batch = product(indices, batch_dims, indices.rank() - 1);
  t.batch_stride = product(data, batch_dims, data.rank());
  t.slice = product(data, batch_dims + t.k, data.rank());
  return t;
}

TriluGeometry trilu_geometry(const Shape& x, bool upper, int64_t k) {
  TriluGeometry g;
  g.rows = x[x.rank() - 2];
  g.cols = x[x.rank() - 1];
  g.upper = upper;
  // |k| beyond rows + cols keeps or drops everything; clamping avoids overflow, as on the CPU.
  g.k = std::clamp<int64_t>(k, -(g.rows + g.cols), g.rows + g.cols);
  g.numel = x.numel();
  return g;
}

OneHotGeometry one_hot_geometry(const Shape& out, int axis) {
  OneHotGeometry g;
  g.depth = out[axis];
  g.inner = product(out, axis + 1, out.rank());
  g.numel = out.numel();
  return g;
}

TopKGeometry top_k_geometry(const Shape& x, int axis, int64_t k, bool largest) {
  TopKGeometry g;
  g.n = x[axis];
  g.k = k;
  g.inner = product(x, axis + 1, x.rank());
  g.rows = product(x, 0, axis) * g.inner;
  g.largest = largest;
  return g;
}

}  // namespace volta::cuda
