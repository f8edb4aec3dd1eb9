#pragma once
// The four determinism checks. Subjects and negative controls go through the same code, so a
// control that is caught proves the check that judges every subject can fail.

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "configs.h"
#include "subjects.h"
#include "volta/conformance/trace_store.h"
#include "volta/runtime/backend.h"

namespace volta::conformance {

// What one fresh process reported for a subject (or why it could not).
struct ProcessReport {
  std::string output_hash, plan_fingerprint, error;
};

struct CheckResult {
  bool identical = true;
  std::string summary;  // what was compared and found identical, or the first difference
  std::string hash;     // output hash (replay, configurations) or plan fingerprint (plan)
  std::string kernels;  // the plan's kernel variants, each once, in step order
  std::string params;   // the evidence's size: "runs=100 processes=3 threads=3"
  std::vector<NodeTraceRow> trace;  // replay: the first run's node trace
};

// Level 1: one plan run `runs` times on one context of `threads` threads, every run traced;
// then compared with the fresh processes' output hashes.
CheckResult check_replay(const Subject& subject, const Backend& backend, int runs, int threads,
                         std::span<const ProcessReport> processes);

// Level 2 and the configuration matrix: the baseline's outputs against every variation's.
CheckResult check_configurations(const Subject& subject, const Backend& backend,
                                 const ConfigMatrix& matrix);

// Level 3: two compiles in this process (both alive) and the fresh processes' fingerprints.
// `before_compile` rewrites the graph first (the address-dependent control); may be empty.
CheckResult check_plan(const Subject& subject, const Backend& backend,
                       const std::function<void(Graph&)>& before_compile,
                       std::span<const ProcessReport> processes);

// Level 4: batch invariance. `build(B)` gives the subject at B samples: axis 0 of every input
// and output is the batch axis, and sample i's input is a pure function of i. Every sample
// 0..max(batches)-1 runs alone (batch 1) once; then for each B in `batches`, samples 0..B-1 run
// as one batch, and each sample's slice of every output must equal its alone outputs bit for
// bit. Strict plans on `backend` at `threads` threads. hash: over the alone outputs, in sample
// order. Throws VoltaError when `build` breaks its contract (a batch without axis 0 of extent B,
// a sample whose input depends on its batch).
CheckResult check_batch(const std::function<Subject(int64_t batch)>& build, const Backend& backend,
                        std::span<const int64_t> batches, int threads);

}  // namespace volta::conformance
