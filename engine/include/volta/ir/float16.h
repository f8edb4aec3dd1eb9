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

// The conversions between f32 and the 16-bit formats are written without branches, as selects
// of integer arithmetic, so that a loop over them vectorizes on every ISA (SSE2, AVX2, AVX-512,
// NEON: whatever the compiler targets) and gives the same bits everywhere; nothing in them
// depends on the floating-point environment (flush-to-zero modes), which integer arithmetic
// cannot see. float16_test holds them to round_double and to the F16C instructions.

// All ones where a < b, else zero, for a and b below 2^31: the sign of a - b, as a mask rather
// than a bool, so that the vectorizer keeps it in a vector register.
constexpr uint32_t below(uint32_t a, uint32_t b) {
  return static_cast<uint32_t>(static_cast<int32_t>(a - b) >> 31);
}
// `a` where `mask` is all ones, `b` where it is zero.
constexpr uint32_t pick(uint32_t mask, uint32_t a, uint32_t b) { return (a & mask) | (b & ~mask); }

inline float decode_binary16(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000U) << 16;
  const uint32_t exponent = (h >> 10) & 0x1FU;
  const uint32_t mantissa = h & 0x3FFU;
  const uint32_t special = 0x7F800000U | mantissa << 13;  // infinity or NaN
  const uint32_t normal = (exponent + 112) << 23 | mantissa << 13;
  // Subnormal or zero: mantissa * 2^-24, exact, and a normal f32 (or zero) that no
  // flush-to-zero mode touches.
  const auto subnormal = std::bit_cast<uint32_t>(static_cast<float>(mantissa) * 0x1p-24F);
  const uint32_t magnitude =
      pick(below(exponent, 1), subnormal, pick(below(exponent, 31), normal, special));
  return std::bit_cast<float>(sign | magnitude);
}

// f32 -> binary16 bits, to nearest even: the same bits as round_double of the f32's (exact)
// double, computed in 32-bit integers.
inline uint16_t narrow_binary16(float value) {
  const auto bits = std::bit_cast<uint32_t>(value);
  const uint32_t sign = (bits >> 16) & 0x8000U;
  const uint32_t magnitude = bits & 0x7FFFFFFFU;
  const uint32_t exponent = magnitude >> 23;
  // A normal result (|v| >= 2^-14): rebias, then round away the low 13 bits, ties to even (add
  // half - 1 and the lowest kept bit: only more than half, or half with an odd kept part,
  // carries); a carry moves into the exponent, up to infinity's encoding at 65520.
  const uint32_t normal = (magnitude - (112U << 23) + 0xFFFU + ((magnitude >> 13) & 1U)) >> 13;
  // A subnormal result: (1.m * 2^(e - 127)) / 2^-24 = 1m >> (126 - e), rounded to even the same
  // way. f32 subnormals and zero (e = 0) shift by 31 to zero as they should.
  const uint32_t shift =
      pick(below(exponent, 95), 31U, pick(below(exponent, 113), 126U - exponent, 14U));
  const uint32_t full = (magnitude & 0x7FFFFFU) | 0x800000U;
  const uint32_t subnormal = (full + ((1U << (shift - 1U)) - 1U) + ((full >> shift) & 1U)) >> shift;
  // NaN keeps its payload's top bits, quieted, as round_double does.
  const uint32_t nan = 0x7E00U | ((magnitude >> 13) & 0x3FFU);
  uint32_t result = pick(below(exponent, 113), subnormal, normal);
  result = pick(below(magnitude, 143U << 23), result, 0x7C00U);  // 65536 and up: infinity
  result = pick(below(0x7F800000U, magnitude), nan, result);
  return static_cast<uint16_t>(sign | result);
}

// f32 -> bfloat16 bits, to nearest even (the top half of the f32, rounded; infinity past the
// largest bf16), NaN quieted with its payload's top bits.
inline uint16_t narrow_bfloat16(float value) {
  const auto bits = std::bit_cast<uint32_t>(value);
  const uint32_t rounded = (bits + 0x7FFFU + ((bits >> 16) & 1U)) >> 16;
  const uint32_t nan = (bits >> 16) | 0x40U;
  return static_cast<uint16_t>(pick(below(0x7F800000U, bits & 0x7FFFFFFFU), nan, rounded));
}
}  // namespace float16_detail

template <int kExponentBits, int kMantissaBits>
class Float16Format {
 public:
  constexpr Float16Format() = default;
  explicit Float16Format(double v)
      : bits_(float16_detail::round_double(v, kExponentBits, kMantissaBits)) {}
  explicit Float16Format(float v) : bits_(narrow(v)) {}
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

  static uint16_t narrow(float v);

  uint16_t bits_ = 0;
};

using Float16 = Float16Format<5, 10>;  // IEEE binary16
using BFloat16 = Float16Format<8, 7>;  // the top half of an f32

template <>
inline uint16_t Float16::narrow(float v) {
  return float16_detail::narrow_binary16(v);
}
template <>
inline uint16_t BFloat16::narrow(float v) {
  return float16_detail::narrow_bfloat16(v);
}
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
