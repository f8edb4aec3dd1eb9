#pragma once
// Internal to the ONNX importer: the ONNX versions Volta reads beyond the ONNX library it links.
// Debian's libonnx 1.12 knows opsets 1 to 17 and IR versions up to 8; today's exporters write
// opsets 18 to 28 and IR versions up to 14. The protobuf wire format is forward compatible, so
// Volta reads those models itself: the library's checker checks what it knows, and this table
// (from ONNX's operator changelog, ONNX 1.13 to 1.23) says which schema of an op is in force at
// a newer opset and what that version changed.

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace volta::onnx {

// What the libonnx Volta links knows (ONNX 1.12).
inline constexpr int64_t kLibraryOpset = 17;
inline constexpr int64_t kLibraryIrVersion = 8;
inline constexpr int64_t kLibraryMlOpset = 3;  // of the ai.onnx.ml domain
// The newest Volta reads (ONNX 1.23). Anything newer is refused, naming both.
inline constexpr int64_t kNewestOpset = 28;
inline constexpr int64_t kNewestIrVersion = 14;
// The newest TensorProto element type ONNX 1.12 knows (BFLOAT16); newer IR versions add
// FLOAT8E4M3FN (17) to FLOAT6E3M2 (28).
inline constexpr int64_t kLibraryNewestElementType = 16;

enum class SchemaChange {
  New,      // the op first appears in this version
  Types,    // only its type constraints (or its documentation) changed: Volta's lowering of the
            // previous version reads it, and refuses dtypes Volta lacks as always
  Lowered,  // its inputs, outputs or attributes changed, and Volta's lowering reads the new form
  Refused,  // its inputs, outputs or attributes changed, and no lowering reads the new form yet
};

struct NewerSchema {
  std::string_view op;
  int version;  // the opset that introduced it
  SchemaChange change;
};

// Every default-domain schema version of opsets 18 to kNewestOpset, by op then version.
std::span<const NewerSchema> newer_schemas();

// The newer schema of `op` in force at `opset`; nullptr when the library's own (the newest at
// or below opset 17) is in force, or the op does not exist there.
const NewerSchema* newer_schema(std::string_view op, int64_t opset);

// The version of `op`'s schema in force at `opset` (Softmax at opset 15 is version 13), from
// the newer table or the library; nullopt when ONNX has no such op at that opset.
std::optional<int> schema_version(std::string_view op, int64_t opset);

}  // namespace volta::onnx
