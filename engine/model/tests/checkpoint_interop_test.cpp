// Checkpoint format v1 (governance/checkpoint-format.md) against the Python `safetensors`
// package (pinned in scripts/ci/interop-requirements.txt): a Volta checkpoint reads in Python
// with the same dtypes, shapes, bytes and metadata; a file Python's save_file writes reads in
// Volta when it carries Volta's metadata, and is refused as CK-FOREIGN when it does not.
// SKIPPED where the interop venv is missing (interop_python.h).
#define BOOST_TEST_MODULE checkpoint_interop
#include <boost/test/unit_test.hpp>
#include <limits>
#include <map>

#include "checkpoint_files.h"
#include "interop_python.h"
#include "volta/model/checkpoint.h"
#include "volta/sha256.h"

namespace volta {
namespace {

namespace fs = std::filesystem;
using interop::python_or_skip;
using interop::run_script;
using testing::ScratchDir;

using testing::bytes_of;
using testing::read_file;
using testing::write_file;

// Every dtype and edge the format allows: special floats (signed zero, subnormals, infinity,
// NaN), integer extremes, a 0-d and an empty tensor, optimizer state; caller metadata with
// characters JSON must escape.
Checkpoint interop_state() {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  Checkpoint state;
  state.tensors = {
      {"embedding", DType::F32, {3, 2}, bytes_of<float>({1.5F, -0.0F, 3e38F, 1e-45F, -kInf, kNaN})},
      {"layer0.bias", DType::F64, {2}, bytes_of<double>({-1.25, 1e-310})},
      {"step_counts",
       DType::I64,
       {3},
       bytes_of<int64_t>(
           {-1, std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()})},
      {"positions", DType::I32, {2}, bytes_of<int32_t>({7, -2147483647 - 1})},
      {"mask", DType::Bool, {2, 2}, bytes_of<uint8_t>({1, 0, 0, 1})},
      {"scale", DType::F32, {}, bytes_of<float>({0.5F})},
      {"empty", DType::F32, {0, 3}, {}},
      {"optimizer/adam_m/embedding",
       DType::F32,
       {3, 2},
       bytes_of<float>({0.25F, 0.0F, -1e-3F, 2.0F, 4.0F, -8.0F})},
  };
  state.metadata = {
      {"config", R"({"d_model":64,"name":"tiny\\test"})"}, {"step", "7"}, {"seed", "42"}};
  return state;
}

// json.dumps(value, sort_keys=True, separators=(",", ":")) of an ASCII string.
std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80)
      throw std::logic_error("the test's strings are ASCII");
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// The safetensors spec's dtype names, typed from the spec here rather than taken from
// checkpoint.cpp's table on purpose: an expectation built with the writer's own table could not
// catch a wrong name in it.
std::string safetensors_dtype(DType dtype) {
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
  throw std::logic_error("unknown dtype");
}

// What read_safetensors.py should read from `state`'s file, in the text it dumps: the caller's
// metadata plus the format's entries, each digest computed here from the test's own bytes.
std::string expected_json(const Checkpoint& state) {
  std::map<std::string, std::string> metadata = state.metadata;
  metadata["format"] = "volta-checkpoint";
  metadata["format_version"] = std::string(kCheckpointFormatVersion);
  std::map<std::string, std::string> tensors;
  for (const CheckpointTensor& t : state.tensors) {
    const std::string digest =
        sha256_hex(std::string_view(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size()));
    metadata["sha256/" + t.name] = digest;
    std::string shape;
    for (const int64_t d : t.shape) shape += (shape.empty() ? "" : ",") + std::to_string(d);
    tensors[t.name] = R"({"dtype":)" + json_string(safetensors_dtype(t.dtype)) + R"(,"sha256":)" +
                      json_string(digest) + R"(,"shape":[)" + shape + "]}";
  }
  std::string json = R"({"metadata":{)";
  for (const auto& [key, value] : metadata) {
    json += json_string(key) + ":" + json_string(value) + ",";
  }
  json.back() = '}';
  json += R"(,"tensors":{)";
  for (const auto& [name, entry] : tensors) json += json_string(name) + ":" + entry + ",";
  json.back() = '}';
  return json + "}\n";
}

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

BOOST_AUTO_TEST_CASE(python_reads_every_tensor_and_metadata_entry_as_written) {
  const auto python = python_or_skip();
  if (!python) return;
  const ScratchDir dir("checkpoint-interop");
  const Checkpoint state = interop_state();
  save_checkpoint(state, dir / "state.safetensors");
  write_file(dir / "expected.json", expected_json(state));

  const auto r = run_script(
      *python, "read_safetensors.py",
      {(dir / "state.safetensors").string(), "--expect-json", (dir / "expected.json").string()});
  BOOST_TEST(r.status == 0, r.output);
  BOOST_TEST(r.output == "read_safetensors: 8 tensors and 13 metadata entries match\n");
}

// The dump is the expectation's text, so a caller may compare either way.
BOOST_AUTO_TEST_CASE(python_dumps_what_it_read_in_the_expectation_format) {
  const auto python = python_or_skip();
  if (!python) return;
  const ScratchDir dir("checkpoint-interop");
  const Checkpoint state = interop_state();
  save_checkpoint(state, dir / "state.safetensors");

  const auto r =
      run_script(*python, "read_safetensors.py",
                 {(dir / "state.safetensors").string(), "--dump", (dir / "dump.json").string()});
  BOOST_TEST_REQUIRE(r.status == 0, r.output);
  BOOST_TEST(read_file(dir / "dump.json") == expected_json(state));
}

BOOST_AUTO_TEST_CASE(python_reports_every_difference_from_the_expectation) {
  const auto python = python_or_skip();
  if (!python) return;
  const ScratchDir dir("checkpoint-interop");
  const Checkpoint state = interop_state();
  save_checkpoint(state, dir / "state.safetensors");
  // Expect a changed step, a mask of another dtype and a tensor the file does not have.
  Checkpoint other = state;
  other.metadata["step"] = "8";
  other.tensors[4].dtype = DType::I32;
  other.tensors[4].bytes = bytes_of<int32_t>({1, 0, 0, 1});
  other.tensors.push_back({"extra", DType::F32, {1}, bytes_of<float>({1.0F})});
  write_file(dir / "expected.json", expected_json(other));

  const auto r = run_script(
      *python, "read_safetensors.py",
      {(dir / "state.safetensors").string(), "--expect-json", (dir / "expected.json").string()});
  BOOST_TEST(r.status == 1, r.output);
  BOOST_TEST(contains(r.output, "MISMATCH metadata 'step': read \"7\", expected \"8\""), r.output);
  BOOST_TEST(contains(r.output, "MISMATCH metadata 'sha256/extra': expected but not read"),
             r.output);
  BOOST_TEST(contains(r.output, "MISMATCH tensors 'extra': expected but not read"), r.output);
  BOOST_TEST(contains(r.output, "MISMATCH tensors 'mask': read {\"dtype\": \"BOOL\""), r.output);
}

// One flipped buffer byte: safetensors reads the file, the format check catches the digest.
BOOST_AUTO_TEST_CASE(python_refuses_bytes_that_disagree_with_their_digest) {
  const auto python = python_or_skip();
  if (!python) return;
  const ScratchDir dir("checkpoint-interop");
  std::string file = serialize_checkpoint(interop_state());
  file.back() = static_cast<char>(file.back() ^ 0x01);  // the last tensor, "step_counts"
  write_file(dir / "tampered.safetensors", file);

  const auto r = run_script(*python, "read_safetensors.py",
                            {(dir / "tampered.safetensors").string(), "--dump", "-"});
  BOOST_TEST(r.status == 1, r.output);
  BOOST_TEST(contains(r.output, "not a Volta checkpoint: tensor 'step_counts': its bytes hash to"),
             r.output);
}

// safetensors.numpy.save_file with no metadata: a valid safetensors file, foreign to Volta.
BOOST_AUTO_TEST_CASE(a_python_file_without_volta_metadata_is_refused_as_foreign) {
  const auto python = python_or_skip();
  if (!python) return;
  const ScratchDir dir("checkpoint-interop");
  save_checkpoint(interop_state(), dir / "state.safetensors");
  const auto r = run_script(*python, "rewrite_safetensors.py",
                            {(dir / "state.safetensors").string(),
                             (dir / "python.safetensors").string(), "--drop-metadata"});
  BOOST_TEST_REQUIRE(r.status == 0, r.output);

  try {
    load_checkpoint(dir / "python.safetensors");
    BOOST_ERROR("a file without Volta's metadata loaded");
  } catch (const CheckpointError& e) {
    BOOST_TEST(e.diagnostic() == "CK-FOREIGN");
    BOOST_TEST(e.message() ==
               "CK-FOREIGN: __metadata__ has no format \"volta-checkpoint\"; this is not a Volta "
               "checkpoint");
  }
}

// save_file with Volta's metadata: other bytes (the package orders entry keys and the buffer its
// own way), the same state, and saving it again gives Volta's canonical file back.
BOOST_AUTO_TEST_CASE(a_python_file_with_volta_metadata_loads_and_saves_back_canonically) {
  const auto python = python_or_skip();
  if (!python) return;
  const ScratchDir dir("checkpoint-interop");
  const Checkpoint state = interop_state();
  save_checkpoint(state, dir / "state.safetensors");
  const auto r =
      run_script(*python, "rewrite_safetensors.py",
                 {(dir / "state.safetensors").string(), (dir / "python.safetensors").string()});
  BOOST_TEST_REQUIRE(r.status == 0, r.output);
  const std::string volta_bytes = read_file(dir / "state.safetensors");
  const std::string python_bytes = read_file(dir / "python.safetensors");
  BOOST_TEST_MESSAGE("save_file's bytes " << (python_bytes == volta_bytes ? "equal" : "differ from")
                                          << " Volta's canonical bytes");

  const LoadedCheckpoint loaded = load_checkpoint(dir / "python.safetensors");
  BOOST_TEST(loaded.format_version == kCheckpointFormatVersion);
  BOOST_TEST(loaded.unknown_metadata_keys.empty());
  BOOST_TEST((loaded.checkpoint.metadata == state.metadata));
  std::map<std::string, const CheckpointTensor*> by_name;
  for (const CheckpointTensor& t : state.tensors) by_name[t.name] = &t;
  BOOST_REQUIRE_EQUAL(loaded.checkpoint.tensors.size(), by_name.size());
  auto expected = by_name.begin();
  for (const CheckpointTensor& t : loaded.checkpoint.tensors) {
    BOOST_TEST_CONTEXT(t.name) {
      BOOST_TEST(t.name == expected->first);
      BOOST_TEST((t.dtype == expected->second->dtype));
      BOOST_TEST(t.shape == expected->second->shape, boost::test_tools::per_element());
      BOOST_TEST((t.bytes == expected->second->bytes));
    }
    ++expected;
  }
  BOOST_TEST(serialize_checkpoint(loaded.checkpoint) == volta_bytes);
}

}  // namespace
}  // namespace volta
