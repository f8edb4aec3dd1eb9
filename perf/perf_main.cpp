// volta-perf: every Volta benchmark in one binary, so that `volta-audit perf` can interleave
// all of them in one process (--benchmark_enable_random_interleaving). Standalone it behaves
// like any Google Benchmark binary. With --volta_samples=FILE it writes one line per
// repetition instead of the console table, tab-separated, for volta-audit to store:
//
//   sample  NAME  REPETITION  SECONDS  ITERATIONS  VARIANT  THREADS  GFLOPS  GBPS  PEAK  CONTEXT
//   error   NAME  MESSAGE
//
// SECONDS is wall time per iteration; GFLOPS, GBPS and PEAK (bytes) are empty when the
// benchmark has no such counter; CONTEXT is its other counters as "name=value;...". An
// errored benchmark gives an error line instead of samples, so it is never silently missing.
// --volta_describe prints what the machine fingerprint needs to know about this binary
// ("build_type\tX\ncompiler\tY\ncommit\tSHA\ndirty\t0|1\n") and exits: `volta-audit perf` refuses
// a binary of another commit, whose timings would not be the commit's.

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "build_info.h"
#include "perf_support.h"
#include "volta/backends/cpu/planted_slowdown.h"

namespace volta::perf {

void run_registrars(const Options& options);  // perf_support.cpp

namespace {

constexpr std::string_view kSamplesFlag = "--volta_samples=";
constexpr std::string_view kOnnxDataFlag = "--volta_onnx_data=";
constexpr std::string_view kDescribeFlag = "--volta_describe";
constexpr std::string_view kFilterFlag = "--benchmark_filter=";

// Tabs and newlines would break the line format; no name or label should have them.
std::string field(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  }
  return out;
}

std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", value);
  return buffer;
}

class SampleReporter : public benchmark::BenchmarkReporter {
 public:
  explicit SampleReporter(const std::string& path) : out_(path) {
    if (!out_) {
      std::fprintf(stderr, "volta-perf: cannot write samples to '%s'\n", path.c_str());
      std::exit(2);
    }
  }

  bool ReportContext(const Context& /*context*/) override { return true; }

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration) continue;  // aggregates are volta-audit's job
      const std::string name = field(run.benchmark_name());
      if (run.error_occurred) {
        out_ << "error\t" << name << '\t' << field(run.error_message) << '\n';
        continue;
      }
      std::map<std::string, double> counters;
      for (const auto& [key, counter] : run.counters) counters[key] = counter.value;
      const auto take = [&](const char* key) {
        const auto it = counters.find(key);
        if (it == counters.end()) return std::string();
        const double value = it->second;
        counters.erase(it);
        return number(value);
      };
      const std::string threads = take(kThreadsCounter);
      const std::string gflops = take(kGflopsCounter);
      const std::string gbps = take(kGbytesCounter);
      const std::string peak = take(kPeakBytesCounter);
      std::string context;
      for (const auto& [key, value] : counters) {
        context += (context.empty() ? "" : ";") + field(key) + "=" + number(value);
      }
      const double seconds = run.real_accumulated_time / static_cast<double>(run.iterations);
      out_ << "sample\t" << name << '\t' << run.repetition_index << '\t' << number(seconds) << '\t'
           << run.iterations << '\t' << field(run.report_label) << '\t'
           << (threads.empty() ? "1" : threads) << '\t' << gflops << '\t' << gbps << '\t' << peak
           << '\t' << context << '\n';
    }
    out_.flush();
  }

 private:
  std::ofstream out_;
};

}  // namespace
}  // namespace volta::perf

int main(int argc, char** argv) {
  using volta::perf::kDescribeFlag;
  using volta::perf::kFilterFlag;
  using volta::perf::kOnnxDataFlag;
  using volta::perf::kSamplesFlag;
  volta::perf::Options options;
  std::string samples;
  // Take our flags out before Google Benchmark sees (and refuses) them.
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == kDescribeFlag) {
      std::printf("build_type\t%s\ncompiler\t%s\ncommit\t%s\ndirty\t%d\n", VOLTA_PERF_BUILD_TYPE,
                  VOLTA_PERF_COMPILER, volta::build::kCommit, volta::build::kDirty ? 1 : 0);
      return 0;
    }
    if (arg.starts_with(kSamplesFlag)) {
      samples = arg.substr(kSamplesFlag.size());
    } else if (arg.starts_with(kOnnxDataFlag)) {
      options.onnx_data = arg.substr(kOnnxDataFlag.size());
    } else {
      // Google Benchmark's own flag, which it also reads: registrars may skip what it excludes.
      if (arg.starts_with(kFilterFlag)) options.benchmark_filter = arg.substr(kFilterFlag.size());
      rest.push_back(argv[i]);
    }
  }
  int rest_count = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_count, rest.data());
  if (benchmark::ReportUnrecognizedArguments(rest_count, rest.data())) return 2;
  try {
    // A malformed VOLTA_PLANT_SLOWDOWN is refused here, not inside a benchmark.
    for (const std::string_view site : volta::kPlantedSlowdownSites) volta::planted_slowdown(site);
    volta::perf::run_registrars(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "volta-perf: %s\n", e.what());
    return 2;
  }
  if (samples.empty()) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    volta::perf::SampleReporter reporter(samples);
    benchmark::RunSpecifiedBenchmarks(&reporter);
  }
  benchmark::Shutdown();
  return 0;
}
