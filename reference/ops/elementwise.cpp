// Reference elementwise ops: arithmetic, the math functions, rounding, Mod, Min/Max, Where, Cast,
// BitCast and Clip (element maps: ref_elementwise.h).

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>

#include "ref_elementwise.h"

namespace volta::reference {
namespace {

// ---- Arithmetic ---------------------------------------------------------------------------

std::vector<Tensor> add(const Node&, RefInputs in, RefOutputTypes out) {
  return {zip_numeric(*in[0], *in[1], out[0], std::plus<double>{}, wrapping_add)};
}

std::vector<Tensor> sub(const Node&, RefInputs in, RefOutputTypes out) {
  return {zip_numeric(*in[0], *in[1], out[0], std::minus<double>{}, wrapping_sub)};
}

std::vector<Tensor> mul(const Node&, RefInputs in, RefOutputTypes out) {
  return {zip_numeric(*in[0], *in[1], out[0], std::multiplies<double>{}, wrapping_mul)};
}

// Integer division truncates toward zero; a zero divisor is an error rather than UB, and
// lowest / -1 wraps like every other integer overflow. u64 divides as unsigned.
int64_t integer_divide(int64_t a, int64_t b, int64_t element, DType dtype) {
  if (b == 0) {
    kernel_fail("integer division by zero: divisor element " + std::to_string(element) +
                " (of B broadcast to the output shape) is 0; integer divisors must be nonzero");
  }
  if (dtype == DType::U64) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) / static_cast<uint64_t>(b));
  }
  return b == -1 ? wrapping_neg(a) : a / b;
}

std::vector<Tensor> div(const Node&, RefInputs in, RefOutputTypes out) {
  if (is_floating(in[0]->dtype())) {
    return {zip_float(*in[0], *in[1], out[0], std::divides<double>{})};
  }
  const Tensor a = broadcast_to(*in[0], out[0].shape);
  const Tensor b = broadcast_to(*in[1], out[0].shape);
  Tensor y(out[0].dtype, out[0].shape);
  for (int64_t i = 0; i < y.numel(); ++i)
    y.set_int(i, integer_divide(a.get_int(i), b.get_int(i), i, y.dtype()));
  return {y};
}

std::vector<Tensor> pow(const Node&, RefInputs in, RefOutputTypes out) {
  return {zip_float(*in[0], *in[1], out[0], [](double a, double b) { return std::pow(a, b); })};
}

std::vector<Tensor> neg(const Node&, RefInputs in, RefOutputTypes) {
  return {map_numeric(*in[0], std::negate<double>{}, wrapping_neg)};
}

std::vector<Tensor> abs(const Node&, RefInputs in, RefOutputTypes) {
  if (is_unsigned(in[0]->dtype())) return {*in[0]};
  return {map_numeric(
      *in[0], [](double x) { return std::fabs(x); }, wrapping_abs)};
}

std::vector<Tensor> sqrt(const Node&, RefInputs in, RefOutputTypes) {
  return {map_float(*in[0], [](double x) { return std::sqrt(x); })};
}

std::vector<Tensor> reciprocal(const Node&, RefInputs in, RefOutputTypes) {
  return {map_float(*in[0], [](double x) { return 1.0 / x; })};
}

std::vector<Tensor> exp(const Node&, RefInputs in, RefOutputTypes) {
  return {map_float(*in[0], [](double x) { return std::exp(x); })};
}

std::vector<Tensor> log(const Node&, RefInputs in, RefOutputTypes) {
  return {map_float(*in[0], [](double x) { return std::log(x); })};
}

// ---- Trigonometric and hyperbolic ----------------------------------------------------------

std::vector<Tensor> sin(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], [](double x) { return std::sin(x); });
}

std::vector<Tensor> cos(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], [](double x) { return std::cos(x); });
}

std::vector<Tensor> tan(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], [](double x) { return std::tan(x); });
}

std::vector<Tensor> asin(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], [](double x) { return std::asin(x); });
}

std::vector<Tensor> acos(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], [](double x) { return std::acos(x); });
}

std::vector<Tensor> atan(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], [](double x) { return std::atan(x); });
}

std::vector<Tensor> sinh(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], [](double x) { return std::sinh(x); });
}

std::vector<Tensor> cosh(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], [](double x) { return std::cosh(x); });
}

std::vector<Tensor> asinh(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], [](double x) { return std::asinh(x); });
}

std::vector<Tensor> acosh(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], [](double x) { return std::acosh(x); });
}

std::vector<Tensor> atanh(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], [](double x) { return std::atanh(x); });
}

// ---- Rounding ------------------------------------------------------------------------------

std::vector<Tensor> floor(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], [](double x) { return std::floor(x); });
}

std::vector<Tensor> ceil(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], [](double x) { return std::ceil(x); });
}

// Halves to even, like numpy.round: std::round takes a half away from zero, so a half goes
// to 2 round(x / 2) instead (x - trunc(x) and x / 2 are exact).
double round_half_even(double x) {
  const bool half = std::fabs(x - std::trunc(x)) == 0.5;
  return half ? 2.0 * std::round(x / 2.0) : std::round(x);
}

std::vector<Tensor> round(const Node&, RefInputs in, RefOutputTypes) {
  return map_double(*in[0], round_half_even);
}

std::vector<Tensor> sign(const Node&, RefInputs in, RefOutputTypes) {
  const Tensor& x = *in[0];
  Tensor y(x.dtype(), x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (is_floating(x.dtype())) {
      const double v = x.get_double(i);
      y.set_double(i, std::isnan(v) ? v : (v > 0.0 ? 1.0 : (v < 0.0 ? -1.0 : 0.0)));
    } else {
      const int64_t v = x.get_int(i);
      if (is_unsigned(x.dtype())) {
        y.set_int(i, v != 0 ? 1 : 0);
      } else {
        y.set_int(i, v > 0 ? 1 : (v < 0 ? -1 : 0));
      }
    }
  }
  return {y};
}

// ---- Mod -----------------------------------------------------------------------------------

// Floats: r = a - trunc(a / b) * b exactly (std::fmod); fmod=0 moves a remainder whose sign
// differs from b's by b, and gives a zero remainder b's sign (numpy.mod).
double float_mod(double a, double b, bool c_fmod) {
  const double r = std::fmod(a, b);
  if (c_fmod || std::isnan(r)) return r;
  if (r == 0.0) return std::copysign(0.0, b);
  return (r < 0.0) != (b < 0.0) ? r + b : r;
}

// Integers: the remainder of truncated division, then (fmod=0) moved into b's sign. u64
// divides as unsigned (its remainder has no sign to move).
int64_t integer_mod(int64_t a, int64_t b, bool c_fmod, int64_t element, DType dtype) {
  if (b == 0) {
    kernel_fail("Mod: integer division by zero: divisor element " + std::to_string(element) +
                " (of B broadcast to the output shape) is 0; integer divisors must be nonzero");
  }
  if (dtype == DType::U64) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) % static_cast<uint64_t>(b));
  }
  if (b == -1) return 0;  // INT64_MIN % -1 overflows in C++
  const int64_t r = a % b;
  if (c_fmod || r == 0) return r;
  return (r < 0) != (b < 0) ? r + b : r;
}

std::vector<Tensor> mod(const Node& node, RefInputs in, RefOutputTypes out) {
  const bool c_fmod = AttrReader(node).get_int("fmod") != 0;
  const Operands x = broadcast_pair(in, out[0]);
  Tensor y(out[0].dtype, out[0].shape);
  for (int64_t i = 0; i < y.numel(); ++i) {
    if (is_floating(y.dtype())) {
      y.set_double(i, float_mod(x.a.get_double(i), x.b.get_double(i), c_fmod));
    } else {
      y.set_int(i, integer_mod(x.a.get_int(i), x.b.get_int(i), c_fmod, i, y.dtype()));
    }
  }
  return {y};
}

// ---- Min / Max (variadic, broadcasting, NaN propagates) -----------------------------------

template <bool kTakeMax>
double pick_float(double a, double b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  return kTakeMax ? std::max(a, b) : std::min(a, b);
}

template <bool kTakeMax>
int64_t pick_int(int64_t a, int64_t b) {
  return kTakeMax ? std::max(a, b) : std::min(a, b);
}

template <bool kTakeMax>
std::vector<Tensor> extremum(const Node&, RefInputs in, RefOutputTypes out) {
  const int64_t flip = order_flip(out[0].dtype);
  auto pick_key = [flip](int64_t a, int64_t b) {
    return pick_int<kTakeMax>(a ^ flip, b ^ flip) ^ flip;
  };
  Tensor y = broadcast_to(*in[0], out[0].shape);
  for (size_t k = 1; k < in.size(); ++k) {
    y = zip_numeric(y, *in[k], out[0], pick_float<kTakeMax>, pick_key);
  }
  return {y};
}

// ---- Selection -----------------------------------------------------------------------------

std::vector<Tensor> where(const Node&, RefInputs in, RefOutputTypes out) {
  const Tensor condition = broadcast_to(*in[0], out[0].shape);
  const Tensor x = broadcast_to(*in[1], out[0].shape);
  const Tensor y = broadcast_to(*in[2], out[0].shape);
  Tensor result(out[0].dtype, out[0].shape);
  for (int64_t i = 0; i < result.numel(); ++i) {
    copy_element(condition.get_int(i) != 0 ? x : y, i, result, i);
  }
  return {result};
}

// ---- Cast ---------------------------------------------------------------------------------

// Float to integer truncates toward zero; a value with no integer of the target width
// (NaN, +-Inf, out of range) is an error rather than an unspecified result.
template <class To>
To float_to_integer(double x, int64_t element, DType to) {
  const double truncated = std::trunc(x);
  // [lowest, max + 1): 0 or -2^(bits-1), and a power of two, all exact in double.
  const double lowest = static_cast<double>(std::numeric_limits<To>::lowest());
  const double past_max = std::ldexp(1.0, std::numeric_limits<To>::digits);
  if (!(truncated >= lowest && truncated < past_max)) {
    kernel_fail("Cast: element " + std::to_string(element) + " is " + number_str(x) +
                ", which has no " + std::string(dtype_name(to)) +
                " value (valid: finite values in [" +
                std::to_string(+std::numeric_limits<To>::lowest()) + ", " +
                std::to_string(+std::numeric_limits<To>::max()) + "] after truncation)");
  }
  return static_cast<To>(truncated);
}

// One element from storage type From to storage type To.
template <class From, class To>
To cast_value(From x, int64_t element, DType to) {
  if constexpr (kIsHalf<From>) {
    return cast_value<double, To>(static_cast<double>(x), element, to);  // exact widening
  } else if constexpr (std::is_same_v<To, bool>) {
    return x != From{0};
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    return float_to_integer<To>(static_cast<double>(x), element, to);
  } else {
    // float -> float rounds to nearest; int -> float rounds to nearest in one step (never
    // through double, which could round twice); int -> int wraps (two's complement).
    return static_cast<To>(x);
  }
}

std::vector<Tensor> cast(const Node&, RefInputs in, RefOutputTypes out) {
  const Tensor& x = *in[0];
  Tensor y(out[0].dtype, out[0].shape);
  visit_dtype(x.dtype(), [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    visit_dtype(y.dtype(), [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      const From* src = x.data_as<From>();
      To* dst = y.data_as<To>();
      for (int64_t i = 0; i < x.numel(); ++i) dst[i] = cast_value<From, To>(src[i], i, y.dtype());
    });
  });
  return {y};
}

// ---- BitCast ------------------------------------------------------------------------------

// The input's bytes as the output's. ONNX reads them little endian, which is the storage order
// on every machine Volta builds for. A bool is 0 or 1: a nonzero byte becomes 1.
static_assert(std::endian::native == std::endian::little);

std::vector<Tensor> bit_cast(const Node&, RefInputs in, RefOutputTypes out) {
  const Tensor& x = *in[0];
  Tensor y(out[0].dtype, out[0].shape);
  if (x.nbytes() != y.nbytes()) {
    kernel_fail("BitCast: " + std::to_string(x.nbytes()) + " input bytes for " +
                std::to_string(y.nbytes()) + " output bytes");
  }
  if (x.nbytes() > 0) std::memcpy(y.data(), x.data(), x.nbytes());
  if (y.dtype() == DType::Bool) {
    auto* bytes = static_cast<unsigned char*>(y.data());
    for (size_t i = 0; i < y.nbytes(); ++i) bytes[i] = bytes[i] != 0 ? 1 : 0;
  }
  return {y};
}

// ---- Clip ---------------------------------------------------------------------------------

// An integer bound from a double attribute, as an order key (order_flip): min rounds up, max
// rounds down, both clamped to the dtype's range so that, e.g., max = 1e20 on i32 means "no
// upper bound".
int64_t integer_bound(double bound, bool round_up, DType dtype) {
  const double rounded = round_up ? std::ceil(bound) : std::floor(bound);
  const int64_t flip = order_flip(dtype);
  const auto lowest = static_cast<double>(lowest_of(dtype));
  // max + 1 as a double: exact, a power of two (u64: 2^64).
  const int value_bits = 8 * static_cast<int>(dtype_size(dtype)) - (is_unsigned(dtype) ? 0 : 1);
  const double past_max = std::ldexp(1.0, value_bits);
  if (rounded <= lowest) return lowest_of(dtype) ^ flip;
  if (rounded >= past_max) return highest_of(dtype) ^ flip;
  const int64_t value = flip != 0 ? static_cast<int64_t>(static_cast<uint64_t>(rounded))
                                  : static_cast<int64_t>(rounded);
  return value ^ flip;
}

std::vector<Tensor> clip(const Node& node, RefInputs in, RefOutputTypes) {
  const AttrReader attrs(node);
  const double lo = attrs.get_float("min");
  const double hi = attrs.get_float("max");
  if (std::isnan(lo) || std::isnan(hi)) {
    kernel_fail("Clip bounds must be numbers, got min " + number_str(lo) + " and max " +
                number_str(hi));
  }
  const Tensor& x = *in[0];
  // max first, then min: when min > max every element becomes max (numpy and ONNX agree).
  // A 16-bit float's bounds are the dtype's values nearest to them.
  const double lo_float = is_half(x.dtype()) ? round_to(x.dtype(), lo) : lo;
  const double hi_float = is_half(x.dtype()) ? round_to(x.dtype(), hi) : hi;
  auto clip_float = [lo_float, hi_float](double v) {
    return std::isnan(v) ? v : std::min(std::max(v, lo_float), hi_float);
  };
  const int64_t flip = order_flip(x.dtype());
  const int64_t lo_key = integer_bound(lo, /*round_up=*/true, x.dtype());
  const int64_t hi_key = integer_bound(hi, /*round_up=*/false, x.dtype());
  auto clip_int = [lo_key, hi_key, flip](int64_t v) {
    return std::min(std::max(v ^ flip, lo_key), hi_key) ^ flip;
  };
  return {map_numeric(x, clip_float, clip_int)};
}

// ---- Bit operations (integers; an int64 holds every width's bits, u64's included) ---------

template <class Fn>
std::vector<Tensor> bits(RefInputs in, RefOutputTypes out, Fn fn) {
  const Operands x = broadcast_pair(in, out[0]);
  Tensor y(out[0].dtype, out[0].shape);
  for (int64_t i = 0; i < y.numel(); ++i) y.set_int(i, fn(x.a.get_int(i), x.b.get_int(i)));
  return {y};
}

std::vector<Tensor> bitwise_and(const Node&, RefInputs in, RefOutputTypes out) {
  return bits(in, out, [](int64_t a, int64_t b) { return a & b; });
}

std::vector<Tensor> bitwise_or(const Node&, RefInputs in, RefOutputTypes out) {
  return bits(in, out, [](int64_t a, int64_t b) { return a | b; });
}

std::vector<Tensor> bitwise_xor(const Node&, RefInputs in, RefOutputTypes out) {
  return bits(in, out, [](int64_t a, int64_t b) { return a ^ b; });
}

std::vector<Tensor> bitwise_not(const Node&, RefInputs in, RefOutputTypes) {
  return {map_int(*in[0], [](int64_t x) { return ~x; })};
}

// Values shifted as 64-bit words and wrapped back to the width (a signed value is read sign-
// extended, so its arithmetic right shift is int64's). A shift by the width or more, or a
// negative one, leaves the sign extension alone: 0, or -1 for a right shift of a negative X.
std::vector<Tensor> bit_shift(const Node& node, RefInputs in, RefOutputTypes out) {
  const bool left = AttrReader(node).get_string("direction") == "left";
  const DType dtype = out[0].dtype;
  const auto width = static_cast<int64_t>(8 * dtype_size(dtype));
  const bool is_signed = !is_unsigned(dtype);
  return bits(in, out, [=](int64_t a, int64_t b) {
    // u64 reads back negative past 2^63 - 1: as unsigned it is a shift past the width.
    const bool in_range =
        is_signed ? b >= 0 && b < width : static_cast<uint64_t>(b) < static_cast<uint64_t>(width);
    if (!in_range) return left || !is_signed || a >= 0 ? int64_t{0} : int64_t{-1};
    if (left) return static_cast<int64_t>(static_cast<uint64_t>(a) << b);
    return is_signed ? a >> b : static_cast<int64_t>(static_cast<uint64_t>(a) >> b);
  });
}

}  // namespace

void register_elementwise(RefTable& table) {
  using K = OpKind;
  register_kernel(table, K::Add, add);
  register_kernel(table, K::Sub, sub);
  register_kernel(table, K::Mul, mul);
  register_kernel(table, K::Div, div);
  register_kernel(table, K::Pow, pow);
  register_kernel(table, K::Neg, neg);
  register_kernel(table, K::Abs, abs);
  register_kernel(table, K::Sqrt, sqrt);
  register_kernel(table, K::Reciprocal, reciprocal);
  register_kernel(table, K::Exp, exp);
  register_kernel(table, K::Log, log);
  register_kernel(table, K::Sin, sin);
  register_kernel(table, K::Cos, cos);
  register_kernel(table, K::Tan, tan);
  register_kernel(table, K::Asin, asin);
  register_kernel(table, K::Acos, acos);
  register_kernel(table, K::Atan, atan);
  register_kernel(table, K::Sinh, sinh);
  register_kernel(table, K::Cosh, cosh);
  register_kernel(table, K::Asinh, asinh);
  register_kernel(table, K::Acosh, acosh);
  register_kernel(table, K::Atanh, atanh);
  register_kernel(table, K::Floor, floor);
  register_kernel(table, K::Ceil, ceil);
  register_kernel(table, K::Round, round);
  register_kernel(table, K::Sign, sign);
  register_kernel(table, K::Mod, mod);
  register_kernel(table, K::Min, extremum<false>);
  register_kernel(table, K::Max, extremum<true>);
  register_kernel(table, K::Where, where);
  register_kernel(table, K::Cast, cast);
  register_kernel(table, K::BitCast, bit_cast);
  register_kernel(table, K::Clip, clip);
  register_kernel(table, K::BitShift, bit_shift);
  register_kernel(table, K::BitwiseAnd, bitwise_and);
  register_kernel(table, K::BitwiseOr, bitwise_or);
  register_kernel(table, K::BitwiseXor, bitwise_xor);
  register_kernel(table, K::BitwiseNot, bitwise_not);
}

}  // namespace volta::reference
