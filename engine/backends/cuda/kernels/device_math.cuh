#pragma once
// The CPU backend's f32 math (engine/backends/cpu/kernels/vector_math.h) on the device, for
// cross-backend exactness: the same polynomials, the same constants, the same operations in
// the same order. The CPU builds with -ffp-contract=off, so it never fuses a multiply-add;
// here every arithmetic step is an explicitly rounded intrinsic (__fmul_rn, __fadd_rn, ...),
// which nvcc never contracts into an FMA whatever the flags (and the kernels also build with
// -fmad=false). Denormals are kept (-ftz=false), as on the CPU. When a CPU function changes,
// this file changes with it: the device tests compare every bit (tests/cuda_device_test.cpp).

#include <cstdint>

namespace volta::cuda::dmath {

__device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ float div(float a, float b) { return __fdiv_rn(a, b); }

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

__device__ __forceinline__ float expm1_reduced(float r) {
  float p = 1.9875691500e-4f;
  p = add(mul(p, r), 1.3981999507e-3f);
  p = add(mul(p, r), 8.3334519073e-3f);
  p = add(mul(p, r), 4.1665795894e-2f);
  p = add(mul(p, r), 1.6666665459e-1f);
  p = add(mul(p, r), 5.0000001201e-1f);
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
  const float above_min = x < -104.0f ? -104.0f : x;
  const float xc = above_min > 89.0f ? 89.0f : above_min;
  const detail::ExpParts e = detail::exp_parts(xc);
  return detail::times_pow2(e.m(), e.n.n_int);
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
  float p = 7.0376836292e-2f;
  p = sub(mul(p, f), 1.1514610310e-1f);
  p = add(mul(p, f), 1.1676998740e-1f);
  p = sub(mul(p, f), 1.2420140846e-1f);
  p = add(mul(p, f), 1.4249322787e-1f);
  p = sub(mul(p, f), 1.6668057665e-1f);
  p = add(mul(p, f), 2.0000714765e-1f);
  p = sub(mul(p, f), 2.4999993993e-1f);
  p = add(mul(p, f), 3.3333331174e-1f);
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
  float p = -5.70498872745e-3f;
  p = add(mul(p, z), 2.06390887954e-2f);
  p = sub(mul(p, z), 5.37397155531e-2f);
  p = add(mul(p, z), 1.33314422036e-1f);
  p = sub(mul(p, z), 3.33332819422e-1f);
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

}  // namespace volta::cuda::dmath
