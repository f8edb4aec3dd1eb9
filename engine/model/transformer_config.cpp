// TransformerConfig: validation and its canonical JSON (a flat object of integers).
#include <array>
#include <cctype>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "volta/error.h"
#include "volta/model/transformer_lm.h"

namespace volta::model {
namespace {

// The size fields. The seed (unsigned) is handled apart.
struct SizeField {
  std::string_view key;
  int64_t TransformerConfig::*member;
};
constexpr std::array<SizeField, 7> kSizeFields = {{
    {"batch", &TransformerConfig::batch},
    {"d_ff", &TransformerConfig::d_ff},
    {"d_model", &TransformerConfig::d_model},
    {"heads", &TransformerConfig::heads},
    {"layers", &TransformerConfig::layers},
    {"seq", &TransformerConfig::seq},
    {"vocab", &TransformerConfig::vocab},
}};
constexpr std::string_view kSeedKey = "seed";
constexpr std::string_view kKnownKeys = "batch, d_ff, d_model, heads, layers, seed, seq, vocab";

[[noreturn]] void refuse(const std::string& what) {
  fail(ErrorCode::InvalidArgument, "model config: " + what);
}

// An integer as written: sign and magnitude, so both int64 and uint64 fields read exactly.
struct Integer {
  bool negative = false;
  uint64_t magnitude = 0;
};

// A reader of `{"key": integer, ...}` with JSON whitespace between tokens.
class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  void expect(char c) {
    skip_space();
    if (pos_ >= text_.size() || text_[pos_] != c) {
      fault(std::string("expected '") + c + "'");
    }
    ++pos_;
  }
  // Consumes `c` when it is the next token.
  bool accept(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool at_end() {
    skip_space();
    return pos_ == text_.size();
  }
  std::string key() {
    expect('"');
    const size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      const auto c = static_cast<unsigned char>(text_[pos_]);
      if (c == '\\' || c < 0x20) fault("a key holds an escape or a control character");
      ++pos_;
    }
    if (pos_ == text_.size()) fault("a key's string is not closed");
    return std::string(text_.substr(start, pos_++ - start));
  }
  Integer integer(const std::string& key) {
    skip_space();
    Integer v;
    if (pos_ < text_.size() && text_[pos_] == '-') {
      v.negative = true;
      ++pos_;
    }
    const size_t digits = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])) != 0) {
      const auto d = static_cast<uint64_t>(text_[pos_] - '0');
      if (v.magnitude > (std::numeric_limits<uint64_t>::max() - d) / 10) {
        refuse("'" + key + "' is out of range");
      }
      v.magnitude = v.magnitude * 10 + d;
      ++pos_;
    }
    const bool ends = pos_ == text_.size() || text_[pos_] == ',' || text_[pos_] == '}' ||
                      std::isspace(static_cast<unsigned char>(text_[pos_])) != 0;
    if (pos_ == digits || !ends) refuse("'" + key + "' must be an integer");
    return v;
  }
  [[noreturn]] void fault(const std::string& what) const {
    refuse("not a JSON object of integers at byte " + std::to_string(pos_) + ": " + what);
  }

 private:
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
};

int64_t as_int64(const Integer& v, const std::string& key) {
  constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (v.magnitude > kMax + (v.negative ? 1 : 0)) refuse("'" + key + "' is out of range");
  if (!v.negative) return static_cast<int64_t>(v.magnitude);
  return v.magnitude == kMax + 1 ? std::numeric_limits<int64_t>::min()
                                 : -static_cast<int64_t>(v.magnitude);
}

void set_field(TransformerConfig& config, const std::string& key, const Integer& value) {
  if (key == kSeedKey) {
    if (value.negative && value.magnitude != 0) refuse("'seed' must be a non-negative integer");
    config.seed = value.magnitude;
    return;
  }
  for (const SizeField& f : kSizeFields) {
    if (f.key == key) {
      config.*f.member = as_int64(value, key);
      return;
    }
  }
  refuse("unknown key '" + key + "'; the keys are " + std::string(kKnownKeys));
}

}  // namespace

void TransformerConfig::validate() const {
  for (const SizeField& f : kSizeFields) {
    if (this->*f.member <= 0) {
      refuse(std::string(f.key) + " is " + std::to_string(this->*f.member) +
             "; it must be positive");
    }
  }
  if (vocab > 256) {
    refuse("vocab is " + std::to_string(vocab) + "; byte tokens need a vocab of at most 256");
  }
  if (d_model % heads != 0) {
    refuse("d_model " + std::to_string(d_model) + " is not a multiple of heads " +
           std::to_string(heads));
  }
}

std::string TransformerConfig::to_json() const {
  std::map<std::string_view, std::string> values = {{kSeedKey, std::to_string(seed)}};
  for (const SizeField& f : kSizeFields) values[f.key] = std::to_string(this->*f.member);
  std::string out;
  for (const auto& [key, value] : values) {
    out += (out.empty() ? "{\"" : ",\"") + std::string(key) + "\":" + value;
  }
  return out + "}";
}

TransformerConfig TransformerConfig::from_json(std::string_view json) {
  TransformerConfig config;
  Reader reader(json);
  std::set<std::string> seen;
  reader.expect('{');
  if (!reader.accept('}')) {
    do {
      const std::string key = reader.key();
      if (!seen.insert(key).second) refuse("the key '" + key + "' appears twice");
      reader.expect(':');
      set_field(config, key, reader.integer(key));
    } while (reader.accept(','));
    reader.expect('}');
  }
  if (!reader.at_end()) reader.fault("text follows the object");
  config.validate();
  return config;
}

}  // namespace volta::model
