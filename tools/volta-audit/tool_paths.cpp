#include "tool_paths.h"

#include <cstdlib>

#include "build_info.h"

namespace volta::audit {

std::filesystem::path source_dir() {
  const char* dir = std::getenv("VOLTA_SOURCE_DIR");
  return dir != nullptr && *dir != '\0' ? std::filesystem::path(dir)
                                        : std::filesystem::path(build::kSourceDir);
}

std::filesystem::path volta_cli_path() {
  namespace fs = std::filesystem;
  if (const char* cli = std::getenv("VOLTA_CLI")) return cli;
  const fs::path self = fs::read_symlink("/proc/self/exe").parent_path();
  return fs::exists(self / "volta") ? self / "volta" : self.parent_path() / "volta/volta";
}

std::filesystem::path interop_venv_path() {
  const char* venv = std::getenv("VOLTA_INTEROP_VENV");
  return venv != nullptr ? std::filesystem::path(venv) : source_dir() / "build/interop-venv";
}

}  // namespace volta::audit
