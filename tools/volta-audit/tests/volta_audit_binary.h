#pragma once
// Runs the built volta-audit binary (VOLTA_AUDIT_BINARY, set by CMake) for tests that need a
// real process: exit statuses, and the determinism suite's fresh copies of itself.

#include <string>

#include "shell_testing.h"

namespace volta::audit::testing {

using volta::testing::ProcessResult;
using volta::testing::quoted;

// `volta-audit ARGUMENTS` (a shell fragment: quote paths with quoted()).
inline ProcessResult volta_audit(const std::string& arguments) {
  return volta::testing::shell(quoted(VOLTA_AUDIT_BINARY) + " " + arguments);
}

}  // namespace volta::audit::testing
