#pragma once
// Internal to the harness: the checked-in data files (tolerances, expectations) are TSV.

#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace volta::conformance {

inline std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, '\t')) fields.push_back(field);
  return fields;
}

// Calls row(fields, line_number) for every line that is neither empty nor a '#' comment.
template <class Row>
void for_each_tsv_row(std::string_view text, const Row& row) {
  std::istringstream in{std::string(text)};
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    row(split_tabs(line), number);
  }
}

}  // namespace volta::conformance
