// Fuzz target: checkpoint files (safetensors header and buffer, governance/checkpoint-format.md).
// A file the loader accepts must save canonically: its state written out loads back to the
// same state, and writing that again gives the same bytes.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "volta/model/checkpoint.h"

namespace {

bool same_state(const volta::Checkpoint& a, const volta::Checkpoint& b) {
  if (a.metadata != b.metadata || a.tensors.size() != b.tensors.size()) return false;
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    const volta::CheckpointTensor& x = a.tensors[i];
    const volta::CheckpointTensor& y = b.tensors[i];
    if (x.name != y.name || x.dtype != y.dtype || x.shape != y.shape || x.bytes != y.bytes) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  volta::LoadedCheckpoint loaded;
  try {
    loaded = volta::parse_checkpoint(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const volta::CheckpointError&) {
    return 0;  // refused with a CK-... diagnostic
  }
  // Past this point nothing may throw: the state was valid enough to load.
  const std::string canonical = volta::serialize_checkpoint(loaded.checkpoint);
  const volta::LoadedCheckpoint again = volta::parse_checkpoint(canonical);
  if (!same_state(loaded.checkpoint, again.checkpoint) ||
      volta::serialize_checkpoint(again.checkpoint) != canonical) {
    std::abort();  // a loaded state that does not survive saving
  }
  return 0;
}
