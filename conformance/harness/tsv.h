#pragma once
// Internal to the harness: the checked-in data files (tolerances, expectations) are TSV.

#include <sstream>
#include <string>
#include <vector>

namespace volta::conformance {

inline std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, '\t')) fields.push_back(field);
  return fields;
}

}  // namespace volta::conformance
