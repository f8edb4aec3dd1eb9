// TensorProto <-> Tensor. Data is little-endian in raw_data, or in the typed fields ONNX
// assigns to each element type (the types up to 32 bits share int32_data, f16 and bf16 as
// bits; u32 and u64 use uint64_data).

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <optional>
#include <sstream>

#include "lowering.h"
#include "proto_util.h"
#include "volta/error.h"
#include "volta/onnx/model.h"

namespace volta::onnx {
namespace {

template <class T, class Field>
void copy_field(const Field& field, Tensor& out, std::string_view what) {
  if (field.size() != out.numel()) {
    fail(ErrorCode::ImportInvalidModel, std::string(what) + ": holds " +
                                            std::to_string(field.size()) + " values for shape " +
                                            out.shape().str());
  }
  for (int64_t i = 0; i < out.numel(); ++i) {
    if constexpr (std::is_same_v<T, double>) {
      out.set_double(i, static_cast<double>(field.Get(static_cast<int>(i))));
    } else {
      out.set_int(i, static_cast<int64_t>(field.Get(static_cast<int>(i))));
    }
  }
}

// f16 and bf16 in int32_data: each value's 16 bits, not its number.
template <class Field>
void copy_bits16(const Field& field, Tensor& out, std::string_view what) {
  if (field.size() != out.numel()) {
    fail(ErrorCode::ImportInvalidModel, std::string(what) + ": holds " +
                                            std::to_string(field.size()) + " values for shape " +
                                            out.shape().str());
  }
  auto* bits = static_cast<uint16_t*>(out.data());
  for (int64_t i = 0; i < out.numel(); ++i) {
    bits[i] = static_cast<uint16_t>(field.Get(static_cast<int>(i)));
  }
}

// Raw bytes into `out`, each bool byte read as ONNX reads it (nonzero: true) and stored as 0 / 1.
void copy_raw(const std::string& bytes, Tensor& out) {
  if (out.nbytes() > 0) std::memcpy(out.data(), bytes.data(), out.nbytes());
  if (out.dtype() == DType::Bool) {
    auto* b = static_cast<uint8_t*>(out.data());
    for (int64_t i = 0; i < out.numel(); ++i) b[i] = b[i] != 0 ? 1 : 0;
  }
}

// I-INVALID-MODEL: `parts` after `where`.
[[noreturn]] void refuse(std::string_view where, std::initializer_list<std::string_view> parts) {
  std::string message(where);
  for (const std::string_view part : parts) message += part;
  fail(ErrorCode::ImportInvalidModel, message);
}

// Whether `inner` (canonical) lies in or below `dir` (canonical).
bool within(const std::filesystem::path& inner, const std::filesystem::path& dir) {
  auto i = inner.begin();
  for (auto d = dir.begin(); d != dir.end(); ++d, ++i) {
    if (i == inner.end() || *i != *d) return false;
  }
  return true;
}

// The bytes of external data: the file `location` names in the model's folder, from `offset`,
// `length` of them (the rest of the file when absent), which must be `want` bytes. The file
// must stay inside the folder: no absolute path, no `..`, no symlink out.
std::string read_external_data(const ::onnx::TensorProto& proto, std::string_view what,
                               const std::filesystem::path& model_dir, size_t want) {
  namespace fs = std::filesystem;
  const std::string where = std::string(what) + "'s external data";
  if (model_dir.empty()) {
    fail(ErrorCode::ImportUnsupported,
         std::string(what) +
             " keeps its data in an external file, and this model was read from "
             "bytes: load it from its file, whose folder holds that data");
  }
  std::string location;
  int64_t offset = 0;
  std::optional<int64_t> length;
  for (const auto& entry : proto.external_data()) {
    const std::string& key = entry.key();
    if (key == "location") {
      location = entry.value();
    } else if (key == "offset" || key == "length") {
      int64_t v = -1;
      try {
        size_t used = 0;
        v = std::stoll(entry.value(), &used);
        if (used != entry.value().size()) v = -1;
      } catch (const std::exception&) {
      }
      if (v < 0) refuse(where, {": ", key, " '", entry.value(), "' is not a byte count"});
      (key == "offset" ? offset : length.emplace()) = v;
    } else if (key != "checksum") {
      refuse(where, {" has the key '", key, "'; ONNX defines location, offset, length, checksum"});
    }
  }
  const fs::path relative(location);
  bool climbs = false;
  for (const fs::path& part : relative) climbs = climbs || part == "..";
  if (location.empty() || relative.is_absolute() || relative.has_root_name() || climbs) {
    refuse(where, {": location '", location,
                   "' is refused: external data must be a relative path without '..' inside the "
                   "model's folder ",
                   model_dir.string()});
  }
  std::error_code error;
  const fs::path folder = fs::canonical(model_dir, error);
  const fs::path file = error ? fs::path() : fs::canonical(model_dir / relative, error);
  if (error) {
    refuse(where, {": cannot open '", (model_dir / relative).string(), "': ", error.message()});
  }
  if (!within(file, folder)) {
    refuse(where,
           {": location '", location, "' resolves to ", file.string(),
            ", outside the model's folder ", folder.string(), " (a symlink out is refused)"});
  }
  if (!fs::is_regular_file(file)) {
    refuse(where, {": ", file.string(), " is not a regular file"});
  }
  const auto size = static_cast<int64_t>(fs::file_size(file));
  const int64_t count = length.value_or(size - std::min(offset, size));
  if (offset > size || count > size - offset) {
    refuse(where,
           {": offset ", std::to_string(offset), " and length ", std::to_string(count),
            " reach past the end of ", file.string(), " (", std::to_string(size), " bytes)"});
  }
  if (static_cast<size_t>(count) != want) {
    refuse(where, {" is ", std::to_string(count), " bytes; its dims and type need ",
                   std::to_string(want)});
  }
  std::ifstream in(file, std::ios::binary);
  std::string bytes(want, '\0');
  in.seekg(offset);
  if (!in.read(bytes.data(), static_cast<std::streamsize>(want))) {
    refuse(where, {": cannot read ", std::to_string(want), " bytes at offset ",
                   std::to_string(offset), " of ", file.string()});
  }
  return bytes;
}

}  // namespace

Tensor tensor_from_proto(const ::onnx::TensorProto& proto, std::string_view what,
                         const std::filesystem::path& model_dir) {
  const std::optional<DType> dtype = dtype_from_onnx(proto.data_type());
  if (!dtype) {
    fail(ErrorCode::ImportUnsupported, std::string(what) + " has element type " +
                                           onnx_type_name(proto.data_type()) +
                                           "; supported: " + onnx_tensor_types());
  }
  const bool external = proto.data_location() == ::onnx::TensorProto::EXTERNAL;
  std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());
  // Check the element count against the data before allocating: a file that is not a
  // TensorProto can still parse as one, with absurd dims.
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0 || (d > 0 && count > (int64_t{1} << 40) / d)) {
      fail(ErrorCode::ImportInvalidModel,
           std::string(what) + " has an invalid dimension " + std::to_string(d));
    }
    count *= d;
  }
  if (external) {
    // Read (and size-checked against its file) before the tensor is allocated.
    const std::string bytes =
        read_external_data(proto, what, model_dir, static_cast<size_t>(count) * dtype_size(*dtype));
    Tensor out(*dtype, Shape(dims));
    copy_raw(bytes, out);
    return out;
  }
  const int64_t stored =
      proto.has_raw_data()
          ? static_cast<int64_t>(proto.raw_data().size()) / static_cast<int64_t>(dtype_size(*dtype))
          : std::max({proto.float_data_size(), proto.double_data_size(), proto.int64_data_size(),
                      proto.int32_data_size(), proto.uint64_data_size()});
  if (stored != count) {
    fail(ErrorCode::ImportInvalidModel, std::string(what) + " holds " + std::to_string(stored) +
                                            " elements; its dims need " + std::to_string(count));
  }
  Tensor out(*dtype, Shape(dims));
  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != out.nbytes()) {
      fail(ErrorCode::ImportInvalidModel,
           std::string(what) + ": raw_data holds " + std::to_string(proto.raw_data().size()) +
               " bytes; shape " + out.shape().str() + " of " + std::string(dtype_name(*dtype)) +
               " needs " + std::to_string(out.nbytes()));
    }
    copy_raw(proto.raw_data(), out);
    return out;
  }
  switch (*dtype) {
    case DType::F32:
      copy_field<double>(proto.float_data(), out, what);
      break;
    case DType::F64:
      copy_field<double>(proto.double_data(), out, what);
      break;
    case DType::I64:
      copy_field<int64_t>(proto.int64_data(), out, what);
      break;
    case DType::U32:
    case DType::U64:
      copy_field<int64_t>(proto.uint64_data(), out, what);
      break;
    case DType::F16:
    case DType::BF16:
      copy_bits16(proto.int32_data(), out, what);
      break;
    case DType::I32:
    case DType::Bool:
    case DType::I8:
    case DType::U8:
    case DType::I16:
    case DType::U16:
      copy_field<int64_t>(proto.int32_data(), out, what);
      break;
  }
  return out;
}

::onnx::TensorProto proto_from_tensor(const Tensor& tensor, std::string_view name) {
  ::onnx::TensorProto proto;
  proto.set_name(std::string(name));
  proto.set_data_type(static_cast<int32_t>(onnx_from_dtype(tensor.dtype())));
  for (int64_t d : tensor.shape().dims()) proto.add_dims(d);
  proto.set_raw_data(tensor.data(), tensor.nbytes());
  return proto;
}

std::vector<Tensor> read_tensor_files(const std::filesystem::path& dir, std::string_view stem) {
  std::vector<Tensor> out;
  for (int k = 0;; ++k) {
    const std::filesystem::path file = dir / (std::string(stem) + "_" + std::to_string(k) + ".pb");
    if (!std::filesystem::exists(file)) break;
    out.push_back(read_tensor_file(file).tensor);
  }
  return out;
}

NamedTensor read_tensor_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(ErrorCode::InvalidArgument, "cannot open tensor file " + file.string());
  std::stringstream bytes;
  bytes << in.rdbuf();
  return parse_tensor_file(bytes.str(), file.string());
}

NamedTensor parse_tensor_file(std::string_view bytes, std::string_view source) {
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    fail(ErrorCode::ImportInvalidModel,
         std::string(source) + " is " + std::to_string(bytes.size()) +
             " bytes; a TensorProto file holds at most 2147483647 (protobuf's limit)");
  }
  ::onnx::TensorProto proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    fail(ErrorCode::ImportInvalidModel,
         std::string(source) + " is not a serialized ONNX TensorProto");
  }
  return {proto.name(), tensor_from_proto(proto, source)};
}

void write_tensor_file(const std::filesystem::path& file, const Tensor& tensor,
                       std::string_view name) {
  const std::string bytes = tensor_file_bytes(tensor, name);
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) fail(ErrorCode::InvalidArgument, "cannot write tensor file " + file.string());
}

std::string tensor_file_bytes(const Tensor& tensor, std::string_view name) {
  return proto_from_tensor(tensor, name).SerializeAsString();
}

}  // namespace volta::onnx
