#pragma once
// Executions the determinism checks compare: a plan run on a backend with a hash of every
// output's bits and, on request, a node trace (every step's outputs, hashed).

#include <string>
#include <vector>

#include "volta/conformance/trace_store.h"
#include "volta/runtime/runtime.h"

namespace volta::conformance {

// 16 hex digits over the outputs' dtypes, shapes and bytes.
std::string hash_outputs(const std::vector<Tensor>& outputs);

// "plan=H ir=H schedule=H allocation=H passes=NAME:H,...": what plan stability compares.
std::string plan_fingerprint(const ExecutionPlan& plan);

struct TracedRun {
  std::string hash;                 // hash_outputs of the run's outputs
  std::vector<NodeTraceRow> trace;  // one row per step output; empty unless traced
};

// Runs `plan` once on `ctx`. With `trace`, every step output is hashed (and copied up to
// kTraceDataCap) under `subject`; `frontend` names the origin of nodes no pass produced.
TracedRun run_plan(const ExecutionPlan& plan, const Backend& backend, ExecutionContext& ctx,
                   const std::vector<Tensor>& inputs, bool trace, const std::string& subject = {},
                   const std::string& frontend = {});

}  // namespace volta::conformance
