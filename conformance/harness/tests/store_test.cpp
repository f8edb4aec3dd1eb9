#define BOOST_TEST_MODULE store
#include "volta/conformance/store.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "store_testing.h"
#include "volta/conformance/trace_store.h"
#include "volta/conformance/training_store.h"

namespace volta::conformance {
namespace {

namespace fs = std::filesystem;
using Mode = Database::Mode;
using testing::count;
using testing::expect_store_error;
using testing::expect_store_error_containing;
using testing::insert_v1_run;
using testing::TempDir;

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

int64_t count(const Database& db, std::string_view sql, std::string_view bound) {
  Statement s = db.prepare(sql);
  s.bind(1, bound).step();
  return s.column_int(0);
}

std::string text(const Database& db, std::string_view sql, int64_t bound = -1) {
  Statement s = db.prepare(sql);
  if (bound >= 0) s.bind(1, bound);
  BOOST_REQUIRE(s.step());
  return s.column_text(0);
}

std::string run_status(const Database& db, int64_t run_id) {
  return text(db, "SELECT status FROM run WHERE id = ?", run_id);
}

int64_t results_of(const Database& db, int64_t run_id) {
  return count(db, "SELECT count(*) FROM result WHERE run_id = ?", run_id);
}

RunInfo run_info(std::string commit = "c0ffee") {
  RunInfo info;
  info.commit = std::move(commit);
  info.build_type = "RelWithDebInfo";
  info.compiler = "g++ 12";
  info.cpu_model = "Test CPU";
  info.threads = 3;
  info.backend = "cpu";
  info.suites = "parity";
  info.command = "store_test";
  return info;
}

ResultRow row(std::string case_id, Outcome outcome = Outcome::Pass) {
  ResultRow r;
  r.suite = "parity";
  r.family = "elementwise";
  r.op = "Add";
  r.backend = "cpu";
  r.case_id = std::move(case_id);
  r.outcome = outcome;
  r.max_abs = 0.0;
  r.duration_ms = 1.5;
  return r;
}

// `n` rows with ids "Add(batch=B,i=I)".
std::vector<ResultRow> batch(int batch_index, int n) {
  std::vector<ResultRow> rows;
  rows.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    rows.push_back(
        row("Add(batch=" + std::to_string(batch_index) + ",i=" + std::to_string(i) + ")"));
  }
  return rows;
}

// A database holding one complete run with `n` results.
int64_t store_complete_run(const std::string& path, int n) {
  ResultStore store(path);
  const int64_t run = store.begin_run(run_info());
  store.record(run, batch(0, n));
  store.finish_run(run);
  return run;
}

void set_user_version(const std::string& path, int version) {
  Database(path, Mode::ReadWrite).exec("PRAGMA user_version = " + std::to_string(version));
}

// ---- schema and migrations ------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(a_new_file_gets_the_current_schema_in_wal_mode) {
  TempDir dir;
  const std::string path = dir.file(kDefaultDatabase);
  ResultStore store(path);
  BOOST_TEST(store.schema_version() == kSchemaVersion);
  BOOST_TEST(count(store.db(), "PRAGMA user_version") == kSchemaVersion);
  BOOST_TEST(count(store.db(), "PRAGMA application_id") == kApplicationId);
  BOOST_TEST(text(store.db(), "PRAGMA journal_mode") == "wal");
  BOOST_TEST(count(store.db(), "PRAGMA foreign_keys") == 1);
  for (const char* table :
       {"run", "test_case", "result", "expectation", "perf_sample", "perf_baseline", "doc_claim",
        "gate_result", "node_trace", "perf_verdict"}) {
    Statement s = store.db().prepare("SELECT count(*) FROM sqlite_master WHERE name = ?");
    s.bind(1, std::string_view(table)).step();
    BOOST_TEST(s.column_int(0) == 1, "table " << table);
  }
}

BOOST_AUTO_TEST_CASE(empty_version_0_files_are_migrated) {
  TempDir dir;
  const std::string zero_bytes = dir.file("zero.db");
  write_bytes(zero_bytes, "");
  BOOST_TEST(ResultStore(zero_bytes).schema_version() == kSchemaVersion);

  // A real SQLite file, header and all, at user_version 0 with no schema objects.
  const std::string empty = dir.file("empty.db");
  Database(empty, Mode::ReadWrite).exec("CREATE TABLE scratch (x); DROP TABLE scratch;");
  BOOST_TEST(fs::file_size(empty) > 0);
  ResultStore store(empty);
  BOOST_TEST(store.schema_version() == kSchemaVersion);
  BOOST_TEST(count(store.db(), "PRAGMA application_id") == kApplicationId);
}

BOOST_AUTO_TEST_CASE(file_names_are_taken_literally) {
  TempDir dir;
  // SQLite is given URIs; a name with URI syntax in it must still name that very file.
  const std::string odd = dir.file("odd ?#%41 name.db");
  store_complete_run(odd, 1);
  const std::string relative = fs::relative(dir.file("relative.db")).string();
  BOOST_TEST(fs::path(relative).is_relative());
  const std::vector<std::string> shards = {odd};
  ResultStore::merge(shards, relative);
  BOOST_TEST(count(ResultStore(relative, Mode::ReadOnly).db(), "SELECT count(*) FROM result") == 1);
  // Only those two files (with their -wal and -shm): nothing under a percent-decoded name.
  for (const auto& entry : fs::directory_iterator(fs::path(odd).parent_path())) {
    const std::string name = entry.path().filename().string();
    BOOST_TEST((name.starts_with("odd ?#%41 name.db") || name.starts_with("relative.db")), name);
  }
}

BOOST_AUTO_TEST_CASE(reopening_a_current_file_keeps_its_rows) {
  TempDir dir;
  const std::string path = dir.file("a.db");
  const int64_t run = store_complete_run(path, 4);
  ResultStore store(path);
  BOOST_TEST(store.schema_version() == kSchemaVersion);
  BOOST_TEST(run_status(store.db(), run) == "complete");
  BOOST_TEST(results_of(store.db(), run) == 4);
}

BOOST_AUTO_TEST_CASE(a_failed_migration_step_rolls_back_and_keeps_the_version) {
  TempDir dir;
  const std::string path = dir.file("m.db");
  Database db(path, Mode::ReadWrite);
  const std::vector<std::string_view> broken = {
      "CREATE TABLE first (x);",
      "CREATE TABLE second (x); INSERT INTO missing VALUES (1);",
  };
  expect_store_error([&] { apply_migrations(db, broken); },
                     "results database '" + path +
                         "': no such table: missing (migrating from schema version 1 to 2; "
                         "rolled back, the file is still at version 1)");
  BOOST_TEST(count(db, "PRAGMA user_version") == 1);
  BOOST_TEST(count(db, "SELECT count(*) FROM sqlite_master WHERE name = 'first'") == 1);
  BOOST_TEST(count(db, "SELECT count(*) FROM sqlite_master WHERE name = 'second'") == 0);

  // Fixed, the next attempt goes on from version 1, without re-running step 0.
  const std::vector<std::string_view> fixed = {broken[0], "CREATE TABLE second (x);"};
  apply_migrations(db, fixed);
  BOOST_TEST(count(db, "PRAGMA user_version") == 2);
  BOOST_TEST(count(db, "SELECT count(*) FROM sqlite_master WHERE name = 'second'") == 1);
}

// A file written by a build with schema version 1: its rows survive the migration to the
// current version, and the columns added since read as their defaults.
BOOST_AUTO_TEST_CASE(a_version_1_file_migrates_with_its_rows_intact) {
  TempDir dir;
  const std::string path = dir.file("v1.db");
  {
    Database db(path, Mode::ReadWrite);
    apply_migrations(db, schema_migrations().first(1));
    BOOST_TEST(count(db, "PRAGMA user_version") == 1);
    insert_v1_run(db, 1, "v1commit", "parity");
    db.exec(
        "INSERT INTO test_case (id, suite, family, op, backend, case_id) VALUES "
        "(1, 'parity', 'elementwise', 'Add', 'cpu', 'Add(shape=[2])');"
        "INSERT INTO result (run_id, case_ref, outcome, verdict, max_abs, duration_ms, message) "
        "VALUES (1, 1, 'FAIL_NUMERIC', 'unexpected', 0.25, 3.0, 'kept');");
  }
  ResultStore store(path);
  BOOST_TEST(store.schema_version() == kSchemaVersion);
  const Database& db = store.db();
  BOOST_TEST(run_status(db, 1) == "complete");
  BOOST_TEST(text(db, "SELECT commit_sha FROM run WHERE id = 1") == "v1commit");
  Statement r = db.prepare(
      "SELECT outcome, max_abs, message, not_bit_exact FROM result JOIN test_case c "
      "ON c.id = case_ref WHERE c.case_id = 'Add(shape=[2])' AND run_id = 1");
  BOOST_REQUIRE(r.step());
  BOOST_TEST(r.column_text(0) == "FAIL_NUMERIC");
  BOOST_TEST(r.column_double(1) == 0.25);
  BOOST_TEST(r.column_text(2) == "kept");
  BOOST_TEST(r.column_text(3) == "");
  BOOST_TEST(!r.step());
  BOOST_TEST(count(db, "SELECT count(*) FROM node_trace") == 0);

  // The migrated file takes new rows of both kinds.
  ResultStore writer(path);
  const int64_t run = writer.begin_run(run_info());
  ResultRow relaxed = row("Add(shape=[3])");
  relaxed.not_bit_exact = "node 'sum' (ReduceSum, kernel f32_reduce_atomic, run-to-run)";
  writer.record(run, std::vector{relaxed});
  BOOST_TEST(text(writer.db(), "SELECT not_bit_exact FROM result WHERE run_id = ?", run) ==
             relaxed.not_bit_exact);
}

// Schema 3 kept a case's params on test_case, overwritten by whichever run recorded the case
// last: version 4 gives them to that run's result (the newest of the case) and to no other.
BOOST_AUTO_TEST_CASE(a_version_3_file_gives_its_params_to_the_newest_result_only) {
  TempDir dir;
  const std::string path = dir.file("v3.db");
  {
    Database db(path, Mode::ReadWrite);
    apply_migrations(db, schema_migrations().first(3));
    insert_v1_run(db, 1, "old", "determinism");
    insert_v1_run(db, 2, "new", "determinism");
    db.exec(
        "INSERT INTO test_case (id, suite, family, op, backend, case_id, params) VALUES "
        "(1, 'determinism', 'replay-100', 'graph', 'cpu', 'replay:model:mlp', "
        "'runs=5 processes=0 threads=3');"
        "INSERT INTO result (id, run_id, case_ref, outcome, verdict, duration_ms) VALUES "
        "(1, 1, 1, 'PASS', 'expected', 1.0), (2, 2, 1, 'PASS', 'expected', 1.0);");
  }
  ResultStore store(path);
  BOOST_TEST(store.schema_version() == kSchemaVersion);
  BOOST_TEST(text(store.db(), "SELECT params FROM result WHERE id = ?", 2) ==
             "runs=5 processes=0 threads=3");
  BOOST_TEST(text(store.db(), "SELECT params FROM result WHERE id = ?", 1) == "");
  BOOST_TEST(count(store.db(),
                   "SELECT count(*) FROM pragma_table_info('test_case') "
                   "WHERE name = 'params'") == 0);
  // Runs written before version 4 recorded no inputs and read as dirty docs: never evidence.
  BOOST_TEST(count(store.db(), "SELECT count(*) FROM run_input") == 0);
}

// Params are per result: a later run of the same case does not rewrite an earlier run's.
BOOST_AUTO_TEST_CASE(each_result_keeps_the_params_of_its_own_run) {
  TempDir dir;
  ResultStore store(dir.file("params.db"));
  ResultRow first = row("replay:model:mlp");
  first.params = "runs=100 processes=3 threads=3";
  const int64_t a = store.begin_run(run_info());
  store.record(a, std::vector{first});
  ResultRow second = first;
  second.params = "runs=5 processes=0 threads=3";
  const int64_t b = store.begin_run(run_info());
  store.record(b, std::vector{second});
  BOOST_TEST(text(store.db(), "SELECT params FROM result WHERE run_id = ?", a) == first.params);
  BOOST_TEST(text(store.db(), "SELECT params FROM result WHERE run_id = ?", b) == second.params);
}

BOOST_AUTO_TEST_CASE(run_inputs_are_recorded_only_into_a_running_run) {
  TempDir dir;
  ResultStore store(dir.file("inputs.db"));
  const int64_t run = store.begin_run(run_info());
  const RunInput input{RunInput::Kind::File, "governance/perf-slo.md", "/src/perf-slo.md",
                       std::string(kAbsent), "abc"};
  store.record_inputs(run, std::vector{input});
  BOOST_TEST(text(store.db(),
                  "SELECT kind || ' ' || name || ' ' || sha256 FROM run_input "
                  "WHERE run_id = ?",
                  run) == "file governance/perf-slo.md absent");
  store.finish_run(run);
  expect_store_error_containing(
      [&] { store.record_inputs(run, std::vector{input}); },
      {"cannot record inputs into run", "it is 'complete', and only a 'running' run takes rows"});
}

// ---- refused files --------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(a_newer_schema_is_refused_and_left_byte_identical) {
  TempDir dir;
  const std::string path = dir.file("newer.db");
  store_complete_run(path, 2);
  set_user_version(path, kSchemaVersion + 1);
  const std::string before = file_bytes(path);
  const std::string message =
      "results database '" + path + "' has schema version " + std::to_string(kSchemaVersion + 1) +
      ", newer than this build understands (" + std::to_string(kSchemaVersion) +
      "): use a newer volta-audit, or another --db; the file was left untouched";
  expect_store_error([&] { ResultStore store(path); }, message);
  expect_store_error([&] { ResultStore store(path, Mode::ReadOnly); }, message);
  BOOST_TEST((file_bytes(path) == before));
}

BOOST_AUTO_TEST_CASE(another_applications_sqlite_file_is_refused) {
  TempDir dir;
  const std::string path = dir.file("app.db");
  Database(path, Mode::ReadWrite).exec("CREATE TABLE users (name TEXT);");
  const std::string before = file_bytes(path);
  expect_store_error([&] { ResultStore store(path); },
                     "results database '" + path +
                         "' is a SQLite database of another application (application_id 0, "
                         "user_version 0, 1 schema objects), not a Volta results database; the "
                         "file was left untouched");
  BOOST_TEST((file_bytes(path) == before));

  // A user_version alone does not make a file ours.
  set_user_version(path, kSchemaVersion);
  expect_store_error_containing([&] { ResultStore store(path); },
                                {"not a Volta results database", "left untouched"});
}

BOOST_AUTO_TEST_CASE(random_bytes_are_reported_and_left_byte_identical) {
  TempDir dir;
  const std::string path = dir.file("noise.db");
  std::mt19937 generator(3);
  std::string noise(8192, '\0');
  for (char& c : noise) c = static_cast<char>(generator());
  write_bytes(path, noise);
  const std::string message = "results database '" + path +
                              "' is corrupt or not a SQLite database (file is not a database): "
                              "restore it from a copy, or pass another --db; the file was left "
                              "untouched";
  expect_store_error([&] { ResultStore store(path); }, message);
  expect_store_error([&] { ResultStore store(path, Mode::ReadOnly); }, message);
  BOOST_TEST((file_bytes(path) == noise));
  BOOST_TEST(!fs::exists(path + "-wal"));
}

BOOST_AUTO_TEST_CASE(a_truncated_database_is_reported_and_left_byte_identical) {
  TempDir dir;
  const std::string path = dir.file("truncated.db");
  store_complete_run(path, 2000);  // many pages, so half the file loses b-tree pages
  BOOST_TEST(!fs::exists(path + "-wal"), "the last close checkpoints the WAL into the file");
  fs::resize_file(path, fs::file_size(path) / 2);
  const std::string before = file_bytes(path);
  const std::string message = "results database '" + path +
                              "' is corrupt or not a SQLite database (database disk image is "
                              "malformed): restore it from a copy, or pass another --db; the "
                              "file was left untouched";
  expect_store_error([&] { ResultStore store(path); }, message);
  expect_store_error([&] { ResultStore store(path, Mode::ReadOnly); }, message);
  BOOST_TEST((file_bytes(path) == before));
}

BOOST_AUTO_TEST_CASE(a_scribbled_page_is_reported_before_any_write) {
  TempDir dir;
  const std::string path = dir.file("scribbled.db");
  store_complete_run(path, 2000);
  const auto page = static_cast<size_t>(count(ResultStore(path).db(), "PRAGMA page_size"));
  // Overwrite one page in the middle of the file: the header and the schema stay sound, so only
  // the integrity check on a writer's open can see it.
  std::string bytes = file_bytes(path);
  const size_t middle = bytes.size() / 2 / page * page;
  std::mt19937 generator(5);
  for (size_t i = middle; i < middle + page; ++i) bytes[i] = static_cast<char>(generator());
  write_bytes(path, bytes);
  expect_store_error_containing([&] { ResultStore store(path); },
                                {"results database '" + path + "' is corrupt (",
                                 "): restore it from a copy, or pass another --db; the file was "
                                 "left untouched"});
  BOOST_TEST((file_bytes(path) == bytes));
}

BOOST_AUTO_TEST_CASE(read_only_opens_refuse_missing_empty_and_old_files) {
  TempDir dir;
  const std::string missing = dir.file("missing.db");
  expect_store_error([&] { ResultStore store(missing, Mode::ReadOnly); },
                     "results database '" + missing +
                         "' does not exist: run `volta-audit run` first, or pass --db PATH");
  BOOST_TEST(!fs::exists(missing));

  const std::string empty = dir.file("empty.db");
  write_bytes(empty, "");
  expect_store_error(
      [&] { ResultStore store(empty, Mode::ReadOnly); },
      "results database '" + empty + "' is empty: record a run into it first (volta-audit run)");

  const std::string old = dir.file("old.db");
  store_complete_run(old, 1);
  set_user_version(old, kSchemaVersion - 1);
  expect_store_error([&] { ResultStore store(old, Mode::ReadOnly); },
                     "results database '" + old + "' has schema version " +
                         std::to_string(kSchemaVersion - 1) + ", older than this build's (" +
                         std::to_string(kSchemaVersion) +
                         "): open it for writing once (volta-audit run) to migrate it");
}

BOOST_AUTO_TEST_CASE(a_read_only_store_cannot_write) {
  TempDir dir;
  const std::string path = dir.file("ro.db");
  store_complete_run(path, 1);
  ResultStore reader(path, Mode::ReadOnly);
  expect_store_error_containing([&] { reader.begin_run(run_info()); },
                                {"attempt to write a readonly database"});
}

// ---- recording ------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(a_run_records_its_provenance_and_rows) {
  TempDir dir;
  ResultStore store(dir.file("p.db"));
  const int64_t run = store.begin_run(run_info("abc123"));
  BOOST_TEST(run_status(store.db(), run) == "running");
  ResultRow failing = row("Add(shape=[3])", Outcome::FailNumeric);
  failing.verdict = Verdict::Unexpected;
  failing.max_abs = 0.5;
  failing.max_ulp = std::numeric_limits<double>::infinity();  // infinities are kept
  failing.message = "element 2 differs";
  store.record(run, std::vector{row("Add(shape=[1])"), failing});
  store.record_expectations(run, std::vector{ExpectationRow{"parity", "Add(*)", "FAIL_NUMERIC",
                                                            "known", "#9", "2099-01-01"}});
  store.finish_run(run);

  const Database& db = store.db();
  BOOST_TEST(run_status(db, run) == "complete");
  BOOST_TEST(text(db, "SELECT commit_sha FROM run WHERE id = ?", run) == "abc123");
  BOOST_TEST(count(db, "SELECT pid FROM run WHERE id = ?", run) == getpid());
  BOOST_TEST(count(db, "SELECT ended_at IS NOT NULL FROM run WHERE id = ?", run) == 1);
  BOOST_TEST(text(db, "SELECT machine FROM run WHERE id = ?", run).ends_with(" / Test CPU"));
  // A run on an accelerator names it after the host and CPU.
  RunInfo on_device = run_info();
  on_device.backend = "cuda";
  on_device.device = "NVIDIA H100 80GB HBM3 (compute capability 9.0, 132 SMs)";
  const int64_t device_run = store.begin_run(on_device);
  BOOST_TEST(
      text(db, "SELECT machine FROM run WHERE id = ?", device_run)
          .ends_with(" / Test CPU / NVIDIA H100 80GB HBM3 (compute capability 9.0, 132 SMs)"));
  Statement r = db.prepare(
      "SELECT outcome, verdict, max_abs, max_rel IS NULL, max_ulp, message FROM result "
      "JOIN test_case c ON c.id = case_ref WHERE c.case_id = 'Add(shape=[3])'");
  BOOST_REQUIRE(r.step());
  BOOST_TEST(r.column_text(0) == "FAIL_NUMERIC");
  BOOST_TEST(r.column_text(1) == "unexpected");
  BOOST_TEST(r.column_double(2) == 0.5);
  BOOST_TEST(r.column_int(3) == 1);
  BOOST_TEST(r.column_double(4) == std::numeric_limits<double>::infinity());
  BOOST_TEST(r.column_text(5) == "element 2 differs");
  BOOST_TEST(count(db, "SELECT count(*) FROM expectation WHERE run_id = ?", run) == 1);
}

BOOST_AUTO_TEST_CASE(record_is_one_transaction_per_batch) {
  TempDir dir;
  const std::string path = dir.file("atomic.db");
  ResultStore store(path);
  const int64_t run = store.begin_run(run_info());
  store.record(run, batch(0, 3));

  // Result 3 of 5 violates CHECK (case_id <> ''): results 1 and 2 must not stay behind.
  std::vector<ResultRow> bad = batch(1, 5);
  bad[2].case_id = "";
  expect_store_error_containing(
      [&] { store.record(run, bad); },
      {"results database '" + path + "': executing `INSERT INTO test_case",
       "`: CHECK constraint failed: case_id <> '' (result 3 of 5: case '' of suite 'parity', "
       "backend 'cpu'; the batch was rolled back, the run keeps its earlier batches)"});
  BOOST_TEST(results_of(store.db(), run) == 3);
  BOOST_TEST(count(store.db(), "SELECT count(*) FROM test_case") == 3);

  // The same case twice in one batch, and a NaN metric: each loses its whole batch.
  std::vector<ResultRow> duplicate = batch(2, 4);
  duplicate[3].case_id = duplicate[0].case_id;
  expect_store_error_containing([&] { store.record(run, duplicate); },
                                {"UNIQUE constraint failed: result.run_id, result.case_ref",
                                 "(result 4 of 4: case 'Add(batch=2,i=0)'"});
  std::vector<ResultRow> nan = batch(3, 2);
  nan[1].max_rel = std::numeric_limits<double>::quiet_NaN();
  expect_store_error_containing(
      [&] { store.record(run, nan); },
      {"parameter 7 of `INSERT INTO result", "is NaN, which SQLite would store as NULL (no value)",
       "(result 2 of 2: case 'Add(batch=3,i=1)'"});
  BOOST_TEST(results_of(store.db(), run) == 3);
  BOOST_TEST(count(store.db(), "SELECT count(*) FROM test_case") == 3);

  // The connection is usable after each failure.
  store.record(run, batch(4, 2));
  BOOST_TEST(results_of(store.db(), run) == 5);
}

BOOST_AUTO_TEST_CASE(only_a_running_run_takes_rows) {
  TempDir dir;
  const std::string path = dir.file("state.db");
  ResultStore store(path);
  const int64_t run = store.begin_run(run_info());
  store.finish_run(run);
  const std::string prefix = "results database '" + path + "': cannot ";
  expect_store_error([&] { store.record(run, batch(0, 1)); },
                     prefix + "record results into run " + std::to_string(run) +
                         ": it is 'complete', and only a 'running' run takes rows");
  expect_store_error([&] { store.finish_run(run); },
                     prefix + "finish run " + std::to_string(run) +
                         ": it is 'complete', and only a 'running' run takes rows");
  expect_store_error([&] { store.record_expectations(run + 1, {}); },
                     prefix + "record expectations into run " + std::to_string(run + 1) +
                         ": there is no such run");
  BOOST_TEST(results_of(store.db(), run) == 0);
}

BOOST_AUTO_TEST_CASE(a_statement_holds_exactly_one_sql_statement) {
  TempDir dir;
  const std::string path = dir.file("sql.db");
  ResultStore store(path);
  BOOST_TEST(count(store.db(), "SELECT 7; -- a trailing comment is fine") == 7);
  expect_store_error([&] { store.db().prepare("SELECT 1; DELETE FROM run"); },
                     "results database '" + path +
                         "': `SELECT 1; DELETE FROM run` holds more than one statement; prepare "
                         "them one at a time");
  expect_store_error([&] { store.db().prepare("  -- nothing "); },
                     "results database '" + path + "': no SQL statement in `  -- nothing `");
}

// The SQL functions the gates use; a regex past std::regex's limits (user_regex.h) is an SQL
// error naming the limit, never handed to the parser.
BOOST_AUTO_TEST_CASE(volta_param_and_volta_regex_match) {
  TempDir dir;
  const std::string path = dir.file("sql.db");
  ResultStore store(path);
  Statement s = store.db().prepare(
      "SELECT volta_param('runs=100 threads=3', 'threads'), volta_regex_match('test_.*', "
      "'test_add'), volta_regex_match('test_.*', 'add')");
  BOOST_TEST(s.step());
  BOOST_TEST(s.column_text(0) == "3");
  BOOST_TEST(s.column_int(1) == 1);
  BOOST_TEST(s.column_int(2) == 0);
  testing::expect_store_error_containing(
      [&] {
        Statement bad = store.db().prepare("SELECT volta_regex_match('a{12345678901}', 'a')");
        bad.step();
      },
      {"volta_regex_match: the pattern has a number of 10 or more digits"});
  testing::expect_store_error_containing(
      [&] {
        Statement bad = store.db().prepare("SELECT volta_regex_match('(', 'a')");
        bad.step();
      },
      {"results database '" + path + "'"});
}

// ---- concurrency and killed writers ---------------------------------------------------------

BOOST_AUTO_TEST_CASE(a_reader_sees_whole_batches_while_a_writer_inserts) {
  TempDir dir;
  const std::string path = dir.file("concurrent.db");
  constexpr int kBatches = 60;
  constexpr int kBatchSize = 25;
  ResultStore writer(path);
  const int64_t run = writer.begin_run(run_info());

  std::atomic<bool> done = false;
  std::exception_ptr writer_error;
  std::thread writing([&] {
    try {
      for (int b = 0; b < kBatches; ++b) writer.record(run, batch(b, kBatchSize));
      writer.finish_run(run);
    } catch (...) {
      writer_error = std::current_exception();
    }
    done = true;
  });

  ResultStore reader(path, Mode::ReadOnly);
  // One statement is one snapshot: a batch's cases and results appear together, or not at all.
  Statement snapshot = reader.db().prepare(
      "SELECT (SELECT count(*) FROM result WHERE run_id = ?1), (SELECT count(*) FROM test_case)");
  int64_t last = 0;
  int snapshots = 0;
  std::set<int64_t> seen;
  bool consistent = true;
  while (!done) {
    snapshot.bind(1, run).step();
    const int64_t results = snapshot.column_int(0);
    consistent = consistent && results % kBatchSize == 0 && results >= last &&
                 snapshot.column_int(1) == results;
    snapshot.reset();  // ends the read transaction, so the next step sees new commits
    last = results;
    seen.insert(results);
    ++snapshots;
  }
  writing.join();
  if (writer_error) std::rethrow_exception(writer_error);
  BOOST_TEST(consistent, "a snapshot held a partial batch or went backwards");
  BOOST_TEST_MESSAGE(snapshots << " snapshots, " << seen.size() << " distinct counts");
  BOOST_TEST(results_of(reader.db(), run) == kBatches * kBatchSize);
  BOOST_TEST(run_status(reader.db(), run) == "complete");
}

constexpr int kKilledBatchSize = 200;

// The child's side of the killed-writer test: records batches forever, writing one byte to
// `committed` after each commit. Returns only on failure (the exit status says which).
int write_until_killed(const std::string& path, int committed) {
  try {
    ResultStore store(path);
    const int64_t run = store.begin_run(run_info("killed"));
    for (int b = 1;; ++b) {
      store.record(run, batch(b, kKilledBatchSize));
      if (write(committed, "c", 1) != 1) return 3;
    }
  } catch (...) {
    return 2;
  }
}

BOOST_AUTO_TEST_CASE(a_killed_writer_leaves_earlier_runs_intact_and_its_run_incomplete) {
  TempDir dir;
  const std::string path = dir.file("killed.db");
  const int64_t earlier = store_complete_run(path, 10);  // closed: no connection crosses fork

  std::array<int, 2> pipe_fds{};
  BOOST_REQUIRE(pipe(pipe_fds.data()) == 0);
  const pid_t child = fork();
  BOOST_REQUIRE(child >= 0);
  if (child == 0) {
    close(pipe_fds[0]);
    _exit(write_until_killed(path, pipe_fds[1]));
  }
  close(pipe_fds[1]);
  // Time a few batches, then kill half a batch after a commit: inside the next transaction.
  constexpr int kBatchesBeforeKill = 6;
  auto first_commit = std::chrono::steady_clock::now();
  for (int seen = 0; seen < kBatchesBeforeKill; ++seen) {
    char byte = 0;
    BOOST_REQUIRE_MESSAGE(read(pipe_fds[0], &byte, 1) == 1, "the writer died on its own");
    if (seen == 0) first_commit = std::chrono::steady_clock::now();
  }
  const auto per_batch =
      (std::chrono::steady_clock::now() - first_commit) / (kBatchesBeforeKill - 1);
  std::this_thread::sleep_for(per_batch / 2);
  kill(child, SIGKILL);
  int status = 0;
  BOOST_REQUIRE(waitpid(child, &status, 0) == child);  // reaped: its pid is no longer alive
  close(pipe_fds[0]);
  BOOST_TEST((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));

  const int64_t killed = earlier + 1;
  {
    // Readable before anyone writes again; the dead run is still 'running' until a writer
    // looks, and readers only ever count complete runs.
    ResultStore reader(path, Mode::ReadOnly);
    BOOST_TEST(text(reader.db(), "PRAGMA integrity_check") == "ok");
    BOOST_TEST(run_status(reader.db(), killed) == "running");
  }
  ResultStore store(path);
  const Database& db = store.db();
  BOOST_TEST(text(db, "PRAGMA integrity_check") == "ok");
  BOOST_TEST(run_status(db, earlier) == "complete");
  BOOST_TEST(results_of(db, earlier) == 10);
  BOOST_TEST(run_status(db, killed) == "incomplete");
  BOOST_TEST(text(db, "SELECT commit_sha FROM run WHERE id = ?", killed) == "killed");
  const int64_t committed = results_of(db, killed);
  BOOST_TEST(committed >= kBatchesBeforeKill * kKilledBatchSize);
  BOOST_TEST_MESSAGE("committed " << committed);
  BOOST_TEST(committed % kKilledBatchSize == 0,
             committed << " results: a partial batch survived the kill");
  // The file takes new runs as usual.
  const int64_t next = store.begin_run(run_info());
  store.record(next, batch(0, 1));
  store.finish_run(next);
  BOOST_TEST(run_status(db, next) == "complete");
}

BOOST_AUTO_TEST_CASE(a_live_writers_run_is_not_marked_incomplete) {
  TempDir dir;
  const std::string path = dir.file("live.db");
  ResultStore first(path);
  const int64_t run = first.begin_run(run_info());
  ResultStore second(path);  // same process, so the run's pid is alive
  BOOST_TEST(run_status(second.db(), run) == "running");
}

// ---- merge ----------------------------------------------------------------------------------

struct Shard {
  std::string path;
  int64_t run = 0;
};

// One complete run over `case_ids`, with a row in every table.
Shard make_shard(const std::string& path, const std::string& commit,
                 const std::vector<std::string>& case_ids) {
  ResultStore store(path);
  const int64_t run = store.begin_run(run_info(commit));
  std::vector<ResultRow> rows;
  rows.reserve(case_ids.size());
  for (const std::string& id : case_ids) rows.push_back(row(id));
  rows.front().not_bit_exact = "node 'n' (Add, kernel k, run-to-run)";
  store.record(run, rows);
  NodeTraceRow traced;
  traced.subject = "model:" + commit;
  traced.node = "n";
  traced.op = "Add";
  traced.dtype = "f32";
  traced.shape = "[1]";
  traced.hash = "hash of " + commit;
  traced.data = std::vector<std::byte>{std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
  record_traces(store, run, std::vector{traced});
  store.record_expectations(
      run, std::vector{ExpectationRow{"parity", "Add(*)", "PASS", "r", "#1", "2099-01-01"}});
  store.record_inputs(
      run, std::vector{RunInput{RunInput::Kind::File, "conformance/expectations/parity.tsv",
                                "/src/parity.tsv", "sha of " + commit, "c"}});
  Database& db = store.db();
  db.prepare("INSERT INTO perf_listing (run_id, benchmark) VALUES (?, 'gemm')").bind(1, run).run();
  db.prepare(
        "INSERT INTO perf_sample (run_id, benchmark, pass, repetition, value, unit) "
        "VALUES (?, 'gemm', 1, 0, 2.5, 'ms')")
      .bind(1, run)
      .run();
  db.prepare(
        "INSERT INTO perf_verdict (run_id, benchmark, unit, variant, threads, threshold, alpha, "
        "pass1_samples, pass1_median, pass1_low, pass1_high, verdict) "
        "VALUES (?, 'gemm', 'ms', 'f32_gemm_generic_4x8', 1, 0.05, 0.01, 1, 2.5, 2.5, 2.5, 'new')")
      .bind(1, run)
      .run();
  db.prepare(
        "INSERT INTO perf_baseline (machine, benchmark, value, unit, commit_sha, reason, "
        "created_at, run_id, kind) VALUES ('m', 'gemm', 2.5, 'ms', 'c', 'first run', 't', ?, "
        "'candidate')")
      .bind(1, run)
      .run();
  db.exec(
      "INSERT INTO perf_baseline (machine, benchmark, value, unit, commit_sha, reason, "
      "created_at) VALUES ('m', 'gemm', 2.0, 'ms', 'c', 'first', 't');"
      "INSERT INTO doc_claim (commit_sha, claim, file, line, evidence, status, detail, "
      "checked_at) VALUES ('c', 'claim-1', 'README.md', 3, 'gate=parity', 'PASS', '', 't');"
      "INSERT INTO gate_result (commit_sha, gate, blocker, status, reason, evaluated_at) "
      "VALUES ('c', 'parity', 1, 'PASS', '', 't');");
  TrainingRunInfo training;
  training.commit = commit;
  training.threads = 1;
  training.model = "tiny-transformer";
  training.seed = 7;
  const int64_t trained = begin_training_run(store, training);
  record_training_steps(store, trained,
                        std::vector{TrainingStepRow{.step = 1, .loss = 5.5, .grad_norm = 2},
                                    TrainingStepRow{.step = 2, .loss = 5.0, .grad_norm = 1}});
  finish_training_run(store, trained, TrainingStatus::Complete);
  store.finish_run(run);
  return {path, run};
}

std::vector<std::string> tables(const Database& db) {
  std::vector<std::string> names;
  Statement s = db.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
      "ORDER BY name");
  while (s.step()) names.push_back(s.column_text(0));
  return names;
}

// (origin, commit, case id, outcome) of every result, the run and case resolved by id.
std::multiset<std::tuple<std::string, std::string, std::string, std::string>> resolved_results(
    const Database& db) {
  std::multiset<std::tuple<std::string, std::string, std::string, std::string>> out;
  Statement s = db.prepare(
      "SELECT run.origin, run.commit_sha, c.case_id, r.outcome FROM result r "
      "JOIN run ON run.id = r.run_id JOIN test_case c ON c.id = r.case_ref");
  while (s.step())
    out.emplace(s.column_text(0), s.column_text(1), s.column_text(2), s.column_text(3));
  return out;
}

BOOST_AUTO_TEST_CASE(merge_keeps_provenance_dedups_cases_and_remaps_run_ids) {
  TempDir dir;
  // b.db has an extra run first, so its run ids differ from a.db's and must be remapped.
  const std::string b_path = dir.file("b.db");
  {
    ResultStore b(b_path);
    const int64_t unfinished = b.begin_run(run_info("b-unfinished"));
    b.record(unfinished, std::vector{row("Add(only=b)")});
    TrainingRunInfo training;
    training.commit = "b-unfinished";
    training.model = "tiny-transformer";
    const int64_t trained = begin_training_run(b, training);  // never finished
    record_training_steps(b, trained, std::vector{TrainingStepRow{.step = 1, .loss = 4.0}});
  }
  const Shard a = make_shard(dir.file("a.db"), "a", {"Add(x=1)", "Add(x=2)"});
  const Shard b = make_shard(b_path, "b", {"Add(x=2)", "Add(x=3)"});
  const std::string a_before = file_bytes(a.path);
  const std::string b_before = file_bytes(b.path);
  {
    ResultStore shard(a.path, Mode::ReadOnly);  // the fixture fills every table of the schema
    for (const std::string& table : tables(shard.db())) {
      BOOST_TEST(count(shard.db(), "SELECT count(*) FROM " + table) > 0, "empty: " << table);
    }
  }

  const std::string out = dir.file("merged.db");
  const std::vector<std::string> shards = {a.path, b.path};
  const MergeSummary summary = ResultStore::merge(shards, out);
  BOOST_TEST(summary.shards == 2);
  BOOST_TEST(summary.runs == 3);
  BOOST_TEST(summary.results == 5);
  BOOST_TEST(summary.new_cases == 4);  // x=1, x=2, only=b, x=3
  BOOST_TEST(summary.expectations == 2);
  BOOST_TEST(summary.perf_samples == 2);
  BOOST_TEST(summary.perf_verdicts == 2);
  BOOST_TEST(summary.node_traces == 2);
  BOOST_TEST(summary.run_inputs == 2);
  BOOST_TEST(summary.training_runs == 3);
  BOOST_TEST(summary.training_steps == 5);
  BOOST_TEST((file_bytes(a.path) == a_before));
  BOOST_TEST((file_bytes(b.path) == b_before));

  ResultStore merged(out, Mode::ReadOnly);
  const Database& db = merged.db();
  for (const std::string& table : tables(db)) {
    BOOST_TEST(count(db, "SELECT count(*) FROM " + table) > 0, "nothing merged into " << table);
  }
  BOOST_TEST(count(db, "SELECT count(*) FROM test_case") == 4);
  Statement runs = db.prepare("SELECT origin, commit_sha, status, host <> '' FROM run ORDER BY id");
  std::vector<std::tuple<std::string, std::string, std::string>> got;
  while (runs.step()) {
    BOOST_TEST(runs.column_int(3) == 1);
    got.emplace_back(runs.column_text(0), runs.column_text(1), runs.column_text(2));
  }
  const std::vector<std::tuple<std::string, std::string, std::string>> want = {
      {a.path, "a", "complete"}, {b.path, "b-unfinished", "incomplete"}, {b.path, "b", "complete"}};
  BOOST_TEST((got == want));
  // Training runs too, with their steps; the unfinished one was interrupted.
  std::vector<TrainingRunRecord> trained = load_training_runs(db);
  std::ranges::sort(trained, {}, &TrainingRunRecord::id);
  std::vector<std::tuple<std::string, std::string, std::string, int64_t>> got_training;
  got_training.reserve(trained.size());
  for (const TrainingRunRecord& r : trained) {
    got_training.emplace_back(r.origin, r.info.commit, std::string(training_status_name(r.status)),
                              r.steps);
  }
  const std::vector<std::tuple<std::string, std::string, std::string, int64_t>> want_training = {
      {a.path, "a", "complete", 2},
      {b.path, "b-unfinished", "interrupted", 1},
      {b.path, "b", "complete", 2}};
  BOOST_TEST((got_training == want_training));

  // Every row follows its run: results, expectations and perf samples resolve to the right one.
  auto expected = resolved_results(ResultStore(a.path, Mode::ReadOnly).db());
  for (const auto& r : resolved_results(ResultStore(b.path, Mode::ReadOnly).db()))
    expected.insert(r);
  std::multiset<std::tuple<std::string, std::string, std::string, std::string>> with_origin;
  for (const auto& [origin, commit, id, outcome] : expected) {
    BOOST_TEST(origin.empty(), "a shard's own runs have no origin");
    with_origin.emplace(commit == "a" ? a.path : b.path, commit, id, outcome);
  }
  BOOST_TEST((resolved_results(db) == with_origin));
  BOOST_TEST(count(db,
                   "SELECT count(*) FROM expectation e JOIN run ON run.id = e.run_id "
                   "WHERE run.commit_sha IN ('a', 'b')") == 2);
  BOOST_TEST(count(db,
                   "SELECT count(*) FROM perf_sample p JOIN run ON run.id = p.run_id "
                   "WHERE run.commit_sha IN ('a', 'b')") == 2);
  // Identical facts once; a baseline naming a run follows that run's new id.
  BOOST_TEST(count(db, "SELECT count(*) FROM perf_baseline WHERE run_id IS NULL") == 1);
  BOOST_TEST(count(db,
                   "SELECT count(*) FROM perf_baseline b JOIN run ON run.id = b.run_id "
                   "WHERE b.kind = 'candidate' AND run.commit_sha IN ('a', 'b')") == 2);
  BOOST_TEST(count(db,
                   "SELECT count(*) FROM perf_verdict v JOIN run ON run.id = v.run_id "
                   "WHERE run.commit_sha IN ('a', 'b')") == 2);
  // Traces follow their run, bytes and all; the not-bit-exact column comes along.
  for (const std::string commit : {"a", "b"}) {
    const int64_t run = count(db, "SELECT id FROM run WHERE commit_sha = ?", commit);
    const std::vector<NodeTraceRow> traces = load_traces(db, run);
    BOOST_REQUIRE(traces.size() == 1u);
    BOOST_TEST(traces[0].subject == "model:" + commit);
    BOOST_TEST(traces[0].hash == "hash of " + commit);
    BOOST_TEST((traces[0].data ==
                std::vector<std::byte>{std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}}));
  }
  BOOST_TEST(count(db,
                   "SELECT count(*) FROM result r JOIN run ON run.id = r.run_id "
                   "WHERE r.not_bit_exact = 'node ''n'' (Add, kernel k, run-to-run)'") == 2);
}

BOOST_AUTO_TEST_CASE(merging_a_shard_twice_gives_its_runs_twice) {
  TempDir dir;
  const Shard a = make_shard(dir.file("a.db"), "a", {"Add(x=1)", "Add(x=2)"});
  const std::string out = dir.file("out.db");
  const std::vector<std::string> once = {a.path};
  ResultStore::merge(once, out);
  const MergeSummary again = ResultStore::merge(once, out);
  BOOST_TEST(again.runs == 1);
  BOOST_TEST(again.new_cases == 0);
  ResultStore merged(out, Mode::ReadOnly);
  BOOST_TEST(count(merged.db(), "SELECT count(*) FROM run WHERE origin = ?", a.path) == 2);
  BOOST_TEST(count(merged.db(), "SELECT count(*) FROM result") == 4);
  BOOST_TEST(count(merged.db(), "SELECT count(*) FROM test_case") == 2);
  BOOST_TEST(count(merged.db(), "SELECT count(*) FROM gate_result") == 1);
}

BOOST_AUTO_TEST_CASE(merge_refuses_bad_shards_before_touching_the_output) {
  TempDir dir;
  const Shard a = make_shard(dir.file("a.db"), "a", {"Add(x=1)"});
  const Shard newer = make_shard(dir.file("newer.db"), "n", {"Add(x=1)"});
  set_user_version(newer.path, kSchemaVersion + 1);
  const std::string out = dir.file("out.db");

  const std::vector<std::string> with_newer = {a.path, newer.path};
  expect_store_error_containing([&] { ResultStore::merge(with_newer, out); },
                                {"results database '" + newer.path + "' has schema version " +
                                 std::to_string(kSchemaVersion + 1) + ", newer than"});
  BOOST_TEST(!fs::exists(out));

  const std::vector<std::string> with_missing = {a.path, dir.file("missing.db")};
  expect_store_error([&] { ResultStore::merge(with_missing, out); },
                     "shard '" + dir.file("missing.db") + "' does not exist");
  BOOST_TEST(!fs::exists(out));

  const std::vector<std::string> into_itself = {a.path};
  const std::string a_before = file_bytes(a.path);
  expect_store_error([&] { ResultStore::merge(into_itself, a.path); },
                     "refusing to merge into '" + a.path + "': it is also listed as shard '" +
                         a.path + "'; name a new file with -o");
  // The same file under another name is still the same file.
  const std::string alias = dir.file("alias.db");
  fs::create_symlink(a.path, alias);
  expect_store_error_containing([&] { ResultStore::merge(into_itself, alias); },
                                {"refusing to merge into '" + alias + "'"});
  BOOST_TEST((file_bytes(a.path) == a_before));

  expect_store_error([&] { ResultStore::merge({}, out); },
                     "merge needs at least one shard database");
}

}  // namespace
}  // namespace volta::conformance
