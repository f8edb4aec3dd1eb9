#define BOOST_TEST_MODULE float16
// f16 and bf16 conversions against oracles that share no code with them: a search over every
// value of the format, the x86 F16C instructions where the CPU has them, and cases where
// rounding through f32 first would round twice.
#include "volta/ir/float16.h"

#include <algorithm>
#include <bit>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace volta {
namespace {

bool is_nan_bits(uint16_t bits, int mantissa_bits) {
  const unsigned exponent_mask = 0x7FFFU & ~((1U << mantissa_bits) - 1);
  return (bits & exponent_mask) == exponent_mask && (bits & ((1U << mantissa_bits) - 1)) != 0;
}

// The nearest value by search: every finite non-negative value of the format in order, then
// the two neighbours of |v| compared in double (exact: both are doubles and so is v). Ties go
// to the even encoding; past the largest finite value, the overflow threshold is the midpoint
// to the next power of two (IEEE's rule for rounding to nearest).
template <class Format>
uint16_t nearest_by_search(double v) {
  static const std::vector<double> values = [] {
    std::vector<double> out;
    for (uint32_t bits = 0; bits < 0x8000; ++bits) {
      const float f = Format::from_bits(static_cast<uint16_t>(bits)).to_float();
      if (!std::isfinite(f)) break;  // the encodings after the finite ones are inf and NaN
      out.push_back(f);
    }
    return out;
  }();
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const double a = std::fabs(v);
  const uint16_t infinity = static_cast<uint16_t>(values.size());  // the encoding after max
  const double max = values.back();
  const double ulp_at_max = max - values[values.size() - 2];
  if (a >= max + ulp_at_max / 2) return sign | infinity;
  const auto above = std::ranges::lower_bound(values, a);
  if (above == values.end()) return sign | static_cast<uint16_t>(values.size() - 1);
  const auto at = static_cast<uint16_t>(above - values.begin());
  if (*above == a || at == 0) return sign | at;
  const double down = a - values[at - 1];
  const double up = *above - a;
  if (down < up) return sign | static_cast<uint16_t>(at - 1);
  if (up < down) return sign | at;
  return sign | ((at & 1U) == 0 ? at : static_cast<uint16_t>(at - 1));
}

std::vector<double> probe_values(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> out = {0.0,     -0.0,     1.0,     65504.0, 65519.99, 65520.0,  65536.0,
                             6.1e-5,  5.96e-8,  2.98e-8, 2.99e-8, 1e-10,    3.0e38,   3.4e38,
                             3.39e38, 1.18e-38, 9.2e-41, -2.5,    1.0e300,  -1.0e-300};
  // Halfway points and their neighbours around every f16 and bf16 exponent.
  for (int e = -30; e <= 130; ++e) {
    for (int m : {1, 2, 3, 5, 127, 1023}) {
      const double base = std::ldexp(1.0 + m / 1024.0, e);
      const double half_ulp16 = std::ldexp(1.0, e - 11);
      const double half_ulp_b = std::ldexp(1.0, e - 8);
      for (double h : {half_ulp16, half_ulp_b}) {
        out.push_back(base + h);
        out.push_back(std::nextafter(base + h, 0.0));
        out.push_back(std::nextafter(base + h, 1e308));
        out.push_back(-(base + h));
      }
    }
  }
  std::uniform_int_distribution<uint64_t> bits;
  for (int i = 0; i < 20000; ++i) {
    const double v = std::bit_cast<double>(bits(rng));
    if (std::isfinite(v)) out.push_back(v);
    // Doubles near the formats' range, where the interesting cases are.
    out.push_back(std::ldexp(std::uniform_real_distribution<double>(-2, 2)(rng),
                             std::uniform_int_distribution<int>(-140, 130)(rng)));
  }
  return out;
}

BOOST_AUTO_TEST_CASE(every_f16_and_bf16_value_widens_and_narrows_back_to_itself) {
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const auto b = static_cast<uint16_t>(bits);
    const Float16 h = Float16::from_bits(b);
    const BFloat16 g = BFloat16::from_bits(b);
    if (is_nan_bits(b, 10)) {
      BOOST_TEST(std::isnan(h.to_float()));
      BOOST_TEST(is_nan_bits(Float16(h.to_float()).bits(), 10));
    } else {
      BOOST_TEST(Float16(h.to_float()).bits() == b, "f16 0x" << std::hex << bits);
      BOOST_TEST(Float16(static_cast<double>(h.to_float())).bits() == b);
    }
    if (is_nan_bits(b, 7)) {
      BOOST_TEST(std::isnan(g.to_float()));
    } else {
      BOOST_TEST(BFloat16(g.to_float()).bits() == b, "bf16 0x" << std::hex << bits);
      BOOST_TEST(std::bit_cast<uint32_t>(g.to_float()) == bits << 16);  // bf16 is f32's top half
    }
  }
}

BOOST_AUTO_TEST_CASE(rounding_from_double_is_the_nearest_value_ties_to_even) {
  for (double v : probe_values(17)) {
    BOOST_TEST(Float16(v).bits() == nearest_by_search<Float16>(v), "f16 of " << v);
    BOOST_TEST(BFloat16(v).bits() == nearest_by_search<BFloat16>(v), "bf16 of " << v);
  }
}

// The f32 paths (narrow_binary16, narrow_bfloat16: integer selects that vectorize) against the
// double path (round_double), over every f32 whose top 16 bits are anything and whose low 16
// bits sit at or around each rounding boundary: for an f16 normal the dropped 13 bits, for an
// f16 subnormal up to 24 (the boundaries above bit 15 are in the top half, which runs through
// every value), for bf16 the low 16.
BOOST_AUTO_TEST_CASE(the_f32_paths_round_as_the_double_path_does) {
  std::vector<uint32_t> low = {0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFE, 0xFFFF};
  for (uint32_t bit = 0; bit < 16; ++bit) {
    const uint32_t half = 1U << bit;
    for (const uint32_t v : {half - 1, half, half + 1, half | 0x2000U, (half - 1) | 0x2000U}) {
      low.push_back(v & 0xFFFFU);
    }
  }
  std::mt19937 rng(2026);
  for (int i = 0; i < 16; ++i) low.push_back(rng() & 0xFFFFU);
  int64_t checked = 0;
  for (uint32_t top = 0; top <= 0xFFFFU; ++top) {
    for (const uint32_t l : low) {
      const auto v = std::bit_cast<float>(top << 16 | l);
      const auto d = static_cast<double>(v);
      if (Float16(v).bits() != Float16(d).bits() || BFloat16(v).bits() != BFloat16(d).bits()) {
        BOOST_ERROR("f32 bits 0x" << std::hex << (top << 16 | l) << ": f16 " << Float16(v).bits()
                                  << " vs " << Float16(d).bits() << ", bf16 " << BFloat16(v).bits()
                                  << " vs " << BFloat16(d).bits());
        return;
      }
      ++checked;
    }
  }
  BOOST_TEST(checked > 5'000'000);
}

BOOST_AUTO_TEST_CASE(a_double_or_an_integer_rounds_once_never_through_f32) {
  // 1 + 2^-11 + 2^-40 lies just above the midpoint between 1 and the next f16. Through f32
  // it becomes the midpoint itself and then rounds to even, down to 1.
  const double just_above_half = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  BOOST_TEST(Float16(just_above_half).bits() == 0x3C01);
  BOOST_TEST(Float16(static_cast<float>(just_above_half)).bits() == 0x3C00);
  // 2^60 + 2^52 + 1 lies just above the midpoint between 2^60 and the next bf16; as a double
  // (or an f32) it is the midpoint.
  const int64_t big = (int64_t{1} << 60) + (int64_t{1} << 52) + 1;
  BOOST_TEST(BFloat16(big).bits() == 0x5D81);
  BOOST_TEST(BFloat16(static_cast<double>(big)).bits() == 0x5D80);
  BOOST_TEST(BFloat16(-big).bits() == 0xDD81);
  BOOST_TEST(BFloat16(std::numeric_limits<uint64_t>::max()).bits() == 0x5F80);  // 2^64
  BOOST_TEST(Float16(int64_t{65519}).bits() == 0x7BFF);                         // 65504
  BOOST_TEST(Float16(int64_t{65520}).bits() == 0x7C00);                         // inf
  BOOST_TEST(Float16(0).bits() == 0x0000);
  BOOST_TEST(Float16(std::numeric_limits<int64_t>::min()).bits() == 0xFC00);
  BOOST_TEST(BFloat16(std::numeric_limits<int64_t>::min()).bits() == 0xDF00);  // -2^63
  for (int64_t i = -70000; i <= 70000; i += 7) {
    BOOST_TEST(Float16(i).bits() == Float16(static_cast<double>(i)).bits());
  }
}

BOOST_AUTO_TEST_CASE(nan_stays_nan_with_its_sign_and_infinities_stay_infinite) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  BOOST_TEST(Float16(nan).bits() == 0x7E00);
  BOOST_TEST(Float16(-nan).bits() == 0xFE00);
  BOOST_TEST(BFloat16(nan).bits() == 0x7FC0);
  BOOST_TEST(Float16(std::numeric_limits<double>::infinity()).bits() == 0x7C00);
  BOOST_TEST(BFloat16(-std::numeric_limits<double>::infinity()).bits() == 0xFF80);
  BOOST_TEST(std::isinf(Float16::from_bits(0x7C00).to_float()));
  BOOST_TEST(Float16::from_bits(0x0001).to_float() == std::ldexp(1.0F, -24));  // subnormal
  BOOST_TEST(std::signbit(Float16::from_bits(0x8000).to_float()));
}

#if defined(__x86_64__)
// CPUID leaf 1, ECX bit 29 (asked directly: clang 14 does not know "f16c" as a feature string).
bool has_f16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & (1U << 29)) != 0;
}
__attribute__((target("f16c"))) uint16_t f16c_round(float v) {
  const __m128i h = _mm_cvtps_ph(_mm_set_ss(v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return static_cast<uint16_t>(_mm_extract_epi16(h, 0));
}
__attribute__((target("f16c"))) float f16c_widen(uint16_t bits) {
  return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(bits)));
}

BOOST_AUTO_TEST_CASE(f32_conversions_match_the_f16c_instructions) {
  if (!has_f16c()) {
    BOOST_TEST_MESSAGE("no F16C on this CPU: checked against the search oracle only");
    return;
  }
  for (double d : probe_values(29)) {
    const auto v = static_cast<float>(d);
    BOOST_TEST(Float16(v).bits() == f16c_round(v), "f16 of " << v);
  }
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const auto b = static_cast<uint16_t>(bits);
    if (is_nan_bits(b, 10)) continue;
    BOOST_TEST(Float16::from_bits(b).to_float() == f16c_widen(b));
  }
}
#endif

}  // namespace
}  // namespace volta
