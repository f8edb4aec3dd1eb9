#pragma once
// What the checkpoint tests share: tensor bytes from literals, and whole files read and written
// as bytes.

#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <ios>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace volta::testing {

// The bytes of `values` as they lie in memory (little-endian, as checkpoints store them).
template <class T>
std::vector<std::byte> bytes_of(std::initializer_list<T> values) {
  std::vector<std::byte> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), std::data(values), bytes.size());
  return bytes;
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace volta::testing
