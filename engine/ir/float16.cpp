#include "volta/ir/float16.h"

#include <bit>

namespace volta::float16_detail {
namespace {

// The nearest value to magnitude * 2^exponent (magnitude > 0), ties to even, in the format.
uint16_t round_finite(bool negative, uint64_t magnitude, int exponent, int exponent_bits,
                      int mantissa_bits) {
  const uint16_t sign = negative ? 0x8000U : 0U;
  const int bias = (1 << (exponent_bits - 1)) - 1;
  const int max_exponent = bias;
  const int min_exponent = 1 - bias;
  // Normalize: value = magnitude * 2^exponent with magnitude's top bit at bit 63, so the
  // value is 1.f * 2^top.
  const int leading = std::countl_zero(magnitude);
  magnitude <<= leading;
  const int top = exponent - leading + 63;
  const auto infinity =
      static_cast<uint16_t>(sign | (((1U << exponent_bits) - 1) << mantissa_bits));
  if (top > max_exponent) return infinity;
  // Low bits of `magnitude` that do not fit: a normal keeps mantissa_bits below the top bit,
  // a subnormal fewer, by how far it lies below the smallest normal.
  const int dropped = 63 - mantissa_bits + (top < min_exponent ? min_exponent - top : 0);
  uint64_t kept = 0;
  if (dropped < 64) {
    kept = magnitude >> dropped;
    const uint64_t rest = magnitude & ((uint64_t{1} << dropped) - 1);
    const uint64_t half = uint64_t{1} << (dropped - 1);
    if (rest > half || (rest == half && (kept & 1U) != 0)) ++kept;
  } else if (dropped == 64 && magnitude > (uint64_t{1} << 63)) {
    kept = 1;  // above half the smallest subnormal (exactly half is a tie, to even: zero)
  }
  if (top < min_exponent) {
    // Subnormal: the field holds `kept` directly; rounding up to 2^mantissa_bits gives the
    // smallest normal's encoding, which is right.
    return static_cast<uint16_t>(sign | kept);
  }
  int biased = top + bias;
  if (kept == (uint64_t{1} << (mantissa_bits + 1))) {  // rounded up to the next binade
    kept >>= 1;
    ++biased;
    if (biased - bias > max_exponent) return infinity;
  }
  const uint64_t fraction = kept & ((uint64_t{1} << mantissa_bits) - 1);
  return static_cast<uint16_t>(sign | (static_cast<unsigned>(biased) << mantissa_bits) | fraction);
}

}  // namespace

uint16_t round_double(double value, int exponent_bits, int mantissa_bits) {
  const auto bits = std::bit_cast<uint64_t>(value);
  const bool negative = (bits >> 63) != 0;
  const uint16_t sign = negative ? 0x8000U : 0U;
  const auto exponent_field = static_cast<int>((bits >> 52) & 0x7FFU);
  const uint64_t fraction = bits & ((uint64_t{1} << 52) - 1);
  const unsigned all_ones = (1U << exponent_bits) - 1;
  if (exponent_field == 0x7FF) {
    if (fraction == 0) return static_cast<uint16_t>(sign | (all_ones << mantissa_bits));
    // NaN: the payload's top bits, with the quiet bit set (as IEEE conversions do).
    const auto payload = static_cast<unsigned>(fraction >> (52 - mantissa_bits));
    const unsigned quiet = 1U << (mantissa_bits - 1);
    return static_cast<uint16_t>(sign | (all_ones << mantissa_bits) | payload | quiet);
  }
  if (exponent_field == 0 && fraction == 0) return sign;
  if (exponent_field == 0) {  // a double subnormal: fraction * 2^-1074
    return round_finite(negative, fraction, -1074, exponent_bits, mantissa_bits);
  }
  return round_finite(negative, fraction | (uint64_t{1} << 52), exponent_field - 1075,
                      exponent_bits, mantissa_bits);
}

uint16_t round_integer(bool negative, uint64_t magnitude, int exponent_bits, int mantissa_bits) {
  if (magnitude == 0) return 0;  // integer zero is +0
  return round_finite(negative, magnitude, 0, exponent_bits, mantissa_bits);
}

}  // namespace volta::float16_detail
