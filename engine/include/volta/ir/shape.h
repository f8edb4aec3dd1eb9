#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace volta {

// A static, row-major shape. Rank 0 is a scalar (one element); a zero dim is an empty tensor.
class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}

  int rank() const { return static_cast<int>(dims_.size()); }
  int64_t operator[](int axis) const { return dims_[static_cast<size_t>(axis)]; }
  int64_t& operator[](int axis) { return dims_[static_cast<size_t>(axis)]; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t numel() const;
  // Element strides of the contiguous layout (innermost stride 1).
  std::vector<int64_t> strides() const;
  std::string str() const;  // "[3,5]", "[]" for a scalar

  friend bool operator==(const Shape&, const Shape&) = default;

 private:
  std::vector<int64_t> dims_;
};

// Numpy-style multidirectional broadcasting; nullopt when the shapes are incompatible.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);

// Maps a possibly negative axis into [0, rank); nullopt when out of range.
std::optional<int> normalize_axis(int64_t axis, int rank);

// Strides for reading `from` as if broadcast to `to` (0 on broadcast dims), aligned to
// the rank of `to`. Requires that `from` broadcasts to `to`.
std::vector<int64_t> broadcast_strides(const Shape& from, const Shape& to);

}  // namespace volta
