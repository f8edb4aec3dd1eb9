#pragma once
// conformance/onnx/expectations.tsv: every ONNX backend test that is not expected to pass on
// a backend, with its category, reason, issue and expiry. A test with no line must pass; a
// listed test that passes is an unexpected pass, which fails the onnx-conformance gate until
// its line is removed.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "volta/conformance/expectations.h"

namespace volta::conformance {

enum class OnnxCategory {
  // Strings, sequences, optional, control flow, training, random ops, quantization.
  UnsupportedByDesign,
  NotYetImplemented,  // an op, attribute or dtype Volta means to support
  Failing,            // supported, and gives wrong results: a bug
};
std::string_view onnx_category_name(OnnxCategory c);  // "unsupported-by-design", ...
std::optional<OnnxCategory> parse_onnx_category(std::string_view name);

struct OnnxExpectation {
  std::string pattern;  // test id, '*' matches any run of characters
  std::string backend;  // "cpu", "reference" or "*"
  Outcome outcome;      // UNSUPPORTED, FAIL_NUMERIC, FAIL_SHAPE or FAIL_DTYPE
  OnnxCategory category;
  std::string reason, issue, expires;
  int line = 0;

  bool applies_to(std::string_view b) const { return backend == "*" || backend == b; }
  // As the harness judges verdicts and the store records expectations: the category leads
  // the reason ("unsupported-by-design: strings ...").
  Expectation to_harness() const;
};

inline constexpr std::string_view kOnnxExpectationColumns =
    "test pattern, backend (cpu|reference|*), outcome, category, reason, issue, expires "
    "YYYY-MM-DD";

// Throws VoltaError(InvalidArgument) naming the file and line of a bad row. ERROR, CRASH and
// TIMEOUT cannot be expected (the gate fails on them whatever the file says); a `failing`
// line must expect a FAIL_* outcome, the other categories UNSUPPORTED or FAIL_*.
std::vector<OnnxExpectation> parse_onnx_expectations(std::string_view tsv, std::string_view file);
// A missing file is an error: the suite always has one.
std::vector<OnnxExpectation> load_onnx_expectations(const std::string& path);

// The expectations for one backend, in file order, as the harness judges them.
std::vector<Expectation> onnx_expectations_for(std::span<const OnnxExpectation> all,
                                               std::string_view backend);

}  // namespace volta::conformance
