#include "volta/conformance/onnx_tolerances.h"

#include <algorithm>
#include <cstdio>

#include "onnx_tolerances_tsv.h"  // generated: kOnnxTolerancesTsv
#include "tsv.h"
#include "volta/conformance/expectations.h"
#include "volta/conformance/tolerance.h"
#include "volta/error.h"

namespace volta::conformance {
namespace {

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

[[noreturn]] void bad_row(int line, const std::string& what) {
  fail(ErrorCode::InvalidArgument,
       "conformance/onnx/tolerances.tsv line " + std::to_string(line) + ": " + what +
           " (columns: test pattern, backend cpu|reference|*, rtol, atol, reason)");
}

double parse_number(const std::string& text, int line) {
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && v >= 0) return v;
  } catch (const std::exception&) {
  }
  bad_row(line, "'" + text + "' is not a non-negative number");
}

}  // namespace

std::string OnnxTolerance::str() const {
  return "rtol=" + number_text(rtol) + " atol=" + number_text(atol);
}

OnnxTolerances OnnxTolerances::parse(std::string_view tsv) {
  OnnxTolerances table;
  for_each_tsv_row(tsv, [&](const std::vector<std::string>& f, int line) {
    if (f.size() != 5) {
      bad_row(line, "expected 5 tab-separated fields, found " + std::to_string(f.size()));
    }
    if (f[0].empty() || f[4].empty()) bad_row(line, "pattern and reason must not be empty");
    if (f[1] != "cpu" && f[1] != "reference" && f[1] != "*") {
      bad_row(line, "unknown backend '" + f[1] + "'");
    }
    OnnxTolerance t{parse_number(f[2], line), parse_number(f[3], line),
                    "tolerances.tsv:" + std::to_string(line), f[4]};
    table.rows_.push_back({f[0], f[1], std::move(t)});
  });
  return table;
}

const OnnxTolerances& OnnxTolerances::builtin() {
  static const OnnxTolerances kTable = parse(kOnnxTolerancesTsv);
  return kTable;
}

OnnxTolerance OnnxTolerances::lookup(std::string_view test_id, std::string_view backend) const {
  for (const Row& row : rows_) {
    if ((row.backend == "*" || row.backend == backend) && glob_match(row.pattern, test_id)) {
      return row.tolerance;
    }
  }
  return {};
}

void compare_onnx_outputs(const std::vector<Tensor>& got, const std::vector<Tensor>& want,
                          const OnnxTolerance& tolerance, std::string_view context,
                          CaseOutcome& out) {
  out.tolerance_key = tolerance.key;
  out.tolerance = tolerance.str();
  if (got.size() != want.size()) {
    out.outcome = Outcome::FailShape;
    out.message = std::string(context) + ": the model gave " + std::to_string(got.size()) +
                  " outputs, the data set expects " + std::to_string(want.size());
    return;
  }
  // ulp = 0 leaves only the rtol/atol rule: equal values pass, as in assert_allclose.
  const Tolerance tol{tolerance.atol, tolerance.rtol, 0, tolerance.reason, tolerance.key};
  out.outcome = Outcome::Pass;
  for (size_t i = 0; i < want.size(); ++i) {
    const Comparison c = compare(got[i], want[i], tol);
    out.max_abs = std::max(out.max_abs.value_or(0), c.max_abs);
    out.max_rel = std::max(out.max_rel.value_or(0), c.max_rel);
    out.max_ulp = std::max(out.max_ulp.value_or(0), c.max_ulp);
    if (!c.passed() && out.outcome == Outcome::Pass) {
      out.outcome = outcome_of(c.mismatch);
      out.message = std::string(context) + ", output " + std::to_string(i) + ": " + c.detail;
    }
  }
}

}  // namespace volta::conformance
