#pragma once
// What the perf report reads for one run: its provenance, per benchmark the verdict of
// `volta-audit perf` and the samples of both passes and of the baseline run, and the peer
// lane's samples matched to the Volta benchmarks they mirror. Figures are in seconds.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "volta/conformance/sqlite.h"

namespace volta::audit {

struct PerfRun {
  int64_t id = 0;
  std::string commit = {};
  bool dirty = false;
  std::string build_type = {};
  std::string compiler = {};
  std::string machine = {};
  std::string started = {};
  std::string ended = {};
  std::string status = {};
};

struct Pass {
  int64_t samples = 0;
  std::optional<double> median = {};  // seconds, as every figure below
  std::optional<double> low = {};
  std::optional<double> high = {};
  std::optional<double> change = {};  // relative to the baseline median
  std::optional<double> p = {};
};

struct Benchmark {
  std::string name = {};
  std::string variant = {};
  int64_t threads = 1;
  bool judged = false;  // has a perf_verdict row
  std::string verdict = {};
  std::string detail = {};
  std::string baseline_commit = {};
  std::string baseline_kind = {};
  std::optional<double> baseline_median = {};
  double threshold = 0;
  Pass pass1 = {};
  Pass pass2 = {};
  std::vector<double> samples1 = {};
  std::vector<double> samples2 = {};
  std::vector<double> baseline_samples = {};
  std::vector<double> gflops = {};
  std::vector<double> gbytes_per_s = {};
  std::optional<int64_t> peak_bytes = {};
  std::vector<double> cache_hits = {};  // per sample that reports them
  std::vector<double> cache_misses = {};
  std::map<std::string, double> peer_medians = {};  // library -> median seconds
};

struct PeerBenchmark {
  std::string library = {};
  std::string name = {};
  int64_t threads = 1;
  std::vector<double> samples = {};
  bool matched = false;
};

struct PerfData {
  PerfRun run = {};
  std::vector<Benchmark> benchmarks = {};
  std::vector<PeerBenchmark> peers = {};
  std::vector<std::string> libraries = {};  // peer libraries, sorted
};

// The newest complete run with perf samples or verdicts, or `run` when given (any status; a
// run that is not a perf run is refused with StoreError), with its benchmarks sorted for the
// report: regressions and noise first, then improvements, errors, new, unchanged, unjudged.
PerfData load_perf_run(const conformance::Database& db, std::optional<int64_t> run);

// The key a peer lane's benchmark shares with the Volta benchmark it mirrors: the name without
// a "peer:LIBRARY:" prefix, without ISA segments ("/avx512", "/avx2fma", "/generic", ...) and
// without a "/real_time" suffix. "peer:torch:f32_gemm/size:64/threads:2" and
// "f32_gemm/avx512/size:64/threads:2/real_time" both give "f32_gemm/size:64/threads:2".
std::string perf_peer_key(std::string_view benchmark);

// The median of `values`; nothing for none.
std::optional<double> median(std::vector<double> values);

// 0 for a regression, 1 noise, 2 improvement, 3 error, 4 new, 5 unchanged, 6 not judged.
int verdict_rank(const Benchmark& b);

}  // namespace volta::audit
