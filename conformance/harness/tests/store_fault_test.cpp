// The results store under injected I/O faults. A test VFS wraps SQLite's default one and fails
// the Nth write or fsync (with SQLITE_IOERR or SQLITE_FULL, as a failing or full disk would) for
// every N a whole run of the store takes: opening and migrating a file, beginning a run,
// recording its rows and inputs, finishing it. Each time the failure must reach the caller as a
// StoreError carrying SQLite's error, and afterwards the file must open, pass
// `PRAGMA integrity_check`, and hold every earlier run's rows unchanged; the faulted run is
// either absent or never complete. Nothing is lost.
#define BOOST_TEST_MODULE store_fault_test
#include <sqlite3.h>

#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "store_testing.h"
#include "volta/conformance/store.h"

namespace volta::conformance {
namespace {

using testing::TempDir;

// ---- the fault VFS ---------------------------------------------------------------------------

enum class Fault { None, Write, Sync };

struct Injector {
  Fault fault = Fault::None;
  int error = SQLITE_IOERR;  // what the faulted call returns
  int64_t fail_at = 0;       // 1-based: the call of kind `fault` that fails
  int64_t writes = 0;        // calls seen since reset()
  int64_t syncs = 0;
  int64_t injected = 0;
  void reset(Fault f, int code, int64_t at) { *this = {f, code, at, 0, 0, 0}; }
};
Injector injector;

struct FaultFile {
  sqlite3_file base;
  sqlite3_file* real;  // the default VFS's file, allocated right after this struct
};
sqlite3_vfs* real_vfs = nullptr;
sqlite3_file* real(sqlite3_file* f) { return reinterpret_cast<FaultFile*>(f)->real; }

int fault_write(sqlite3_file* f, const void* data, int amount, sqlite3_int64 offset) {
  if (++injector.writes == injector.fail_at && injector.fault == Fault::Write) {
    ++injector.injected;
    return injector.error == SQLITE_FULL ? SQLITE_FULL : SQLITE_IOERR_WRITE;
  }
  return real(f)->pMethods->xWrite(real(f), data, amount, offset);
}
int fault_sync(sqlite3_file* f, int flags) {
  if (++injector.syncs == injector.fail_at && injector.fault == Fault::Sync) {
    ++injector.injected;
    return SQLITE_IOERR_FSYNC;
  }
  return real(f)->pMethods->xSync(real(f), flags);
}

// Everything else goes straight to the real file.
int fault_close(sqlite3_file* f) { return real(f)->pMethods->xClose(real(f)); }
int fault_read(sqlite3_file* f, void* data, int amount, sqlite3_int64 offset) {
  return real(f)->pMethods->xRead(real(f), data, amount, offset);
}
int fault_truncate(sqlite3_file* f, sqlite3_int64 size) {
  return real(f)->pMethods->xTruncate(real(f), size);
}
int fault_file_size(sqlite3_file* f, sqlite3_int64* size) {
  return real(f)->pMethods->xFileSize(real(f), size);
}
int fault_lock(sqlite3_file* f, int level) { return real(f)->pMethods->xLock(real(f), level); }
int fault_unlock(sqlite3_file* f, int level) { return real(f)->pMethods->xUnlock(real(f), level); }
int fault_check_reserved_lock(sqlite3_file* f, int* out) {
  return real(f)->pMethods->xCheckReservedLock(real(f), out);
}
int fault_file_control(sqlite3_file* f, int op, void* arg) {
  return real(f)->pMethods->xFileControl(real(f), op, arg);
}
int fault_sector_size(sqlite3_file* f) { return real(f)->pMethods->xSectorSize(real(f)); }
int fault_device_characteristics(sqlite3_file* f) {
  return real(f)->pMethods->xDeviceCharacteristics(real(f));
}
int fault_shm_map(sqlite3_file* f, int region, int size, int extend, void volatile** out) {
  return real(f)->pMethods->xShmMap(real(f), region, size, extend, out);
}
int fault_shm_lock(sqlite3_file* f, int offset, int n, int flags) {
  return real(f)->pMethods->xShmLock(real(f), offset, n, flags);
}
void fault_shm_barrier(sqlite3_file* f) { real(f)->pMethods->xShmBarrier(real(f)); }
int fault_shm_unmap(sqlite3_file* f, int delete_flag) {
  return real(f)->pMethods->xShmUnmap(real(f), delete_flag);
}

const sqlite3_io_methods kFaultMethods = {
    2,  // no xFetch/xUnfetch: every page goes through xRead and xWrite
    fault_close,
    fault_read,
    fault_write,
    fault_truncate,
    fault_sync,
    fault_file_size,
    fault_lock,
    fault_unlock,
    fault_check_reserved_lock,
    fault_file_control,
    fault_sector_size,
    fault_device_characteristics,
    fault_shm_map,
    fault_shm_lock,
    fault_shm_barrier,
    fault_shm_unmap,
    nullptr,
    nullptr};

int fault_open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* file, int flags, int* out) {
  auto* wrapper = reinterpret_cast<FaultFile*>(file);
  wrapper->real = reinterpret_cast<sqlite3_file*>(wrapper + 1);
  const int rc = real_vfs->xOpen(real_vfs, name, wrapper->real, flags, out);
  wrapper->base.pMethods = wrapper->real->pMethods != nullptr ? &kFaultMethods : nullptr;
  return rc;
}

// Registered as the default VFS for the whole test process, so ResultStore uses it unchanged.
struct FaultVfs {
  FaultVfs() {
    real_vfs = sqlite3_vfs_find(nullptr);
    static sqlite3_vfs vfs = *real_vfs;
    vfs.zName = "volta-fault";
    vfs.szOsFile = static_cast<int>(sizeof(FaultFile)) + real_vfs->szOsFile;
    vfs.xOpen = fault_open;
    BOOST_REQUIRE(sqlite3_vfs_register(&vfs, 1) == SQLITE_OK);
  }
};
BOOST_TEST_GLOBAL_FIXTURE(FaultVfs);

// ---- the store's work and its checks ---------------------------------------------------------

RunInfo run_info(const std::string& commit) {
  RunInfo info;
  info.commit = commit;
  info.build_type = "relassert";
  info.backend = "cpu";
  info.suites = "parity";
  info.command = "store_fault_test";
  return info;
}

// Cases first .. first + n - 1.
std::vector<ResultRow> rows(int first, int n) {
  std::vector<ResultRow> out(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    ResultRow& r = out[static_cast<size_t>(i)];
    r.suite = "parity";
    r.family = "elementwise";
    r.op = "Add";
    r.backend = "cpu";
    r.case_id = "Add(i=" + std::to_string(first + i) + ")";
    r.max_abs = 0.0;
    r.duration_ms = 1.5;
    r.message = std::string(200, 'm');  // rows of some size, so that a run spans many pages
  }
  return out;
}

// A whole run: open (creating or migrating), begin, two batches, inputs, finish.
void one_run(const std::string& path, const std::string& commit) {
  ResultStore store(path);
  const int64_t run = store.begin_run(run_info(commit));
  store.record(run, rows(0, 40));
  store.record(run, rows(40, 40));
  RunInput input;
  input.name = "conformance/expectations/parity.tsv";
  input.path = "parity.tsv";
  input.sha256 = input.committed_sha256 = "00";
  store.record_inputs(run, {&input, 1});
  store.finish_run(run);
}

// Every row of every complete run, one line each: what must survive a fault unchanged.
std::string complete_runs(const std::string& path) {
  const ResultStore store(path, Database::Mode::ReadOnly);
  Statement s = store.db().prepare(
      "SELECT run.id, run.commit_sha, c.case_id, r.outcome, r.message FROM result r "
      "JOIN run ON run.id = r.run_id JOIN test_case c ON c.id = r.case_ref "
      "WHERE run.status = 'complete' ORDER BY r.id");
  std::string out;
  while (s.step()) {
    for (int i = 0; i < 5; ++i) out += s.column_text(i) + "|";
    out += "\n";
  }
  return out;
}

struct Tally {
  int64_t faults = 0;    // runs with a fault injected
  int64_t survived = 0;  // of those, files that reopened intact
};

// Runs `one_run` on a copy of a file holding an earlier complete run, failing call `at` of
// `fault` with `error`; returns whether a fault was injected (false: `at` is past the last call).
bool faulted_run(const TempDir& dir, Fault fault, int error, int64_t at, Tally& tally) {
  const std::string path = dir.file("fault-" + std::to_string(static_cast<int>(fault)) + "-" +
                                    std::to_string(error) + "-" + std::to_string(at) + ".db");
  one_run(path, "earlier");
  const std::string before = complete_runs(path);
  injector.reset(fault, error, at);
  std::string error_text;
  try {
    one_run(path, "faulted");
  } catch (const StoreError& e) {
    error_text = e.what();
  }
  const bool injected = injector.injected > 0;
  injector.reset(Fault::None, SQLITE_IOERR, 0);
  if (!injected) {
    BOOST_TEST(error_text.empty());
    return false;
  }
  ++tally.faults;
  // A fault that SQLite absorbed (a failed sync it retried, a write to a page it rewrote) may
  // let the run finish; otherwise the caller heard of it, in SQLite's words.
  if (!error_text.empty()) {
    const bool names_cause = error_text.find("disk I/O error") != std::string::npos ||
                             error_text.find("database or disk is full") != std::string::npos;
    BOOST_CHECK_MESSAGE(names_cause, "fault " << at << ": " << error_text);
  }
  // The file reopens for writing (which also checks its integrity), keeps the earlier run, and
  // takes another run.
  {
    ResultStore store(path);
    Statement check = store.db().prepare("PRAGMA integrity_check");
    BOOST_TEST(check.step());
    BOOST_TEST(check.column_text(0) == "ok");
    const int64_t faulted_complete = testing::count(
        store.db(),
        "SELECT count(*) FROM run WHERE commit_sha = 'faulted' AND status = 'complete'");
    BOOST_TEST(faulted_complete == (error_text.empty() ? 1 : 0));
  }
  const std::string after = complete_runs(path);
  BOOST_TEST(after.substr(0, before.size()) == before);
  one_run(path, "after");
  ++tally.survived;
  return true;
}

// The writes and syncs of one faulted_run's second run, counted without a fault.
std::pair<int64_t, int64_t> calls_of_a_run(const TempDir& dir) {
  const std::string path = dir.file("count.db");
  one_run(path, "earlier");
  injector.reset(Fault::None, SQLITE_IOERR, 0);
  one_run(path, "counted");
  return {injector.writes, injector.syncs};
}

BOOST_AUTO_TEST_CASE(every_write_and_sync_failing_loses_nothing) {
  const TempDir dir;
  const auto [writes, syncs] = calls_of_a_run(dir);
  BOOST_TEST(writes >= 20);  // the run spans many pages: the loop below tries each write
  BOOST_TEST(syncs >= 1);
  for (const auto& [fault, error, calls, name] :
       {std::tuple{Fault::Write, SQLITE_IOERR, writes, "write, I/O error"},
        std::tuple{Fault::Write, SQLITE_FULL, writes, "write, disk full"},
        std::tuple{Fault::Sync, SQLITE_IOERR, syncs, "fsync, I/O error"}}) {
    Tally tally;
    for (int64_t at = 1; at <= calls; ++at) {
      BOOST_TEST(faulted_run(dir, fault, error, at, tally), name << " " << at << " not injected");
    }
    BOOST_TEST(!faulted_run(dir, fault, error, calls + 1, tally));  // no call past the last
    BOOST_TEST_MESSAGE(name << ": " << tally.faults << " faults injected, " << tally.survived
                            << " files intact, 0 rows lost");
    BOOST_TEST(tally.faults == calls);
    BOOST_TEST(tally.survived == tally.faults);
  }
}

}  // namespace
}  // namespace volta::conformance
