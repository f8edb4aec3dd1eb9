#pragma once
// Running benchmark processes for `volta-audit perf`: volta-perf (and the peer lane's script)
// in fresh processes started with posix_spawn, their sample files read back.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "perf_machine.h"
#include "perf_samples.h"
#include "volta/conformance/process.h"

namespace volta::audit {

using conformance::ProcessOutcome;
using conformance::run_process;

// A --benchmark_filter that selects exactly `names`: "^(a|b)$" with regex metacharacters
// escaped.
std::string exact_name_filter(const std::vector<std::string>& names);

struct PassOptions {
  int repetitions = 9;
  double min_time = 0.05;   // seconds per repetition
  std::string filter = {};  // empty: every benchmark
  int pass = 1;
  int process = 0;
};

struct PassOutcome {
  SampleFile samples = {};
  std::string failure = {};  // empty when the process exited 0; samples written before it remain
};

class PerfBinary {
 public:
  explicit PerfBinary(std::filesystem::path path);
  const std::filesystem::path& path() const { return path_; }

  BinaryDescription describe() const;
  // The names of the benchmarks `filter` selects (--benchmark_list_tests).
  std::vector<std::string> list(const std::string& filter) const;
  // One process: every selected benchmark, repetitions interleaved at random.
  PassOutcome run(const PassOptions& options) const;

 private:
  std::filesystem::path path_ = {};
};

// The peer lane: `python3 SCRIPT --volta_samples=FILE --repetitions N`. nullopt with `why`
// set when it cannot run here (no torch, no script).
std::optional<PassOutcome> run_torch_peer(const std::filesystem::path& script, int repetitions,
                                          std::string& why);

}  // namespace volta::audit
