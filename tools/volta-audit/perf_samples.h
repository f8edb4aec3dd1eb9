#pragma once
// What `volta-audit perf` reads back from a benchmark process: the line format volta-perf
// writes with --volta_samples=FILE (perf/perf_main.cpp), and the peer lane's script writes too.
//
//   sample  NAME  REPETITION  SECONDS  ITERATIONS  VARIANT  THREADS  GFLOPS  GBPS  PEAK  CONTEXT
//   error   NAME  MESSAGE
//
// A peer lane's benchmark is named "peer:LIBRARY:" + the name of the Volta benchmark it mirrors
// (e.g. "peer:torch:f32_gemm/avx512/size:1024/threads:1/real_time"); peers never get verdicts.

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace volta::audit {

inline constexpr std::string_view kPeerPrefix = "peer:";

struct PerfSample {
  std::string benchmark;
  int pass = 1;     // 1 or 2
  int process = 0;  // which fresh process of the pass measured it
  int repetition = 0;
  double seconds = 0;  // wall time per iteration
  int64_t iterations = 0;
  std::string variant;  // kernel variant(s): ISA and tile, or a plan's variants
  int threads = 1;
  std::optional<double> gflops;
  std::optional<double> gbytes_per_s;
  std::optional<int64_t> peak_bytes;
  std::string context;  // other counters, "name=value;..."
};

struct PerfError {
  std::string benchmark;
  std::string message;
};

struct SampleFile {
  std::vector<PerfSample> samples;
  std::vector<PerfError> errors;
};

// Parses a sample file, stamping each sample with `pass` and `process`. Throws
// std::runtime_error naming the line for a malformed one.
SampleFile parse_sample_file(std::istream& in, int pass, int process);

}  // namespace volta::audit
