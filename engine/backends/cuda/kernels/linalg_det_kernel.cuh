#pragma once
// Det of one matrix (kernels/linalg_det.cu launches one thread per matrix): the CPU's LU with
// partial pivoting (cpu/kernels/linalg_det.cpp) operation for operation, in the input type:
// column k's pivot is the first row i >= k of largest |a[i][k]|, a swap flips the sign, a zero
// pivot skips the column, rows below take a[i][j] -= (a[i][k] / a[k][k]) * a[k][j] (a multiply
// then a subtract: the .cu files build with -fmad=false), the determinant is sign * the
// diagonal's product in index order. A matrix holding NaN gives the CPU's quiet NaN. Plain CUDA
// C++, so that a host test (tests/cuda_det_emulation_test.cpp) also runs it.

#include <cstdint>
#include <cstring>

namespace volta::cuda::det_detail {

template <class T>
__device__ __forceinline__ T abs_of(T v) {
  return v < T{0} ? -v : v;  // |v| for every non-NaN v (-0 gives +0, as fabs)
}

template <class T>
__device__ __forceinline__ T quiet_nan() {
  T v;
  if constexpr (sizeof(T) == 4) {
    const uint32_t bits = 0x7fc00000u;
    memcpy(&v, &bits, sizeof v);
  } else {
    const uint64_t bits = 0x7ff8000000000000ull;
    memcpy(&v, &bits, sizeof v);
  }
  return v;
}

// The determinant of the m x m row-major matrix in `a` (scratch: overwritten).
template <class T>
__device__ __forceinline__ T lu_determinant(T* a, int64_t m) {
  for (int64_t i = 0; i < m * m; ++i) {
    if (a[i] != a[i]) return quiet_nan<T>();
  }
  bool negative = false;
  for (int64_t k = 0; k < m; ++k) {
    int64_t pivot = k;
    T best = abs_of(a[k * m + k]);
    for (int64_t i = k + 1; i < m; ++i) {
      const T v = abs_of(a[i * m + k]);
      if (v > best) {
        best = v;
        pivot = i;
      }
    }
    if (pivot != k) {
      for (int64_t j = 0; j < m; ++j) {
        const T t = a[k * m + j];
        a[k * m + j] = a[pivot * m + j];
        a[pivot * m + j] = t;
      }
      negative = !negative;
    }
    const T diagonal = a[k * m + k];
    if (diagonal == T{0}) continue;
    const T* pivot_row = a + k * m;
    for (int64_t i = k + 1; i < m; ++i) {
      T* row = a + i * m;
      const T factor = row[k] / diagonal;
      for (int64_t j = k + 1; j < m; ++j) row[j] -= factor * pivot_row[j];
    }
  }
  T det{1};
  for (int64_t k = 0; k < m; ++k) det *= a[k * m + k];
  return negative ? -det : det;
}

}  // namespace volta::cuda::det_detail
