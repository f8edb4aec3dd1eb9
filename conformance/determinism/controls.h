#pragma once
// Test-only defects the determinism checks must catch (the negative controls), and the
// planted divergence `volta-audit diff` is demonstrated on. None of this is production code:
// the suite builds these backends around the CPU backend for its control cases only.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "subjects.h"
#include "volta/runtime/backend.h"

namespace volta::conformance {

// How the control kernel adds up the partial sums of its fixed 64 tasks.
enum class DefectiveSum {
  CompletionOrder,  // one accumulator adding the partials in the order their tasks
                    // finish: depends on thread timing
  PerThread,        // one partial per thread: depends on the thread count
  PerChunk,         // one partial per element-parallel chunk: depends on the chunk size
};

// The CPU backend, except that node "control.sum" (a full f32 ReduceSum) runs the defective
// kernel, which declares `declared` (a lie for the negative controls, the truth for the
// strict-mode cases).
std::unique_ptr<Backend> make_defective_backend(DefectiveSum sum, KernelDeterminism declared);

// x [65536] f32 -> ReduceSum "control.sum": values spanning eight orders of magnitude, so a
// different summation order changes the rounded result.
Subject control_subject();

// The CPU backend, except that the first element of node `node`'s first output has its lowest
// bit flipped after every run of that node (a planted, reproducible divergence).
std::unique_ptr<Backend> make_planted_backend(std::string node);

// A "pass" whose output depends on a heap address (it stamps the graph's node storage address
// into a node name), as a pass iterating a pointer-keyed container would.
void address_dependent_pass(Graph& graph);

// A "pass" whose output depends on whether the compiler optimized Volta: it appends ".opt"
// (__OPTIMIZE__ defined) or ".noopt" to the last node's name, as a pass whose behaviour hangs
// on undefined behaviour or on floating-point code the optimizer reassociates would.
void optimizer_dependent_pass(Graph& graph);
// "opt" or "noopt": what optimizer_dependent_pass appends in this build.
std::string_view optimizer_dependent_suffix();

// x [batch, 4096] f32 -> ReduceSum over axis 1 "control.rowsum" -> [batch]: sample i's row is
// stream i of one seed (a pure function of i), its values span eight orders of magnitude.
Subject batch_control_subject(int64_t batch);

// The CPU backend, except that node "control.rowsum" runs a row sum that cuts each row into as
// many chunks as the batch has samples and adds the chunks' partial sums: its reduction order
// follows the batch size. It declares itself bit-exact (a lie).
std::unique_ptr<Backend> make_batch_chunked_backend();

// The fresh-process controls' subjects. This process builds them as control_subject() under
// these names and runs them cleanly; a `__determinism-worker` process recognises the names
// (worker_control) and plants a defect in itself alone, so that only a check's fresh-process
// leg can see it.
inline constexpr std::string_view kWorkerFlipsOutputSubject = "control:worker-flips-output-bit";
inline constexpr std::string_view kWorkerRenamesNodeSubject = "control:worker-renames-node";

// This process's (clean) view of a fresh-process control subject.
Subject fresh_process_control_subject(std::string_view name);

// A worker's view of subject `name`, when it is a fresh-process control subject: for
// kWorkerFlipsOutputSubject the planted backend that flips the lowest bit of the output
// "control.sum"; for kWorkerRenamesNodeSubject the CPU backend and the graph with "control.sum"
// renamed "control.sum.worker". nullopt for every other name.
struct WorkerControl {
  Subject subject;
  std::unique_ptr<Backend> backend;
};
std::optional<WorkerControl> worker_control(std::string_view name);

}  // namespace volta::conformance
