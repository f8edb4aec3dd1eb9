#pragma once
// Vectorizable f32 math for the CPU kernels: exp, expm1, log, log1p, tanh, erf, sigmoid and both
// GELU forms.
//
// Every function is straight-line scalar code (selects instead of branches, no calls, no
// tables), so the compiler vectorizes the loops that call it. A lane gives the same bits in a
// vector as in a scalar tail: it is the same IEEE operations in the same order. That holds
// because the files that include this are built without -ffast-math and with
// -ffp-contract=off (the top-level CMakeLists.txt): the compiler fuses no multiply-add, and
// the code fuses exactly the ones it writes as std::fma: every Horner step of a polynomial
// (detail::horner: p = fma(p, x, c), one rounding where a multiply and an add round twice) and
// GELU's exact square. std::fma is correctly rounded wherever it runs: the FMA instruction in the
// AVX2 and AVX-512 row loops (simd.h enables it there), libm's fmaf in a baseline build, CUDA's
// fmaf on a GPU, so the bits are the same on every ISA. For the loops to vectorize they also need
// -fno-math-errno and -fno-trapping-math (results do not change).
//
// Accuracy, measured over all 2^32 f32 inputs against the double-precision <cmath> value
// (ULP error: |result - exact| / the f32 spacing at the exact value, the subnormal spacing
// below FLT_MIN); cpu_elementwise_test and
// cpu_math_test (expm1, log1p) check these bounds on a sweep of every 2003rd input.
//   exp_f32        0.99 ULP  (0 below -103.97, +inf above 88.72)
//   expm1_f32      3.32 ULP  (0.94 ULP where |x| < ln2 / 2)
//   log_f32        0.83 ULP
//   log1p_f32      2.47 ULP  (x >= -1)
//   tanh_f32       1.51 ULP
//   erf_f32        1.44 ULP
//   sigmoid_f32    2.40 ULP  (f32 division)
//   gelu_f32       2.59 ULP  (approximate="none": x Phi(x))
//   gelu_tanh_f32  1.80 ULP  (approximate="tanh")
// NaN in gives NaN out; infinities give the limits (exp(-inf) = 0, tanh(inf) = 1, ...).

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace volta::cpu::vmath {

inline constexpr float kInf = std::numeric_limits<float>::infinity();
inline constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// 2^n for n in [-126, 127], built from its bits.
inline float pow2_f32(int32_t n) {
  return std::bit_cast<float>(static_cast<uint32_t>(n + 127) << 23);
}

namespace detail {

// c0 x^n + c1 x^(n-1) + ... + cn by Horner's rule, each step one fma (one rounding):
// horner(x, c0, c1, ..., cn).
inline float horner(float /*x*/, float c) { return c; }
template <class... Rest>
float horner(float x, float c0, float c1, Rest... rest) {
  return horner(x, std::fma(c0, x, c1), rest...);
}

// Cody-Waite: ln2 = hi + lo with hi's 9 bits making n * hi exact for |n| < 2^15.
inline constexpr float kLn2Hi = 0.693359375f;
inline constexpr float kLn2Lo = -2.12194440e-4f;

// e^r - 1 for |r| <= ln2 / 2: the Cephes expf polynomial without its final + 1.
inline float expm1_reduced(float r) {
  const float p = detail::horner(r, 1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                 4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f);
  return p * (r * r) + r;
}

// n = round(v / ln2), as a float (a float compare selects float lanes without mixing lane
// types) and as an int32: adding 1.5 * 2^23 rounds to an integer held in the low mantissa bits.
struct Ln2Multiple {
  float n = 0;
  int32_t n_int = 0;
};
inline Ln2Multiple nearest_ln2_multiple(float v) {
  constexpr float kRoundShift = 12582912.0f;
  const float shifted = v * 1.44269504088896341f + kRoundShift;
  return {shifted - kRoundShift,
          std::bit_cast<int32_t>(shifted) - std::bit_cast<int32_t>(kRoundShift)};
}

// m 2^n with 2^n as two factors in the normal range (|n| <= 254): the first product is exact,
// the second rounds a subnormal result once and overflows to inf past the largest float.
inline float times_pow2(float m, int32_t n) {
  const int32_t half = n >> 1;
  return m * pow2_f32(half) * pow2_f32(n - half);
}

// e^x = m 2^n for x within [-104, 89] (or NaN): m = e^r with r = x - n ln2, |r| <= ln2 / 2,
// by the Cephes expf polynomial.
struct ExpParts {
  float m_minus_1 = 0;  // e^r - 1
  Ln2Multiple n;
  float m() const { return m_minus_1 + 1.0f; }
};
inline ExpParts exp_parts(float x) {
  const Ln2Multiple n = nearest_ln2_multiple(x);
  float r = x - n.n * kLn2Hi;
  r = r - n.n * kLn2Lo;
  return {expm1_reduced(r), n};
}

}  // namespace detail

// e^x: x = n ln2 + r with |r| <= ln2 / 2, then e^r by the Cephes expf polynomial.
inline float exp_f32(float x) {
  // Past these bounds e^x rounds to 0 or is +inf: such a lane computes e^0 and takes the limit
  // after, so its arithmetic neither underflows nor overflows (a multiply that underflows costs
  // a microcode assist on some CPUs: on Zen 3, kernel/softmax_causal took 1.9x as long when
  // those lanes computed e^-104). From -104 to -87.3 the result is subnormal, computed. A NaN
  // passes every comparison unchanged. (The selects are unnested: a compare that only runs on one
  // side of another would be a branch the vectorizer cannot remove.)
  const bool underflows = x < -104.0f;
  const bool overflows = x > 89.0f;
  const float in_range = underflows || overflows ? 0.0f : x;
  const detail::ExpParts e = detail::exp_parts(in_range);
  const float result = detail::times_pow2(e.m(), e.n.n_int);  // inf past 88.72
  const float above_min = underflows ? 0.0f : result;
  return overflows ? kInf : above_min;
}

// e^x for x in [-87, 88], where e^x is a normal float (and NaN): exp_f32 without its bounds
// and with 2^n in one factor. Both products of exp_f32 are exact there, so the bits are the
// same.
inline float exp_normal_range_f32(float x) {
  const detail::ExpParts e = detail::exp_parts(x);
  return e.m() * pow2_f32(e.n.n_int);
}

// e^x - 1 without the cancellation of exp_f32(x) - 1 near 0: with the reduction of exp_f32,
// e^r - 1 is its polynomial without the final + 1. When n = 0 (|x| < ln2 / 2) that is the
// result. Otherwise the result is exp_f32(x) - 1 (the same operations in the same order):
// there |e^x - 1| >= 0.29, so the subtraction amplifies e^x's error at most 3.4 times.
inline float expm1_f32(float x) {
  const float above_min = x < -104.0f ? -104.0f : x;
  const float xc = above_min > 89.0f ? 89.0f : above_min;
  const detail::ExpParts e = detail::exp_parts(xc);
  const float exp_x = detail::times_pow2(e.m(), e.n.n_int);
  const float small = x == 0.0f ? x : e.m_minus_1;  // expm1(-0) = -0; the reduction gives +0
  return e.n.n == 0.0f ? small : exp_x - 1.0f;
}

// Natural log: x = m 2^e with m in [sqrt(1/2), sqrt(2)), log x = e ln2 + log1p(m - 1) by the
// Cephes logf polynomial.
inline float log_f32(float x) {
  // Subnormal inputs are scaled into the normal range (zero and negatives are fixed below).
  // The exponent is kept in float: selects on float compares that feed integer arithmetic
  // would mix lane widths the vectorizer does not handle.
  const bool subnormal = x < std::numeric_limits<float>::min();
  const float scaled = subnormal ? x * 8388608.0f : x;
  const float bias = subnormal ? 150.0f : 127.0f;  // plus the 23 of the scaling
  const int32_t bits = std::bit_cast<int32_t>(scaled);
  const float m1 = std::bit_cast<float>((bits & 0x007fffff) | 0x3f800000);  // in [1, 2)
  const bool upper = m1 > 1.41421356f;
  const float ef = static_cast<float>((bits >> 23) & 0xff) - bias + (upper ? 1.0f : 0.0f);
  const float f = (upper ? m1 * 0.5f : m1) - 1.0f;  // exact (Sterbenz)
  const float z = f * f;
  const float p = detail::horner(f, 7.0376836292e-2f, -1.1514610310e-1f, 1.1676998740e-1f,
                                 -1.2420140846e-1f, 1.4249322787e-1f, -1.6668057665e-1f,
                                 2.0000714765e-1f, -2.4999993993e-1f, 3.3333331174e-1f);
  float y = p * f * z;
  y = y + ef * -2.12194440e-4f;
  y = y - 0.5f * z;
  float result = f + y;
  result = result + ef * 0.693359375f;
  result = x == kInf ? kInf : result;
  result = x == 0.0f ? -kInf : result;
  return x >= 0.0f ? result : kNaN;  // negative or NaN
}

// log(1 + x) for x >= -1 (NaN below). u = 1 + x rounds, but log(u) * x / (u - 1) cancels
// that rounding to first order (Goldberg's method), so the result keeps log_f32's accuracy
// for tiny x, where u == 1 and log1p(x) = x to f32 precision.
inline float log1p_f32(float x) {
  const float u = 1.0f + x;
  const float d = u - 1.0f;
  const float scaled = log_f32(u) * (x / d);
  const float general = u == kInf ? kInf : scaled;  // inf / inf would be NaN
  return d == 0.0f ? x : general;
}

// tanh: an odd polynomial below 0.625 (Cephes tanhf), else (1 - e) / (1 + e) with
// e = e^{-2|x|}, which never overflows. Past |x| = 10 tanh rounds to 1: the clamp keeps e
// a normal float (and inf finite).
inline float tanh_f32(float x) {
  const float ax = std::fabs(x);
  const float z = x * x;
  const float p = detail::horner(z, -5.70498872745e-3f, 2.06390887954e-2f, -5.37397155531e-2f,
                                 1.33314422036e-1f, -3.33332819422e-1f);
  const float small = std::copysign(x + x * z * p, x);  // keeps tanh(-0) = -0
  const float two_ax = 2.0f * ax;
  const float e = exp_normal_range_f32(-(two_ax > 20.0f ? 20.0f : two_ax));
  const float large = std::copysign((1.0f - e) / (1.0f + e), x);
  return ax < 0.625f ? small : large;
}

// 1 / (1 + e^-x), from e = e^{-|x|} so the exponential never overflows; for x < 0 the form
// e / (1 + e) keeps full precision down to the subnormal range.
inline float sigmoid_f32(float x) {
  const float e = exp_f32(-std::fabs(x));
  const float result = (x >= 0.0f ? 1.0f : e) / (1.0f + e);
  // A NaN comes back as itself: which operand's NaN a division passes on is not the same in
  // every ISA's code.
  return x == x ? result : x;
}

namespace detail {

// erf(x) / x - 1 as a polynomial in s = x^2 on [0, 1] (Chebyshev fit, relative error of
// erf 1.3e-9). Without the 1, the leading coefficient 2/sqrt(pi) would carry a rounding
// error of half an ULP of [1, 2), a full ULP of erf near 1.
inline float erf_over_x_minus_1(float s) {
  const float p = detail::horner(s, 7.87587487e-05f, -0.00080168643f, 0.00518908724f,
                                 -0.0268542115f, 0.112835944f, -0.37612626f, 0.128379166f);
  return p;
}

// e^{z^2} erfc(z) for z in [1, 4], as t W(t) with t = 2 / (2 + z) in [1/3, 2/3] and W a
// degree-6 Chebyshev fit (relative error 9e-9).
inline float scaled_erfc(float z) {
  const float t = 2.0f / (2.0f + z);
  const float w = detail::horner(t, 0.0948963463f, -0.385767639f, 0.43652758f, -0.000143908866f,
                                 0.297612697f, 0.274151564f, 0.282619894f);
  return t * w;
}

// e^v for a double v at f32 accuracy. Rounding v to f32 first would cost a relative error of
// |v| 2^-24; instead v = hi + lo with hi = f32(v), and e^lo = 1 + lo. Below -80, where e^hi
// would be an f32 subnormal with few bits left, v is shifted by 64 and the result scaled
// back by e^-64 in double.
inline double exp_of_double(double v) {
  const bool deep = v < -80.0;
  const double shifted = deep ? v + 64.0 : v;
  const float hi = static_cast<float>(shifted);
  const double e = static_cast<double>(exp_f32(hi)) * (1.0 + (shifted - static_cast<double>(hi)));
  return deep ? e * 1.603810890548638e-28 : e;
}

}  // namespace detail

// erf: x + x P(x^2) below 1, else 1 - e^{-x^2} erfcx(|x|). Past 4, erf rounds to 1; the clamp
// also keeps inf finite, and -x^2 within [-16, -1], where e^{-x^2} is a normal float: so
// exp_normal_range_f32 (exp_f32's bits without its bounds). The rounding of x^2 hardly matters
// here: its effect is scaled by erfc(x), at most 0.16.
inline float erf_f32(float x) {
  const float ax = std::fabs(x);
  const float small = x + x * detail::erf_over_x_minus_1(x * x);
  const float z = ax > 4.0f ? 4.0f : ax;
  const float large =
      std::copysign(1.0f - exp_normal_range_f32(-(z * z)) * detail::scaled_erfc(z), x);
  return ax < 1.0f ? small : large;
}

// GELU, approximate="none": x Phi(x) with Phi the standard normal CDF, all in f32. With
// a = |x| and M(a) = a Phi(-a) e^{a^2/2} (smooth, between 0 and 1/sqrt(2 pi)), x Phi(-|x|) =
// e^{-a^2/2} M(a): the result is x - e^{-a^2/2} M(a) for x > 0 and -e^{-a^2/2} M(a) below.
// Neither form cancels: the first subtracts at most half of x.
//   M: three polynomials, all evaluated and one selected (no branch), each Horner-stable:
//      a in [0, 1/2): a (1/2 + a H(a)); [1/2, 7/4): G(a - 9/8); [7/4, 14.5]: F(1 / (1 + a) -
//      m) (Chebyshev fits, f32 coefficients; the division's rounding is the largest error
//      there, amplified at most ~0.6 times from 7/4 up).
//   e^{-a^2/2}: an error d in a^2 is a relative error d/2 of the result, so a^2 = hi + lo
//      exactly (the rounded square and its error, fma(a, a, -a^2)) and the exponential's
//      reduction takes both: r = (hi - n ln2_hi) + lo - n ln2_lo. The product with M is
//      M + M (e^r - 1), scaled by 2^n last so that a subnormal result rounds once.
// Past 14.5 the result is x (above) or under half the smallest subnormal (below): clamping
// keeps inf finite inside (+inf gives inf - 0, -inf gives -0). NaN passes every select.
inline float gelu_f32(float x) {
  const float above_min = x < -14.5f ? -14.5f : x;
  const float a = std::fabs(above_min > 14.5f ? 14.5f : above_min);
  // a in [0, 1/2): M = a (1/2 + a H(a)).
  const float m_small =
      a * detail::horner(a, -0.00213942956f, 0.00939806178f, -0.0262675323f, 0.0624442175f,
                         -0.132976189f, 0.249999866f, -0.398942292f, 0.5f);
  // a in [1/2, 7/4): M = G(a - 9/8).
  const float u = a - 1.125f;
  const float g = detail::horner(u, 4.86997997e-05f, -0.000170572763f, 0.000519808033f,
                                 -0.00161371578f, 0.00468621403f, -0.0124843214f, 0.02997954f,
                                 -0.0627463311f, 0.107018866f, 0.275997818f);
  // a in [7/4, 14.5]: M = F(t - m) with t = 1 / (1 + a) in [0.0645, 0.364].
  const float w = 1.0f / (1.0f + a) - 0.214076251f;
  const float f =
      detail::horner(w, -19.2141533f, -7.75412416f, 9.14951611f, -1.35265529f, -1.91296792f,
                     1.22495627f, 0.244082227f, -0.637326479f, -0.248367846f, 0.37427339f);
  const float m_large = a < 1.75f ? g : f;
  const float m = a < 0.5f ? m_small : m_large;
  // -a^2/2 = hi + lo exactly: an fma gives the square's rounding error.
  const float square = a * a;
  const float hi = -0.5f * square;
  const float lo = -0.5f * std::fma(a, a, -square);
  // e^{hi + lo} = 2^n e^r as in exp_f32; hi - n ln2_hi is exact (|n| <= 152).
  const detail::Ln2Multiple n = detail::nearest_ln2_multiple(hi + lo);
  float r = hi - n.n * detail::kLn2Hi;
  r = r + lo;
  r = r - n.n * detail::kLn2Lo;
  const float scaled = m + m * detail::expm1_reduced(r);
  // |x| Phi(-|x|): n >= -152, so only the last product of times_pow2 rounds.
  const float tail = detail::times_pow2(scaled, n.n_int);
  return x > 0.0f ? x - tail : std::copysign(tail, x);  // copysign: gelu(+-0) = +-0
}

// GELU, approximate="tanh": x (1 + tanh(u)) / 2 with u = sqrt(2/pi) (x + 0.044715 x^3),
// computed as x sigmoid(2u): the same value without the cancellation in 1 + tanh(u) for
// u < 0. The sigmoid's argument is formed in double: its rounding error would be amplified
// |2u| times.
inline float gelu_tanh_f32(float x) {
  // Below -12 the result underflows to -0; clamping keeps -inf from giving -inf * 0. Past 100
  // the sigmoid is 1 in double.
  const double xc = x < -12.0f ? -12.0f : x;
  const double raw = xc * (1.5957691216057308 + 0.07135481627260025 * (xc * xc));
  const double two_u = raw > 100.0 ? 100.0 : raw;
  const double e = detail::exp_of_double(-std::fabs(two_u));
  return static_cast<float>(xc * ((two_u >= 0.0 ? 1.0 : e) / (1.0 + e)));
}

}  // namespace volta::cpu::vmath
