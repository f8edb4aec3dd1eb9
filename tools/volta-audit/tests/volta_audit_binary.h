#pragma once
// Runs the built volta-audit binary (VOLTA_AUDIT_BINARY, set by CMake) for tests that need a
// real process: exit statuses, and the determinism suite's fresh copies of itself.
#include <sys/wait.h>

#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <string>

namespace volta::audit::testing {

struct ProcessResult {
  int status = -1;
  std::string output;  // stdout and stderr together
};

// `text` as one single-quoted shell word.
inline std::string quoted(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// `volta-audit ARGUMENTS` (a shell fragment: quote paths with quoted()).
inline ProcessResult volta_audit(const std::string& arguments) {
  const std::string command = quoted(VOLTA_AUDIT_BINARY) + " " + arguments + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  BOOST_REQUIRE(pipe != nullptr);
  ProcessResult r;
  char buf[4096];
  while (const size_t n = fread(buf, 1, sizeof buf, pipe)) r.output.append(buf, n);
  const int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace volta::audit::testing
