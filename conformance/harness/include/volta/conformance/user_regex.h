#pragma once
// Patterns that users and committed files give to std::regex (ECMAScript): the perf policy's
// threshold rows and SQL's volta_regex_match. libstdc++'s regex compiler reads the numbers of
// quantifiers and back-references into a long with no overflow check (undefined behaviour, found
// by perf_policy_fuzz under UBSan) and recurses with a pattern's nesting, so two limits keep a
// pattern inside what it handles: no number of more than 9 digits, and at most 1000 characters.

#include <optional>
#include <string>
#include <string_view>

namespace volta::conformance {

inline constexpr size_t kMaxRegexLength = 1000;

// Why `pattern` is refused before std::regex sees it ("has a number of 10 or more digits, ..."),
// or nullopt when it is within the limits (it may still be an invalid regex).
std::optional<std::string> regex_limit_problem(std::string_view pattern);

}  // namespace volta::conformance
