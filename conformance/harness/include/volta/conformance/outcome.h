#pragma once
// Raw outcomes of one case and verdicts against the suite's expectations.

#include <optional>
#include <string>
#include <string_view>

namespace volta::conformance {

enum class Outcome {
  Pass,
  FailNumeric,
  FailShape,
  FailDType,
  Unsupported,  // the backend refused the case (with its diagnostic)
  Skipped,      // a precondition is absent (e.g. no CUDA device); says which
  Error,        // exception or harness fault
  Crash,        // the isolated case died (signal)
  Timeout,      // the isolated case ran past its limit and was killed
  Missing,      // expected but no result recorded
};
inline constexpr int kOutcomeCount = 10;
std::string_view outcome_name(Outcome o);  // "PASS", "FAIL_NUMERIC", ...
std::optional<Outcome> parse_outcome(std::string_view name);

enum class Verdict {
  Expected,        // PASS with no expectation, or the outcome an expectation names
  Unexpected,      // anything else that is not a pass
  UnexpectedPass,  // an expectation says it fails, and it passed: update the expectation
  Expired,         // the matching expectation is past its expiry date
};
std::string_view verdict_name(Verdict v);  // "expected", "unexpected", ...
std::optional<Verdict> parse_verdict(std::string_view name);

}  // namespace volta::conformance
