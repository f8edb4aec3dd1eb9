#include "linalg_gemm_pack.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "linalg_gemm_micro_kernels.h"

namespace volta::cpu::gemm_detail {
namespace {

// Packs one panel: `lanes` of its `width` lanes (rows of op(A) or columns of op(B)), `depth`
// steps along K, interleaved so the micro-kernel reads it front to back:
// dst[s * width + l] = src[l * lane_stride + s * step_stride]. Lanes past `lanes` are zero.
// Packing only copies, so how a panel is packed never shows in the results.
template <class T>
void pack_panel(const T* src, int64_t lane_stride, int64_t step_stride, int64_t depth, int width,
                int lanes, T* dst) {
  for (int64_t s = 0; s < depth; ++s, dst += width) {
    const T* from = src + s * step_stride;
    for (int l = 0; l < lanes; ++l) dst[l] = from[l * lane_stride];
    std::fill(dst + lanes, dst + width, T(0));
  }
}

// A full panel of W lanes that lie apart in memory (op(A) as stored), W known at compile time
// so that each step's W reads unroll.
template <class T, int W>
void pack_full_panel(const T* src, int64_t lane_stride, int64_t step_stride, int64_t depth,
                     T* dst) {
  for (int64_t s = 0; s < depth; ++s, dst += W) {
    const T* from = src + s * step_stride;
#pragma GCC unroll 16
    for (int l = 0; l < W; ++l) dst[l] = from[l * lane_stride];
  }
}

#if VOLTA_GEMM_X86
// GCC 12 warns that the intrinsics' own _mm512_undefined_ps() placeholders may be used
// uninitialized (GCC bug 105593, fixed in 13). Clang (the fuzz preset) has no such warning.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// Transposes a 16 x 16 block held as 16 rows: afterwards rows[c] holds column c.
VOLTA_AVX512 inline void transpose_16x16(__m512 rows[16]) {
  __m512 pairs[16];  // per 128-bit lane q: rows 2i, 2i+1 of columns 4q..4q+3
  for (int i = 0; i < 8; ++i) {
    pairs[2 * i] = _mm512_unpacklo_ps(rows[2 * i], rows[2 * i + 1]);
    pairs[2 * i + 1] = _mm512_unpackhi_ps(rows[2 * i], rows[2 * i + 1]);
  }
  __m512 quads[16];  // quads[4g + c], lane q: rows 4g..4g+3 of column 4q + c
  for (int g = 0; g < 4; ++g) {
    const __m512d p0 = _mm512_castps_pd(pairs[4 * g]);
    const __m512d p1 = _mm512_castps_pd(pairs[4 * g + 1]);
    const __m512d p2 = _mm512_castps_pd(pairs[4 * g + 2]);
    const __m512d p3 = _mm512_castps_pd(pairs[4 * g + 3]);
    quads[4 * g + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(p0, p2));
    quads[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(p0, p2));
    quads[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(p1, p3));
    quads[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(p1, p3));
  }
  for (int c = 0; c < 4; ++c) {
    const __m512 low01 = _mm512_shuffle_f32x4(quads[c], quads[4 + c], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512 low23 = _mm512_shuffle_f32x4(quads[8 + c], quads[12 + c], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512 high01 = _mm512_shuffle_f32x4(quads[c], quads[4 + c], _MM_SHUFFLE(3, 2, 3, 2));
    const __m512 high23 =
        _mm512_shuffle_f32x4(quads[8 + c], quads[12 + c], _MM_SHUFFLE(3, 2, 3, 2));
    rows[c] = _mm512_shuffle_f32x4(low01, low23, _MM_SHUFFLE(2, 0, 2, 0));
    rows[4 + c] = _mm512_shuffle_f32x4(low01, low23, _MM_SHUFFLE(3, 1, 3, 1));
    rows[8 + c] = _mm512_shuffle_f32x4(high01, high23, _MM_SHUFFLE(2, 0, 2, 0));
    rows[12 + c] = _mm512_shuffle_f32x4(high01, high23, _MM_SHUFFLE(3, 1, 3, 1));
  }
}

// pack_panel for f32 lanes contiguous along K (op(A) as stored, or a transposed op(B)), in
// groups of 16 lanes: 16 steps at a time, read as 16 x 16 blocks and transposed in registers.
VOLTA_AVX512 void pack_rows_f32_avx512(const float* src, int64_t lane_stride, int64_t depth,
                                       int width, int lanes, float* dst) {
  for (int g = 0; g < width; g += 16) {
    const int group_width = std::min(16, width - g);
    const int group_lanes = std::clamp(lanes - g, 0, 16);
    const auto lane_mask = static_cast<__mmask16>((1U << group_width) - 1);
    const float* const group_src = src + g * lane_stride;
    for (int64_t s0 = 0; s0 < depth; s0 += 16) {
      const int64_t steps = std::min<int64_t>(16, depth - s0);
      const auto step_mask = static_cast<__mmask16>((1U << steps) - 1);
      __m512 block[16];
      for (int l = 0; l < 16; ++l) {
        block[l] = l < group_lanes
                       ? _mm512_maskz_loadu_ps(step_mask, group_src + l * lane_stride + s0)
                       : _mm512_setzero_ps();
      }
      transpose_16x16(block);
      for (int64_t t = 0; t < steps; ++t) {
        _mm512_mask_storeu_ps(dst + (s0 + t) * width + g, lane_mask, block[t]);
      }
    }
  }
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

// Transposes an 8 x 8 block held as 8 rows: afterwards rows[c] holds column c.
VOLTA_AVX2_FMA inline void transpose_8x8(__m256 rows[8]) {
  __m256 pairs[8];  // per 128-bit half: rows 2i, 2i+1 interleaved
  for (int i = 0; i < 4; ++i) {
    pairs[2 * i] = _mm256_unpacklo_ps(rows[2 * i], rows[2 * i + 1]);
    pairs[2 * i + 1] = _mm256_unpackhi_ps(rows[2 * i], rows[2 * i + 1]);
  }
  __m256 quads[8];  // per half: rows 4g..4g+3 of one column
  for (int g = 0; g < 2; ++g) {
    quads[4 * g + 0] = _mm256_shuffle_ps(pairs[4 * g], pairs[4 * g + 2], _MM_SHUFFLE(1, 0, 1, 0));
    quads[4 * g + 1] = _mm256_shuffle_ps(pairs[4 * g], pairs[4 * g + 2], _MM_SHUFFLE(3, 2, 3, 2));
    quads[4 * g + 2] =
        _mm256_shuffle_ps(pairs[4 * g + 1], pairs[4 * g + 3], _MM_SHUFFLE(1, 0, 1, 0));
    quads[4 * g + 3] =
        _mm256_shuffle_ps(pairs[4 * g + 1], pairs[4 * g + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int c = 0; c < 4; ++c) {
    rows[c] = _mm256_permute2f128_ps(quads[c], quads[4 + c], 0x20);
    rows[4 + c] = _mm256_permute2f128_ps(quads[c], quads[4 + c], 0x31);
  }
}

// A mask of lanes [0, n) of 8 (0 <= n <= 8), for masked loads.
VOLTA_AVX2_FMA inline __m256i first_lanes(int64_t n) {
  alignas(32) static constexpr int32_t kFirst[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                     0,  0,  0,  0,  0,  0,  0,  0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kFirst + 8 - n));
}

// pack_panel for f32 lanes contiguous along K (op(A) as stored) into the AVX2 kernel's panels
// of kAvx2Rows (6) lanes: 8 steps at a time, read as an 8 x 8 block (rows past 6 zero) and
// transposed in registers, each step stored as 4 + 2 floats. The scalar gather it replaces moved
// one float per load and store.
VOLTA_AVX2_FMA void pack_rows_f32_avx2(const float* src, int64_t lane_stride, int64_t depth,
                                       int lanes, float* dst) {
  static_assert(kAvx2Rows == 6, "the stores below write 4 + 2 lanes");
  for (int64_t s0 = 0; s0 < depth; s0 += 8) {
    const int64_t steps = std::min<int64_t>(8, depth - s0);
    const __m256i step_mask = first_lanes(steps);
    __m256 block[8];
    for (int l = 0; l < 8; ++l) {
      block[l] = l < lanes ? _mm256_maskload_ps(src + l * lane_stride + s0, step_mask)
                           : _mm256_setzero_ps();
    }
    transpose_8x8(block);
    for (int64_t t = 0; t < steps; ++t) {
      float* const to = dst + (s0 + t) * kAvx2Rows;
      _mm_storeu_ps(to, _mm256_castps256_ps128(block[t]));
      _mm_storel_pi(reinterpret_cast<__m64*>(to + 4), _mm256_extractf128_ps(block[t], 1));
    }
  }
}
#endif

// The `full` lanes (a multiple of `width`) of a block whose lanes are adjacent in memory,
// packed step by step: step s of panel f is src[s * step_stride + f * width, + width). A
// fixed-size memcpy, since GCC copies an element loop one scalar at a time (it cannot rule out
// that source and panel overlap): 16 scalar moves a 64-byte step were 40 % of a 64-token
// product's packing.
template <int W, class T>
void pack_full_panels_by_step_fixed(const T* src, int64_t step_stride, int64_t full, int64_t depth,
                                    T* dst) {
  for (int64_t s = 0; s < depth; ++s) {
    const T* from = src + s * step_stride;
    T* to = dst + s * W;
    for (int64_t f = 0; f < full; f += W, from += W, to += depth * W) {
      std::memcpy(to, from, W * sizeof(T));
    }
  }
}

#if VOLTA_GEMM_X86
// The same for 128-byte panel steps (f32 AVX-512 op(B) panels, 32 wide; f64, 16 wide).
VOLTA_AVX512 void pack_128_byte_panels_by_step_avx512(const char* src, int64_t step_bytes,
                                                      int64_t panels, int64_t depth, char* dst) {
  constexpr int64_t kStep = 128;
  for (int64_t s = 0; s < depth; ++s) {
    const char* from = src + s * step_bytes;
    char* to = dst + s * kStep;
    for (int64_t f = 0; f < panels; ++f, from += kStep, to += depth * kStep) {
      const __m512i low = _mm512_loadu_si512(from);
      const __m512i high = _mm512_loadu_si512(from + 64);
      _mm512_storeu_si512(to, low);
      _mm512_storeu_si512(to + 64, high);
    }
  }
}
#endif

template <class T>
void pack_full_panels_by_step(GemmIsa isa, const T* src, int64_t step_stride, int64_t full,
                              int64_t depth, int width, T* dst) {
#if VOLTA_GEMM_X86
  if (isa == GemmIsa::Avx512 && width * sizeof(T) == 128) {
    pack_128_byte_panels_by_step_avx512(reinterpret_cast<const char*>(src),
                                        step_stride * static_cast<int64_t>(sizeof(T)), full / width,
                                        depth, reinterpret_cast<char*>(dst));
    return;
  }
#endif
  switch (width) {
    case 8:
      pack_full_panels_by_step_fixed<8>(src, step_stride, full, depth, dst);
      return;
    case 16:
      pack_full_panels_by_step_fixed<16>(src, step_stride, full, depth, dst);
      return;
    case 32:
      pack_full_panels_by_step_fixed<32>(src, step_stride, full, depth, dst);
      return;
    default:
      for (int64_t f = 0; f < full; f += width) {
        pack_panel(src + f, 1, step_stride, depth, width, width, dst + f * depth);
      }
  }
}

}  // namespace

template <class T>
void pack_block(GemmIsa isa, const T* src, int64_t lane_stride, int64_t step_stride, int64_t extent,
                int64_t depth, int width, T* dst) {
  int64_t first = 0;
  if (lane_stride == 1 && extent >= width) {
    // Lanes adjacent in memory (op(B) as stored): read the source row by row, each row into
    // every full panel, rather than panel by panel down strided rows.
    const int64_t full = extent / width * width;
    pack_full_panels_by_step(isa, src, step_stride, full, depth, width, dst);
    first = full;
    src += full;
  }
  for (; first < extent; first += width, src += width * lane_stride) {
    const int lanes = static_cast<int>(std::min<int64_t>(width, extent - first));
    T* const to = dst + first * depth;
#if VOLTA_GEMM_X86
    if constexpr (std::is_same_v<T, float>) {
      if (isa == GemmIsa::Avx512 && step_stride == 1 && lane_stride != 1) {
        pack_rows_f32_avx512(src, lane_stride, depth, width, lanes, to);
        continue;
      }
      if (isa == GemmIsa::Avx2Fma && step_stride == 1 && lane_stride != 1 && width == kAvx2Rows) {
        pack_rows_f32_avx2(src, lane_stride, depth, lanes, to);
        continue;
      }
    }
#endif
    if (lanes == width && lane_stride != 1) {
      switch (width) {
        case 4:
          pack_full_panel<T, 4>(src, lane_stride, step_stride, depth, to);
          continue;
        case 6:
          pack_full_panel<T, 6>(src, lane_stride, step_stride, depth, to);
          continue;
        case 8:
          pack_full_panel<T, 8>(src, lane_stride, step_stride, depth, to);
          continue;
        case 14:
          pack_full_panel<T, 14>(src, lane_stride, step_stride, depth, to);
          continue;
        case 16:
          pack_full_panel<T, 16>(src, lane_stride, step_stride, depth, to);
          continue;
        default:
          break;
      }
    }
    pack_panel(src, lane_stride, step_stride, depth, width, lanes, to);
  }
}

template void pack_block<float>(GemmIsa isa, const float* src, int64_t lane_stride,
                                int64_t step_stride, int64_t extent, int64_t depth, int width,
                                float* dst);
template void pack_block<double>(GemmIsa isa, const double* src, int64_t lane_stride,
                                 int64_t step_stride, int64_t extent, int64_t depth, int width,
                                 double* dst);

}  // namespace volta::cpu::gemm_detail
