#pragma once
// How the ONNX suite compares outputs: like the ONNX backend test runner
// (numpy.testing.assert_allclose with rtol 1e-3, atol 1e-7: |got - want| <= atol + rtol *
// |want|, NaN positions equal), integers and bools exactly, dtype and shape first. A test
// gets other numbers only from a row of conformance/onnx/tolerances.tsv (compiled in), which
// must say why.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "volta/conformance/isolation.h"
#include "volta/ir/tensor.h"

namespace volta::conformance {

inline constexpr double kOnnxRtol = 1e-3;
inline constexpr double kOnnxAtol = 1e-7;

struct OnnxTolerance {
  double rtol = kOnnxRtol;
  double atol = kOnnxAtol;
  std::string key = "onnx-default";  // or "tolerances.tsv:LINE"
  std::string reason = "the ONNX backend test runner's defaults";
  std::string str() const;  // "rtol=0.001 atol=1e-07"
};

class OnnxTolerances {
 public:
  // Columns: test pattern ('*' wildcard), backend (cpu, reference or *), rtol, atol, reason.
  // Throws VoltaError(InvalidArgument) naming the line of a bad row.
  static OnnxTolerances parse(std::string_view tsv);
  static const OnnxTolerances& builtin();  // conformance/onnx/tolerances.tsv

  // The first row matching the test id and backend, or the defaults.
  OnnxTolerance lookup(std::string_view test_id, std::string_view backend) const;

 private:
  struct Row {
    std::string pattern, backend;
    OnnxTolerance tolerance;
  };
  std::vector<Row> rows_;
};

// Judges a test's outputs against the data set's expected ones. Fills outcome (PASS or
// FAIL_NUMERIC / FAIL_SHAPE / FAIL_DTYPE), max_abs / max_rel / max_ulp over every output,
// the tolerance, and for a failure a message naming the output and the worst element.
// `context` prefixes the message ("data set 0").
void compare_onnx_outputs(const std::vector<Tensor>& got, const std::vector<Tensor>& want,
                          const OnnxTolerance& tolerance, std::string_view context,
                          CaseOutcome& out);

}  // namespace volta::conformance
