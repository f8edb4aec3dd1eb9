#pragma once
// Internal to engine/ir: the largest tensor Volta holds, so that a model declaring an absurd
// shape (2^62 elements) is refused with its shape named instead of overflowing a byte count.

#include <cstdint>
#include <optional>
#include <span>

namespace volta {

// 2^48 elements: past any machine's memory at any dtype, and its byte count (at most 8 bytes
// an element) still fits an int64.
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 48;

// The element count of `dims` when every dim is >= 0 and it is at most kMaxTensorElements;
// nullopt otherwise, computed without overflow.
inline std::optional<int64_t> bounded_numel(std::span<const int64_t> dims) {
  int64_t n = 1;
  for (const int64_t d : dims) {
    if (d < 0) return std::nullopt;
    if (d == 0) return 0;
  }
  for (const int64_t d : dims) {
    if (n > kMaxTensorElements / d) return std::nullopt;
    n *= d;
  }
  return n;
}

// a * b for a, b >= 0 when it is at most kMaxTensorElements; nullopt otherwise (never
// overflowing): for shape functions multiplying dims a model supplies.
inline std::optional<int64_t> bounded_product(int64_t a, int64_t b) {
  if (a < 0 || b < 0) return std::nullopt;
  if (a != 0 && b > kMaxTensorElements / a) return std::nullopt;
  return a * b;
}

}  // namespace volta
