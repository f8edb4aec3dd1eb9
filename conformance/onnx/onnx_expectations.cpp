#include "volta/conformance/onnx_expectations.h"

#include <fstream>
#include <sstream>

#include "tsv.h"
#include "volta/error.h"

namespace volta::conformance {
namespace {

[[noreturn]] void bad_line(std::string_view file, int line, const std::string& what) {
  fail(ErrorCode::InvalidArgument, std::string(file) + ":" + std::to_string(line) + ": " + what +
                                       " (columns: " + std::string(kOnnxExpectationColumns) + ")");
}

bool is_date(std::string_view s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  const int month = (s[5] - '0') * 10 + (s[6] - '0');
  const int day = (s[8] - '0') * 10 + (s[9] - '0');
  return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

bool is_failure(Outcome o) {
  return o == Outcome::FailNumeric || o == Outcome::FailShape || o == Outcome::FailDType;
}

}  // namespace

std::string_view onnx_category_name(OnnxCategory c) {
  switch (c) {
    case OnnxCategory::UnsupportedByDesign:
      return "unsupported-by-design";
    case OnnxCategory::NotYetImplemented:
      return "not-yet-implemented";
    case OnnxCategory::Failing:
      return "failing";
  }
  return "?";
}

std::optional<OnnxCategory> parse_onnx_category(std::string_view name) {
  for (OnnxCategory c : {OnnxCategory::UnsupportedByDesign, OnnxCategory::NotYetImplemented,
                         OnnxCategory::Failing}) {
    if (onnx_category_name(c) == name) return c;
  }
  return std::nullopt;
}

Expectation OnnxExpectation::to_harness() const {
  return {pattern, outcome, std::string(onnx_category_name(category)) + ": " + reason,
          issue,   expires, line};
}

std::vector<OnnxExpectation> parse_onnx_expectations(std::string_view tsv, std::string_view file) {
  std::vector<OnnxExpectation> out;
  for_each_tsv_row(tsv, [&](const std::vector<std::string>& f, int line) {
    if (f.size() != 7) {
      bad_line(file, line, "expected 7 tab-separated fields, found " + std::to_string(f.size()));
    }
    if (f[0].empty() || f[4].empty() || f[5].empty()) {
      bad_line(file, line, "test pattern, reason and issue must not be empty");
    }
    if (f[1] != "cpu" && f[1] != "reference" && f[1] != "*") {
      bad_line(file, line, "unknown backend '" + f[1] + "'");
    }
    const std::optional<Outcome> outcome = parse_outcome(f[2]);
    if (!outcome || (*outcome != Outcome::Unsupported && !is_failure(*outcome))) {
      bad_line(file, line,
               "'" + f[2] +
                   "' cannot be expected (UNSUPPORTED, FAIL_NUMERIC, FAIL_SHAPE or FAIL_DTYPE; "
                   "an ERROR, CRASH or TIMEOUT is a bug the gate always reports)");
    }
    const std::optional<OnnxCategory> category = parse_onnx_category(f[3]);
    if (!category) {
      bad_line(
          file, line,
          "unknown category '" + f[3] + "' (unsupported-by-design, not-yet-implemented, failing)");
    }
    if (*category == OnnxCategory::Failing && !is_failure(*outcome)) {
      bad_line(file, line, "category failing expects a FAIL_* outcome, not " + f[2]);
    }
    if (!is_date(f[6])) bad_line(file, line, "expiry '" + f[6] + "' is not a YYYY-MM-DD date");
    out.push_back({f[0], f[1], *outcome, *category, f[4], f[5], f[6], line});
  });
  return out;
}

std::vector<OnnxExpectation> load_onnx_expectations(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    fail(ErrorCode::InvalidArgument,
         "cannot read the ONNX expectations file '" + path +
             "' (conformance/onnx/expectations.tsv; --expectations DIR reads DIR/onnx.tsv)");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_onnx_expectations(text.str(), path);
}

std::vector<Expectation> onnx_expectations_for(std::span<const OnnxExpectation> all,
                                               std::string_view backend) {
  std::vector<Expectation> out;
  for (const OnnxExpectation& e : all) {
    if (e.applies_to(backend)) out.push_back(e.to_harness());
  }
  return out;
}

}  // namespace volta::conformance
