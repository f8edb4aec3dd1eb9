// Fuzz target: the results store opened on arbitrary bytes, read-only and then read-write. A
// file the store refuses (StoreError) must be left byte for byte as it was; a file it opens
// for writing must take a run and still pass SQLite's integrity check.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "volta/conformance/sqlite.h"
#include "volta/conformance/store.h"

namespace {

namespace fs = std::filesystem;
using volta::conformance::Database;
using volta::conformance::ResultStore;
using volta::conformance::StoreError;

// Opens the store in `mode`; true when it opened. A refusal must leave the file untouched.
bool opens(const fs::path& file, Database::Mode mode) {
  const std::string before = volta::fuzz::file_bytes(file);
  try {
    const ResultStore store(file.string(), mode);
    return true;
  } catch (const StoreError&) {
    if (volta::fuzz::file_bytes(file) != before) std::abort();  // a refused file was changed
    return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fs::path file = volta::fuzz::make_scratch_dir("volta-store-fuzz") / "results.db";
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(file.string() + suffix);
  volta::fuzz::write_file(file, std::string_view(reinterpret_cast<const char*>(data), size));
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
