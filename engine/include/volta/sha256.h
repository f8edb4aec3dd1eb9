#pragma once
// SHA-256 (FIPS 180-4): the digest Volta records wherever a file or tensor must be named by its
// exact content (the inputs of a run, checkpoints), as a lower-case hex string.

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace volta {

class Sha256 {
 public:
  Sha256();
  Sha256& update(std::span<const std::byte> data);
  Sha256& update(std::string_view text);
  std::string hex();  // finishes the digest; the object must not be updated afterwards

 private:
  void compress(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> block_ = {};
  size_t used_ = 0;      // bytes waiting in block_
  uint64_t length_ = 0;  // bytes hashed so far
};

std::string sha256_hex(std::string_view text);
// The digest of the file's bytes; nullopt when it cannot be opened. Throws VoltaError
// (InvalidArgument) when it opens but cannot be read to the end.
std::optional<std::string> sha256_file(const std::filesystem::path& file);

}  // namespace volta
