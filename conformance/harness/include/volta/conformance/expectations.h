#pragma once
// Expectations: a checked-in file per suite (conformance/expectations/SUITE.tsv) naming the
// cases known not to pass, each with its reason, issue and expiry date, and per backend one
// more (conformance/expectations/BACKEND/SUITE.tsv) for what that backend alone does not pass
// yet (ops without a CUDA kernel). Verdicts compare a case's raw outcome with the expectation
// that matches its id.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "volta/conformance/outcome.h"

namespace volta::conformance {

struct Expectation {
  std::string pattern;  // case id, '*' matches any run of characters
  Outcome outcome;      // the outcome the case is expected to have
  std::string reason;
  std::string issue;      // where the fix is tracked, e.g. "#4"
  std::string expires;    // YYYY-MM-DD: after this date the expectation fails the gate
  int line = 0;           // in the file, for messages
  std::string file = {};  // the file, as parse_expectations was told it
};

// Parses the TSV text (columns: pattern, outcome, reason, issue, expires; '#' comments).
// Throws VoltaError(InvalidArgument) naming the file, line and what is wrong.
std::vector<Expectation> parse_expectations(std::string_view tsv, std::string_view file);
// Reads DIR/SUITE.tsv and, for a run on `backend`, DIR/BACKEND/SUITE.tsv, whose lines come
// first (so they win where both match a case). A missing file means no expectations.
std::vector<Expectation> load_expectations(const std::string& dir, std::string_view suite,
                                           std::string_view backend = {});
// The backend's own file: DIR/BACKEND/SUITE.tsv.
std::string backend_expectations_path(const std::string& dir, std::string_view suite,
                                      std::string_view backend);

bool glob_match(std::string_view pattern, std::string_view text);
// The first expectation whose pattern matches `case_id`.
const Expectation* match_expectation(std::span<const Expectation> expectations,
                                     std::string_view case_id);

// today: YYYY-MM-DD. No expectation: PASS is expected, SKIPPED is expected only from a case
// that declared the precondition it lacks (`declared_precondition`), anything else is
// unexpected. An expired expectation gives Expired whatever the outcome. A SKIPPED from a case
// that declared its precondition is expected whatever an unexpired expectation names: the case
// could not run here, and the expectation speaks of what it gives where it runs (an op
// expected UNSUPPORTED on cuda, on a machine without a device). Otherwise the named outcome is
// expected, a PASS instead is an unexpected pass, anything else unexpected.
Verdict verdict_for(Outcome outcome, const Expectation* expectation, std::string_view today,
                    bool declared_precondition = false);

std::string today_utc();  // YYYY-MM-DD

}  // namespace volta::conformance
