#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "volta/ir/tensor.h"

namespace volta {

enum class AttrType : uint8_t { Int, Float, String, Ints, Floats, Tensor };
std::string_view attr_type_name(AttrType type);

// Variant order matches AttrType.
using AttrValue =
    std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>, Tensor>;

inline AttrType attr_type_of(const AttrValue& v) { return static_cast<AttrType>(v.index()); }
std::string attr_value_str(const AttrValue& v);  // canonical text, used by printing and hashing

// Node attributes as given by the builder or importer: ordered by name, so iteration
// (printing, hashing) is deterministic. Defaults live in the op table, not here.
using Attributes = std::map<std::string, AttrValue, std::less<>>;

}  // namespace volta
