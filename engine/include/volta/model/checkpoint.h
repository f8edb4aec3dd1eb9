#pragma once
// Checkpoint format v1 (governance/checkpoint-format.md): a canonical safetensors file. The same
// state always gives the same bytes, so save(load(f)) == f, and the loader refuses anything it
// cannot read exactly, with a stable diagnostic code (CK-...) at the front of the message.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "volta/error.h"
#include "volta/ir/dtype.h"
#include "volta/ir/tensor.h"

namespace volta {

inline constexpr std::string_view kCheckpointFormatName = "volta-checkpoint";
// 1.1 defines engine_version (the Volta version of the writer); 1.0 files load unchanged.
inline constexpr std::string_view kCheckpointFormatVersion = "1.1";
// Tensors named with this prefix are optimizer state (moments), e.g. "optimizer/adam_m/w1".
inline constexpr std::string_view kOptimizerTensorPrefix = "optimizer/";
// The reference reader's cap on the JSON header's length.
inline constexpr uint64_t kCheckpointHeaderCap = 100'000'000;

struct CheckpointTensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<std::byte> bytes;  // little-endian, row-major; shape product x dtype size
};

// A tensor's bytes as a checkpoint entry, and back. tensor_of throws CheckpointError
// (CK-SIZE-MISMATCH) when the bytes do not match the shape and dtype, or the shape has a
// negative dimension.
CheckpointTensor checkpoint_tensor(std::string name, const Tensor& tensor);
Tensor tensor_of(const CheckpointTensor& entry);

struct Checkpoint {
  std::vector<CheckpointTensor> tensors;        // any order; the file sorts them by name
  std::map<std::string, std::string> metadata;  // the caller's entries (config, step, ...)
};

struct LoadedCheckpoint {
  Checkpoint checkpoint;                           // tensors sorted by name; caller metadata only
  std::string format_version;                      // as written, e.g. "1.0" or "1.1"
  std::vector<std::string> unknown_metadata_keys;  // keys v1.1 does not define (sorted)
};

// A refusal to read or write a checkpoint. code() is InvalidArgument; diagnostic() is the
// stable CK-... code, which message() also starts with.
class CheckpointError : public VoltaError {
 public:
  CheckpointError(std::string_view diagnostic, const std::string& detail);
  const std::string& diagnostic() const { return diagnostic_; }

 private:
  std::string diagnostic_;
};

// The file's exact bytes. Throws CheckpointError (CK-INVALID-STATE) for a state that has no
// file: duplicate or empty names, bytes that do not match the shape, reserved metadata keys.
std::string serialize_checkpoint(const Checkpoint& checkpoint);
// Validates everything (see the governance doc) and throws CheckpointError on the first fault.
LoadedCheckpoint parse_checkpoint(std::string_view file_bytes);

struct CheckpointSaveOptions {
  // Runs after the temporary file is written and synced, before the rename: tests throw from
  // it to stand for a process killed mid-save.
  std::function<void(const std::filesystem::path& temporary)> before_rename;
};

// Atomic: writes a temporary file beside `path`, fsyncs it, renames it over `path` and fsyncs
// the directory. On any failure the temporary is removed and `path` is left as it was.
void save_checkpoint(const Checkpoint& checkpoint, const std::filesystem::path& path,
                     const CheckpointSaveOptions& options = {});
// Reads `path` (never writes it) and parses it; CK-IO when it cannot be read.
LoadedCheckpoint load_checkpoint(const std::filesystem::path& path);

}  // namespace volta
