// Fuzz target: the determinism suite's configuration files (configs/*.conf). The input is a
// baseline.conf, optionally followed by a line "---" and one variation file; the matrix is read
// from a scratch folder as the suite reads it. A bad file must be refused with a VoltaError
// naming the file and line.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "../configs.h"
#include "volta/error.h"

namespace {

const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "volta-conf-fuzz.XXXXXX");
    if (mkdtemp(pattern.data()) == nullptr) std::abort();
    return std::filesystem::path(pattern);
  }();
  return dir;
}

void write(const std::filesystem::path& file, std::string_view text) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t split = input.find("\n---\n");
  const std::filesystem::path& dir = scratch();
  write(dir / "baseline.conf", input.substr(0, split));
  std::filesystem::remove(dir / "variation.conf");
  if (split != std::string_view::npos) write(dir / "variation.conf", input.substr(split + 5));
  try {
    volta::conformance::load_config_matrix(dir);
  } catch (const volta::VoltaError&) {
  }
  return 0;
}
