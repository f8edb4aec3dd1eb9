#pragma once
// The configuration matrix: conformance/determinism/configs/*.conf. baseline.conf sets every
// setting; each other file changes exactly one of them and says why the contract promises
// that the change does not change a single output bit.
//
//   # comment
//   reason = tasks own their outputs, so the order workers claim them in cannot matter
//   task_order = reverse
//
// Settings: threads (1..1024), passes (on|off), chunk_scale (a positive number scaling the
// chunk of element-parallel loops), task_order (forward|reverse).

#include <filesystem>
#include <string>
#include <vector>

#include "volta/runtime/backend.h"

namespace volta::conformance {

struct ExecutionConfig {
  int threads = 3;
  bool passes = true;
  ScheduleOptions schedule;
};

struct ConfigFile {
  std::string name;     // file stem, e.g. "task-order-reverse"
  std::string reason;   // why the outputs must not change
  std::string setting;  // the one setting this file changes
  ExecutionConfig config;
};

struct ConfigMatrix {
  ExecutionConfig baseline;
  std::vector<ConfigFile> variations;  // sorted by name
};

// Reads `dir`/baseline.conf and every other *.conf. Throws VoltaError(InvalidArgument)
// naming the file and line: unknown setting, bad value, missing reason, or a variation that
// changes no setting, more than one, or sets one to the baseline's value.
ConfigMatrix load_config_matrix(const std::filesystem::path& dir);

// "threads=3 passes=on chunk_scale=1 task_order=forward"
std::string describe(const ExecutionConfig& config);

}  // namespace volta::conformance
