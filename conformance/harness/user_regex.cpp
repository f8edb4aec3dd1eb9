#include "volta/conformance/user_regex.h"

namespace volta::conformance {

std::optional<std::string> regex_limit_problem(std::string_view pattern) {
  if (pattern.size() > kMaxRegexLength) {
    return "is " + std::to_string(pattern.size()) + " characters long; the limit is " +
           std::to_string(kMaxRegexLength);
  }
  size_t digits = 0;
  for (const char c : pattern) {
    digits = (c >= '0' && c <= '9') ? digits + 1 : 0;
    if (digits == 10) {
      return std::string("has a number of 10 or more digits, which std::regex cannot read");
    }
  }
  return std::nullopt;
}

}  // namespace volta::conformance
