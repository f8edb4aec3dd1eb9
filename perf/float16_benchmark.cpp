// The f16 / bf16 conversions every half-precision kernel runs per element (volta/ir/float16.h):
// f32 -> f16 and f32 -> bf16 by the branch-free integer paths that vectorize on every ISA,
// against the same rounding through round_double (one out-of-line call per element, the path
// doubles and integers take), and f16 / bf16 -> f32. The loops run as the CPU kernels' row loops
// do, in with_simd (compiled for the best ISA the CPU has; the variant names it). One thread,
// 1 Mi elements (4 MiB of f32: cache-resident on the machines Volta runs on), so the figure is
// the conversion's own cost; GB/s counts the bytes read and written once, to set against
// stream_copy.

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/simd.h"
#include "perf_support.h"
#include "volta/ir/float16.h"

namespace volta::perf {
namespace {

constexpr int64_t kElements = int64_t{1} << 20;

// Values across the f16 range, subnormals to overflow, both signs.
const std::vector<float>& sample_floats() {
  static const std::vector<float> values = [] {
    std::mt19937 rng(16);
    std::uniform_real_distribution<float> exponent(-26.0F, 17.0F);
    std::uniform_real_distribution<float> mantissa(1.0F, 2.0F);
    std::vector<float> v(static_cast<size_t>(kElements));
    for (float& x : v) {
      x = mantissa(rng) * std::exp2(exponent(rng)) * ((rng() & 1U) != 0 ? -1.0F : 1.0F);
    }
    return v;
  }();
  return values;
}

std::string variant_name(const char* conversion) {
  return std::string(conversion) + "_" + std::string(cpu::simd_isa());
}

template <class Half, bool kThroughDouble>
void narrow(benchmark::State& state, const char* variant) {
  const std::vector<float>& values = sample_floats();
  std::vector<uint16_t> converted(values.size());
  const float* in = values.data();
  uint16_t* out = converted.data();
  const auto n = static_cast<int64_t>(values.size());
  for (auto _ : state) {
    cpu::with_simd([&] {
      for (int64_t i = 0; i < n; ++i) {
        if constexpr (kThroughDouble) {
          out[i] = Half(static_cast<double>(in[i])).bits();
        } else {
          out[i] = Half(in[i]).bits();
        }
      }
    });
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
  record_bytes(state, 6.0 * static_cast<double>(kElements));
  record_variant(state, variant_name(variant), 1);
}

template <class Half>
void widen(benchmark::State& state, const char* variant) {
  const std::vector<float>& values = sample_floats();
  std::vector<uint16_t> halves(values.size());
  for (size_t i = 0; i < halves.size(); ++i) halves[i] = Half(values[i]).bits();
  std::vector<float> widened(values.size());
  const uint16_t* in = halves.data();
  float* out = widened.data();
  const auto n = static_cast<int64_t>(values.size());
  for (auto _ : state) {
    cpu::with_simd([&] {
      for (int64_t i = 0; i < n; ++i) out[i] = Half::from_bits(in[i]).to_float();
    });
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
  record_bytes(state, 6.0 * static_cast<double>(kElements));
  record_variant(state, variant_name(variant), 1);
}

void register_all() {
  auto add = [](const char* name, void (*fn)(benchmark::State&, const char*), const char* variant) {
    benchmark::RegisterBenchmark(name, fn, variant)->Unit(benchmark::kMicrosecond)->UseRealTime();
  };
  add("float16/f32_to_f16/f32_path/threads:1", narrow<Float16, false>, "f16_narrow_integer");
  add("float16/f32_to_f16/double_path/threads:1", narrow<Float16, true>, "f16_narrow_double");
  add("float16/f32_to_bf16/f32_path/threads:1", narrow<BFloat16, false>, "bf16_narrow_integer");
  add("float16/f32_to_bf16/double_path/threads:1", narrow<BFloat16, true>, "bf16_narrow_double");
  add("float16/f16_to_f32/threads:1", widen<Float16>, "f16_widen");
  add("float16/bf16_to_f32/threads:1", widen<BFloat16>, "bf16_widen");
}

const bool kRegistered = (register_all(), true);

}  // namespace
}  // namespace volta::perf
