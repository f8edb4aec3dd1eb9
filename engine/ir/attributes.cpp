#include "volta/ir/attributes.h"

#include <cstdio>

#include "volta/ir/printer.h"

namespace volta {
namespace {

// Round-trippable text for a double (so hashes of graphs with different values differ).
std::string float_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

std::string_view attr_type_name(AttrType type) {
  switch (type) {
    case AttrType::Int:
      return "int";
    case AttrType::Float:
      return "float";
    case AttrType::String:
      return "string";
    case AttrType::Ints:
      return "ints";
    case AttrType::Floats:
      return "floats";
    case AttrType::Tensor:
      return "tensor";
  }
  return "?";
}

std::string attr_value_str(const AttrValue& v) {
  switch (attr_type_of(v)) {
    case AttrType::Int:
      return std::to_string(std::get<int64_t>(v));
    case AttrType::Float:
      return float_text(std::get<double>(v));
    case AttrType::String:
      return "\"" + std::get<std::string>(v) + "\"";
    case AttrType::Ints: {
      std::string out = "[";
      for (int64_t x : std::get<std::vector<int64_t>>(v)) {
        out += (out.size() > 1 ? "," : "") + std::to_string(x);
      }
      return out + "]";
    }
    case AttrType::Floats: {
      std::string out = "[";
      for (double x : std::get<std::vector<double>>(v)) {
        out += (out.size() > 1 ? "," : "") + float_text(x);
      }
      return out + "]";
    }
    case AttrType::Tensor: {
      const Tensor& t = std::get<Tensor>(v);
      StableHasher h;
      h.bytes(t.data(), t.nbytes());
      return "tensor<" + std::string(dtype_name(t.dtype())) + t.shape().str() + ",#" +
             hash_hex(h.digest()) + ">";
    }
  }
  return "?";
}

}  // namespace volta
