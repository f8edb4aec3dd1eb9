#pragma once

#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>

#include "volta/ir/graph.h"

namespace volta {

// Canonical text of a graph: one line per input, parameter, node and output. Used by
// `volta info`, pass reproducers, and as the input of ir_hash.
std::string to_text(const Graph& graph);

// FNV-1a 64 over the canonical text plus every parameter's bytes: equal graphs hash
// equal in any process on any machine of the same endianness.
uint64_t ir_hash(const Graph& graph);

std::string hash_hex(uint64_t hash);  // 16 lowercase hex digits

// Incremental FNV-1a 64, shared by every stable hash in Volta.
class StableHasher {
 public:
  void bytes(const void* data, size_t size);
  void text(std::string_view s);
  void u64(uint64_t v);
  uint64_t digest() const { return state_; }

 private:
  uint64_t state_ = 14695981039346656037ull;
};

// Hash of tensors' dtypes, shapes and bytes, in order: how suites compare outputs bit for bit.
uint64_t hash_tensors(std::span<const Tensor> tensors);

// Stream output of the IR's enums and shapes, for diagnostics and test frameworks.
std::ostream& operator<<(std::ostream& os, OpKind op);
std::ostream& operator<<(std::ostream& os, OpFamily family);
std::ostream& operator<<(std::ostream& os, DType dtype);
std::ostream& operator<<(std::ostream& os, ErrorCode code);
std::ostream& operator<<(std::ostream& os, const Shape& shape);

}  // namespace volta
