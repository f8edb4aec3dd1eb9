#define BOOST_TEST_MODULE cpu_dtypes
// The CPU kernels of the narrow integers (i8 u8 i16 u16 u32 u64) and the 16-bit floats (f16
// bf16): wrap-around at each width, unsigned order and division past 2^63, f16/bf16 computed
// in f32 and rounded once, Cast between them, and the integer bit operations
// (governance/numerics-policy.md).
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "test_util.h"

namespace volta {
namespace {

using test::run_op;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// A tensor of `dtype` from int64 values, wrapped to its width.
Tensor ints(DType dtype, const std::vector<int64_t>& values) {
  Tensor t(dtype, Shape{static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) t.set_int(static_cast<int64_t>(i), values[i]);
  return t;
}
// A tensor of `dtype` from doubles, each rounded once to it.
Tensor reals(DType dtype, const std::vector<double>& values) {
  Tensor t(dtype, Shape{static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) t.set_double(static_cast<int64_t>(i), values[i]);
  return t;
}
// A 16-bit tensor from its elements' bits.
Tensor bits16(DType dtype, const std::vector<uint16_t>& bits) {
  Tensor t(dtype, Shape{static_cast<int64_t>(bits.size())});
  std::copy(bits.begin(), bits.end(), static_cast<uint16_t*>(t.data()));
  return t;
}
std::vector<uint16_t> bits_of(const Tensor& t) {
  const auto* p = static_cast<const uint16_t*>(t.data());
  return {p, p + t.numel()};
}
std::vector<uint64_t> u64_of(const Tensor& t) {
  const uint64_t* p = t.data_as<uint64_t>();
  return {p, p + t.numel()};
}
std::vector<int64_t> ints_of(const Tensor& t) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.get_int(i));
  return out;
}

Tensor run1(OpKind op, const std::vector<Tensor>& inputs, Attributes attrs = {}) {
  return run_op(op, inputs, std::move(attrs))[0];
}
Tensor cast(const Tensor& x, std::string_view to) {
  return run1(OpKind::Cast, {x}, {{"to", std::string(to)}});
}

constexpr uint64_t kTop = uint64_t{1} << 63;

BOOST_AUTO_TEST_CASE(narrow_integer_arithmetic_wraps_at_its_width) {
  BOOST_TEST(ints_of(run1(OpKind::Add, {ints(DType::U8, {200, 255}), ints(DType::U8, {100, 1})})) ==
             (std::vector<int64_t>{44, 0}));
  // 65535 * 65535 would overflow int, which u16 promotes to: computed unsigned, it wraps to 1.
  BOOST_TEST(ints_of(run1(OpKind::Mul, {ints(DType::U16, {65535}), ints(DType::U16, {65535})})) ==
             (std::vector<int64_t>{1}));
  BOOST_TEST(ints_of(run1(OpKind::Sub, {ints(DType::U32, {0}), ints(DType::U32, {1})})) ==
             (std::vector<int64_t>{4294967295}));
  BOOST_TEST(ints_of(run1(OpKind::Add, {ints(DType::I8, {127}), ints(DType::I8, {1})})) ==
             (std::vector<int64_t>{-128}));
  BOOST_TEST(ints_of(run1(OpKind::Neg, {ints(DType::I16, {-32768, 5})})) ==
             (std::vector<int64_t>{-32768, -5}));
  BOOST_TEST(ints_of(run1(OpKind::Abs, {ints(DType::I8, {-128, -3})})) ==
             (std::vector<int64_t>{-128, 3}));
  BOOST_TEST(ints_of(run1(OpKind::Abs, {ints(DType::U8, {200})})) == (std::vector<int64_t>{200}));
}

BOOST_AUTO_TEST_CASE(unsigned_division_and_order_hold_past_the_signed_range) {
  // 0xFFFFFFFF is not -1: 10 / 4294967295 is 0.
  BOOST_TEST(ints_of(run1(OpKind::Div, {ints(DType::U32, {10, 4294967295}),
                                        ints(DType::U32, {4294967295, 2})})) ==
             (std::vector<int64_t>{0, 2147483647}));
  BOOST_TEST(ints_of(run1(OpKind::Div, {ints(DType::I8, {-128, 7}), ints(DType::I8, {-1, -2})})) ==
             (std::vector<int64_t>{-128, -3}));
  const Tensor big = ints(DType::U64, {-1, static_cast<int64_t>(kTop)});  // 2^64 - 1, 2^63
  BOOST_TEST(u64_of(run1(OpKind::Mod, {big, ints(DType::U64, {10, 3})})) ==
             (std::vector<uint64_t>{5, 2}));
  BOOST_TEST(u64_of(run1(OpKind::Max, {big, ints(DType::U64, {1, 1})})) ==
             (std::vector<uint64_t>{~uint64_t{0}, kTop}));
  BOOST_TEST(u64_of(run1(OpKind::Min, {big, ints(DType::U64, {1, 1})})) ==
             (std::vector<uint64_t>{1, 1}));
  BOOST_TEST(ints_of(run1(OpKind::Less, {big, ints(DType::U64, {1, 1})})) ==
             (std::vector<int64_t>{0, 0}));
  BOOST_TEST(ints_of(run1(OpKind::Mod, {ints(DType::I16, {-7, 7}), ints(DType::I16, {3, -3})})) ==
             (std::vector<int64_t>{2, -2}));
  BOOST_TEST(ints_of(run1(OpKind::Sign, {ints(DType::U8, {0, 200})})) ==
             (std::vector<int64_t>{0, 1}));
}

BOOST_AUTO_TEST_CASE(integer_clip_takes_the_integer_bounds_saturated_to_the_type) {
  const Tensor x = ints(DType::I8, {-128, -6, 0, 101, 127});
  BOOST_TEST(ints_of(run1(OpKind::Clip, {x}, {{"min", -5.5}, {"max", 100.2}})) ==
             (std::vector<int64_t>{-5, -5, 0, 100, 100}));
  BOOST_TEST(ints_of(run1(OpKind::Clip, {ints(DType::U8, {0, 255})},
                          {{"min", 1.0}, {"max", 1e9}})) == (std::vector<int64_t>{1, 255}));
  BOOST_TEST(
      u64_of(run1(OpKind::Clip, {ints(DType::U64, {-1, 5})}, {{"min", 9.0}, {"max", 1e19}})) ==
      (std::vector<uint64_t>{10000000000000000000U, 9}));
}

BOOST_AUTO_TEST_CASE(f16_and_bf16_compute_in_f32_and_round_once) {
  // 1 + 2^-11 is halfway between two f16 values: to even, 1. 65504 + 16 reaches the overflow
  // threshold: inf. 0.1 + 0.2 in f16 is 0x34CC (0.2998), one rounding of the f32 sum.
  const Tensor a = bits16(DType::F16, {0x3C00, 0x7BFF, 0x2E66});
  const Tensor b = bits16(DType::F16, {0x1000, 0x4C00, 0x3266});
  BOOST_TEST(bits_of(run1(OpKind::Add, {a, b})) == (std::vector<uint16_t>{0x3C00, 0x7C00, 0x34CC}));
  const Tensor c = reals(DType::BF16, {1.0, 3.0, -2.0});
  BOOST_TEST(bits_of(run1(OpKind::Div, {reals(DType::BF16, {1.0, 1.0, 7.0}), c})) ==
             (std::vector<uint16_t>{0x3F80, 0x3EAB, 0xC060}));  // 1, 1/3 rounded, -3.5
  BOOST_TEST(bits_of(run1(OpKind::Max, {reals(DType::F16, {kNaN, -0.0, 2.0}),
                                        reals(DType::F16, {1.0, 0.0, -kInf})})) ==
             (std::vector<uint16_t>{0x7E00, 0x8000, 0x4000}));  // NaN wins; a tie keeps the first
  BOOST_TEST(
      bits_of(run1(OpKind::Mod, {reals(DType::F16, {-7.0, 7.5}), reals(DType::F16, {3.0, 2.0})})) ==
      (std::vector<uint16_t>{0x4000, 0x3E00}));  // 2, 1.5
  BOOST_TEST(ints_of(run1(OpKind::Equal, {reals(DType::BF16, {-0.0, kNaN, 1.0}),
                                          reals(DType::BF16, {0.0, kNaN, 1.0078125})})) ==
             (std::vector<int64_t>{1, 0, 0}));
  BOOST_TEST(bits_of(run1(OpKind::Clip, {reals(DType::F16, {-3.0, 0.5, kNaN})},
                          {{"min", -1.0}, {"max", 0.25}})) ==
             (std::vector<uint16_t>{0xBC00, 0x3400, 0x7E00}));
}

BOOST_AUTO_TEST_CASE(cast_rounds_to_nearest_even_once_and_refuses_what_has_no_value) {
  BOOST_TEST(
      bits_of(cast(reals(DType::F32, {1.0, 65504.0, 65520.0, 1e-8, kNaN, -kInf, 0.1}), "f16")) ==
      (std::vector<uint16_t>{0x3C00, 0x7BFF, 0x7C00, 0x0000, 0x7E00, 0xFC00, 0x2E66}));
  BOOST_TEST(bits_of(cast(bits16(DType::BF16, {0x3F80, 0x4049}), "f16")) ==
             (std::vector<uint16_t>{0x3C00, 0x4248}));  // 1, 3.140625
  BOOST_TEST(cast(bits16(DType::F16, {0x3555}), "f64").get_double(0) == 0.333251953125);
  BOOST_TEST(ints_of(cast(ints(DType::I64, {300, -1}), "u8")) == (std::vector<int64_t>{44, 255}));
  BOOST_TEST(ints_of(cast(ints(DType::U64, {-1}), "i64")) == (std::vector<int64_t>{-1}));
  BOOST_TEST(cast(ints(DType::U64, {-1}), "f32").get_double(0) == 18446744073709551616.0);
  BOOST_TEST(ints_of(cast(reals(DType::F16, {255.9, -0.9}), "u8")) ==
             (std::vector<int64_t>{255, 0}));
  BOOST_TEST(ints_of(cast(reals(DType::BF16, {0.0, kNaN}), "bool")) ==
             (std::vector<int64_t>{0, 1}));
  try {
    cast(reals(DType::F16, {1.0, 200.0}), "i8");
    BOOST_FAIL("Cast 200 to i8 must fail");
  } catch (const VoltaError& e) {
    BOOST_TEST(
        e.message().find("value 200 at element 1 cannot be converted to i8") != std::string::npos,
        e.message());
    BOOST_TEST(e.message().find("[-128, 127]") != std::string::npos, e.message());
  }
}

BOOST_AUTO_TEST_CASE(movement_and_selection_move_every_width_bit_for_bit) {
  Tensor x(DType::F16, Shape{2, 3});
  for (int64_t i = 0; i < 6; ++i) static_cast<uint16_t*>(x.data())[i] = 0x7C01 + i;  // NaNs
  const Tensor t = run1(OpKind::Transpose, {x}, {{"perm", std::vector<int64_t>{1, 0}}});
  BOOST_TEST(bits_of(t) == (std::vector<uint16_t>{0x7C01, 0x7C04, 0x7C02, 0x7C05, 0x7C03, 0x7C06}));
  Tensor condition(DType::Bool, Shape{2});
  condition.set_int(0, 1);
  const Tensor w =
      run1(OpKind::Where, {condition, ints(DType::I8, {-1, -2}), ints(DType::I8, {5, 6})});
  BOOST_TEST(ints_of(w) == (std::vector<int64_t>{-1, 6}));
}

BOOST_AUTO_TEST_CASE(bit_operations_work_on_every_bit_and_shift_past_the_width_to_zero) {
  const Tensor x = ints(DType::U8, {0x81, 0xFF, 1, 0x80});
  const Tensor by = ints(DType::U8, {1, 7, 8, 200});
  BOOST_TEST(ints_of(run1(OpKind::BitShift, {x, by}, {{"direction", std::string("left")}})) ==
             (std::vector<int64_t>{0x02, 0x80, 0, 0}));
  BOOST_TEST(ints_of(run1(OpKind::BitShift, {x, by}, {{"direction", std::string("right")}})) ==
             (std::vector<int64_t>{0x40, 0x01, 0, 0}));
  const Tensor top = ints(DType::U64, {static_cast<int64_t>(kTop)});
  BOOST_TEST(u64_of(run1(OpKind::BitShift, {top, ints(DType::U64, {63})},
                         {{"direction", std::string("right")}})) == (std::vector<uint64_t>{1}));
  BOOST_TEST(u64_of(run1(OpKind::BitwiseAnd, {ints(DType::U64, {-1}), top})) ==
             (std::vector<uint64_t>{kTop}));
  BOOST_TEST(
      ints_of(run1(OpKind::BitwiseOr, {ints(DType::I16, {0x0F00}), ints(DType::I16, {-32768})})) ==
      (std::vector<int64_t>{-32768 + 0x0F00}));
  BOOST_TEST(
      ints_of(run1(OpKind::BitwiseXor, {ints(DType::I32, {-1, 5}), ints(DType::I32, {0, 5})})) ==
      (std::vector<int64_t>{-1, 0}));
  BOOST_TEST(ints_of(run1(OpKind::BitwiseNot, {ints(DType::I8, {0, -128, 127})})) ==
             (std::vector<int64_t>{-1, 127, -128}));
  // Signed (BitShift-28): arithmetic right shift; out-of-range shifts keep the sign extension.
  const Tensor s = ints(DType::I8, {-128, -128, 64, -1});
  const Tensor k = ints(DType::I8, {1, 9, -1, 7});
  BOOST_TEST(ints_of(run1(OpKind::BitShift, {s, k}, {{"direction", std::string("right")}})) ==
             (std::vector<int64_t>{-64, -1, 0, -1}));
  BOOST_TEST(ints_of(run1(OpKind::BitShift, {s, k}, {{"direction", std::string("left")}})) ==
             (std::vector<int64_t>{0, 0, 0, -128}));
  BOOST_TEST(ints_of(run1(OpKind::BitwiseNot, {ints(DType::U32, {0})})) ==
             (std::vector<int64_t>{4294967295}));
}

}  // namespace
}  // namespace volta
