#pragma once
// Running a shell command from a test: its exit status and its output, stdout and stderr
// together.

#include <sys/wait.h>

#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <string>
#include <string_view>

namespace volta::testing {

struct ProcessResult {
  int status = -1;     // the exit status; -1 when killed by a signal
  std::string output;  // stdout and stderr together
};

// `text` as one single-quoted shell word.
inline std::string quoted(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs `command` (a shell fragment: quote paths with quoted()) with stderr into stdout.
inline ProcessResult shell(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  BOOST_REQUIRE(pipe != nullptr);
  ProcessResult r;
  char buf[4096];
  while (const size_t n = fread(buf, 1, sizeof buf, pipe)) r.output.append(buf, n);
  const int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

}  // namespace volta::testing
