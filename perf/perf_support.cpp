#include "perf_support.h"

#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "volta/runtime/registry.h"

namespace volta::perf {

Tensor random_tensor(DType dtype, const Shape& shape, uint32_t seed) {
  Tensor t(dtype, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::uniform_int_distribution<int64_t> small(0, 63);
  for (int64_t i = 0; i < t.numel(); ++i) {
    switch (dtype) {
      case DType::F32:
        t.data_as<float>()[i] = static_cast<float>(uniform(rng));
        break;
      case DType::F64:
        t.data_as<double>()[i] = uniform(rng);
        break;
      case DType::I64:
        t.data_as<int64_t>()[i] = small(rng);
        break;
      case DType::I32:
        t.data_as<int32_t>()[i] = static_cast<int32_t>(small(rng));
        break;
      default:
        fail(ErrorCode::InvalidArgument,
             "random_tensor supports f32, f64, i64 and i32, not " + std::string(dtype_name(dtype)));
    }
  }
  return t;
}

const Backend& cpu_backend() {
  static const std::unique_ptr<Backend> backend = make_backend("cpu");
  return *backend;
}

void at_one_and_two_threads(benchmark::internal::Benchmark* benchmark) {
  benchmark->ArgNames({"threads"})->Arg(1)->Arg(2)->UseRealTime();
}

void record_variant(benchmark::State& state, std::string_view variant, int threads) {
  state.SetLabel(std::string(variant));
  state.counters[kThreadsCounter] = threads;
}

void record_plan(benchmark::State& state, const ExecutionPlan& plan, int threads) {
  record_peak_bytes(state, plan.memory.arena_bytes);
  record_variant(state, kernel_variants(plan), threads);
}

void record_flops(benchmark::State& state, double flops) {
  state.counters[kGflopsCounter] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void record_bytes(benchmark::State& state, double bytes) {
  state.counters[kGbytesCounter] =
      benchmark::Counter(bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void record_peak_bytes(benchmark::State& state, int64_t bytes) {
  state.counters[kPeakBytesCounter] = static_cast<double>(bytes);
}

namespace {
std::vector<Registrar>& registrars() {
  static std::vector<Registrar> all;
  return all;
}
}  // namespace

bool add_registrar(Registrar registrar) {
  registrars().push_back(std::move(registrar));
  return true;
}

void run_registrars(const Options& options) {
  for (const Registrar& r : registrars()) r(options);
}

double transformer_block_flops(const TransformerBlockConfig& c) {
  const auto rows = static_cast<double>(c.batch * c.seq);
  const auto d = static_cast<double>(c.d_model);
  const auto ff = static_cast<double>(c.d_ff);
  const auto seq = static_cast<double>(c.seq);
  return 2.0 * rows * (4.0 * d * d + 2.0 * seq * d + 2.0 * d * ff);
}

}  // namespace volta::perf
