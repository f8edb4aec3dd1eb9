#pragma once
// The CPU backend's f32 math (engine/backends/cpu/kernels/vector_math.h) on the device, for
// cross-backend exactness: the same polynomials, the same constants, the same operations in
// the same order. The CPU builds with -ffp-contract=off and fuses exactly the multiply-adds
// it writes as std::fma (the Horner steps, GELU's exact square); here every arithmetic step is
// an explicitly rounded intrinsic (__fmul_rn, __fadd_rn, __fmaf_rn for those fmas), which
// nvcc never contracts into an FMA whatever the flags (and the kernels also build with
// -fmad=false). Denormals are kept (-ftz=false), as on the CPU. When a CPU function changes,
// this file changes with it: the device tests compare every bit (tests/cuda_device_test.cpp).

#include <cstdint>

namespace volta::cuda::dmath {

__device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ float div(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ float fma(float a, float b, float c) { return __fmaf_rn(a, b, c); }

// Sign-bit operations, as x86's andps / xorps do them: NaN payloads pass unchanged.
__device__ __forceinline__ float abs_bits(float x) {
  return __uint_as_float(__float_as_uint(x) & 0x7fffffffu);
}
__device__ __forceinline__ float neg_bits(float x) {
  return __uint_as_float(__float_as_uint(x) ^ 0x80000000u);
}
__device__ __forceinline__ float copysign_bits(float magnitude, float sign) {
  return __uint_as_float((__float_as_uint(magnitude) & 0x7fffffffu) |
                         (__float_as_uint(sign) & 0x80000000u));
}

__device__ __forceinline__ float kInf() { return __uint_as_float(0x7f800000u); }
// std::numeric_limits<float>::quiet_NaN(), the constant the CPU's log returns.
__device__ __forceinline__ float kQuietNaN() { return __uint_as_float(0x7fc00000u); }

// 2^n for n in [-126, 127], built from its bits (wrapping like the CPU's uint32_t cast).
__device__ __forceinline__ float pow2_f32(int32_t n) {
  return __uint_as_float((static_cast<uint32_t>(n) + 127u) << 23);
}

namespace detail {

constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;

// c0 x^n + c1 x^(n-1) + ... + cn by Horner's rule, each step one fma, as on the CPU.
__device__ __forceinline__ float horner(float /*x*/, float c) { return c; }
template <class... Rest>
__device__ __forceinline__ float horner(float x, float c0, float c1, Rest... rest) {
  return horner(x, fma(c0, x, c1), rest...);
}

__device__ __forceinline__ float expm1_reduced(float r) {
  const float p = detail::horner(r, 1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                 4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f);
  return add(mul(p, mul(r, r)), r);
}

struct Ln2Multiple {
  float n;
  int32_t n_int;
};
__device__ __forceinline__ Ln2Multiple nearest_ln2_multiple(float v) {
  constexpr float kRoundShift = 12582912.0f;
  const float shifted = add(mul(v, 1.44269504088896341f), kRoundShift);
  return {sub(shifted, kRoundShift),
          static_cast<int32_t>(__float_as_uint(shifted) - __float_as_uint(kRoundShift))};
}

__device__ __forceinline__ float times_pow2(float m, int32_t n) {
  const int32_t half = n >> 1;
  return mul(mul(m, pow2_f32(half)), pow2_f32(n - half));
}

struct ExpParts {
  float m_minus_1;
  Ln2Multiple n;
  __device__ float m() const { return add(m_minus_1, 1.0f); }
};
__device__ __forceinline__ ExpParts exp_parts(float x) {
  const Ln2Multiple n = nearest_ln2_multiple(x);
  float r = sub(x, mul(n.n, kLn2Hi));
  r = sub(r, mul(n.n, kLn2Lo));
  return {expm1_reduced(r), n};
}

}  // namespace detail

__device__ __forceinline__ float exp_f32(float x) {
  const bool underflows = x < -104.0f;
  const bool overflows = x > 89.0f;
  const float in_range = underflows || overflows ? 0.0f : x;
  const detail::ExpParts e = detail::exp_parts(in_range);
  const float result = detail::times_pow2(e.m(), e.n.n_int);
  const float above_min = underflows ? 0.0f : result;
  return overflows ? kInf() : above_min;
}

__device__ __forceinline__ float exp_normal_range_f32(float x) {
  const detail::ExpParts e = detail::exp_parts(x);
  return mul(e.m(), pow2_f32(e.n.n_int));
}

__device__ __forceinline__ float log_f32(float x) {
  constexpr float kFloatMin = 1.17549435e-38f;  // std::numeric_limits<float>::min()
  const bool subnormal = x < kFloatMin;
  const float scaled = subnormal ? mul(x, 8388608.0f) : x;
  const float bias = subnormal ? 150.0f : 127.0f;
  const auto bits = static_cast<int32_t>(__float_as_uint(scaled));
  const float m1 = __uint_as_float((static_cast<uint32_t>(bits) & 0x007fffffu) | 0x3f800000u);
  const bool upper = m1 > 1.41421356f;
  const float ef = add(sub(static_cast<float>((bits >> 23) & 0xff), bias), upper ? 1.0f : 0.0f);
  const float f = sub(upper ? mul(m1, 0.5f) : m1, 1.0f);
  const float z = mul(f, f);
  const float p = detail::horner(f, 7.0376836292e-2f, -1.1514610310e-1f, 1.1676998740e-1f,
                                 -1.2420140846e-1f, 1.4249322787e-1f, -1.6668057665e-1f,
                                 2.0000714765e-1f, -2.4999993993e-1f, 3.3333331174e-1f);
  float y = mul(mul(p, f), z);
  y = add(y, mul(ef, -2.12194440e-4f));
  y = sub(y, mul(0.5f, z));
  float result = add(f, y);
  result = add(result, mul(ef, 0.693359375f));
  result = x == kInf() ? kInf() : result;
  result = x == 0.0f ? -kInf() : result;
  return x >= 0.0f ? result : kQuietNaN();
}

__device__ __forceinline__ float tanh_f32(float x) {
  const float ax = abs_bits(x);
  const float z = mul(x, x);
  const float p = detail::horner(z, -5.70498872745e-3f, 2.06390887954e-2f, -5.37397155531e-2f,
                                 1.33314422036e-1f, -3.33332819422e-1f);
  const float small = copysign_bits(add(x, mul(mul(x, z), p)), x);
  const float two_ax = mul(2.0f, ax);
  const float e = exp_normal_range_f32(neg_bits(two_ax > 20.0f ? 20.0f : two_ax));
  const float large = copysign_bits(div(sub(1.0f, e), add(1.0f, e)), x);
  return ax < 0.625f ? small : large;
}

__device__ __forceinline__ float sigmoid_f32(float x) {
  const float e = exp_f32(neg_bits(abs_bits(x)));
  const float result = div(x >= 0.0f ? 1.0f : e, add(1.0f, e));
  return x == x ? result : x;
}

__device__ __forceinline__ float expm1_f32(float x) {
  const float above_min = x < -104.0f ? -104.0f : x;
  const float xc = above_min > 89.0f ? 89.0f : above_min;
  const detail::ExpParts e = detail::exp_parts(xc);
  const float exp_x = detail::times_pow2(e.m(), e.n.n_int);
  const float small = x == 0.0f ? x : e.m_minus_1;
  return e.n.n == 0.0f ? small : sub(exp_x, 1.0f);
}

__device__ __forceinline__ float log1p_f32(float x) {
  const float u = add(1.0f, x);
  const float d = sub(u, 1.0f);
  const float scaled = mul(log_f32(u), div(x, d));
  const float general = u == kInf() ? kInf() : scaled;
  return d == 0.0f ? x : general;
}

namespace detail {

__device__ __forceinline__ float erf_over_x_minus_1(float s) {
  const float p = detail::horner(s, 7.87587487e-05f, -0.00080168643f, 0.00518908724f,
                                 -0.0268542115f, 0.112835944f, -0.37612626f, 0.128379166f);
  return p;
}

__device__ __forceinline__ float scaled_erfc(float z) {
  const float t = div(2.0f, add(2.0f, z));
  const float w = detail::horner(t, 0.0948963463f, -0.385767639f, 0.43652758f, -0.000143908866f,
                                 0.297612697f, 0.274151564f, 0.282619894f);
  return mul(t, w);
}

// The CPU's exp_of_double: double steps rounded one by one (__dadd_rn, __dmul_rn).
__device__ __forceinline__ double exp_of_double(double v) {
  const bool deep = v < -80.0;
  const double shifted = deep ? __dadd_rn(v, 64.0) : v;
  const float hi = __double2float_rn(shifted);
  const double e = __dmul_rn(static_cast<double>(exp_f32(hi)),
                             __dadd_rn(1.0, __dsub_rn(shifted, static_cast<double>(hi))));
  return deep ? __dmul_rn(e, 1.603810890548638e-28) : e;
}

}  // namespace detail

__device__ __forceinline__ float erf_f32(float x) {
  const float ax = abs_bits(x);
  const float small = add(x, mul(x, detail::erf_over_x_minus_1(mul(x, x))));
  const float z = ax > 4.0f ? 4.0f : ax;
  const float large =
      copysign_bits(sub(1.0f, mul(exp_f32(neg_bits(mul(z, z))), detail::scaled_erfc(z))), x);
  return ax < 1.0f ? small : large;
}

__device__ __forceinline__ float gelu_f32(float x) {
  const float above_min = x < -14.5f ? -14.5f : x;
  const float a = abs_bits(above_min > 14.5f ? 14.5f : above_min);
  // The CPU evaluates the three pieces and selects one; computing only the selected one gives
  // the same bits for less arithmetic (gelu is compute-bound on a GPU).
  float m;
  if (a < 0.5f) {
    m = mul(a, detail::horner(a, -0.00213942956f, 0.00939806178f, -0.0262675323f, 0.0624442175f,
                              -0.132976189f, 0.249999866f, -0.398942292f, 0.5f));
  } else if (a < 1.75f) {
    const float u = sub(a, 1.125f);
    m = detail::horner(u, 4.86997997e-05f, -0.000170572763f, 0.000519808033f, -0.00161371578f,
                       0.00468621403f, -0.0124843214f, 0.02997954f, -0.0627463311f, 0.107018866f,
                       0.275997818f);
  } else {
    const float w = sub(div(1.0f, add(1.0f, a)), 0.214076251f);
    m = detail::horner(w, -19.2141533f, -7.75412416f, 9.14951611f, -1.35265529f, -1.91296792f,
                       1.22495627f, 0.244082227f, -0.637326479f, -0.248367846f, 0.37427339f);
  }
  const float square = mul(a, a);
  const float hi = mul(-0.5f, square);
  const float lo = mul(-0.5f, fma(a, a, -square));
  const detail::Ln2Multiple n = detail::nearest_ln2_multiple(add(hi, lo));
  float r = sub(hi, mul(n.n, detail::kLn2Hi));
  r = add(r, lo);
  r = sub(r, mul(n.n, detail::kLn2Lo));
  const float scaled = add(m, mul(m, detail::expm1_reduced(r)));
  const float tail = detail::times_pow2(scaled, n.n_int);
  return x > 0.0f ? sub(x, tail) : copysign_bits(tail, x);
}

__device__ __forceinline__ float gelu_tanh_f32(float x) {
  const double xc = x < -12.0f ? -12.0f : x;
  const double raw = __dmul_rn(
      xc, __dadd_rn(1.5957691216057308, __dmul_rn(0.07135481627260025, __dmul_rn(xc, xc))));
  const double two_u = raw > 100.0 ? 100.0 : raw;
  // fabs as the CPU's andpd: a sign-bit clear.
  const double abs_two_u = __longlong_as_double(__double_as_longlong(two_u) & 0x7fffffffffffffffll);
  const double e = detail::exp_of_double(-abs_two_u);
  return __double2float_rn(__dmul_rn(xc, __ddiv_rn(two_u >= 0.0 ? 1.0 : e, __dadd_rn(1.0, e))));
}

// Nearest integer, halves to even, as the CPU's round_half_even: adding and removing 2^23
// rounds to nearest even; integral values, inf and NaN come back unchanged.
__device__ __forceinline__ float round_half_even_f32(float x) {
  constexpr float kIntegral = 8388608.0f;
  const float ax = abs_bits(x);
  const float rounded = copysign_bits(sub(add(ax, kIntegral), kIntegral), x);
  return ax < kIntegral ? rounded : x;
}

}  // namespace volta::cuda::dmath
