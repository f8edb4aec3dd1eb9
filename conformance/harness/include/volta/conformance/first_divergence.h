#pragma once
// The first-divergence finder: given the node traces of two executions of the same subject,
// the first step (in schedule order) whose output bits differ, with its node, op, kernel
// variant, the pass that produced it and the first differing element.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "volta/conformance/trace_store.h"

namespace volta::conformance {

struct Divergence {
  std::string subject;
  // The two rows of the first differing step/output. Where only one run traced that
  // step/output (a plan difference), the other row has only subject and step set.
  NodeTraceRow a, b;
  // "plans differ at step 3: node 'x' (Add) vs node 'y' (Mul)" when the two runs did not
  // execute the same plan; empty when they did (then the outputs differ).
  std::string plan_difference;
  // "element 5 [1,1]: 0.5 (0x3f000000) vs 0.50000006 (0x3f000001)", or why it is unknown
  // ("outputs are traced by hash only: 1048576 bytes, above the 262144-byte trace cap").
  std::string first_element;
};

// The rows of one subject of each run, ordered by step and output. nullopt: no divergence
// (same steps, same hashes). Runs that traced a different number of steps or outputs differ
// in plan, at the first step/output one of them lacks.
std::optional<Divergence> first_divergence(std::span<const NodeTraceRow> a,
                                           std::span<const NodeTraceRow> b);

// One paragraph naming subject, step, node, op, kernel variants, origin and first element.
std::string describe(const Divergence& d);

struct TraceDiff {
  int64_t subjects = 0;  // subjects traced in both runs
  int64_t outputs = 0;   // node output hashes compared (up to each subject's divergence)
  std::vector<Divergence> divergences;            // the first one per diverging subject, by subject
  std::vector<std::string> only_in_a, only_in_b;  // subjects traced in one run only
};

// Compares every subject the two traces share (rows as load_traces returns them).
TraceDiff diff_traces(std::span<const NodeTraceRow> a, std::span<const NodeTraceRow> b);

}  // namespace volta::conformance
