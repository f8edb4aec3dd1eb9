// Checkpoint format v1: canonical bytes out, validated state in (governance/checkpoint-format.md).
#include "volta/model/checkpoint.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <optional>
#include <set>
#include <tuple>

#include "checkpoint_json.h"
#include "volta/sha256.h"

namespace volta {

static_assert(std::endian::native == std::endian::little,
              "checkpoint tensors are stored little-endian as they lie in memory");

namespace {

namespace json = checkpoint_json;

constexpr std::string_view kMetadataKey = "__metadata__";
constexpr std::string_view kFormatKey = "format";
constexpr std::string_view kVersionKey = "format_version";
constexpr std::string_view kDigestPrefix = "sha256/";
// Caller keys v1.1 defines (engine_version since 1.1); any other key loads and is reported
// as unknown.
constexpr std::array<std::string_view, 11> kCallerKeys = {
    "config",         "data_cursor", "engine_commit",
    "engine_version", "graph_hash",  "model",
    "model_sha256",   "optimizer",   "optimizer_hyperparameters",
    "seed",           "step"};

[[noreturn]] void refuse(std::string_view diagnostic, const std::string& detail) {
  throw CheckpointError(diagnostic, detail);
}

std::string_view safetensors_dtype(DType dtype) {
  switch (dtype) {
    case DType::F32:
      return "F32";
    case DType::F64:
      return "F64";
    case DType::I64:
      return "I64";
    case DType::I32:
      return "I32";
    case DType::Bool:
      return "BOOL";
    case DType::F16:
      return "F16";
    case DType::BF16:
      return "BF16";
    case DType::I8:
      return "I8";
    case DType::U8:
      return "U8";
    case DType::I16:
      return "I16";
    case DType::U16:
      return "U16";
    case DType::U32:
      return "U32";
    case DType::U64:
      return "U64";
  }
  refuse("CK-INVALID-STATE", "dtype out of range");
}

std::optional<DType> dtype_from_safetensors(std::string_view name) {
  for (int code = 0; code < kDTypeCount; ++code) {
    if (safetensors_dtype(static_cast<DType>(code)) == name) return static_cast<DType>(code);
  }
  return std::nullopt;
}

// "F32, F64, ...": the safetensors dtypes a checkpoint may hold.
std::string supported_dtypes() {
  std::string names;
  for (int code = 0; code < kDTypeCount; ++code) {
    names += (names.empty() ? "" : ", ") + std::string(safetensors_dtype(static_cast<DType>(code)));
  }
  return names;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

// Shape product x dtype size, or nullopt when a dimension is negative or the product overflows.
std::optional<uint64_t> byte_size(DType dtype, const std::vector<int64_t>& shape) {
  uint64_t size = dtype_size(dtype);
  for (int64_t dim : shape) {
    if (dim < 0) return std::nullopt;
    auto d = static_cast<uint64_t>(dim);
    if (d != 0 && size > UINT64_MAX / d) return std::nullopt;
    size *= d;
  }
  return size;
}

std::string digest(std::span<const std::byte> bytes) { return Sha256().update(bytes).hex(); }

bool is_reserved_key(std::string_view key) {
  return key == kFormatKey || key == kVersionKey || key.starts_with(kDigestPrefix);
}

void check_state(const Checkpoint& checkpoint) {
  std::set<std::string_view> names;
  for (const CheckpointTensor& t : checkpoint.tensors) {
    if (t.name.empty() || t.name == kMetadataKey) {
      refuse("CK-INVALID-STATE", "tensor name \"" + t.name + "\" is empty or reserved");
    }
    if (json::find_invalid_utf8(t.name) != std::string_view::npos) {
      refuse("CK-INVALID-STATE", "tensor name is not valid UTF-8");
    }
    if (!names.insert(t.name).second) {
      refuse("CK-INVALID-STATE", "tensor \"" + t.name + "\" appears twice");
    }
    std::optional<uint64_t> size = byte_size(t.dtype, t.shape);
    if (!size || *size != t.bytes.size()) {
      refuse("CK-INVALID-STATE", "tensor \"" + t.name + "\" has " + std::to_string(t.bytes.size()) +
                                     " bytes; shape " + shape_text(t.shape) + " of " +
                                     std::string(safetensors_dtype(t.dtype)) + " needs " +
                                     (size ? std::to_string(*size) : std::string("overflow")));
    }
  }
  for (const auto& [key, value] : checkpoint.metadata) {
    if (is_reserved_key(key)) {
      refuse("CK-INVALID-STATE", "metadata key \"" + key +
                                     "\" is written by the format itself (format, "
                                     "format_version, sha256/<tensor>)");
    }
    if (json::find_invalid_utf8(key) != std::string_view::npos ||
        json::find_invalid_utf8(value) != std::string_view::npos) {
      refuse("CK-INVALID-STATE", "metadata entry \"" + key + "\" is not valid UTF-8");
    }
  }
}

void append_object_entry(std::string& out, std::string_view key, const std::string& value_json) {
  if (out.back() != '{') out.push_back(',');
  json::append_quoted(out, key);
  out.push_back(':');
  out += value_json;
}

}  // namespace

CheckpointError::CheckpointError(std::string_view diagnostic, const std::string& detail)
    : VoltaError(ErrorCode::InvalidArgument, std::string(diagnostic) + ": " + detail),
      diagnostic_(diagnostic) {}

CheckpointTensor checkpoint_tensor(std::string name, const Tensor& tensor) {
  CheckpointTensor entry{.name = std::move(name),
                         .dtype = tensor.dtype(),
                         .shape = tensor.shape().dims(),
                         .bytes = {}};
  const auto* data = static_cast<const std::byte*>(tensor.data());
  entry.bytes.assign(data, data + tensor.nbytes());
  return entry;
}

Tensor tensor_of(const CheckpointTensor& entry) {
  const std::optional<uint64_t> size = byte_size(entry.dtype, entry.shape);
  if (!size || *size != entry.bytes.size()) {
    refuse("CK-SIZE-MISMATCH",
           "tensor '" + entry.name + "' holds " + std::to_string(entry.bytes.size()) + " bytes; " +
               std::string(safetensors_dtype(entry.dtype)) + " " + shape_text(entry.shape) +
               " needs " + (size ? std::to_string(*size) : std::string("a valid shape")));
  }
  if (entry.dtype == DType::Bool) {  // a C++ bool must hold 0 or 1
    for (size_t i = 0; i < entry.bytes.size(); ++i) {
      if (std::to_integer<unsigned>(entry.bytes[i]) > 1) {
        refuse("CK-BAD-BOOL", "tensor '" + entry.name + "' holds byte " +
                                  std::to_string(std::to_integer<unsigned>(entry.bytes[i])) +
                                  " at element " + std::to_string(i) +
                                  "; a BOOL element is 0 or 1");
      }
    }
  }
  Tensor t(entry.dtype, Shape(entry.shape));
  if (!entry.bytes.empty()) std::memcpy(t.data(), entry.bytes.data(), entry.bytes.size());
  return t;
}

std::string serialize_checkpoint(const Checkpoint& checkpoint) {
  check_state(checkpoint);
  std::vector<const CheckpointTensor*> sorted;
  for (const CheckpointTensor& t : checkpoint.tensors) sorted.push_back(&t);
  std::ranges::sort(sorted, {}, &CheckpointTensor::name);

  std::map<std::string, std::string> metadata = checkpoint.metadata;
  metadata[std::string(kFormatKey)] = kCheckpointFormatName;
  metadata[std::string(kVersionKey)] = kCheckpointFormatVersion;
  for (const CheckpointTensor* t : sorted) {
    metadata[std::string(kDigestPrefix) + t->name] = digest(t->bytes);
  }
  std::string metadata_json = "{";
  for (const auto& [key, value] : metadata) {
    std::string quoted;
    json::append_quoted(quoted, value);
    append_object_entry(metadata_json, key, quoted);
  }
  metadata_json += "}";

  // Top-level keys sorted bytewise, "__metadata__" among them; entry keys sorted too.
  std::map<std::string, std::string> top;
  top[std::string(kMetadataKey)] = metadata_json;
  uint64_t offset = 0;
  for (const CheckpointTensor* t : sorted) {
    uint64_t end = offset + t->bytes.size();
    top[t->name] = "{\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(end) +
                   "],\"dtype\":\"" + std::string(safetensors_dtype(t->dtype)) +
                   "\",\"shape\":" + shape_text(t->shape) + "}";
    offset = end;
  }
  std::string header = "{";
  for (const auto& [key, value] : top) append_object_entry(header, key, value);
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');

  std::string file;
  file.reserve(8 + header.size() + offset);
  uint64_t length = header.size();
  for (int i = 0; i < 8; ++i) file.push_back(static_cast<char>((length >> (8 * i)) & 0xFF));
  file += header;
  for (const CheckpointTensor* t : sorted) {
    file.append(reinterpret_cast<const char*>(t->bytes.data()), t->bytes.size());
  }
  return file;
}

namespace {

struct HeaderEntry {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t begin = 0;
  uint64_t end = 0;
};

const json::Array* as_array(const json::Value& v) { return std::get_if<json::Array>(&v.data); }

std::optional<uint64_t> as_integer(const json::Value& v) {
  if (const auto* i = std::get_if<uint64_t>(&v.data)) return *i;
  return std::nullopt;
}

HeaderEntry read_entry(const std::string& name, const json::Value& value) {
  auto bad = [&name](const std::string& what) -> HeaderEntry {
    refuse("CK-BAD-ENTRY", "tensor \"" + name + "\": " + what +
                               " (an entry is {\"data_offsets\":[begin,end],\"dtype\":...,"
                               "\"shape\":[...]})");
  };
  if (name.empty()) return bad("the name is empty");
  const auto* object = std::get_if<json::Object>(&value.data);
  if (object == nullptr) return bad("entry is not an object");
  const json::Value* dtype_value = nullptr;
  const json::Value* shape_value = nullptr;
  const json::Value* offsets_value = nullptr;
  for (const auto& [key, field] : *object) {
    if (key == "dtype") {
      dtype_value = &field;
    } else if (key == "shape") {
      shape_value = &field;
    } else if (key == "data_offsets") {
      offsets_value = &field;
    } else {
      return bad("unknown field \"" + key + "\"");
    }
  }
  if (!dtype_value || !shape_value || !offsets_value) return bad("missing field");
  const auto* dtype_name = std::get_if<std::string>(&dtype_value->data);
  if (dtype_name == nullptr) return bad("dtype is not a string");
  std::optional<DType> dtype = dtype_from_safetensors(*dtype_name);
  if (!dtype) {
    refuse("CK-UNKNOWN-DTYPE", "tensor \"" + name + "\": dtype \"" + *dtype_name +
                                   "\" is not supported (supported: " + supported_dtypes() + ")");
  }
  HeaderEntry entry{name, *dtype, {}, 0, 0};
  const json::Array* shape = as_array(*shape_value);
  if (shape == nullptr) return bad("shape is not an array");
  for (const json::Value& dim : *shape) {
    std::optional<uint64_t> d = as_integer(dim);
    if (!d || *d > static_cast<uint64_t>(INT64_MAX)) return bad("shape holds a non-integer");
    entry.shape.push_back(static_cast<int64_t>(*d));
  }
  const json::Array* offsets = as_array(*offsets_value);
  if (offsets == nullptr || offsets->size() != 2 || !as_integer((*offsets)[0]) ||
      !as_integer((*offsets)[1])) {
    return bad("data_offsets is not two integers");
  }
  entry.begin = *as_integer((*offsets)[0]);
  entry.end = *as_integer((*offsets)[1]);
  return entry;
}

// The buffer's length once every entry is checked: sorted by offsets, each starts where the
// one before ends (no holes, no overlaps), and each holds exactly shape x dtype bytes.
uint64_t check_offsets(std::vector<HeaderEntry>& entries) {
  std::ranges::sort(entries, [](const HeaderEntry& a, const HeaderEntry& b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
  });
  uint64_t expected = 0;
  for (const HeaderEntry& e : entries) {
    if (e.begin != expected || e.end < e.begin) {
      refuse("CK-BAD-OFFSETS", "tensor \"" + e.name + "\" has data_offsets [" +
                                   std::to_string(e.begin) + "," + std::to_string(e.end) +
                                   "]; it must begin at " + std::to_string(expected) +
                                   " (tensors tile the buffer from 0, no holes or overlaps)");
    }
    std::optional<uint64_t> size = byte_size(e.dtype, e.shape);
    if (!size || *size != e.end - e.begin) {
      refuse("CK-SIZE-MISMATCH",
             "tensor \"" + e.name + "\" spans " + std::to_string(e.end - e.begin) +
                 " bytes; shape " + shape_text(e.shape) + " of " +
                 std::string(safetensors_dtype(e.dtype)) + " needs " +
                 (size ? std::to_string(*size) : std::string("more than 2^64")));
    }
    expected = e.end;
  }
  return expected;
}

std::map<std::string, std::string> read_metadata(const json::Value* value) {
  std::map<std::string, std::string> metadata;
  if (value == nullptr) return metadata;
  const auto* object = std::get_if<json::Object>(&value->data);
  if (object == nullptr) refuse("CK-BAD-METADATA", "__metadata__ is not an object");
  for (const auto& [key, field] : *object) {
    const auto* text = std::get_if<std::string>(&field.data);
    if (text == nullptr) {
      refuse("CK-BAD-METADATA", "__metadata__ entry \"" + key + "\" is not a string");
    }
    metadata[key] = *text;
  }
  return metadata;
}

// "MAJOR.MINOR" with decimal numbers; nullopt for anything else.
std::optional<std::pair<uint64_t, uint64_t>> parse_version(std::string_view text) {
  size_t dot = text.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == text.size() || dot > 9 ||
      text.size() - dot - 1 > 9) {
    return std::nullopt;
  }
  auto number = [](std::string_view digits) -> std::optional<uint64_t> {
    uint64_t n = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return std::nullopt;
      n = n * 10 + static_cast<uint64_t>(c - '0');
    }
    return n;
  };
  auto major = number(text.substr(0, dot));
  auto minor = number(text.substr(dot + 1));
  if (!major || !minor) return std::nullopt;
  return std::pair{*major, *minor};
}

void check_format(const std::map<std::string, std::string>& metadata) {
  auto format = metadata.find(std::string(kFormatKey));
  if (format == metadata.end() || format->second != kCheckpointFormatName) {
    refuse("CK-FOREIGN", "__metadata__ has no format \"" + std::string(kCheckpointFormatName) +
                             "\"; this is not a Volta checkpoint");
  }
  auto version = metadata.find(std::string(kVersionKey));
  std::string written = version == metadata.end() ? std::string("(none)") : version->second;
  auto parsed = parse_version(written);
  if (!parsed || parsed->first == 0) {
    refuse("CK-BAD-VERSION", "format_version \"" + written + "\" is not MAJOR.MINOR (supported: " +
                                 std::string(kCheckpointFormatVersion) + ")");
  }
  if (parsed->first > 1) {
    refuse("CK-NEWER-MAJOR", "format_version " + written + " is newer than this reader's " +
                                 std::string(kCheckpointFormatVersion) +
                                 " (supported: major version 1)");
  }
}

}  // namespace

LoadedCheckpoint parse_checkpoint(std::string_view file) {
  if (file.size() < 8) {
    refuse("CK-TRUNCATED",
           "file has " + std::to_string(file.size()) + " bytes; the header length alone needs 8");
  }
  uint64_t header_length = 0;
  for (int i = 7; i >= 0; --i) {
    header_length = (header_length << 8) | static_cast<unsigned char>(file[i]);
  }
  if (header_length > kCheckpointHeaderCap) {
    refuse("CK-HEADER-TOO-LARGE", "header length " + std::to_string(header_length) +
                                      " exceeds the cap of " +
                                      std::to_string(kCheckpointHeaderCap) + " bytes");
  }
  if (header_length > file.size() - 8) {
    refuse("CK-TRUNCATED", "header length " + std::to_string(header_length) + " needs " +
                               std::to_string(8 + header_length) + " bytes; the file has " +
                               std::to_string(file.size()));
  }
  std::string_view header = file.substr(8, header_length);
  if (header.empty() || header.front() != '{') {
    refuse("CK-HEADER-START", "the header must start with '{' (no leading whitespace)");
  }
  if (size_t bad = json::find_invalid_utf8(header); bad != std::string_view::npos) {
    refuse("CK-BAD-UTF8", "header byte " + std::to_string(bad) + " is not valid UTF-8");
  }
  json::Object top = json::parse_object(header);

  const json::Value* metadata_value = nullptr;
  std::vector<HeaderEntry> entries;
  for (const auto& [key, value] : top) {
    if (key == kMetadataKey) {
      metadata_value = &value;
    } else {
      entries.push_back(read_entry(key, value));
    }
  }
  uint64_t buffer_length = check_offsets(entries);
  uint64_t available = file.size() - 8 - header_length;
  if (buffer_length > available) {
    refuse("CK-TRUNCATED", "tensors need " + std::to_string(buffer_length) +
                               " buffer bytes; the file has " + std::to_string(available));
  }
  if (buffer_length < available) {
    refuse("CK-TRAILING-BYTES", std::to_string(available - buffer_length) +
                                    " bytes follow the last tensor (at file byte " +
                                    std::to_string(8 + header_length + buffer_length) + ")");
  }

  std::map<std::string, std::string> metadata = read_metadata(metadata_value);
  check_format(metadata);
  LoadedCheckpoint loaded;
  loaded.format_version = metadata[std::string(kVersionKey)];
  std::string_view buffer = file.substr(8 + header_length);
  std::set<std::string> digested;
  std::ranges::sort(entries, {}, &HeaderEntry::name);
  for (HeaderEntry& e : entries) {
    CheckpointTensor tensor{e.name, e.dtype, std::move(e.shape), {}};
    const auto* begin = reinterpret_cast<const std::byte*>(buffer.data() + e.begin);
    tensor.bytes.assign(begin, begin + (e.end - e.begin));
    std::string key = std::string(kDigestPrefix) + e.name;
    auto recorded = metadata.find(key);
    if (recorded == metadata.end()) {
      refuse("CK-MISSING-DIGEST",
             "tensor \"" + e.name + "\" has no \"" + key + "\" in __metadata__");
    }
    std::string actual = digest(tensor.bytes);
    if (recorded->second != actual) {
      refuse("CK-DIGEST-MISMATCH", "tensor \"" + e.name + "\": recorded sha256 " +
                                       recorded->second + ", its bytes hash to " + actual);
    }
    digested.insert(key);
    loaded.checkpoint.tensors.push_back(std::move(tensor));
  }
  for (const auto& [key, value] : metadata) {
    if (key.starts_with(kDigestPrefix)) {
      if (!digested.contains(key)) {
        refuse("CK-BAD-METADATA", "\"" + key + "\" names no tensor in the file");
      }
      continue;
    }
    if (key == kFormatKey || key == kVersionKey) continue;
    if (std::ranges::find(kCallerKeys, key) == kCallerKeys.end()) {
      loaded.unknown_metadata_keys.push_back(key);
    }
    loaded.checkpoint.metadata[key] = value;
  }
  return loaded;
}

}  // namespace volta
