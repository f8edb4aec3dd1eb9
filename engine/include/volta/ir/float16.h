#pragma once
// The 16-bit float storage types: IEEE binary16 (f16) and bfloat16 (bf16). Volta stores them
// in 16 bits and computes in f32; every conversion into them rounds once, to nearest even,
// straight from the source value (a double or a 64-bit integer is never rounded through an
// f32 first, which could round twice). The types have no arithmetic: a kernel widens to f32,
// computes, and converts its result back, so "one rounding per op result" is visible in code.

#include <bit>
#include <concepts>
#include <cstdint>
#include <type_traits>

namespace volta {

namespace float16_detail {
// The bits of the nearest value of a format with `exponent_bits` and `mantissa_bits`
// (round to nearest, ties to even; overflow to infinity; NaN stays NaN, quieted).
uint16_t round_double(double value, int exponent_bits, int mantissa_bits);
uint16_t round_integer(bool negative, uint64_t magnitude, int exponent_bits, int mantissa_bits);

inline float decode_binary16(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000U) << 16;
  const uint32_t exponent = (h >> 10) & 0x1FU;
  const uint32_t mantissa = h & 0x3FFU;
  if (exponent == 0x1F) return std::bit_cast<float>(sign | 0x7F800000U | mantissa << 13);
  if (exponent != 0) return std::bit_cast<float>(sign | (exponent + 112) << 23 | mantissa << 13);
  const float magnitude = static_cast<float>(mantissa) * 0x1p-24F;  // subnormal or zero: exact
  return sign != 0 ? -magnitude : magnitude;
}
}  // namespace float16_detail

template <int kExponentBits, int kMantissaBits>
class Float16Format {
 public:
  constexpr Float16Format() = default;
  explicit Float16Format(double v)
      : bits_(float16_detail::round_double(v, kExponentBits, kMantissaBits)) {}
  explicit Float16Format(float v) : Float16Format(static_cast<double>(v)) {}
  template <std::integral I>
  explicit Float16Format(I v)
      : bits_(float16_detail::round_integer(negative(v), magnitude(v), kExponentBits,
                                            kMantissaBits)) {}

  static constexpr Float16Format from_bits(uint16_t bits) {
    Float16Format f;
    f.bits_ = bits;
    return f;
  }
  constexpr uint16_t bits() const { return bits_; }

  // Exact: every f16 and bf16 value is an f32.
  float to_float() const;
  explicit operator float() const { return to_float(); }
  explicit operator double() const { return to_float(); }

 private:
  template <std::integral I>
  static bool negative(I v) {
    if constexpr (std::is_signed_v<I>) {
      return v < 0;
    } else {
      return false;
    }
  }
  template <std::integral I>
  static uint64_t magnitude(I v) {
    if constexpr (std::is_signed_v<I>) {
      return v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    } else {
      return static_cast<uint64_t>(v);
    }
  }

  uint16_t bits_ = 0;
};

using Float16 = Float16Format<5, 10>;  // IEEE binary16
using BFloat16 = Float16Format<8, 7>;  // the top half of an f32

template <>
inline float Float16::to_float() const {
  return float16_detail::decode_binary16(bits_);
}
template <>
inline float BFloat16::to_float() const {
  return std::bit_cast<float>(static_cast<uint32_t>(bits_) << 16);
}

static_assert(sizeof(Float16) == 2 && sizeof(BFloat16) == 2);

// Whether T is one of the 16-bit float storage types.
template <class T>
inline constexpr bool kIsHalf = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

// A value as Volta computes on it: f16 and bf16 widened (exactly) to f32, others as they are.
template <class T>
auto widened(T x) {
  if constexpr (kIsHalf<T>) {
    return static_cast<float>(x);
  } else {
    return x;
  }
}

}  // namespace volta
