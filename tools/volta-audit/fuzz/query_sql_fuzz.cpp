// Fuzz target: `volta-audit query --sql` text against a results database holding a run, opened
// as the command opens it (read-only, run_read_only). Read-only must hold: whatever the SQL,
// the database file keeps its bytes and nothing is written beside it. SQLite's own limits bound
// each statement's work and its strings, so that an endless recursive query ends as a refusal.

#include <sqlite3.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "../queries.h"
#include "fuzz_support.h"
#include "volta/conformance/store.h"

namespace {

namespace fs = std::filesystem;
using volta::conformance::ResultStore;

// A scratch folder holding results.db with one complete run and one result.
const fs::path& database() {
  static const fs::path file = [] {
    fs::path path = volta::fuzz::make_scratch_dir("volta-query-fuzz") / "results.db";
    ResultStore store(path.string());
    volta::conformance::RunInfo info;
    info.commit = "c0ffee";
    info.suites = "onnx";
    const int64_t run = store.begin_run(info);
    volta::conformance::ResultRow row;
    row.suite = "onnx";
    row.family = "elementwise";
    row.op = "Add";
    row.backend = "cpu";
    row.case_id = "test_add";
    store.record(run, {&row, 1});
    store.finish_run(run);
    return path;
  }();
  return file;
}

int stop_long_statements(void* steps) { return ++*static_cast<int64_t*>(steps) > 10'000; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fs::path& file = database();
  static const std::string bytes = volta::fuzz::file_bytes(file);
  {
    const ResultStore store(file.string(), volta::conformance::Database::Mode::ReadOnly);
    sqlite3* handle = store.db().handle();
    int64_t steps = 0;
    sqlite3_progress_handler(handle, 1000, stop_long_statements, &steps);
    sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, 1 << 20);
    try {
      volta::audit::run_read_only(
          store.db(), std::string_view(reinterpret_cast<const char*>(data), size), "c0ffee");
    } catch (const volta::conformance::StoreError&) {
      // Refused: a write, a syntax error, an interrupted statement.
    }
  }
  if (volta::fuzz::file_bytes(file) != bytes) std::abort();  // the query changed the database
  // Beside the database only SQLite's own WAL index and an empty WAL may appear (a read-only
  // connection cannot remove them); anything else, or a WAL with frames, is a write.
  for (const auto& entry : fs::directory_iterator(file.parent_path())) {
    const std::string name = entry.path().filename().string();
    const bool allowed = name == "results.db" || name == "results.db-shm" ||
                         (name == "results.db-wal" && fs::file_size(entry.path()) == 0);
    if (!allowed) std::abort();
  }
  return 0;
}
