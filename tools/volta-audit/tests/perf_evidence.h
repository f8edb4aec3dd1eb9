#pragma once
// Hand-built perf runs for the perf tests: a run with suites "perf" on a chosen machine, its
// samples and verdicts, written through the same functions `volta-audit perf` uses.

#include <cstdint>
#include <string>
#include <vector>

#include "perf_store.h"
#include "store_builder.h"

namespace volta::audit::testing {

inline const std::string kPerfMachine =
    "cpu=Test CPU;isa=avx2,fma;cores=2;compiler=GNU 12.2.0;build=Release";

struct PerfRunSpec {
  std::string commit = kCommit;
  bool dirty = false;
  bool complete = true;
  std::string machine = kPerfMachine;
  std::string started_at = {};  // empty: now
  std::vector<conformance::RunInput> inputs = {committed_input("governance/perf-slo.md")};
};

inline int64_t add_perf_run(TempStore& t, const PerfRunSpec& spec = {}) {
  conformance::RunInfo info;
  info.commit = spec.commit;
  info.dirty = spec.dirty;
  info.build_type = "Release";
  info.compiler = "GNU 12.2.0";
  info.cpu_model = "Test CPU";
  info.threads = 2;
  info.backend = "cpu";
  info.machine = spec.machine;
  info.suites = "perf";
  info.command = "volta-audit perf";
  const int64_t run = t.store().begin_run(info);
  if (!spec.inputs.empty()) t.store().record_inputs(run, spec.inputs);
  if (spec.complete) t.store().finish_run(run);
  if (!spec.started_at.empty()) {
    t.db()
        .prepare("UPDATE run SET started_at = ? WHERE id = ?")
        .bind(1, spec.started_at)
        .bind(2, run)
        .run();
  }
  return run;
}

inline void add_pass_samples(TempStore& t, int64_t run, const std::string& benchmark, int pass,
                             const std::vector<double>& seconds,
                             const std::string& variant = "v1") {
  std::vector<PerfSample> samples;
  samples.reserve(seconds.size());
  int repetition = 0;
  for (double s : seconds) {
    samples.push_back({.benchmark = benchmark,
                       .pass = pass,
                       .process = 0,
                       .repetition = repetition++,
                       .seconds = s,
                       .iterations = 10,
                       .variant = variant,
                       .threads = 1,
                       .gflops = std::nullopt,
                       .gbytes_per_s = std::nullopt,
                       .peak_bytes = std::nullopt,
                       .context = ""});
  }
  record_perf_samples(t.db(), run, samples);
}

// A verdict row with both passes' figures (pass 2 only when pass2_change is given).
inline PerfVerdictRow verdict(const std::string& benchmark, PerfVerdict v,
                              std::optional<double> pass1_change = std::nullopt,
                              std::optional<double> pass1_p = std::nullopt,
                              std::optional<double> pass2_change = std::nullopt,
                              std::optional<double> pass2_p = std::nullopt,
                              const std::string& detail = "") {
  PerfVerdictRow row;
  row.benchmark = benchmark;
  row.variant = "v1";
  row.threshold = 0.05;
  row.alpha = 0.01;
  row.pass1 = {.samples = 9,
               .median = 1e-3,
               .interval = {.low = 0.9e-3, .high = 1.1e-3, .coverage = 0.96},
               .change = pass1_change,
               .p = pass1_p};
  if (pass2_change) {
    row.pass2 = PassFigures{.samples = 15,
                            .median = 1e-3,
                            .interval = {.low = 0.9e-3, .high = 1.1e-3, .coverage = 0.96},
                            .change = pass2_change,
                            .p = pass2_p};
  }
  row.verdict = v;
  row.detail = detail;
  return row;
}

}  // namespace volta::audit::testing
