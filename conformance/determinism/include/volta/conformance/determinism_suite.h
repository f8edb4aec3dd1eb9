#pragma once
// The `determinism` suite: levels 1-4 of the determinism contract (DESIGN.md) as evidence
// rows, each family with negative controls that prove its check can fail. Backend "cpu", or
// "cuda" (DeterminismOptions::backend): there the subjects' replay-100, plan-stability and
// batch-invariance cases run on the device; the negative controls, the strict-mode cases and
// thread-invariance (a CUDA context has no worker threads to vary) belong to the cpu run, and
// the device's own negative control (a float-atomic sum claiming bit-exactness) is the device
// test cuda_device_determinism_test. A cuda case is SKIPPED under its declared precondition
// when this binary has no CUDA backend or no device, or when the backend has no kernel for an
// op of the subject (the message names it).
//
// A SUBJECT is a graph with fixed inputs: "model:transformer-block", "model:mlp", "model:cnn"
// (plus "model:transformer-block-large" and "model:cnn-large" with large_models, for the soak)
// and "onnx:<test>" for every ONNX backend test the CPU engine passes (data set 0's inputs).
// A BATCH SUBJECT is a built-in model (the -large ones with large_models): axis 0 of its input
// and of every output is the batch axis, it is built at any batch size with the same weights,
// and sample i's input is a pure function of i (counter-based random values, stream i). ONNX
// subjects have fixed shapes and declare no batch axis: they are not batch subjects.
// Families and case ids:
//   replay-100         replay:SUBJECT  `runs` executions of one compiled plan in this process and
//                                      one in each of `processes` fresh processes; PASS when
//                                      every output's bits agree. output_hash: the outputs' hash;
//                                      params "runs=100 processes=3 threads=3". The first run's
//                                      node trace is recorded (trace_store.h).
//   thread-invariance  threads:SUBJECT the outputs under the baseline configuration and under
//                                      every variation of the configuration matrix
//                                      (configs/*.conf: threads 1, 2, 4, 8 against the baseline's
//                                      3, passes off, chunk scales, reversed task order; each file
//                                      changes one setting and says why) are identical. params
//                                      lists the configurations.
//   plan-stability     plan:SUBJECT    the IR hash after every pass and the schedule, allocation
//                                      and plan hashes agree over two compiles here and one in
//                                      each fresh process. output_hash: the plan fingerprint
//                                      "plan=H ir=H schedule=H allocation=H passes=NAME:H,...",
//                                      which the plan-stability gate also compares across the
//                                      build types (Debug vs optimized) of the commit.
//   batch-invariance   batch:SUBJECT   (batch subjects only) every sample 0..63 runs alone
//                                      (batch 1); then for every size B of kBatchSizes samples
//                                      0..B-1 run as one batch, and each sample's slice of every
//                                      output must equal its alone outputs bit for bit (Strict
//                                      plans, `threads` threads). FAIL names the batch size, the
//                                      sample, the output, the first differing element and the
//                                      first divergent node. output_hash: the alone outputs'
//                                      hash; params "batches=1,2,3,7,16,64 threads=3".
//   strict-mode        strict:rejects-non-bit-exact   Strict refuses a plan that needs a
//                                      run-to-run kernel (R-STRICT-NONDETERMINISTIC, naming it);
//                      strict:relaxed-lists-non-bit-exact  Relaxed compiles it, and the plan
//                                      and the row (not_bit_exact) name that node.
// Negative controls (kNegativeControls, run every time). Each plants a test-only defect (a
// kernel that claims bit-exact but is not, a pass whose output depends on a heap address, a
// kernel whose reduction chunks follow the batch size) and is PASS only when its family's check
// catches the defect. The fresh-process controls plant theirs in the fresh worker processes
// alone (subjects "control:worker-flips-output-bit" and "control:worker-renames-node", which
// the worker recognises by name): the in-process legs see nothing, so only the fresh-process
// legs of check_replay and check_plan can catch them, and with processes = 0 they are not
// caught (FAIL). The fresh processes run for them whenever they are selected (--family,
// --filter). The cross-build control (across_builds) cannot be caught inside one run: it is
// PASS with the plan fingerprint of model:mlp after a pass that appends ".opt" or ".noopt" to a
// node name, as the build was optimized or not; the plan-stability gate must see that
// fingerprint differ between the Debug and the optimized builds of the commit.

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "volta/conformance/runner.h"

namespace volta::conformance {

inline constexpr std::string_view kDeterminismSuite = "determinism";
inline constexpr std::string_view kReplayFamily = "replay-100";
inline constexpr std::string_view kThreadInvarianceFamily = "thread-invariance";
inline constexpr std::string_view kPlanStabilityFamily = "plan-stability";
inline constexpr std::string_view kStrictModeFamily = "strict-mode";
inline constexpr std::string_view kBatchInvarianceFamily = "batch-invariance";

// What the determinism-100 gate needs of every replay (the suite's defaults), and of every
// plan-stability case: in-process runs and fresh processes.
inline constexpr int kReplayRuns = 100;
inline constexpr int kFreshProcesses = 3;
// The batch sizes batch:SUBJECT compares each sample's slice at (samples 0..63 run alone).
inline constexpr std::array<int64_t, 6> kBatchSizes = {1, 2, 3, 7, 16, 64};
// The built-in subjects (without the soak's -large ones), sorted.
inline constexpr std::array<std::string_view, 3> kBuiltinSubjects = {"model:cnn", "model:mlp",
                                                                     "model:transformer-block"};
inline constexpr std::array<std::string_view, 2> kStrictModeCases = {
    "strict:rejects-non-bit-exact", "strict:relaxed-lists-non-bit-exact"};

// The negative controls' case ids, by the family whose check each one proves. `across_builds`:
// the defect shows only between a Debug and an optimized build, so the control is judged by
// comparing its output_hash across the commit's build types, not by its outcome in one run.
struct NegativeControl {
  std::string_view family, case_id;
  bool across_builds = false;
};
inline constexpr std::array<NegativeControl, 9> kNegativeControls = {{
    {kReplayFamily, "control:replay:timing-dependent-kernel"},
    {kReplayFamily, "control:replay:fresh-process-divergence"},
    {kThreadInvarianceFamily, "control:threads:thread-count-kernel"},
    {kThreadInvarianceFamily, "control:config:chunk-size-kernel"},
    {kThreadInvarianceFamily, "control:config:task-order-kernel"},
    {kPlanStabilityFamily, "control:plan:address-dependent-pass"},
    {kPlanStabilityFamily, "control:plan:fresh-process-divergence"},
    {kPlanStabilityFamily, "control:plan:optimizer-dependent-pass", true},
    {kBatchInvarianceFamily, "control:batch:batch-size-chunked-kernel"},
}};

// What a cuda case needs; a case without it is SKIPPED with the reason.
inline constexpr std::string_view kCudaSubjectPrecondition =
    "the CUDA backend in this build, a CUDA device, and a CUDA kernel for every op of the "
    "subject";

struct DeterminismOptions {
  std::string backend = "cpu";      // the backend the subjects run on: cpu or cuda
  int runs = kReplayRuns;           // in-process executions per subject (replay-100)
  int processes = kFreshProcesses;  // fresh processes per subject (replay-100, plan-stability)
  int threads = 3;                  // threads of the replay and batch runs
  std::filesystem::path onnx_data;  // the ONNX backend test data root; empty: no onnx subjects
  std::filesystem::path onnx_expectations;  // onnx expectations.tsv: listed tests are not subjects
  std::filesystem::path configs;            // the configuration files' directory
  bool large_models = false;  // add the soak's larger models (model:cnn-large, ...-large)
  // argv prefix that starts a fresh worker process (`volta-audit __determinism-worker`);
  // empty: processes = 0.
  std::vector<std::string> worker_command;
  // The run's --family and --filter: fresh processes compute only what the selected cases need.
  std::string family, filter;
  // Plant a divergence: flip the lowest bit of element 0 of this node's first output in
  // every run (the diff demo and its test). Empty: none.
  std::string plant_divergence_node;
};

// Every case of the suite. Subjects load inside the case bodies; the fresh processes run here,
// once for all selected subjects. Throws VoltaError for a bad configuration directory or ONNX
// data, before anything is recorded.
std::vector<SuiteCase> determinism_cases(const DeterminismOptions& options);

// The fresh-process side (`volta-audit __determinism-worker`): `--subjects FILE` (one name per
// line) `--threads N [--backend NAME] [--onnx-data DIR --onnx-expectations FILE]
// [--plant-divergence NODE]`;
// prints "SUBJECT<TAB>output-hash<TAB>plan-fingerprint" or "SUBJECT<TAB>ERROR<TAB>message" per
// subject. The fresh-process controls' subject names plant their defect here (see above).
// Returns the exit status.
int determinism_worker_main(const std::vector<std::string>& args);

}  // namespace volta::conformance
