#define BOOST_TEST_MODULE tolerance
#include "volta/conformance/tolerance.h"

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>

namespace volta::conformance {

std::ostream& operator<<(std::ostream& os, Mismatch m) { return os << mismatch_name(m); }

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

Tensor f32(std::initializer_list<float> v) {
  return Tensor::from<float>(Shape{static_cast<int64_t>(v.size())}, v);
}

BOOST_AUTO_TEST_CASE(ulp_distance_counts_representable_values) {
  BOOST_TEST(ulp_distance(1.0, 1.0, DType::F32) == 0);
  BOOST_TEST(ulp_distance(1.0, std::nextafter(1.0f, 2.0f), DType::F32) == 1);
  // Across zero: -min_subnormal .. +min_subnormal is two steps (through +0).
  const float tiny = std::numeric_limits<float>::denorm_min();
  BOOST_TEST(ulp_distance(-tiny, tiny, DType::F32) == 2);
  BOOST_TEST(ulp_distance(1.0, std::nextafter(1.0, 2.0), DType::F64) == 1);
}

BOOST_AUTO_TEST_CASE(nan_positions_are_checked_before_metrics) {
  const Tolerance loose{1e9, 1e9, 1e9, "loose", "test"};
  const Comparison c = compare(f32({1, kNaN}), f32({1, 2}), loose);
  BOOST_TEST(c.mismatch == Mismatch::Nan);
  BOOST_TEST(c.worst_index == 1);
  BOOST_TEST(compare(f32({kNaN}), f32({kNaN}), Tolerance::exact("t")).passed());
}

BOOST_AUTO_TEST_CASE(infinity_signs_must_match) {
  const Tolerance loose{1e9, 1e9, 1e9, "loose", "test"};
  BOOST_TEST(compare(f32({kInf}), f32({-kInf}), loose).mismatch == Mismatch::Inf);
  BOOST_TEST(compare(f32({kInf}), f32({3e38f}), loose).mismatch == Mismatch::Inf);
  BOOST_TEST(compare(f32({-kInf}), f32({-kInf}), Tolerance::exact("t")).passed());
}

BOOST_AUTO_TEST_CASE(numeric_tolerance_is_abs_rel_or_ulp) {
  const Tolerance tol{0.0, 1e-3, 0, "rel", "test"};
  BOOST_TEST(compare(f32({1000.5f}), f32({1000.0f}), tol).passed());
  const Comparison bad = compare(f32({1, 1002}), f32({1, 1000}), tol);
  BOOST_TEST(bad.mismatch == Mismatch::Numeric);
  BOOST_TEST(bad.worst_index == 1);
  BOOST_TEST(bad.max_abs == 2.0);
  const Tolerance ulps{0, 0, 2, "ulp", "test"};
  BOOST_TEST(compare(f32({std::nextafter(1.0f, 2.0f)}), f32({1.0f}), ulps).passed());
}

BOOST_AUTO_TEST_CASE(shape_and_dtype_mismatches) {
  BOOST_TEST(compare(f32({1, 2}), f32({1}), Tolerance::exact("t")).mismatch == Mismatch::Shape);
  const Tensor i = Tensor::from<int32_t>(Shape{2}, {1, 2});
  BOOST_TEST(compare(i, f32({1, 2}), Tolerance::exact("t")).mismatch == Mismatch::DType);
  const Tensor j = Tensor::from<int32_t>(Shape{2}, {1, 3});
  BOOST_TEST(compare(i, j, Tolerance::exact("t")).mismatch == Mismatch::Numeric);
}

BOOST_AUTO_TEST_CASE(builtin_table_has_a_row_for_every_float_family) {
  const ToleranceTable& t = ToleranceTable::builtin();
  for (OpFamily f : {OpFamily::Elementwise, OpFamily::Activation, OpFamily::Linalg,
                     OpFamily::Normalization, OpFamily::Reduction}) {
    for (DType d : {DType::F32, DType::F64}) {
      const Tolerance tol = t.lookup(f, d, "cpu:reference");
      BOOST_TEST(!tol.reason.empty());
    }
  }
  BOOST_TEST(t.lookup(OpFamily::Movement, DType::F32, "cpu:reference").ulp == 0);
  BOOST_TEST(t.lookup(OpFamily::Reduction, DType::I64, "cpu:reference").abs == 0);
  BOOST_CHECK_THROW(t.lookup(OpFamily::Linalg, DType::F32, "cuda:cpu"), VoltaError);
}

BOOST_AUTO_TEST_CASE(malformed_rows_are_rejected_with_the_line) {
  try {
    ToleranceTable::parse("# header\nlinalg\tf32\tcpu:reference\t1e-5\toops\t4\twhy\n");
    BOOST_FAIL("expected a parse error");
  } catch (const VoltaError& e) {
    BOOST_TEST(std::string(e.what()).find("line 2") != std::string::npos);
    BOOST_TEST(std::string(e.what()).find("'oops'") != std::string::npos);
  }
  BOOST_CHECK_THROW(ToleranceTable::parse("linalg\tf32\tcpu:reference\t1\t1\t1\n"), VoltaError);
  BOOST_CHECK_THROW(ToleranceTable::parse("nosuch\tf32\tcpu:reference\t1\t1\t1\twhy\n"),
                    VoltaError);
}

}  // namespace
}  // namespace volta::conformance
