#pragma once
// What the tests of perf/peers' scripts share: running a shell command (shell_testing.h),
// reading back the volta-perf sample lines (perf/perf_main.cpp's format) a script wrote, and a
// scratch directory (volta/testing/scratch_dir.h).

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "shell_testing.h"
#include "volta/testing/scratch_dir.h"

namespace volta::testing {

inline std::vector<std::string> lines_of(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (size_t tab = line.find('\t'); tab != std::string::npos; tab = line.find('\t', start)) {
    fields.push_back(line.substr(start, tab - start));
    start = tab + 1;
  }
  fields.push_back(line.substr(start));
  return fields;
}

}  // namespace volta::testing
