#pragma once
// The strict JSON subset a checkpoint header uses: objects, strings (every escape, \u escapes and
// surrogate pairs decoded to UTF-8), arrays and non-negative integers. Anything else (floats,
// negatives, true/false/null, duplicate keys) is refused, so a header has one reading only.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace volta::checkpoint_json {

struct Value;
struct Member;
using Object = std::vector<Member>;  // in file order, keys unique
using Array = std::vector<Value>;

struct Value {
  std::variant<uint64_t, std::string, Array, Object> data;
};

struct Member {
  std::string key;
  Value value;
};

// The first byte offset that is not valid UTF-8, or npos when all of `text` is.
size_t find_invalid_utf8(std::string_view text);

// Parses one object followed only by JSON whitespace (the padding). Throws CheckpointError:
// CK-BAD-JSON (with the byte offset) or CK-DUPLICATE-KEY.
Object parse_object(std::string_view text);

// Appends `text` as a JSON string: quotes, backslash and control characters escaped.
void append_quoted(std::string& out, std::string_view text);

}  // namespace volta::checkpoint_json
