#pragma once
// Node traces: the hash (and, below a size cap, the bytes) of every node output of one
// execution, keyed by run and subject. The determinism suite records them; `volta-audit diff`
// compares two runs' traces to name the first node whose output differs.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "volta/conformance/store.h"

namespace volta::conformance {

// Outputs above this many bytes are traced by hash only.
inline constexpr int64_t kTraceDataCap = int64_t{1} << 18;

struct NodeTraceRow {
  std::string subject;  // what ran, e.g. "onnx:test_add" or "model:transformer-block"
  int step = 0;         // position in the plan's schedule
  std::string node, op, kernel;
  std::string determinism;   // the kernel's guarantee: "bit-exact", "run-to-run", ...
  std::string origin;        // the pass that produced the node, or the frontend that built it
  int output = 0;            // output index of the node
  std::string dtype, shape;  // "f32", "[2,3]"
  std::string hash;          // 16 hex digits over the output's bytes
  std::optional<std::vector<std::byte>> data;  // the bytes; nullopt above kTraceDataCap
};

// One transaction (a savepoint of the caller's, when it has one open: run_suite records a
// batch's results and traces together); the run must be 'running'. Rows of one (run,
// subject, step, output) are unique: recording a subject twice in one run is refused
// (StoreError naming run, subject, step and output), and the batch with it.
void record_traces(ResultStore& store, int64_t run_id, std::span<const NodeTraceRow> rows);

// Every trace row of `run_id`, ordered by subject, step, output. Empty when it has none.
std::vector<NodeTraceRow> load_traces(const Database& db, int64_t run_id);

}  // namespace volta::conformance
