#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "volta/ir/float16.h"

namespace volta {

// Element types. The codes are stable (they are stored); every switch over DType is
// exhaustive (-Wswitch), so adding one points at each place that must learn it.
enum class DType : uint8_t { F32, F64, I64, I32, Bool, F16, BF16, I8, U8, I16, U16, U32, U64 };
inline constexpr int kDTypeCount = 13;

size_t dtype_size(DType dtype);
// "f32", "f64", "i64", "i32", "bool", "f16", "bf16", "i8", "u8", "i16", "u16", "u32", "u64"
std::string_view dtype_name(DType dtype);
std::optional<DType> parse_dtype(std::string_view name);
// The 16-bit floats, stored in 16 bits and computed in f32.
constexpr bool is_half(DType d) { return d == DType::F16 || d == DType::BF16; }
constexpr bool is_floating(DType d) { return d == DType::F32 || d == DType::F64 || is_half(d); }
constexpr bool is_unsigned(DType d) {
  return d == DType::U8 || d == DType::U16 || d == DType::U32 || d == DType::U64;
}
constexpr bool is_integer(DType d) {
  return d == DType::I64 || d == DType::I32 || d == DType::I8 || d == DType::I16 || is_unsigned(d);
}

// A set of dtypes, used by the op table's type constraints.
class DTypeSet {
 public:
  constexpr DTypeSet() = default;
  constexpr DTypeSet(std::initializer_list<DType> dtypes) {
    for (DType d : dtypes) bits_ |= bit(d);
  }
  constexpr bool contains(DType d) const { return (bits_ & bit(d)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr DTypeSet operator|(DTypeSet other) const { return from_bits(bits_ | other.bits_); }
  constexpr uint32_t bits() const { return bits_; }
  std::string str() const;  // "{f32,f64}"

 private:
  static constexpr uint32_t bit(DType d) { return 1u << static_cast<unsigned>(d); }
  static constexpr DTypeSet from_bits(uint32_t bits) {
    DTypeSet s;
    s.bits_ = bits;
    return s;
  }
  uint32_t bits_ = 0;
};

inline constexpr DTypeSet kFloatTypes{DType::F32, DType::F64};
inline constexpr DTypeSet kHalfTypes{DType::F16, DType::BF16};
inline constexpr DTypeSet kIndexTypes{DType::I32, DType::I64};
inline constexpr DTypeSet kNumericTypes{DType::F32, DType::F64, DType::I32, DType::I64};
// The integers beyond i32/i64: every width, signed and unsigned.
inline constexpr DTypeSet kNarrowIntegerTypes{DType::I8,  DType::U8,  DType::I16,
                                              DType::U16, DType::U32, DType::U64};
inline constexpr DTypeSet kIntegerTypes = kIndexTypes | kNarrowIntegerTypes;
inline constexpr DTypeSet kUnsignedTypes{DType::U8, DType::U16, DType::U32, DType::U64};
// Every type with numbers: what elementwise arithmetic and comparisons take.
inline constexpr DTypeSet kEveryNumericType = kNumericTypes | kHalfTypes | kNarrowIntegerTypes;
// What Neg takes: the numeric types with a sign.
inline constexpr DTypeSet kSignedNumericTypes =
    kNumericTypes | kHalfTypes | DTypeSet{DType::I8, DType::I16};
// The five types of Volta's first release, which every backend and op family covers.
inline constexpr DTypeSet kCoreTypes{DType::F32, DType::F64, DType::I32, DType::I64, DType::Bool};
inline constexpr DTypeSet kAllTypes = kEveryNumericType | DTypeSet{DType::Bool};
inline constexpr DTypeSet kBoolType{DType::Bool};

// C++ storage type of each dtype. Bool is a C++ bool: one byte holding 0 or 1.
template <DType D>
struct DTypeTraits;
template <>
struct DTypeTraits<DType::F32> {
  using type = float;
};
template <>
struct DTypeTraits<DType::F64> {
  using type = double;
};
template <>
struct DTypeTraits<DType::I64> {
  using type = int64_t;
};
template <>
struct DTypeTraits<DType::I32> {
  using type = int32_t;
};
template <>
struct DTypeTraits<DType::Bool> {
  using type = bool;
};
template <>
struct DTypeTraits<DType::F16> {
  using type = Float16;
};
template <>
struct DTypeTraits<DType::BF16> {
  using type = BFloat16;
};
template <>
struct DTypeTraits<DType::I8> {
  using type = int8_t;
};
template <>
struct DTypeTraits<DType::U8> {
  using type = uint8_t;
};
template <>
struct DTypeTraits<DType::I16> {
  using type = int16_t;
};
template <>
struct DTypeTraits<DType::U16> {
  using type = uint16_t;
};
template <>
struct DTypeTraits<DType::U32> {
  using type = uint32_t;
};
template <>
struct DTypeTraits<DType::U64> {
  using type = uint64_t;
};
static_assert(sizeof(bool) == 1, "Volta stores bool tensors one byte per element");
template <DType D>
using dtype_t = typename DTypeTraits<D>::type;

template <class T>
struct TypeTag {
  using type = T;
};

// Calls f(TypeTag<T>{}) with T the storage type of `dtype`.
template <class F>
constexpr decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::F32:
      return f(TypeTag<float>{});
    case DType::F64:
      return f(TypeTag<double>{});
    case DType::I64:
      return f(TypeTag<int64_t>{});
    case DType::I32:
      return f(TypeTag<int32_t>{});
    case DType::Bool:
      return f(TypeTag<bool>{});
    case DType::F16:
      return f(TypeTag<Float16>{});
    case DType::BF16:
      return f(TypeTag<BFloat16>{});
    case DType::I8:
      return f(TypeTag<int8_t>{});
    case DType::U8:
      return f(TypeTag<uint8_t>{});
    case DType::I16:
      return f(TypeTag<int16_t>{});
    case DType::U16:
      return f(TypeTag<uint16_t>{});
    case DType::U32:
      return f(TypeTag<uint32_t>{});
    case DType::U64:
      return f(TypeTag<uint64_t>{});
  }
  return f(TypeTag<float>{});  // unreachable: the switch is exhaustive
}

}  // namespace volta
