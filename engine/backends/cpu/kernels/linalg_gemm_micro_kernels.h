#pragma once
// The GEMM micro-kernels (see linalg_gemm.h) and their blocking: one register-tiled kernel per ISA
// and element type, each element one running FMA sum over K in order. Internal to the GEMM
// core: linalg_gemm.cpp drives them, linalg_gemm_pack.cpp packs their panels.

#include <cmath>
#include <cstdint>

#include "linalg_gemm.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define VOLTA_GEMM_X86 1
#else
#define VOLTA_GEMM_X86 0
#endif

namespace volta::cpu::gemm_detail {

// The largest register tile of any micro-kernel (f32 AVX-512, 14 x 32): edge tiles are staged
// in a local tile this big.
constexpr int kMaxMicroTileElements = 14 * 32;
// Bytes in a cache line: the unit of a micro-kernel's software prefetch.
constexpr int64_t kCacheLine = 64;

// ---- Micro-kernels ---------------------------------------------------------------------------

// Portable C++ for CPUs without a SIMD kernel. It rounds exactly as the SIMD kernels do, so a
// product has the same bits on every ISA (and on the CUDA backend): each element is one
// running fused multiply-add over p in order, scaled by alpha, then fma(beta, c, scaled). On a
// CPU without FMA hardware std::fma is slow, but correctly rounded.
template <class T, int MR, int NR>
void generic_micro_kernel(int64_t kc, const T* a, int64_t a_row_stride, const T* b, T* c,
                          int64_t ldc, GemmEpilogue<T> epilogue, const T* /*prefetch*/) {
  T acc[MR][NR] = {};
  for (int64_t p = 0; p < kc; ++p, b += NR) {
    for (int i = 0; i < MR; ++i) {
      const T a_value = a_row_stride == 0 ? a[p * MR + i] : a[i * a_row_stride + p];
      for (int j = 0; j < NR; ++j) acc[i][j] = std::fma(a_value, b[j], acc[i][j]);
    }
  }
  for (int i = 0; i < MR; ++i) {
    T* row = c + i * ldc;
    for (int j = 0; j < NR; ++j) {
      const T scaled = epilogue.alpha * acc[i][j];
      row[j] = epilogue.load_c ? std::fma(epilogue.beta, row[j], scaled) : scaled;
    }
  }
}

constexpr int kGenericRows = 4;
constexpr int kGenericCols = 8;

#if VOLTA_GEMM_X86
#define VOLTA_AVX2_FMA __attribute__((target("avx2,fma")))
#define VOLTA_AVX512 __attribute__((target("avx512f,avx512vl,fma")))

// The AVX2 operations the micro-kernel needs, for each element type.
struct Avx2F32 {
  using Scalar = float;
  using Vec = __m256;
  static constexpr int kLanes = 8;
  VOLTA_AVX2_FMA static Vec zero() { return _mm256_setzero_ps(); }
  VOLTA_AVX2_FMA static Vec splat(float x) { return _mm256_set1_ps(x); }
  VOLTA_AVX2_FMA static Vec broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  VOLTA_AVX2_FMA static Vec load(const float* p) { return _mm256_loadu_ps(p); }
  VOLTA_AVX2_FMA static void store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
  VOLTA_AVX2_FMA static Vec mul(Vec x, Vec y) { return _mm256_mul_ps(x, y); }
  VOLTA_AVX2_FMA static Vec fmadd(Vec x, Vec y, Vec z) { return _mm256_fmadd_ps(x, y, z); }
};

struct Avx2F64 {
  using Scalar = double;
  using Vec = __m256d;
  static constexpr int kLanes = 4;
  VOLTA_AVX2_FMA static Vec zero() { return _mm256_setzero_pd(); }
  VOLTA_AVX2_FMA static Vec splat(double x) { return _mm256_set1_pd(x); }
  VOLTA_AVX2_FMA static Vec broadcast(const double* p) { return _mm256_broadcast_sd(p); }
  VOLTA_AVX2_FMA static Vec load(const double* p) { return _mm256_loadu_pd(p); }
  VOLTA_AVX2_FMA static void store(double* p, Vec v) { _mm256_storeu_pd(p, v); }
  VOLTA_AVX2_FMA static Vec mul(Vec x, Vec y) { return _mm256_mul_pd(x, y); }
  VOLTA_AVX2_FMA static Vec fmadd(Vec x, Vec y, Vec z) { return _mm256_fmadd_pd(x, y, z); }
};

// Six rows of two vectors: 12 accumulators, 2 op(B) vectors and one broadcast op(A) value
// fill the 16 ymm registers.
constexpr int kAvx2Rows = 6;
constexpr int kAvx2VectorsPerRow = 2;

template <class Ops, bool kInPlaceA>
VOLTA_AVX2_FMA inline void avx2_fma_tile(int64_t kc, const typename Ops::Scalar* a, int64_t lda,
                                         const typename Ops::Scalar* b, typename Ops::Scalar* c,
                                         int64_t ldc, GemmEpilogue<typename Ops::Scalar> epilogue) {
  using Vec = typename Ops::Vec;
  constexpr int kCols = kAvx2VectorsPerRow * Ops::kLanes;
  Vec acc[kAvx2Rows][kAvx2VectorsPerRow];
#pragma GCC unroll 6
  for (int i = 0; i < kAvx2Rows; ++i) {
#pragma GCC unroll 2
    for (int v = 0; v < kAvx2VectorsPerRow; ++v) acc[i][v] = Ops::zero();
  }
  for (int64_t p = 0; p < kc; ++p, a += kInPlaceA ? 1 : kAvx2Rows, b += kCols) {
    Vec b_row[kAvx2VectorsPerRow];
#pragma GCC unroll 2
    for (int v = 0; v < kAvx2VectorsPerRow; ++v) b_row[v] = Ops::load(b + v * Ops::kLanes);
#pragma GCC unroll 6
    for (int i = 0; i < kAvx2Rows; ++i) {
      const Vec a_value = Ops::broadcast(kInPlaceA ? a + i * lda : a + i);
#pragma GCC unroll 2
      for (int v = 0; v < kAvx2VectorsPerRow; ++v) {
        acc[i][v] = Ops::fmadd(a_value, b_row[v], acc[i][v]);
      }
    }
  }
  const Vec alpha = Ops::splat(epilogue.alpha);
  const Vec beta = Ops::splat(epilogue.beta);
#pragma GCC unroll 6
  for (int i = 0; i < kAvx2Rows; ++i) {
#pragma GCC unroll 2
    for (int v = 0; v < kAvx2VectorsPerRow; ++v) {
      typename Ops::Scalar* out = c + i * ldc + v * Ops::kLanes;
      Vec result = Ops::mul(alpha, acc[i][v]);
      if (epilogue.load_c) result = Ops::fmadd(beta, Ops::load(out), result);
      Ops::store(out, result);
    }
  }
}

template <class Ops>
VOLTA_AVX2_FMA void avx2_fma_micro_kernel(int64_t kc, const typename Ops::Scalar* a,
                                          int64_t a_row_stride, const typename Ops::Scalar* b,
                                          typename Ops::Scalar* c, int64_t ldc,
                                          GemmEpilogue<typename Ops::Scalar> epilogue,
                                          const typename Ops::Scalar* /*prefetch*/) {
  if (a_row_stride == 0) {
    avx2_fma_tile<Ops, false>(kc, a, 0, b, c, ldc, epilogue);
  } else {
    avx2_fma_tile<Ops, true>(kc, a, a_row_stride, b, c, ldc, epilogue);
  }
}

inline bool cpu_runs_avx2_fma() {
  static const bool kRuns = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return kRuns;
}

// The AVX-512 operations the micro-kernel needs, for each element type.
struct Avx512F32 {
  using Scalar = float;
  using Vec = __m512;
  static constexpr int kLanes = 16;
  VOLTA_AVX512 static Vec zero() { return _mm512_setzero_ps(); }
  VOLTA_AVX512 static Vec splat(float x) { return _mm512_set1_ps(x); }
  VOLTA_AVX512 static Vec load(const float* p) { return _mm512_loadu_ps(p); }
  VOLTA_AVX512 static void store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
  VOLTA_AVX512 static Vec mul(Vec x, Vec y) { return _mm512_mul_ps(x, y); }
  VOLTA_AVX512 static Vec fmadd(Vec x, Vec y, Vec z) { return _mm512_fmadd_ps(x, y, z); }
};

struct Avx512F64 {
  using Scalar = double;
  using Vec = __m512d;
  static constexpr int kLanes = 8;
  VOLTA_AVX512 static Vec zero() { return _mm512_setzero_pd(); }
  VOLTA_AVX512 static Vec splat(double x) { return _mm512_set1_pd(x); }
  VOLTA_AVX512 static Vec load(const double* p) { return _mm512_loadu_pd(p); }
  VOLTA_AVX512 static void store(double* p, Vec v) { _mm512_storeu_pd(p, v); }
  VOLTA_AVX512 static Vec mul(Vec x, Vec y) { return _mm512_mul_pd(x, y); }
  VOLTA_AVX512 static Vec fmadd(Vec x, Vec y, Vec z) { return _mm512_fmadd_pd(x, y, z); }
};

// Fourteen rows of two vectors: 28 accumulators, 2 op(B) vectors and one broadcast op(A)
// value take 31 of the 32 zmm registers. Two FMA pipes of latency 4 need 8 independent sums in
// flight; 28 leave room for the loads.
constexpr int kAvx512Rows = 14;
constexpr int kAvx512VectorsPerRow = 2;
// The narrow companion, for products at most one vector wide (attention's P V with a head of
// 16, f32): sixteen rows of one vector, rather than half of every 14 x 32 tile thrown away.
constexpr int kAvx512NarrowRows = 16;
constexpr int kAvx512NarrowVectorsPerRow = 1;

template <class Ops, int kRows, int kVectorsPerRow, bool kInPlaceA>
VOLTA_AVX512 inline void avx512_tile(int64_t kc, const typename Ops::Scalar* a, int64_t lda,
                                     const typename Ops::Scalar* b, typename Ops::Scalar* c,
                                     int64_t ldc, GemmEpilogue<typename Ops::Scalar> epilogue,
                                     const typename Ops::Scalar* prefetch) {
  using Vec = typename Ops::Vec;
  constexpr int kCols = kVectorsPerRow * Ops::kLanes;
  Vec acc[kRows][kVectorsPerRow];
#pragma GCC unroll 16
  for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 2
    for (int v = 0; v < kVectorsPerRow; ++v) {
      acc[i][v] = Ops::zero();
      // The tile of C is read and written only at the end: fetch it while the sums run.
      _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + v * Ops::kLanes), _MM_HINT_T0);
    }
  }
  // One step along K: the same instructions, in the same order, with or without the prefetch.
  const auto step = [&]() VOLTA_AVX512 __attribute__((always_inline)) {
    Vec b_row[kVectorsPerRow];
#pragma GCC unroll 2
    for (int v = 0; v < kVectorsPerRow; ++v) b_row[v] = Ops::load(b + v * Ops::kLanes);
#pragma GCC unroll 16
    for (int i = 0; i < kRows; ++i) {
      const Vec a_value = Ops::splat(kInPlaceA ? a[i * lda] : a[i]);
#pragma GCC unroll 2
      for (int v = 0; v < kVectorsPerRow; ++v) {
        acc[i][v] = Ops::fmadd(a_value, b_row[v], acc[i][v]);
      }
    }
    a += kInPlaceA ? 1 : kRows;
    b += kCols;
  };
  if (prefetch != nullptr) {
    // One line of the caller's next data per step.
    const char* next = reinterpret_cast<const char*>(prefetch);
#pragma GCC unroll 4
    for (int64_t p = 0; p < kc; ++p, next += kCacheLine) {
      _mm_prefetch(next, _MM_HINT_T0);
      step();
    }
  } else {
#pragma GCC unroll 4
    for (int64_t p = 0; p < kc; ++p) step();
  }
  const Vec alpha = Ops::splat(epilogue.alpha);
  const Vec beta = Ops::splat(epilogue.beta);
#pragma GCC unroll 16
  for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 2
    for (int v = 0; v < kVectorsPerRow; ++v) {
      typename Ops::Scalar* out = c + i * ldc + v * Ops::kLanes;
      Vec result = Ops::mul(alpha, acc[i][v]);
      if (epilogue.load_c) result = Ops::fmadd(beta, Ops::load(out), result);
      Ops::store(out, result);
    }
  }
}

template <class Ops, int kRows = kAvx512Rows, int kVectorsPerRow = kAvx512VectorsPerRow>
VOLTA_AVX512 void avx512_micro_kernel(int64_t kc, const typename Ops::Scalar* a,
                                      int64_t a_row_stride, const typename Ops::Scalar* b,
                                      typename Ops::Scalar* c, int64_t ldc,
                                      GemmEpilogue<typename Ops::Scalar> epilogue,
                                      const typename Ops::Scalar* prefetch) {
  if (a_row_stride == 0) {
    avx512_tile<Ops, kRows, kVectorsPerRow, false>(kc, a, 0, b, c, ldc, epilogue, prefetch);
  } else {
    avx512_tile<Ops, kRows, kVectorsPerRow, true>(kc, a, a_row_stride, b, c, ldc, epilogue,
                                                  prefetch);
  }
}

inline bool cpu_runs_avx512() {
  static const bool kRuns = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("fma");
  }();
  return kRuns;
}
#endif  // VOLTA_GEMM_X86

// ---- Variants --------------------------------------------------------------------------------

// Blocking: a kc x nr op(B) panel (16-64 KiB) is reused from L1/L2 while the micro-kernel
// sweeps a tile's mr-row op(A) panels, whose packed block (at most mc x kc, 64-512 KiB) stays
// in L2, as does the block of Y being summed. Tiles are at most mc rows by nc columns; op(B)
// is packed once for all the tiles below one another. The f32 AVX-512 mc (252, 18 panels) was
// measured against 126 and 504 on Zen 5 (1 MiB L2): 1024 and 2048 cubed at 1 thread went from
// 86-87 % of peak to 89-90 % (504: no better, and 512 cubed slower); mc never changes a bit.
// The f32 AVX-512 kc (512) was measured against 256, 384, 768 and 1024 at 512..2048 cubed on
// Zen 5; 896..1024 hit a cache-aliasing cliff in a kernel-only test, 256 pays for more passes
// over Y. The slice depth is part of the result (slices are folded into Y one rounding at a
// time), so every variant of one element type uses the same kc: 512 for f32, 256 for f64. That
// gives the same bits on every ISA, and lets the CUDA backend's GEMM
// (engine/backends/cuda/kernels/gemm_kernel.cuh) match them.
template <class T>
struct MicroKernels;

template <>
struct MicroKernels<float> {
  static constexpr GemmMicroKernel<float> kGeneric{
      .name = "f32_gemm_generic_4x8",
      .isa = GemmIsa::Generic,
      .mr = kGenericRows,
      .nr = kGenericCols,
      .kc = 512,
      .mc = 128,
      .nc = 512,
      .fn = &generic_micro_kernel<float, kGenericRows, kGenericCols>};
#if VOLTA_GEMM_X86
  static constexpr GemmMicroKernel<float> kAvx2Fma{.name = "f32_gemm_avx2fma_6x16",
                                                   .isa = GemmIsa::Avx2Fma,
                                                   .mr = kAvx2Rows,
                                                   .nr = kAvx2VectorsPerRow * Avx2F32::kLanes,
                                                   .kc = 512,
                                                   .mc = 168,
                                                   .nc = 1024,
                                                   .fn = &avx2_fma_micro_kernel<Avx2F32>};
  static constexpr GemmMicroKernel<float> kAvx512Narrow{
      .name = "f32_gemm_avx512_16x16",
      .isa = GemmIsa::Avx512,
      .mr = kAvx512NarrowRows,
      .nr = kAvx512NarrowVectorsPerRow * Avx512F32::kLanes,
      .kc = 512,
      .mc = 128,
      .nc = 1024,
      .fn = &avx512_micro_kernel<Avx512F32, kAvx512NarrowRows, kAvx512NarrowVectorsPerRow>};
  static constexpr GemmMicroKernel<float> kAvx512{.name = "f32_gemm_avx512_14x32",
                                                  .isa = GemmIsa::Avx512,
                                                  .mr = kAvx512Rows,
                                                  .nr = kAvx512VectorsPerRow * Avx512F32::kLanes,
                                                  .kc = 512,
                                                  .mc = 252,
                                                  .nc = 1024,
                                                  .fn = &avx512_micro_kernel<Avx512F32>,
                                                  .narrow = &kAvx512Narrow};
#endif
};

template <>
struct MicroKernels<double> {
  static constexpr GemmMicroKernel<double> kGeneric{
      .name = "f64_gemm_generic_4x8",
      .isa = GemmIsa::Generic,
      .mr = kGenericRows,
      .nr = kGenericCols,
      .kc = 256,
      .mc = 64,
      .nc = 256,
      .fn = &generic_micro_kernel<double, kGenericRows, kGenericCols>};
#if VOLTA_GEMM_X86
  static constexpr GemmMicroKernel<double> kAvx2Fma{.name = "f64_gemm_avx2fma_6x8",
                                                    .isa = GemmIsa::Avx2Fma,
                                                    .mr = kAvx2Rows,
                                                    .nr = kAvx2VectorsPerRow * Avx2F64::kLanes,
                                                    .kc = 256,
                                                    .mc = 96,
                                                    .nc = 512,
                                                    .fn = &avx2_fma_micro_kernel<Avx2F64>};
  static constexpr GemmMicroKernel<double> kAvx512Narrow{
      .name = "f64_gemm_avx512_16x8",
      .isa = GemmIsa::Avx512,
      .mr = kAvx512NarrowRows,
      .nr = kAvx512NarrowVectorsPerRow * Avx512F64::kLanes,
      .kc = 256,
      .mc = 96,
      .nc = 512,
      .fn = &avx512_micro_kernel<Avx512F64, kAvx512NarrowRows, kAvx512NarrowVectorsPerRow>};
  static constexpr GemmMicroKernel<double> kAvx512{.name = "f64_gemm_avx512_14x16",
                                                   .isa = GemmIsa::Avx512,
                                                   .mr = kAvx512Rows,
                                                   .nr = kAvx512VectorsPerRow * Avx512F64::kLanes,
                                                   .kc = 256,
                                                   .mc = 84,
                                                   .nc = 512,
                                                   .fn = &avx512_micro_kernel<Avx512F64>,
                                                   .narrow = &kAvx512Narrow};
#endif
};

// A narrow companion shares the kernel's ISA and slice depth (so its bits) and is narrower.
template <class T>
constexpr bool well_formed(const GemmMicroKernel<T>& k) {
  return k.mr * k.nr <= kMaxMicroTileElements && k.kc > 0 && k.mc % k.mr == 0 && k.nc % k.nr == 0 &&
         (k.narrow == nullptr || (k.narrow->isa == k.isa && k.narrow->kc == k.kc &&
                                  k.narrow->nr < k.nr && k.narrow->narrow == nullptr));
}
static_assert(well_formed(MicroKernels<float>::kGeneric));
static_assert(well_formed(MicroKernels<double>::kGeneric));
#if VOLTA_GEMM_X86
static_assert(well_formed(MicroKernels<float>::kAvx2Fma));
static_assert(well_formed(MicroKernels<double>::kAvx2Fma));
static_assert(well_formed(MicroKernels<float>::kAvx512));
static_assert(well_formed(MicroKernels<double>::kAvx512));
static_assert(well_formed(MicroKernels<float>::kAvx512Narrow));
static_assert(well_formed(MicroKernels<double>::kAvx512Narrow));
#endif

}  // namespace volta::cpu::gemm_detail
