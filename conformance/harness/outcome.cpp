#include "volta/conformance/outcome.h"

#include <array>

namespace volta::conformance {
namespace {

constexpr std::array<std::string_view, kOutcomeCount> kOutcomes = {
    "PASS",    "FAIL_NUMERIC", "FAIL_SHAPE", "FAIL_DTYPE", "UNSUPPORTED",
    "SKIPPED", "ERROR",        "CRASH",      "TIMEOUT",    "MISSING"};
constexpr std::array<std::string_view, 4> kVerdicts = {"expected", "unexpected", "unexpected-pass",
                                                       "expired"};

}  // namespace

std::string_view outcome_name(Outcome o) { return kOutcomes.at(static_cast<size_t>(o)); }

std::optional<Outcome> parse_outcome(std::string_view name) {
  for (size_t i = 0; i < kOutcomes.size(); ++i) {
    if (kOutcomes[i] == name) return static_cast<Outcome>(i);
  }
  return std::nullopt;
}

std::string_view verdict_name(Verdict v) { return kVerdicts.at(static_cast<size_t>(v)); }

std::optional<Verdict> parse_verdict(std::string_view name) {
  for (size_t i = 0; i < kVerdicts.size(); ++i) {
    if (kVerdicts[i] == name) return static_cast<Verdict>(i);
  }
  return std::nullopt;
}

}  // namespace volta::conformance
