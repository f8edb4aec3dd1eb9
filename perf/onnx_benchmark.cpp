// Whole-model benchmarks of the ONNX backend test data, run the way users run ONNX models:
// through an onnx::Session, whose plan cache compiles the model once (one miss) and reuses the
// plan on every later run (one hit per iteration).
//
// The set, registered at startup: every test the CPU engine passes (the determinism suite's
// list: no CPU expectation names it) whose single run takes more than 50 µs, plus every passing
// test of the pytorch-converted and pytorch-operator folders whatever its time (and, under a
// --benchmark_filter, every passing test it selects: see below). Each runs at 1
// and 2 threads as "onnx/<folder>/<test>/threads:N". Finding the set imports and times every
// passing test, so the registrar only looks at tests --benchmark_filter can select: a run
// filtered to other benchmarks (volta-audit's pass 2) pays for none of it.
//
// Counters: GB/s is the bytes of the inputs and outputs of one run, peak_bytes the plan's arena,
// plan_cache_hits and plan_cache_misses the session's cache; the label is the plan's kernels.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "perf_support.h"
#include "subjects.h"
#include "volta/conformance/onnx_corpus.h"
#include "volta/onnx/model.h"
#include "volta/onnx/session.h"
#include "volta/plan/execution_plan.h"

namespace volta::perf {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kSubjectPrefix = "onnx:";
constexpr double kMinSeconds = 50e-6;  // tests faster than this measure the harness, not Volta
constexpr int kTimedRuns = 3;
constexpr int kThreadCounts[] = {1, 2};

fs::path data_set(const fs::path& test_dir) { return test_dir / "test_data_set_0"; }

// Whether Google Benchmark's filter (a regex; a leading '-' negates it; empty or "all" selects
// everything) selects `name`. An unreadable regex selects everything: the library reports it.
bool filter_selects(const std::string& filter, const std::string& name) {
  if (filter.empty() || filter == "all") return true;
  const bool negative = filter.front() == '-';
  try {
    const std::regex re(negative ? filter.substr(1) : filter, std::regex::extended);
    return std::regex_search(name, re) != negative;
  } catch (const std::regex_error&) {
    return true;
  }
}

std::string benchmark_name(const std::string& id) { return "onnx/" + id; }

// The full names Google Benchmark gives the test's benchmarks, which the filter sees.
bool selected(const std::string& filter, const std::string& id) {
  return std::ranges::any_of(kThreadCounts, [&](int threads) {
    return filter_selects(
        filter, benchmark_name(id) + "/threads:" + std::to_string(threads) + "/real_time");
  });
}

// The fastest of a few warm single-thread runs (the first run compiles the plan).
double seconds_per_run(const fs::path& dir) {
  const onnx::Model model = onnx::Model::load(dir / "model.onnx");
  const std::vector<Tensor> inputs = onnx::read_tensor_files(data_set(dir), "input");
  onnx::Session session(model, cpu_backend(), DeterminismMode::Strict, 1);
  session.run(inputs);
  double best = 0;
  for (int i = 0; i < kTimedRuns; ++i) {
    const auto start = std::chrono::steady_clock::now();
    session.run(inputs);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = i == 0 ? seconds : std::min(best, seconds);
  }
  return best;
}

void onnx_model(benchmark::State& state, const fs::path& dir) {
  const int threads = static_cast<int>(state.range(0));
  try {
    const onnx::Model model = onnx::Model::load(dir / "model.onnx");
    const std::vector<Tensor> inputs = onnx::read_tensor_files(data_set(dir), "input");
    onnx::Session session(model, cpu_backend(), DeterminismMode::Strict, threads);
    const ExecutionPlan& plan = session.plan_for(inputs);  // the one miss
    for (auto _ : state) {
      std::vector<Tensor> outputs = session.run(inputs);
      benchmark::DoNotOptimize(outputs.data());
      benchmark::ClobberMemory();
    }
    double bytes = 0;
    for (const Tensor& t : inputs) bytes += static_cast<double>(t.nbytes());
    for (ValueId v : plan.graph.outputs()) {
      const Value& value = plan.graph.value(v);
      bytes += static_cast<double>(value.shape.numel() * dtype_size(value.dtype));
    }
    const PlanCacheStats stats = session.cache_stats();
    record_bytes(state, bytes);
    record_peak_bytes(state, plan.memory.arena_bytes);
    state.counters["plan_cache_hits"] = static_cast<double>(stats.hits);
    state.counters["plan_cache_misses"] = static_cast<double>(stats.misses);
    record_variant(state, kernel_variants(plan), threads);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void register_onnx_benchmarks(const Options& options) {
  const fs::path root =
      options.onnx_data.empty() ? fs::path(conformance::kOnnxDataRoot) : options.onnx_data;
  // $VOLTA_SOURCE_DIR names a relocated copy of the sources (the CUDA bundle's), as it does
  // for volta-audit.
  const char* source_dir = std::getenv("VOLTA_SOURCE_DIR");
  const fs::path sources =
      source_dir != nullptr && *source_dir != '\0' ? source_dir : VOLTA_SOURCE_DIR;
  const conformance::SubjectSource source{
      .onnx_data = root, .onnx_expectations = sources / "conformance/onnx/expectations.tsv"};
  for (const std::string& subject : conformance::subject_names(source)) {
    if (!subject.starts_with(kSubjectPrefix)) continue;
    const std::string id = subject.substr(kSubjectPrefix.size());
    if (!selected(options.benchmark_filter, id)) continue;
    const fs::path dir = root / id;
    // A filter names its benchmarks: the 50 µs cut only shapes the unfiltered set. So the
    // exact-name filter of `volta-audit perf`'s passes gets the very set its listing saw, even
    // for a test whose time sits on the cut.
    const bool always = !options.benchmark_filter.empty() || id.starts_with("pytorch-converted/") ||
                        id.starts_with("pytorch-operator/");
    if (!always) {
      try {
        if (seconds_per_run(dir) <= kMinSeconds) continue;
      } catch (const std::exception&) {
        // A test the engine passes in conformance but not here: registered, so that its
        // benchmark reports the error rather than going missing.
      }
    }
    benchmark::RegisterBenchmark(benchmark_name(id).c_str(), onnx_model, dir)
        ->ArgNames({"threads"})
        ->Arg(kThreadCounts[0])
        ->Arg(kThreadCounts[1])
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
}

const bool kRegistered = add_registrar(register_onnx_benchmarks);

}  // namespace
}  // namespace volta::perf
