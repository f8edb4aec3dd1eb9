#include "volta/ir/dtype.h"

namespace volta {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::F64:
    case DType::I64:
      return 8;
    case DType::F32:
    case DType::I32:
    case DType::U32:
      return 4;
    case DType::F16:
    case DType::BF16:
    case DType::I16:
    case DType::U16:
      return 2;
    case DType::Bool:
    case DType::I8:
    case DType::U8:
      return 1;
    case DType::U64:
      return 8;
  }
  return 0;
}

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::F32:
      return "f32";
    case DType::F64:
      return "f64";
    case DType::I64:
      return "i64";
    case DType::I32:
      return "i32";
    case DType::Bool:
      return "bool";
    case DType::F16:
      return "f16";
    case DType::BF16:
      return "bf16";
    case DType::I8:
      return "i8";
    case DType::U8:
      return "u8";
    case DType::I16:
      return "i16";
    case DType::U16:
      return "u16";
    case DType::U32:
      return "u32";
    case DType::U64:
      return "u64";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (int i = 0; i < kDTypeCount; ++i) {
    auto d = static_cast<DType>(i);
    if (dtype_name(d) == name) return d;
  }
  return std::nullopt;
}

std::string DTypeSet::str() const {
  std::string out = "{";
  for (int i = 0; i < kDTypeCount; ++i) {
    auto d = static_cast<DType>(i);
    if (!contains(d)) continue;
    if (out.size() > 1) out += ",";
    out += dtype_name(d);
  }
  return out + "}";
}

}  // namespace volta
