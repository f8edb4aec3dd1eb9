#pragma once
// Runs another program to completion and collects its output: the fresh processes of the
// determinism suite and of the perf double pass.

#include <string>
#include <vector>

namespace volta::conformance {

struct ProcessOutcome {
  bool started = false;
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  std::string output = {};  // standard output, with standard error when merged

  bool ok() const { return started && exit_code == 0; }
  std::string describe() const;  // "exit 2", "signal 11 (Killed)", "could not start: ..."
};

enum class StandardError : bool { Inherit, Merge };

// Runs argv[0] (searched in PATH when it has no '/') with this process's environment and waits
// for it. A program that cannot start gives started = false and the reason as output.
ProcessOutcome run_process(const std::vector<std::string>& argv,
                           StandardError standard_error = StandardError::Merge);

}  // namespace volta::conformance
