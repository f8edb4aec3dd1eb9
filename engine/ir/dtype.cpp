#include "volta/ir/dtype.h"

namespace volta {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::F64:
    case DType::I64:
      return 8;
    case DType::F32:
    case DType::I32:
      return 4;
    case DType::Bool:
      return 1;
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
