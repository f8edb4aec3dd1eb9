#pragma once
// Which runs are evidence for a commit: the one definition every gate, generated section and
// coverage query shares, so none of them reads a run another refuses.

#include <string_view>

namespace volta::conformance {

// A CTE `usable_run` (every column of `run`) over the parameters :commit (the full SHA) and
// :release (1 drops runs of dirty trees). A run is usable when it is complete, of :commit, of
// a clean tree under :release, recorded its inputs (run_input), and read only committed ones:
// no file differs from the file committed at its commit, no test-only defect was planted.
std::string_view usable_run_cte();

// A CTE `refused_run(run_id, suites, reason)`: the complete runs of :commit (clean ones under
// :release) that usable_run leaves out for their inputs, each with its first refused input in
// words ("run 7 read conformance/expectations/parity.tsv, which differs from the file
// committed at its commit"). Needs usable_run before it in the same WITH.
std::string_view refused_run_cte();

}  // namespace volta::conformance
