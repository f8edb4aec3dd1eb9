#pragma once
// Byte-level training data and the batch order (governance/training-policy.md, "Data"). A
// batch is a pure function of (data, order, step, row): nothing depends on what was read
// before, so a run resumed at step s reads exactly the batches an uninterrupted run reads.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "volta/ir/tensor.h"

namespace volta::train {

// The bytes of `path`. Throws VoltaError(InvalidArgument) naming the file when it cannot be
// read or is empty.
std::vector<uint8_t> read_token_file(const std::filesystem::path& path);

struct BatchOrder {
  enum class Kind : uint8_t {
    // Row b of step s starts at ((s * batch + b) * stride) mod len.
    Sequential,
    // Row b of step s starts at counter_random_u64(seed, s, b) mod len.
    Shuffled,
  };
  Kind kind = Kind::Sequential;
  int64_t stride = 32;  // Sequential
  uint64_t seed = 1;    // Shuffled
};
std::string batch_order_name(BatchOrder::Kind kind);  // "sequential", "shuffled"
// "sequential" / "shuffled"; anything else: VoltaError(InvalidArgument) naming both.
BatchOrder::Kind parse_batch_order(std::string_view name);

// Where row `row` of step `step` (0 for the first) starts in data of `length` bytes.
int64_t window_start(const BatchOrder& order, int64_t length, int64_t batch, int64_t step,
                     int64_t row);

struct TokenBatch {
  Tensor tokens;   // int64 [batch, seq]: bytes start .. start + seq - 1
  Tensor targets;  // int64 [batch, seq]: bytes start + 1 .. start + seq (the next byte)
};
// Throws VoltaError(InvalidArgument) when `data` is shorter than one window (seq + 1 bytes) or
// holds a byte >= vocab, naming the byte, its offset and the vocab. Once per run: make_batch
// checks only the bytes it reads.
void check_token_data(const std::vector<uint8_t>& data, int64_t seq, int64_t vocab);

// Windows read cyclically: byte i of a window is data[(start + i) mod len]. Throws
// check_token_data's errors for the data it reads.
TokenBatch make_batch(const std::vector<uint8_t>& data, const BatchOrder& order, int64_t batch,
                      int64_t seq, int64_t vocab, int64_t step);

}  // namespace volta::train
