#pragma once
// The C++ side of the interop harness (for Boost.Test tests): finds the Python venv with the
// pinned packages (scripts/ci/interop_venv.sh; tests only, the product has no Python dependency)
// and runs this folder's scripts in it. A test asks python_or_skip() first; without a venv it
// logs skipped_line() and the test returns, and CTest reports it SKIPPED, not passed
// (SKIP_REGULAR_EXPRESSION, set by cmake/VoltaInterop.cmake).
//
// The venv is $VOLTA_INTEROP_VENV (CTest sets it from the CMake cache variable of that name),
// else the VOLTA_INTEROP_VENV the test was compiled with.

#include <sys/wait.h>

#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "volta/testing/scratch_dir.h"

namespace volta::interop {

struct ScriptResult {
  int status = -1;     // the exit status; -1 when killed by a signal
  std::string output;  // stdout and stderr together
};

inline std::filesystem::path venv_directory() {
  const char* from_environment = std::getenv("VOLTA_INTEROP_VENV");
  return (from_environment != nullptr && *from_environment != '\0') ? from_environment
                                                                    : VOLTA_INTEROP_VENV;
}

// The venv's interpreter, or nullopt with `why_missing` set (scripts/ci/interop_venv.sh writes
// the reason it could not create one beside it, in <venv>.unavailable).
inline std::optional<std::filesystem::path> venv_python(std::string& why_missing) {
  namespace fs = std::filesystem;
  const fs::path venv = venv_directory();
  const fs::path python = venv / "bin" / "python";
  if (fs::exists(python) && fs::exists(venv / "volta-requirements.stamp")) return python;
  std::ifstream reason(venv.string() + ".unavailable");
  std::string text{std::istreambuf_iterator<char>(reason), std::istreambuf_iterator<char>()};
  while (!text.empty() && text.back() == '\n') text.pop_back();
  if (!text.empty()) {
    why_missing = text;
  } else if (fs::exists(python)) {
    why_missing =
        "it is incomplete (no volta-requirements.stamp): rerun scripts/ci/interop_venv.sh";
  } else {
    why_missing =
        "it has not been created: scripts/ci/bootstrap.sh (or interop_venv.sh) creates it";
  }
  return std::nullopt;
}

// The line that makes CTest report the test SKIPPED.
inline std::string skipped_line(const std::string& why_missing) {
  return "SKIPPED: no interop venv at " + venv_directory().string() + ": " + why_missing;
}

// What each test asks first: the venv's interpreter, or nullopt with skipped_line() logged.
inline std::optional<std::filesystem::path> python_or_skip() {
  std::string why;
  std::optional<std::filesystem::path> python = venv_python(why);
  if (!python) BOOST_TEST_MESSAGE(skipped_line(why));
  return python;
}

inline std::string shell_quoted(std::string_view text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs `python SCRIPT ARGS...` with SCRIPT from this folder (VOLTA_INTEROP_SCRIPTS).
inline ScriptResult run_script(const std::filesystem::path& python, std::string_view script,
                               const std::vector<std::string>& arguments) {
  std::string command =
      shell_quoted(python.string()) + " " +
      shell_quoted((std::filesystem::path(VOLTA_INTEROP_SCRIPTS) / script).string());
  for (const std::string& argument : arguments) command += " " + shell_quoted(argument);
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed for " + command);
  ScriptResult result;
  char buffer[4096];
  while (const size_t n = std::fread(buffer, 1, sizeof buffer, pipe))
    result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace volta::interop
