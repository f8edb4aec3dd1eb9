#include "volta/ir/shape.h"

#include <algorithm>

namespace volta {

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

std::vector<int64_t> Shape::strides() const {
  std::vector<int64_t> s(dims_.size(), 1);
  for (int i = rank() - 2; i >= 0; --i) {
    s[static_cast<size_t>(i)] =
        s[static_cast<size_t>(i) + 1] * std::max<int64_t>(dims_[static_cast<size_t>(i) + 1], 1);
  }
  return s;
}

std::string Shape::str() const {
  std::string out = "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(dims_[i]);
  }
  return out + "]";
}

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  const int rank = std::max(a.rank(), b.rank());
  std::vector<int64_t> dims(static_cast<size_t>(rank));
  for (int i = 0; i < rank; ++i) {
    const int ia = a.rank() - rank + i;
    const int ib = b.rank() - rank + i;
    const int64_t da = ia >= 0 ? a[ia] : 1;
    const int64_t db = ib >= 0 ? b[ib] : 1;
    if (da == db || db == 1) {
      dims[static_cast<size_t>(i)] = da;
    } else if (da == 1) {
      dims[static_cast<size_t>(i)] = db;
    } else {
      return std::nullopt;
    }
  }
  return Shape(std::move(dims));
}

std::optional<int> normalize_axis(int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

std::vector<int64_t> broadcast_strides(const Shape& from, const Shape& to) {
  std::vector<int64_t> out(static_cast<size_t>(to.rank()), 0);
  const std::vector<int64_t> own = from.strides();
  const int offset = to.rank() - from.rank();
  for (int i = 0; i < from.rank(); ++i) {
    out[static_cast<size_t>(offset) + static_cast<size_t>(i)] =
        from[i] == 1 ? 0 : own[static_cast<size_t>(i)];
  }
  return out;
}

}  // namespace volta
