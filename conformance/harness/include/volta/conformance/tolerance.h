#pragma once
// The tolerance table (conformance/harness/tolerances.tsv, compiled in) and the comparison
// every suite uses to judge one backend's output against another's.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "volta/conformance/outcome.h"
#include "volta/ir/op_schema.h"
#include "volta/ir/tensor.h"

namespace volta::conformance {

struct Tolerance {
  double abs = 0;
  double rel = 0;
  double ulp = 0;
  std::string reason;
  std::string key;  // "family/dtype/backends": recorded with every result judged by it

  static Tolerance exact(std::string key);
  std::string str() const;  // "abs=1e-05 rel=0.0001 ulp=16"
};

class ToleranceTable {
 public:
  // Parses the TSV text; throws VoltaError(InvalidArgument) naming the line on bad rows.
  static ToleranceTable parse(std::string_view tsv);
  static const ToleranceTable& builtin();  // tolerances.tsv as checked in

  // Exact for integer/bool outputs and movement ops; otherwise the row for the key, or
  // InvalidArgument when a float comparison has no row (a missing row is a bug to fix).
  Tolerance lookup(OpFamily family, DType dtype, std::string_view backends) const;
  // The row for the engine CPU's gradients of an op of `family` against the reference's
  // float64 gradients (backends "gradient:cpu:reference"); no exact shortcut: the backward of a
  // movement op sums (Expand's is a ReduceSum). InvalidArgument when the row is missing.
  Tolerance lookup_gradient(OpFamily family, DType dtype) const;

 private:
  struct Row {
    std::string family, dtype, backends;
    Tolerance tolerance;
  };
  std::vector<Row> rows_;
};

enum class Mismatch { None, DType, Shape, Nan, Inf, Numeric };
std::string_view mismatch_name(Mismatch m);
// The raw outcome a comparison gives: PASS, or FAIL_DTYPE / FAIL_SHAPE / FAIL_NUMERIC.
Outcome outcome_of(Mismatch m);

struct Comparison {
  Mismatch mismatch = Mismatch::None;
  double max_abs = 0;  // over finite elements
  double max_rel = 0;
  double max_ulp = 0;
  int64_t worst_index = -1;  // element with the largest violation (or first NaN/Inf mismatch)
  std::string detail;        // one line for reports: what differed, where, by how much
  bool passed() const { return mismatch == Mismatch::None; }
};

// NaN positions and infinity signs are checked before any metric.
Comparison compare(const Tensor& got, const Tensor& want, const Tolerance& tolerance);

// Distance in representable values between two finite numbers of the dtype.
double ulp_distance(double a, double b, DType dtype);

}  // namespace volta::conformance
