#pragma once
// Runtime choice of the vector ISA for the CPU kernels' row loops.
//
// The engine is built for the baseline of its target (x86-64: SSE2), so the row loops of the
// elementwise, normalization and reduction kernels are also compiled for AVX2 and AVX-512 and
// the best one the CPU has runs: with_simd(fn) calls fn in a function compiled for that ISA
// with every call inside it inlined (flatten), so fn's loops are vectorized for it.
//
// The ISA changes the speed, never the bits. Every loop is the same IEEE operations in the same
// order whatever the vector width: -ffp-contract=off (top-level CMakeLists.txt) keeps the
// compiler from fusing a multiply-add in one ISA and not another, a multiply-add the code
// fuses is a std::fma (correctly rounded everywhere: the FMA instruction, which both dispatched
// levels enable, or libm's fmaf at the baseline), and the reductions' lanes are a constant of
// the code (reduce_tree.h), not the register width.
// cpu_simd_test runs kernels at every level the CPU has and compares the bits.

#include <atomic>
#include <string_view>

namespace volta::cpu {

enum class SimdLevel { Baseline, Avx2, Avx512 };

// What the build targets without any dispatch (named in kernel variants at SimdLevel::Baseline).
inline constexpr std::string_view kBaselineIsa =
#if defined(__AVX512F__)
    "avx512";
#elif defined(__AVX2__)
    "avx2";
#elif defined(__AVX__)
    "avx";
#elif defined(__SSE2__)
    "sse2";
#elif defined(__ARM_NEON)
    "neon";
#else
    "scalar";
#endif

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define VOLTA_SIMD_DISPATCH 1
#else
#define VOLTA_SIMD_DISPATCH 0
#endif

// The best level this CPU runs.
inline SimdLevel detected_simd_level() {
#if VOLTA_SIMD_DISPATCH
  static const SimdLevel level = [] {
    __builtin_cpu_init();
    // Both levels compile std::fma to the FMA instruction (every AVX2 CPU made has it; a CPU
    // without it runs the baseline).
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
      return SimdLevel::Baseline;
    }
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")) {
      return SimdLevel::Avx512;
    }
    return SimdLevel::Avx2;
    return SimdLevel::Baseline;
  }();
  return level;
#else
  return SimdLevel::Baseline;
#endif
}

namespace detail {
inline std::atomic<SimdLevel>& simd_level_slot() {
  static std::atomic<SimdLevel> level{detected_simd_level()};
  return level;
}
}  // namespace detail

// The level with_simd runs at: the detected one, unless a test lowered it.
inline SimdLevel simd_level() { return detail::simd_level_slot().load(std::memory_order_relaxed); }

inline std::string_view simd_isa_name(SimdLevel level) {
  switch (level) {
    case SimdLevel::Avx512:
      return "avx512";
    case SimdLevel::Avx2:
      return "avx2";
    case SimdLevel::Baseline:
      break;
  }
  return kBaselineIsa;
}

// The ISA the row loops run on, as kernel variants name it ("avx512", "avx2", "sse2").
inline std::string_view simd_isa() { return simd_isa_name(detected_simd_level()); }

// For tests: runs the kernels at `level` (at most the detected one) while it lives. Kernel
// variants keep naming the detected level.
class ScopedSimdLevel {
 public:
  explicit ScopedSimdLevel(SimdLevel level)
      : previous_(detail::simd_level_slot().exchange(
            level > detected_simd_level() ? detected_simd_level() : level)) {}
  ~ScopedSimdLevel() { detail::simd_level_slot().store(previous_); }
  ScopedSimdLevel(const ScopedSimdLevel&) = delete;
  ScopedSimdLevel& operator=(const ScopedSimdLevel&) = delete;

 private:
  SimdLevel previous_;
};

#if VOLTA_SIMD_DISPATCH
// GCC would otherwise keep 256-bit vectors inside AVX-512 code; clang (clang-tidy) has no such
// target option and refuses the attribute.
#if defined(__clang__)
#define VOLTA_AVX512_TARGET "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl"
#else
#define VOLTA_AVX512_TARGET "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl,prefer-vector-width=512"
#endif
namespace detail {
template <class Fn>
[[gnu::target("avx2,fma"), gnu::flatten]] void run_avx2(const Fn& fn) {
  fn();
}
template <class Fn>
[[gnu::target(VOLTA_AVX512_TARGET), gnu::flatten]] void run_avx512(const Fn& fn) {
  fn();
}
}  // namespace detail
#endif

// Calls fn() compiled for the current SimdLevel. fn should be a row's worth of work or more:
// the dispatch is a switch per call.
template <class Fn>
inline void with_simd(const Fn& fn) {
#if VOLTA_SIMD_DISPATCH
  switch (simd_level()) {
    case SimdLevel::Avx512:
      return detail::run_avx512(fn);
    case SimdLevel::Avx2:
      return detail::run_avx2(fn);
    case SimdLevel::Baseline:
      break;
  }
#endif
  fn();
}

}  // namespace volta::cpu
