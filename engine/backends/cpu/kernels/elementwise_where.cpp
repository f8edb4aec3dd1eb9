// Where: the element of X where the condition is true, else the element of Y, all three
// broadcast. The condition is a bool tensor, one byte per element; any nonzero byte reads as
// true.

#include <bit>
#include <type_traits>

#include "elementwise_common.h"

#if VOLTA_SIMD_DISPATCH
#include <immintrin.h>
#endif

namespace volta::cpu {
namespace {

using Bool = uint8_t;

template <class T>
struct Where {
  T operator()(Bool condition, T x, T y) const { return condition != 0 ? x : y; }
};

// Rows of 4-byte elements whose condition advances: GCC vectorizes the functor's byte-to-lane
// widening two lanes at a time, so these loops turn a load of condition bytes into a lane mask
// themselves. A select only moves bits: every path gives the functor's values.
#if VOLTA_SIMD_DISPATCH
#define VOLTA_WHERE_AVX512 gnu::target("avx2,avx512f,avx512bw,avx512vl")

template <class T>
[[VOLTA_WHERE_AVX512]] __m512i lanes16(const Run<T>& source, int64_t i) {
  return _mm512_loadu_si512(source.data + i);
}
template <class T>
[[VOLTA_WHERE_AVX512]] __m512i lanes16(const Splat<T>& source, int64_t) {
  return _mm512_set1_epi32(std::bit_cast<int32_t>(source.value));
}
template <class T>
[[gnu::target("avx2")]] __m256i lanes8(const Run<T>& source, int64_t i) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(source.data + i));
}
template <class T>
[[gnu::target("avx2")]] __m256i lanes8(const Splat<T>& source, int64_t) {
  return _mm256_set1_epi32(std::bit_cast<int32_t>(source.value));
}

// Each returns how many leading elements of the row it wrote.
template <class T, class X, class Y>
[[VOLTA_WHERE_AVX512]] int64_t where_row_avx512(T* out, int64_t count, const Bool* condition,
                                                const X& x, const Y& y) {
  int64_t i = 0;
  for (; i + 16 <= count; i += 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(condition + i));
    const __mmask16 take_x = _mm_test_epi8_mask(bytes, bytes);
    _mm512_storeu_si512(out + i, _mm512_mask_blend_epi32(take_x, lanes16(y, i), lanes16(x, i)));
  }
  return i;
}
template <class T, class X, class Y>
[[gnu::target("avx2")]] int64_t where_row_avx2(T* out, int64_t count, const Bool* condition,
                                               const X& x, const Y& y) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m256i lanes =
        _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(condition + i)));
    const __m256i take_y = _mm256_cmpeq_epi32(lanes, _mm256_setzero_si256());
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i),
                        _mm256_blendv_epi8(lanes8(x, i), lanes8(y, i), take_y));
  }
  return i;
}
#endif

template <class T, class X, class Y>
int64_t where_row_masked(T* out, int64_t count, const Bool* condition, const X& x, const Y& y) {
#if VOLTA_SIMD_DISPATCH
  switch (simd_level()) {
    case SimdLevel::Avx512:
      return where_row_avx512(out, count, condition, x, y);
    case SimdLevel::Avx2:
      return where_row_avx2(out, count, condition, x, y);
    case SimdLevel::Baseline:
      break;
  }
#endif
  return 0;
}

template <class T>
Run<T> skip(const Run<T>& source, int64_t n) {
  return {source.data + n};
}
template <class T>
Splat<T> skip(const Splat<T>& source, int64_t) {
  return source;
}

template <class T>
void where_kernel(const KernelArgs& args) {
  if constexpr (sizeof(T) == 4) {
    for_each_output_row<T, Bool, T, T>(
        args,
        [](T* out, int64_t, int64_t count, const auto& condition, const auto& x, const auto& y) {
          int64_t done = 0;
          if constexpr (std::is_same_v<std::decay_t<decltype(condition)>, Run<Bool>>) {
            done = where_row_masked(out, count, condition.data, x, y);
          }
          map_row(out + done, count - done, Where<T>{}, skip(condition, done), skip(x, done),
                  skip(y, done));
        });
  } else {
    map_broadcast<T, Bool, T, T>(args, Where<T>{});
  }
}

const DTypeKernels& where_kernels() {
  static const DTypeKernels kKernels = make_kernels(AllTypes{}, [](auto tag) {
    using T = typename decltype(tag)::type;
    return CpuKernel{&where_kernel<T>, kernel_variant(dtype_of<T>(), "where", simd_isa())};
  });
  return kKernels;
}

// Kernels are chosen by the dtype of X and Y (input 0 is the condition).
KernelSelection select_where(const KernelQuery& query) {
  return select_by_dtype(where_kernels(), query.node, query.inputs[1]->dtype);
}

}  // namespace

void register_elementwise_where_kernels(KernelTable& table) {
  table[static_cast<size_t>(op_index(OpKind::Where))] =
      OpKernels{&select_where, where_kernels().dtypes, KernelDeterminism::BitExact};
}

}  // namespace volta::cpu
