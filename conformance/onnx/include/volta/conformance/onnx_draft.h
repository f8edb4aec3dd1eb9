#pragma once
// Drafting conformance/onnx/expectations.tsv from a recorded run: one line per test and
// backend that did not pass, categorized by rule (see classify_onnx_failure), keeping the
// category, reason, issue and expiry a human gave an exact line whose outcome still holds.
// ERROR, CRASH and TIMEOUT cannot be expected: they are listed as comments, to be fixed.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "volta/conformance/onnx_corpus.h"
#include "volta/conformance/onnx_expectations.h"
#include "volta/conformance/sqlite.h"

namespace volta::conformance {

struct OnnxClassification {
  OnnxCategory category;
  std::string topic;  // "strings", "sequences", ..., "dtype", "op"; "" for failing
};

// By rule, from the test's ops (every node), its id and the diagnostic: training preview ops,
// strings, sequences, optional, control flow, random ops (and training-mode Dropout),
// quantization ops are unsupported by design; other dtypes and anything else refused are not
// yet implemented; a FAIL_* outcome is failing.
OnnxClassification classify_onnx_failure(std::string_view test_id, std::span<const std::string> ops,
                                         Outcome outcome, std::string_view message);

struct OnnxDraft {
  std::string text;                  // the new expectations file
  int64_t lines = 0;                 // expectation lines written
  int64_t kept = 0;                  // of which kept a human's fields
  int64_t bugs = 0;                  // ERROR / CRASH / TIMEOUT results listed as comments
  std::vector<std::string> dropped;  // existing lines not carried over, with why
};

// Reads the evidence of the corpus's suite for `commit` (as the gate does). Throws
// VoltaError(InvalidArgument) when a backend of kOnnxBackends has results for fewer than the
// corpus floor of tests: a draft from a
// partial run would drop the lines of the tests it did not run. `today`: YYYY-MM-DD, from
// which new lines expire (unsupported-by-design after a year, not-yet-implemented after 180
// days, failing after 90).
OnnxDraft draft_onnx_expectations(const Database& db, std::string_view commit,
                                  std::span<const OnnxExpectation> existing, std::string_view today,
                                  const OnnxCorpus& corpus = kOnnxCorpus);

// The commit of the newest complete run with results of `suite`; "" when there is none.
std::string newest_onnx_commit(const Database& db, std::string_view suite = kOnnxCorpus.suite);

}  // namespace volta::conformance
