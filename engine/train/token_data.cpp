#include "volta/train/token_data.h"

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>

#include "volta/error.h"
#include "volta/ir/random.h"

namespace volta::train {
namespace {

[[noreturn]] void refuse(const std::string& what) { fail(ErrorCode::InvalidArgument, what); }

void refuse_byte(const std::vector<uint8_t>& data, size_t at, int64_t vocab) {
  refuse("the training data has byte " + std::to_string(data[at]) + " at offset " +
         std::to_string(at) + "; the model's vocab is " + std::to_string(vocab) +
         ", so every byte must be < " + std::to_string(vocab));
}

void check_length(int64_t length, int64_t seq) {
  if (seq <= 0) refuse("a window needs seq > 0 (got " + std::to_string(seq) + ")");
  if (length < seq + 1) {
    refuse("the training data holds " + std::to_string(length) + " bytes; a window of seq " +
           std::to_string(seq) + " needs at least " + std::to_string(seq + 1) +
           " (the tokens and the byte after them)");
  }
}

// a * b mod m for a, b < m < 2^63, without overflow: double-and-add over b's bits.
uint64_t multiply_mod(uint64_t a, uint64_t b, uint64_t m) {
  if (a == 0 || b <= UINT64_MAX / a) return a * b % m;
  uint64_t result = 0;
  for (; b != 0; b >>= 1) {
    if ((b & 1) != 0) result = (result + a) % m;
    a = (a + a) % m;
  }
  return result;
}

}  // namespace

void check_token_data(const std::vector<uint8_t>& data, int64_t seq, int64_t vocab) {
  check_length(static_cast<int64_t>(data.size()), seq);
  for (size_t i = 0; i < data.size(); ++i) {
    if (data[i] >= vocab) refuse_byte(data, i, vocab);
  }
}

std::vector<uint8_t> read_token_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) refuse("cannot read the training data '" + path.string() + "'");
  std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) refuse("reading the training data '" + path.string() + "' failed");
  if (bytes.empty()) refuse("the training data '" + path.string() + "' is empty");
  return bytes;
}

std::string batch_order_name(BatchOrder::Kind kind) {
  return kind == BatchOrder::Kind::Sequential ? "sequential" : "shuffled";
}

BatchOrder::Kind parse_batch_order(std::string_view name) {
  if (name == "sequential") return BatchOrder::Kind::Sequential;
  if (name == "shuffled") return BatchOrder::Kind::Shuffled;
  refuse("unknown batch order '" + std::string(name) + "'; the orders are sequential, shuffled");
}

int64_t window_start(const BatchOrder& order, int64_t length, int64_t batch, int64_t step,
                     int64_t row) {
  if (length <= 0 || batch <= 0 || step < 0 || row < 0 || row >= batch) {
    refuse("window_start(length " + std::to_string(length) + ", batch " + std::to_string(batch) +
           ", step " + std::to_string(step) + ", row " + std::to_string(row) +
           "): needs length > 0, batch > 0, step >= 0 and 0 <= row < batch");
  }
  const auto len = static_cast<uint64_t>(length);
  if (order.kind == BatchOrder::Kind::Shuffled) {
    return static_cast<int64_t>(
        counter_random_u64(order.seed, static_cast<uint64_t>(step), static_cast<uint64_t>(row)) %
        len);
  }
  if (order.stride <= 0) {
    refuse("the sequential order's stride is " + std::to_string(order.stride) + "; it must be > 0");
  }
  // ((s * B + b) * N) mod len, in modular arithmetic so no product overflows.
  const uint64_t window = (static_cast<uint64_t>(step) % len * static_cast<uint64_t>(batch) +
                           static_cast<uint64_t>(row)) %
                          len;
  const uint64_t stride = static_cast<uint64_t>(order.stride) % len;
  return static_cast<int64_t>(multiply_mod(window, stride, len));
}

TokenBatch make_batch(const std::vector<uint8_t>& data, const BatchOrder& order, int64_t batch,
                      int64_t seq, int64_t vocab, int64_t step) {
  const auto length = static_cast<int64_t>(data.size());
  if (batch <= 0) refuse("a batch needs batch > 0 (got " + std::to_string(batch) + ")");
  check_length(length, seq);
  TokenBatch out{Tensor(DType::I64, Shape{batch, seq}), Tensor(DType::I64, Shape{batch, seq})};
  int64_t* tokens = out.tokens.data_as<int64_t>();
  int64_t* targets = out.targets.data_as<int64_t>();
  // Only the bytes a batch reads are checked against the vocab: a step costs O(batch * seq).
  auto token = [&](int64_t offset) -> int64_t {
    const auto at = static_cast<size_t>(offset % length);
    if (data[at] >= vocab) refuse_byte(data, at, vocab);
    return data[at];
  };
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t start = window_start(order, length, batch, step, b);
    for (int64_t i = 0; i < seq; ++i) {
      tokens[b * seq + i] = token(start + i);
      targets[b * seq + i] = token(start + i + 1);
    }
  }
  return out;
}

}  // namespace volta::train
