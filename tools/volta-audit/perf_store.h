#pragma once
// The rows of the perf double pass: samples, verdicts and baselines (schema v3,
// conformance/harness/store.cpp). Baselines are keyed by machine fingerprint; the newest row
// per benchmark (accepted or candidate) is the one a run compares with, through the pass-1
// samples of the run it points at. Every move is a row with commit, reason and old value.

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "perf_compare.h"
#include "perf_samples.h"
#include "volta/conformance/sqlite.h"

namespace volta::audit {

inline constexpr const char* kPerfUnit = "s";  // perf_sample.value: seconds per iteration

struct PerfBaseline {
  int64_t id = 0;
  std::string benchmark = {};
  double value = 0;  // the median it was set to
  std::string commit = {};
  std::string kind = {};               // accepted | candidate
  std::optional<int64_t> run_id = {};  // the run whose pass-1 samples it accepts
  std::vector<double> samples = {};    // those samples (empty when the row points at no run)
  std::string variant = {};            // the kernel variant those samples measured
};

// Every benchmark the perf binary lists, whatever the run's filter (perf_listing); one
// transaction.
void record_perf_listing(conformance::Database& db, int64_t run_id,
                         std::span<const std::string> benchmarks);

// One transaction.
void record_perf_samples(conformance::Database& db, int64_t run_id,
                         std::span<const PerfSample> samples);

// The newest baseline of each benchmark on `machine`, with its samples.
std::map<std::string, PerfBaseline> newest_baselines(const conformance::Database& db,
                                                     const std::string& machine);
bool machine_has_baselines(const conformance::Database& db, const std::string& machine);

struct PerfVerdictRow {
  std::string benchmark = {};
  std::string variant = {};
  int threads = 1;
  std::optional<PerfBaseline> baseline = {};  // without samples is fine: only id fields are read
  std::optional<double> baseline_median = {};
  double threshold = 0;
  double alpha = 0;
  PassFigures pass1 = {};
  std::optional<PassFigures> pass2 = {};
  PerfVerdict verdict = PerfVerdict::Unchanged;
  std::string detail = {};
};

// Inside the caller's transaction (or one of its own).
void record_perf_verdicts(conformance::Database& db, int64_t run_id,
                          std::span<const PerfVerdictRow> rows);

struct BaselineMove {
  std::string benchmark = {};
  double value = 0;
  std::optional<double> old_value = {};
  std::string commit = {};
  int64_t run_id = 0;
  std::string reason = {};
  std::string kind = "accepted";
};
void record_baseline_moves(conformance::Database& db, const std::string& machine,
                           std::span<const BaselineMove> moves);

// `volta-audit perf baseline accept`: for each benchmark, the newest complete run on
// `machine` with pass-1 samples of it, and no planted slowdown, becomes its baseline (value:
// their median). Refuses
// (VoltaError, nothing written) an empty reason and a benchmark no such run measured.
std::vector<BaselineMove> accept_baselines(conformance::Database& db, const std::string& machine,
                                           const std::vector<std::string>& benchmarks,
                                           const std::string& reason);

}  // namespace volta::audit
