// Checkpoint format v1 (governance/checkpoint-format.md): round trips, canonical bytes, a golden
// file built by hand from the safetensors spec, every refusal with its exact message, atomicity.
#define BOOST_TEST_MODULE checkpoint
#include "volta/model/checkpoint.h"

#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cstring>
#include <filesystem>

#include "checkpoint_files.h"
#include "volta/sha256.h"

namespace volta {
namespace {

namespace fs = std::filesystem;

using testing::bytes_of;
using testing::read_file;
using testing::write_file;

// A file with `header` (unpadded) and `buffer` behind the 8-byte little-endian length.
std::string file_with(std::string_view header, std::string_view buffer = "") {
  std::string file;
  for (int i = 0; i < 8; ++i) file.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xFF));
  return file.append(header).append(buffer);
}

std::string digest_of(std::string_view bytes) { return sha256_hex(bytes); }

// A fresh directory per test, removed afterwards.
struct TempDir {
  fs::path path;
  TempDir() {
    path =
        fs::temp_directory_path() / ("volta-checkpoint-test-" + std::to_string(::getpid()) + "-" +
                                     boost::unit_test::framework::current_test_case().p_name.get());
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

template <class Body>
void expect_refusal(Body&& body, const std::string& diagnostic, const std::string& message) {
  try {
    body();
    BOOST_ERROR("expected " << diagnostic << ", nothing was thrown");
  } catch (const CheckpointError& e) {
    BOOST_TEST(e.diagnostic() == diagnostic);
    BOOST_TEST(error_code_name(e.code()) == "E-INVALID-ARGUMENT");
    BOOST_TEST(e.message() == diagnostic + ": " + message);
  }
}

void expect_parse_refusal(std::string_view file, const std::string& diagnostic,
                          const std::string& message) {
  expect_refusal([&] { parse_checkpoint(file); }, diagnostic, message);
}

Checkpoint every_dtype_state() {
  Checkpoint state;
  state.tensors.push_back(
      {"w_f32", DType::F32, {2, 2}, bytes_of<float>({1.5F, -0.0F, 3e38F, 1e-45F})});
  state.tensors.push_back({"w_f64", DType::F64, {3}, bytes_of<double>({1.0 / 3, -2.0, 1e308})});
  state.tensors.push_back({"ids_i64", DType::I64, {2}, bytes_of<int64_t>({INT64_MIN, 42})});
  state.tensors.push_back({"ids_i32", DType::I32, {1, 3}, bytes_of<int32_t>({-1, 0, INT32_MAX})});
  state.tensors.push_back({"mask", DType::Bool, {3}, bytes_of<uint8_t>({1, 0, 1})});
  state.tensors.push_back({"w_f16", DType::F16, {2}, bytes_of<uint16_t>({0x3C00, 0x7E00})});
  state.tensors.push_back({"w_bf16", DType::BF16, {2}, bytes_of<uint16_t>({0xBF80, 0x0001})});
  state.tensors.push_back({"q_i8", DType::I8, {2}, bytes_of<int8_t>({-128, 127})});
  state.tensors.push_back({"q_u8", DType::U8, {2}, bytes_of<uint8_t>({0, 255})});
  state.tensors.push_back({"q_i16", DType::I16, {1}, bytes_of<int16_t>({-32768})});
  state.tensors.push_back({"q_u16", DType::U16, {1}, bytes_of<uint16_t>({65535})});
  state.tensors.push_back({"q_u32", DType::U32, {1}, bytes_of<uint32_t>({4294967295U})});
  state.tensors.push_back({"q_u64", DType::U64, {1}, bytes_of<uint64_t>({UINT64_MAX})});
  state.tensors.push_back({"empty", DType::F32, {0, 4}, {}});
  state.tensors.push_back({"scalar", DType::F64, {}, bytes_of<double>({2.5})});
  state.tensors.push_back({"optimizer/adam_m/w_f32", DType::F32, {1}, bytes_of<float>({0.25F})});
  state.metadata = {{"step", "12"}, {"config", "{\"d_model\":32}"}, {"optimizer", "adamw"}};
  return state;
}

// The safetensors spec's layout, by hand: u64 LE header length, the JSON header padded with
// spaces to 8 bytes, then the buffer. No safetensors Python package is bootstrapped, so this
// golden file stands in for the interop test.
const std::string kGoldenHeader =
    "{\"__metadata__\":{\"format\":\"volta-checkpoint\",\"format_version\":\"1.1\",\"sha256/a\":"
    "\"b9c80b5adeca450753a16950c3cc655d271f7bef7a485bc83f112b72fef21d37\",\"step\":\"7\"},"
    "\"a\":{\"data_offsets\":[0,8],\"dtype\":\"F32\",\"shape\":[2]}}     ";

std::string golden_file() {
  std::string file("\xd8\0\0\0\0\0\0\0", 8);  // 216
  file += kGoldenHeader;
  return file.append("\x00\x00\x80\x3f\x00\x00\x00\x40", 8);  // 1.0f, 2.0f
}

Checkpoint golden_state() {
  return {{{"a", DType::F32, {2}, bytes_of<float>({1.0F, 2.0F})}}, {{"step", "7"}}};
}

BOOST_AUTO_TEST_CASE(golden_file_from_the_spec) {
  BOOST_TEST(kGoldenHeader.size() == 216U);
  BOOST_TEST(serialize_checkpoint(golden_state()) == golden_file());
  LoadedCheckpoint loaded = parse_checkpoint(golden_file());
  BOOST_TEST(loaded.format_version == "1.1");
  BOOST_TEST(loaded.checkpoint.tensors.size() == 1U);
  BOOST_TEST(loaded.checkpoint.tensors[0].bytes == golden_state().tensors[0].bytes);
  BOOST_TEST((loaded.checkpoint.metadata == std::map<std::string, std::string>{{"step", "7"}}));
}

BOOST_AUTO_TEST_CASE(round_trip_every_dtype_empty_and_scalar) {
  TempDir dir;
  Checkpoint state = every_dtype_state();
  save_checkpoint(state, dir.path / "model.safetensors");
  LoadedCheckpoint loaded = load_checkpoint(dir.path / "model.safetensors");
  BOOST_TEST(loaded.format_version == "1.1");
  BOOST_TEST(loaded.unknown_metadata_keys.empty());
  BOOST_TEST((loaded.checkpoint.metadata == state.metadata));
  BOOST_REQUIRE(loaded.checkpoint.tensors.size() == state.tensors.size());
  for (const CheckpointTensor& original : state.tensors) {
    auto it = std::ranges::find(loaded.checkpoint.tensors, original.name, &CheckpointTensor::name);
    BOOST_REQUIRE(it != loaded.checkpoint.tensors.end());
    BOOST_TEST((it->dtype == original.dtype), original.name);
    BOOST_TEST(it->shape == original.shape);
    BOOST_TEST((it->bytes == original.bytes), original.name);
  }
  BOOST_TEST(std::ranges::is_sorted(loaded.checkpoint.tensors, {}, &CheckpointTensor::name));
}

BOOST_AUTO_TEST_CASE(tensors_convert_to_entries_and_back) {
  for (const CheckpointTensor& entry : every_dtype_state().tensors) {
    const Tensor t = tensor_of(entry);
    BOOST_TEST(t.shape().dims() == entry.shape);
    const CheckpointTensor again = checkpoint_tensor(entry.name, t);
    BOOST_TEST((again.dtype == entry.dtype), entry.name);
    BOOST_TEST(again.shape == entry.shape);
    BOOST_TEST((again.bytes == entry.bytes), entry.name);
  }
  const Tensor w = Tensor::from<float>(Shape{2}, {1.0F, 2.0F});
  BOOST_TEST((checkpoint_tensor("a", w).bytes == golden_state().tensors[0].bytes));
  expect_refusal(
      [] {
        tensor_of({"short", DType::F32, {3}, bytes_of<float>({1.0F})});
      },
      "CK-SIZE-MISMATCH", "tensor 'short' holds 4 bytes; F32 [3] needs 12");
  expect_refusal(
      [] {
        tensor_of({"negative", DType::F32, {-1}, {}});
      },
      "CK-SIZE-MISMATCH", "tensor 'negative' holds 0 bytes; F32 [-1] needs a valid shape");
  // A C++ bool must hold 0 or 1: another byte is refused, not read as true.
  expect_refusal(
      [] {
        tensor_of({"mask", DType::Bool, {3}, bytes_of<uint8_t>({1, 0, 2})});
      },
      "CK-BAD-BOOL", "tensor 'mask' holds byte 2 at element 2; a BOOL element is 0 or 1");
}

BOOST_AUTO_TEST_CASE(canonical_bytes) {
  Checkpoint state = every_dtype_state();
  Checkpoint reversed = state;
  std::ranges::reverse(reversed.tensors);
  std::string file = serialize_checkpoint(state);
  BOOST_TEST(serialize_checkpoint(reversed) == file);
  BOOST_TEST(serialize_checkpoint(parse_checkpoint(file).checkpoint) == file);
  uint64_t header_length = 0;
  std::memcpy(&header_length, file.data(), 8);
  BOOST_TEST(header_length % 8 == 0U);
  std::string header = file.substr(8, header_length);
  std::string json = header.substr(0, header.find_last_not_of(' ') + 1);
  BOOST_TEST(json.find_first_of(" \n\t") == std::string::npos);
  BOOST_TEST(header.size() - json.size() < 8U);
}

BOOST_AUTO_TEST_CASE(strings_with_escapes_round_trip) {
  Checkpoint state = golden_state();
  state.tensors[0].name = "quote\" back\\ tab\t nl\n bell\x07 caf\xc3\xa9";
  state.metadata = {{"config", "{\"a\": \"\xf0\x9f\x98\x80\"}"}};
  std::string file = serialize_checkpoint(state);
  BOOST_TEST(file.find("\\u0007") != std::string::npos);
  LoadedCheckpoint loaded = parse_checkpoint(file);
  BOOST_TEST(loaded.checkpoint.tensors[0].name == state.tensors[0].name);
  BOOST_TEST((loaded.checkpoint.metadata == state.metadata));
  BOOST_TEST(serialize_checkpoint(loaded.checkpoint) == file);
}

// A header written by another safetensors writer (whitespace inside, other key order, \u
// escapes, \/) loads: only the bytes Volta writes are canonical, not the ones it reads.
BOOST_AUTO_TEST_CASE(non_canonical_header_loads) {
  std::string buffer("\x00\x00\x80\x3f\x00\x00\x00\x40", 8);
  std::string header =
      "{\"\\u00e9\\ud83d\\ude00\\/x\" : {\"shape\": [2], \"dtype\": \"F32\", "
      "\"data_offsets\": [0, 8]}, \"__metadata__\": {\"format\": "
      "\"volta-checkpoint\", \"format_version\": \"1.0\", "
      "\"sha256/\\u00e9\\ud83d\\ude00/x\": \"" +
      digest_of(buffer) + "\"}}\n  ";
  LoadedCheckpoint loaded = parse_checkpoint(file_with(header, buffer));
  BOOST_TEST(loaded.checkpoint.tensors[0].name == "\xc3\xa9\xf0\x9f\x98\x80/x");
}

// A file of the previous minor version (1.0, written before engine_version was defined) loads
// with its metadata; saving it again writes the current version.
BOOST_AUTO_TEST_CASE(a_version_1_0_file_loads) {
  const std::string current = "\"format_version\":\"1.1\"";
  std::string file = golden_file();
  const size_t at = file.find(current);
  BOOST_REQUIRE(at != std::string::npos);
  file.replace(at, current.size(), "\"format_version\":\"1.0\"");
  LoadedCheckpoint loaded = parse_checkpoint(file);
  BOOST_TEST(loaded.format_version == "1.0");
  BOOST_TEST(loaded.unknown_metadata_keys.empty());
  BOOST_TEST(loaded.checkpoint.tensors[0].bytes == golden_state().tensors[0].bytes);
  BOOST_TEST(serialize_checkpoint(loaded.checkpoint) == golden_file());
}

BOOST_AUTO_TEST_CASE(newer_minor_loads_and_reports_unknown_keys) {
  std::string buffer("\x01\x00\x00\x00", 4);
  std::string header =
      "{\"__metadata__\":{\"format\":\"volta-checkpoint\",\"format_version\":"
      "\"1.2\",\"sha256/n\":\"" +
      digest_of(buffer) +
      "\",\"step\":\"3\",\"tokenizer\":\"bpe\",\"zeta\":\"\"},"
      "\"n\":{\"data_offsets\":[0,4],\"dtype\":\"I32\",\"shape\":[]}}";
  LoadedCheckpoint loaded = parse_checkpoint(file_with(header, buffer));
  BOOST_TEST(loaded.format_version == "1.2");
  BOOST_TEST((loaded.unknown_metadata_keys == std::vector<std::string>{"tokenizer", "zeta"}));
  BOOST_TEST(loaded.checkpoint.metadata.at("tokenizer") == "bpe");
}

BOOST_AUTO_TEST_CASE(refusals_of_the_frame) {
  expect_parse_refusal(std::string("\x05\0\0", 3), "CK-TRUNCATED",
                       "file has 3 bytes; the header length alone needs 8");
  expect_parse_refusal(std::string("\0\0\0\0\0\x01\0\0{}", 10), "CK-HEADER-TOO-LARGE",
                       "header length 1099511627776 exceeds the cap of 100000000 bytes");
  expect_parse_refusal(std::string("\x64\0\0\0\0\0\0\0{}", 10), "CK-TRUNCATED",
                       "header length 100 needs 108 bytes; the file has 10");
  std::string golden = golden_file();
  expect_parse_refusal(golden.substr(0, golden.size() - 1), "CK-TRUNCATED",
                       "tensors need 8 buffer bytes; the file has 7");
  expect_parse_refusal(golden + "x", "CK-TRAILING-BYTES",
                       "1 bytes follow the last tensor (at file byte 232)");
  expect_parse_refusal(file_with(" {}"), "CK-HEADER-START",
                       "the header must start with '{' (no leading whitespace)");
  expect_parse_refusal(file_with(""), "CK-HEADER-START",
                       "the header must start with '{' (no leading whitespace)");
}

BOOST_AUTO_TEST_CASE(refusals_of_the_json) {
  expect_parse_refusal(file_with("{\"a\xff\":1}"), "CK-BAD-UTF8",
                       "header byte 3 is not valid UTF-8");
  expect_parse_refusal(file_with("{\"\xc0\xaf\":1}"), "CK-BAD-UTF8",  // overlong '/'
                       "header byte 2 is not valid UTF-8");
  expect_parse_refusal(file_with("{\"a\":}"), "CK-BAD-JSON",
                       "header JSON at byte 5: unsupported value (only objects, arrays, strings "
                       "and non-negative integers)");
  expect_parse_refusal(file_with("{\"a\":{}"), "CK-BAD-JSON",
                       "header JSON at byte 7: expected '}'");
  expect_parse_refusal(file_with("{\"a\":1.5}"), "CK-BAD-JSON",
                       "header JSON at byte 6: number is not an integer");
  expect_parse_refusal(file_with("{\"a\":\"\\ud800x\"}"), "CK-BAD-JSON",
                       "header JSON at byte 12: high surrogate without a following \\u low "
                       "surrogate");
  expect_parse_refusal(file_with("{} {}"), "CK-BAD-JSON",
                       "header JSON at byte 3: unexpected bytes after the header object");
  expect_parse_refusal(file_with("{\"a\":[[[[[[[[[]]]]]]]]]}"), "CK-BAD-JSON",
                       "header JSON at byte 12: nested deeper than 8");
  expect_parse_refusal(file_with("{\"a\":{},\"b\":{},\"a\":{}}"), "CK-DUPLICATE-KEY",
                       "header JSON at byte 15: duplicate key \"a\"");
}

BOOST_AUTO_TEST_CASE(refusals_of_the_entries) {
  expect_parse_refusal(
      file_with("{\"w\":{\"data_offsets\":[0,4],\"dtype\":\"F8_E4M3\",\"shape\":[4]}}"),
      "CK-UNKNOWN-DTYPE",
      "tensor \"w\": dtype \"F8_E4M3\" is not supported (supported: F32, F64, I64, I32, BOOL, "
      "F16, BF16, I8, U8, I16, U16, U32, U64)");
  expect_parse_refusal(file_with("{\"w\":{\"dtype\":\"F32\",\"shape\":[2]}}"), "CK-BAD-ENTRY",
                       "tensor \"w\": missing field (an entry is {\"data_offsets\":[begin,end],"
                       "\"dtype\":...,\"shape\":[...]})");
  expect_parse_refusal(file_with("{\"\":{\"data_offsets\":[0,0],\"dtype\":\"F32\",\"shape\":[0]}}"),
                       "CK-BAD-ENTRY",
                       "tensor \"\": the name is empty (an entry is {\"data_offsets\":[begin,end],"
                       "\"dtype\":...,\"shape\":[...]})");
  expect_parse_refusal(
      file_with("{\"a\":{\"data_offsets\":[0,8],\"dtype\":\"F32\",\"shape\":[2]},"
                "\"b\":{\"data_offsets\":[4,12],\"dtype\":\"F32\",\"shape\":[2]}}",
                std::string(12, '\0')),
      "CK-BAD-OFFSETS",
      "tensor \"b\" has data_offsets [4,12]; it must begin at 8 (tensors tile the buffer from "
      "0, no holes or overlaps)");
  expect_parse_refusal(
      file_with("{\"a\":{\"data_offsets\":[0,8],\"dtype\":\"F32\",\"shape\":[2]},"
                "\"b\":{\"data_offsets\":[12,20],\"dtype\":\"F32\",\"shape\":[2]}}",
                std::string(20, '\0')),
      "CK-BAD-OFFSETS",
      "tensor \"b\" has data_offsets [12,20]; it must begin at 8 (tensors tile the buffer from "
      "0, no holes or overlaps)");
  expect_parse_refusal(file_with("{\"a\":{\"data_offsets\":[0,8],\"dtype\":\"F32\",\"shape\":[3]}}",
                                 std::string(8, '\0')),
                       "CK-SIZE-MISMATCH", "tensor \"a\" spans 8 bytes; shape [3] of F32 needs 12");
}

BOOST_AUTO_TEST_CASE(refusals_of_the_metadata) {
  std::string golden = golden_file();
  std::string flipped = golden;
  flipped.back() = '\x41';  // 2.0f -> 8.0f: the header still records 2.0f's digest
  expect_parse_refusal(
      flipped, "CK-DIGEST-MISMATCH",
      "tensor \"a\": recorded sha256 "
      "b9c80b5adeca450753a16950c3cc655d271f7bef7a485bc83f112b72fef21d37, its "
      "bytes hash to 7439122559d149cbfeffce704cbec870afdd1d38d06e0816cb3fea358838fbd0");
  expect_parse_refusal(file_with("{\"__metadata__\":{\"format\":\"volta-checkpoint\","
                                 "\"format_version\":\"1.0\"},\"a\":{\"data_offsets\":[0,4],"
                                 "\"dtype\":\"F32\",\"shape\":[]}}",
                                 std::string(4, '\0')),
                       "CK-MISSING-DIGEST", "tensor \"a\" has no \"sha256/a\" in __metadata__");
  expect_parse_refusal(file_with("{\"__metadata__\":{\"format\":\"volta-checkpoint\","
                                 "\"format_version\":\"1.0\",\"sha256/b\":\"00\"}}"),
                       "CK-BAD-METADATA", "\"sha256/b\" names no tensor in the file");
  expect_parse_refusal(file_with("{\"__metadata__\":{\"step\":7}}"), "CK-BAD-METADATA",
                       "__metadata__ entry \"step\" is not a string");
  expect_parse_refusal(file_with("{}"), "CK-FOREIGN",
                       "__metadata__ has no format \"volta-checkpoint\"; this is not a Volta "
                       "checkpoint");
  expect_parse_refusal(file_with("{\"__metadata__\":{\"format\":\"volta-checkpoint\","
                                 "\"format_version\":\"2.0\"}}"),
                       "CK-NEWER-MAJOR",
                       "format_version 2.0 is newer than this reader's 1.1 (supported: major "
                       "version 1)");
  expect_parse_refusal(file_with("{\"__metadata__\":{\"format\":\"volta-checkpoint\","
                                 "\"format_version\":\"one\"}}"),
                       "CK-BAD-VERSION",
                       "format_version \"one\" is not MAJOR.MINOR (supported: 1.1)");
}

BOOST_AUTO_TEST_CASE(refusals_of_the_state) {
  Checkpoint state = golden_state();
  state.tensors[0].shape = {3};
  expect_refusal([&] { serialize_checkpoint(state); }, "CK-INVALID-STATE",
                 "tensor \"a\" has 8 bytes; shape [3] of F32 needs 12");
  state = golden_state();
  state.tensors.push_back(state.tensors[0]);
  expect_refusal([&] { serialize_checkpoint(state); }, "CK-INVALID-STATE",
                 "tensor \"a\" appears twice");
  state = golden_state();
  state.metadata["sha256/a"] = "x";
  expect_refusal([&] { serialize_checkpoint(state); }, "CK-INVALID-STATE",
                 "metadata key \"sha256/a\" is written by the format itself (format, "
                 "format_version, sha256/<tensor>)");
}

BOOST_AUTO_TEST_CASE(a_refused_file_is_left_as_it_was) {
  TempDir dir;
  fs::path path = dir.path / "bad.safetensors";
  std::string bad = golden_file() + "trailing";
  write_file(path, bad);
  expect_refusal([&] { load_checkpoint(path); }, "CK-TRAILING-BYTES",
                 "8 bytes follow the last tensor (at file byte 232)");
  BOOST_TEST(read_file(path) == bad);
  expect_refusal([&] { load_checkpoint(dir.path / "missing"); }, "CK-IO",
                 "cannot open " + (dir.path / "missing").string() + ": No such file or directory");
}

BOOST_AUTO_TEST_CASE(a_failed_save_leaves_the_previous_file) {
  TempDir dir;
  fs::path path = dir.path / "model.safetensors";
  save_checkpoint(golden_state(), path);
  std::string previous = read_file(path);
  BOOST_TEST(previous == golden_file());

  // A process killed between writing the temporary and renaming it.
  CheckpointSaveOptions killed;
  killed.before_rename = [](const fs::path& temporary) {
    BOOST_TEST(fs::exists(temporary));
    throw std::runtime_error("killed");
  };
  BOOST_CHECK_THROW(save_checkpoint(every_dtype_state(), path, killed), std::runtime_error);
  BOOST_TEST(read_file(path) == previous);
  BOOST_TEST(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);

  // A directory that cannot hold the temporary (its "directory" is a regular file).
  fs::path blocked = path / "inner.safetensors";
  try {
    save_checkpoint(golden_state(), blocked);
    BOOST_ERROR("a save under a regular file succeeded");
  } catch (const CheckpointError& e) {
    // The temporary's name carries the process id and a counter, so only its stem is pinned.
    BOOST_TEST(e.diagnostic() == "CK-IO");
    BOOST_TEST(e.message().starts_with("CK-IO: cannot create " +
                                       (path / ".inner.safetensors.tmp-").string()));
    BOOST_TEST(e.message().ends_with(": Not a directory"));
  }
  BOOST_TEST(read_file(path) == previous);

  // A state that has no file is refused before anything is written.
  Checkpoint invalid = golden_state();
  invalid.tensors[0].bytes.pop_back();
  BOOST_CHECK_THROW(save_checkpoint(invalid, path), CheckpointError);
  BOOST_TEST(read_file(path) == previous);

  save_checkpoint(every_dtype_state(), path);
  BOOST_TEST(read_file(path) == serialize_checkpoint(every_dtype_state()));
  BOOST_TEST(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);
}

}  // namespace
}  // namespace volta
