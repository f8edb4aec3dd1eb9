// Fuzz target: the results store opened on arbitrary bytes, read-only and then read-write. A
// file the store refuses (StoreError) must be left byte for byte as it was; a file it opens
// for writing must take a run and still pass SQLite's integrity check.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include "volta/conformance/sqlite.h"
#include "volta/conformance/store.h"

namespace {

namespace fs = std::filesystem;
using volta::conformance::Database;
using volta::conformance::ResultStore;
using volta::conformance::StoreError;

const fs::path& scratch() {
  static const fs::path dir = [] {
    std::string pattern = (fs::temp_directory_path() / "volta-store-fuzz.XXXXXX");
    if (mkdtemp(pattern.data()) == nullptr) std::abort();
    return fs::path(pattern);
  }();
  return dir;
}

std::string contents(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Opens the store in `mode`; true when it opened. A refusal must leave the file untouched.
bool opens(const fs::path& file, Database::Mode mode) {
  const std::string before = contents(file);
  try {
    const ResultStore store(file.string(), mode);
    return true;
  } catch (const StoreError&) {
    if (contents(file) != before) std::abort();  // a refused file was changed
    return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fs::path file = scratch() / "results.db";
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(file.string() + suffix);
  {
    std::ofstream out(file, std::ios::binary);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  opens(file, Database::Mode::ReadOnly);
  if (!opens(file, Database::Mode::ReadWrite)) return 0;
  ResultStore store(file.string());
  volta::conformance::RunInfo info;
  info.commit = "fuzz";
  info.suites = "fuzz";
  const int64_t run = store.begin_run(info);
  store.finish_run(run);
  volta::conformance::Statement check = store.db().prepare("PRAGMA integrity_check");
  if (!check.step() || check.column_text(0) != "ok") std::abort();
  return 0;
}
