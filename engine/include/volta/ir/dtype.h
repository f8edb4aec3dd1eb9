#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace volta {

// Element types. f16/bf16 take the next codes; every switch over DType is exhaustive
// (-Wswitch), so adding one points at each place that must learn it.
enum class DType : uint8_t { F32, F64, I64, I32, Bool };
inline constexpr int kDTypeCount = 5;

size_t dtype_size(DType dtype);
std::string_view dtype_name(DType dtype);  // "f32", "f64", "i64", "i32", "bool"
std::optional<DType> parse_dtype(std::string_view name);
constexpr bool is_floating(DType d) { return d == DType::F32 || d == DType::F64; }
constexpr bool is_integer(DType d) { return d == DType::I64 || d == DType::I32; }

// A set of dtypes, used by the op table's type constraints.
class DTypeSet {
 public:
  constexpr DTypeSet() = default;
  constexpr DTypeSet(std::initializer_list<DType> dtypes) {
    for (DType d : dtypes) bits_ |= bit(d);
  }
  constexpr bool contains(DType d) const { return (bits_ & bit(d)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr uint32_t bits() const { return bits_; }
  std::string str() const;  // "{f32,f64}"

 private:
  static constexpr uint32_t bit(DType d) { return 1u << static_cast<unsigned>(d); }
  uint32_t bits_ = 0;
};

inline constexpr DTypeSet kFloatTypes{DType::F32, DType::F64};
inline constexpr DTypeSet kIndexTypes{DType::I32, DType::I64};
inline constexpr DTypeSet kNumericTypes{DType::F32, DType::F64, DType::I32, DType::I64};
inline constexpr DTypeSet kAllTypes{DType::F32, DType::F64, DType::I32, DType::I64, DType::Bool};
inline constexpr DTypeSet kBoolType{DType::Bool};

// C++ storage type of each dtype. Bool is one byte holding 0 or 1.
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
  using type = uint8_t;
};
template <DType D>
using dtype_t = typename DTypeTraits<D>::type;

template <class T>
struct TypeTag {
  using type = T;
};

// Calls f(TypeTag<T>{}) with T the storage type of `dtype`.
template <class F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
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
      return f(TypeTag<uint8_t>{});
  }
  return f(TypeTag<float>{});  // unreachable: the switch is exhaustive
}

}  // namespace volta
