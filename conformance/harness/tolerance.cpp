#include "volta/conformance/tolerance.h"

#include <bit>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "tolerances_tsv.h"  // generated: kTolerancesTsv
#include "tsv.h"

namespace volta::conformance {
namespace {

double parse_number(const std::string& text, int line) {
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && v >= 0) return v;
  } catch (const std::exception&) {
  }
  fail(ErrorCode::InvalidArgument, "tolerances.tsv line " + std::to_string(line) + ": '" + text +
                                       "' is not a non-negative number");
}

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

Tolerance Tolerance::exact(std::string key) {
  return {0, 0, 0, "exact comparison", std::move(key)};
}

std::string Tolerance::str() const {
  return "abs=" + number_text(abs) + " rel=" + number_text(rel) + " ulp=" + number_text(ulp);
}

ToleranceTable ToleranceTable::parse(std::string_view tsv) {
  ToleranceTable table;
  for_each_tsv_row(tsv, [&](const std::vector<std::string>& f, int number) {
    if (f.size() != 7 || f[6].empty()) {
      fail(
          ErrorCode::InvalidArgument,
          "tolerances.tsv line " + std::to_string(number) +
              ": expected 7 tab-separated fields (family, dtype, backends, abs, rel, ulp, reason)");
    }
    if (!parse_op_family(f[0]) || !parse_dtype(f[1])) {
      fail(ErrorCode::InvalidArgument, "tolerances.tsv line " + std::to_string(number) +
                                           ": unknown family '" + f[0] + "' or dtype '" + f[1] +
                                           "'");
    }
    Tolerance t{parse_number(f[3], number), parse_number(f[4], number), parse_number(f[5], number),
                f[6], f[0] + "/" + f[1] + "/" + f[2]};
    table.rows_.push_back({f[0], f[1], f[2], std::move(t)});
  });
  return table;
}

const ToleranceTable& ToleranceTable::builtin() {
  static const ToleranceTable kTable = parse(kTolerancesTsv);
  return kTable;
}

Tolerance ToleranceTable::lookup(OpFamily family, DType dtype, std::string_view backends) const {
  const std::string key = std::string(op_family_name(family)) + "/" +
                          std::string(dtype_name(dtype)) + "/" + std::string(backends);
  if (!is_floating(dtype) || family == OpFamily::Movement || family == OpFamily::Logical) {
    return Tolerance::exact(key);
  }
  for (const Row& row : rows_) {
    if (row.family == op_family_name(family) && row.dtype == dtype_name(dtype) &&
        row.backends == backends) {
      return row.tolerance;
    }
  }
  fail(ErrorCode::InvalidArgument,
       "no tolerance for " + key +
           ": add a row with its reason to conformance/harness/tolerances.tsv");
}

Tolerance ToleranceTable::lookup_gradient(OpFamily family, DType dtype) const {
  constexpr std::string_view kBackends = "gradient:cpu:reference";
  for (const Row& row : rows_) {
    if (row.family == op_family_name(family) && row.dtype == dtype_name(dtype) &&
        row.backends == kBackends) {
      return row.tolerance;
    }
  }
  fail(ErrorCode::InvalidArgument,
       "no tolerance for " + std::string(op_family_name(family)) + "/" +
           std::string(dtype_name(dtype)) + "/" + std::string(kBackends) +
           ": add a row with its reason to conformance/harness/tolerances.tsv");
}

Outcome outcome_of(Mismatch m) {
  switch (m) {
    case Mismatch::None:
      return Outcome::Pass;
    case Mismatch::DType:
      return Outcome::FailDType;
    case Mismatch::Shape:
      return Outcome::FailShape;
    case Mismatch::Nan:
    case Mismatch::Inf:
    case Mismatch::Numeric:
      return Outcome::FailNumeric;
  }
  return Outcome::Error;
}

std::string_view mismatch_name(Mismatch m) {
  switch (m) {
    case Mismatch::None:
      return "none";
    case Mismatch::DType:
      return "dtype";
    case Mismatch::Shape:
      return "shape";
    case Mismatch::Nan:
      return "nan";
    case Mismatch::Inf:
      return "inf";
    case Mismatch::Numeric:
      return "numeric";
  }
  return "?";
}

double ulp_distance(double a, double b, DType dtype) {
  if (a == b) return 0;
  // Map floats onto a monotonic integer line; the distance counts representable values.
  if (is_half(dtype)) {  // a and b are values of the dtype, so converting them is exact
    auto line = [dtype](double x) {
      const uint16_t bits = dtype == DType::F16 ? Float16(x).bits() : BFloat16(x).bits();
      const int64_t magnitude = bits & 0x7fff;
      return (bits & 0x8000) != 0 ? -magnitude : magnitude;
    };
    return std::abs(static_cast<double>(line(a) - line(b)));
  }
  if (dtype == DType::F32) {
    auto line = [](float x) {
      const auto bits = std::bit_cast<int32_t>(x);
      return bits < 0 ? -static_cast<int64_t>(bits & 0x7fffffff) : static_cast<int64_t>(bits);
    };
    return std::abs(static_cast<double>(line(static_cast<float>(a)) - line(static_cast<float>(b))));
  }
  auto line = [](double x) {
    const auto bits = std::bit_cast<int64_t>(x);
    return bits < 0 ? -static_cast<long double>(bits & 0x7fffffffffffffffLL)
                    : static_cast<long double>(bits);
  };
  return static_cast<double>(std::abs(line(a) - line(b)));
}

Comparison compare(const Tensor& got, const Tensor& want, const Tolerance& tol) {
  Comparison c;
  if (got.dtype() != want.dtype()) {
    c.mismatch = Mismatch::DType;
    c.detail = "dtype " + std::string(dtype_name(got.dtype())) + ", expected " +
               std::string(dtype_name(want.dtype()));
    return c;
  }
  if (got.shape() != want.shape()) {
    c.mismatch = Mismatch::Shape;
    c.detail = "shape " + got.shape().str() + ", expected " + want.shape().str();
    return c;
  }
  const bool floating = is_floating(got.dtype());
  double worst_excess = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    if (!floating) {
      if (got.get_int(i) != want.get_int(i) && c.mismatch == Mismatch::None) {
        c.mismatch = Mismatch::Numeric;
        c.worst_index = i;
        c.detail = "element " + std::to_string(i) + " is " + std::to_string(got.get_int(i)) +
                   ", expected " + std::to_string(want.get_int(i));
      }
      if (got.get_int(i) != want.get_int(i)) {
        c.max_abs =
            std::max(c.max_abs, std::abs(static_cast<double>(got.get_int(i) - want.get_int(i))));
      }
      continue;
    }
    const double g = got.get_double(i), w = want.get_double(i);
    if (std::isnan(g) != std::isnan(w)) {
      c.mismatch = Mismatch::Nan;
      c.worst_index = i;
      c.detail = "element " + std::to_string(i) + " is " + number_text(g) + ", expected " +
                 number_text(w) + " (NaN positions differ)";
      return c;
    }
    if (std::isnan(g)) continue;
    if ((std::isinf(g) || std::isinf(w)) && g != w) {
      c.mismatch = Mismatch::Inf;
      c.worst_index = i;
      c.detail = "element " + std::to_string(i) + " is " + number_text(g) + ", expected " +
                 number_text(w) + " (infinities differ)";
      return c;
    }
    if (std::isinf(g)) continue;
    const double abs_err = std::abs(g - w);
    const double rel_err = w != 0 ? abs_err / std::abs(w) : (abs_err == 0 ? 0 : INFINITY);
    const double ulp = ulp_distance(g, w, got.dtype());
    c.max_abs = std::max(c.max_abs, abs_err);
    c.max_rel = std::max(c.max_rel, rel_err);
    c.max_ulp = std::max(c.max_ulp, ulp);
    const bool within = abs_err <= tol.abs + tol.rel * std::abs(w) || ulp <= tol.ulp;
    if (!within) {
      const double excess = abs_err - (tol.abs + tol.rel * std::abs(w));
      if (c.mismatch == Mismatch::None || excess > worst_excess) {
        worst_excess = excess;
        c.mismatch = Mismatch::Numeric;
        c.worst_index = i;
        c.detail = "element " + std::to_string(i) + " is " + number_text(g) + ", expected " +
                   number_text(w) + " (abs " + number_text(abs_err) + ", " + number_text(ulp) +
                   " ulp; allowed " + tol.str() + ")";
      }
    }
  }
  return c;
}

}  // namespace volta::conformance
