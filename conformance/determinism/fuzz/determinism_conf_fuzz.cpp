// Fuzz target: the determinism suite's configuration files (configs/*.conf). The input is a
// baseline.conf, optionally followed by a line "---" and one variation file; the matrix is read
// from a scratch folder as the suite reads it. A bad file must be refused with a VoltaError
// naming the file and line.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>

#include "../configs.h"
#include "fuzz_support.h"
#include "volta/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t split = input.find("\n---\n");
  static const std::filesystem::path dir = volta::fuzz::make_scratch_dir("volta-conf-fuzz");
  volta::fuzz::write_file(dir / "baseline.conf", input.substr(0, split));
  std::filesystem::remove(dir / "variation.conf");
  if (split != std::string_view::npos) {
    volta::fuzz::write_file(dir / "variation.conf", input.substr(split + 5));
  }
  try {
    volta::conformance::load_config_matrix(dir);
  } catch (const volta::VoltaError&) {
  }
  return 0;
}
