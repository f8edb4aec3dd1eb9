#include "checkpoint_json.h"

#include <limits>

#include "volta/model/checkpoint.h"

namespace volta::checkpoint_json {
namespace {

// Deeper than any header needs (top level -> entry -> offsets), shallow enough that a hostile
// header cannot exhaust the stack.
constexpr int kMaxDepth = 8;

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Object parse_document() {
    skip_whitespace();
    if (peek() != '{') fail_at("expected '{'");
    Object object = parse_object_at(1);
    skip_whitespace();
    if (pos_ != text_.size()) fail_at("unexpected bytes after the header object");
    return object;
  }

 private:
  [[noreturn]] void fail_at(const std::string& what) const {
    throw CheckpointError("CK-BAD-JSON",
                          "header JSON at byte " + std::to_string(pos_) + ": " + what);
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool at_end() const { return pos_ >= text_.size(); }
  void expect(char c) {
    if (at_end() || text_[pos_] != c) fail_at(std::string("expected '") + c + "'");
    ++pos_;
  }
  void skip_whitespace() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) {
      ++pos_;
    }
  }

  Value parse_value(int depth) {
    if (depth > kMaxDepth) fail_at("nested deeper than " + std::to_string(kMaxDepth));
    skip_whitespace();
    char c = peek();
    if (c == '{') return Value{parse_object_at(depth)};
    if (c == '[') return Value{parse_array(depth)};
    if (c == '"') return Value{parse_string()};
    if (c >= '0' && c <= '9') return Value{parse_integer()};
    if (at_end()) fail_at("unexpected end of the header");
    fail_at("unsupported value (only objects, arrays, strings and non-negative integers)");
  }

  Object parse_object_at(int depth) {
    expect('{');
    Object object;
    skip_whitespace();
    if (peek() == '}') {
      ++pos_;
      return object;
    }
    while (true) {
      skip_whitespace();
      size_t key_pos = pos_;
      if (peek() != '"') fail_at("expected a string key");
      std::string key = parse_string();
      for (const Member& existing : object) {
        if (existing.key == key) {
          throw CheckpointError(
              "CK-DUPLICATE-KEY",
              "header JSON at byte " + std::to_string(key_pos) + ": duplicate key \"" + key + "\"");
        }
      }
      skip_whitespace();
      expect(':');
      Value value = parse_value(depth + 1);
      object.push_back(Member{std::move(key), std::move(value)});
      skip_whitespace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect('}');
      return object;
    }
  }

  Array parse_array(int depth) {
    expect('[');
    Array array;
    skip_whitespace();
    if (peek() == ']') {
      ++pos_;
      return array;
    }
    while (true) {
      array.push_back(parse_value(depth + 1));
      skip_whitespace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect(']');
      return array;
    }
  }

  uint64_t parse_integer() {
    if (peek() == '0' && pos_ + 1 < text_.size() && text_[pos_ + 1] >= '0' &&
        text_[pos_ + 1] <= '9') {
      fail_at("integer with a leading zero");
    }
    uint64_t value = 0;
    while (!at_end() && peek() >= '0' && peek() <= '9') {
      auto digit = static_cast<uint64_t>(peek() - '0');
      if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) {
        fail_at("integer does not fit in 64 bits");
      }
      value = value * 10 + digit;
      ++pos_;
    }
    if (peek() == '.' || peek() == 'e' || peek() == 'E') fail_at("number is not an integer");
    return value;
  }

  uint32_t parse_hex4() {
    if (pos_ + 4 > text_.size()) fail_at("truncated \\u escape");
    uint32_t value = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[pos_++];
      value <<= 4;
      if (c >= '0' && c <= '9') {
        value |= static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        value |= static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        value |= static_cast<uint32_t>(c - 'A' + 10);
      } else {
        --pos_;
        fail_at("bad hex digit in \\u escape");
      }
    }
    return value;
  }

  static void append_utf8(std::string& out, uint32_t code_point) {
    auto byte = [&out](uint32_t b) { out.push_back(static_cast<char>(b)); };
    if (code_point < 0x80) {
      byte(code_point);
    } else if (code_point < 0x800) {
      byte(0xC0 | (code_point >> 6));
      byte(0x80 | (code_point & 0x3F));
    } else if (code_point < 0x10000) {
      byte(0xE0 | (code_point >> 12));
      byte(0x80 | ((code_point >> 6) & 0x3F));
      byte(0x80 | (code_point & 0x3F));
    } else {
      byte(0xF0 | (code_point >> 18));
      byte(0x80 | ((code_point >> 12) & 0x3F));
      byte(0x80 | ((code_point >> 6) & 0x3F));
      byte(0x80 | (code_point & 0x3F));
    }
  }

  uint32_t parse_unicode_escape() {
    uint32_t unit = parse_hex4();
    if (unit >= 0xDC00 && unit <= 0xDFFF) fail_at("lone low surrogate in \\u escape");
    if (unit < 0xD800 || unit > 0xDBFF) return unit;
    if (pos_ + 2 > text_.size() || text_[pos_] != '\\' || text_[pos_ + 1] != 'u') {
      fail_at("high surrogate without a following \\u low surrogate");
    }
    pos_ += 2;
    uint32_t low = parse_hex4();
    if (low < 0xDC00 || low > 0xDFFF) fail_at("high surrogate followed by a non-low surrogate");
    return 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
  }

  std::string parse_string() {
    expect('"');
    std::string out;
    while (true) {
      if (at_end()) fail_at("unterminated string");
      char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20) fail_at("unescaped control character in string");
      ++pos_;
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (at_end()) fail_at("unterminated escape");
      char e = text_[pos_++];
      switch (e) {
        case '"':
          out.push_back('"');
          break;
        case '\\':
          out.push_back('\\');
          break;
        case '/':
          out.push_back('/');
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'u':
          append_utf8(out, parse_unicode_escape());
          break;
        default:
          --pos_;
          fail_at(std::string("unknown escape '\\") + e + "'");
      }
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

size_t find_invalid_utf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    auto lead = static_cast<unsigned char>(text[i]);
    size_t length = 0;
    uint32_t min_code_point = 0;
    if (lead < 0x80) {
      ++i;
      continue;
    }
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2, min_code_point = 0x80;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3, min_code_point = 0x800;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4, min_code_point = 0x10000;
    } else {
      return i;
    }
    if (i + length > text.size()) return i;
    uint32_t code_point = lead & (0xFF >> (length + 1));
    for (size_t k = 1; k < length; ++k) {
      auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return i;
      code_point = (code_point << 6) | (next & 0x3F);
    }
    // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8.
    if (code_point < min_code_point || (code_point >= 0xD800 && code_point <= 0xDFFF) ||
        code_point > 0x10FFFF) {
      return i;
    }
    i += length;
  }
  return std::string_view::npos;
}

Object parse_object(std::string_view text) { return Parser(text).parse_document(); }

void append_quoted(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += "\\u00";
          out.push_back(kHex[(c >> 4) & 0xF]);
          out.push_back(kHex[c & 0xF]);
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

}  // namespace volta::checkpoint_json
