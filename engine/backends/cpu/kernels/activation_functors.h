#pragma once
// Activation functors the CPU backend computes in more than one place: the Relu and Gelu
// kernels (activation.cpp) and FusedMatMul's epilogue (linalg_fused_matmul.cpp). One
// definition, so a fused activation gives the same bits as the standalone kernel.

#include <cmath>
#include <numbers>
#include <string_view>
#include <type_traits>

#include "elementwise_common.h"
#include "vector_math.h"

namespace volta::cpu {

// f64 sigmoid in the same overflow-free form as vmath::sigmoid_f32.
inline double sigmoid_f64(double x) {
  const double e = std::exp(-std::fabs(x));
  return (x >= 0.0 ? 1.0 : e) / (1.0 + e);
}

// max(x, 0), keeping NaN (and -0).
template <class T>
struct Relu {
  T operator()(T x) const { return x < T{0} ? T{0} : x; }
};
template <class T>
struct Gelu {
  static constexpr std::string_view kImpl = kF32VectorF64Libm<T>;
  T operator()(T x) const {
    if constexpr (kIsF32<T>) {
      return vmath::gelu_f32(x);
    } else {
      // Below -40, x * Phi(x) underflows to -0; the clamp avoids -inf * 0 at -inf.
      const double xc = x < -40.0 ? -40.0 : x;
      return 0.5 * xc * std::erfc(-xc * std::numbers::sqrt2 / 2.0);
    }
  }
};
template <class T>
struct GeluTanh {
  static constexpr std::string_view kImpl = kF32VectorF64Libm<T>;
  T operator()(T x) const {
    if constexpr (kIsF32<T>) {
      return vmath::gelu_tanh_f32(x);
    } else {
      // x * sigmoid(2u), as in vmath::gelu_tanh_f32; below -30 the result underflows to -0.
      const double xc = x < -30.0 ? -30.0 : x;
      const double two_u = 2.0 * std::sqrt(2.0 / std::numbers::pi) * (xc + 0.044715 * xc * xc * xc);
      return xc * sigmoid_f64(two_u);
    }
  }
};

}  // namespace volta::cpu
