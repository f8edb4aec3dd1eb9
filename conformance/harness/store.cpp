#include "volta/conformance/store.h"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <ctime>
#include <filesystem>

namespace volta::conformance {
namespace {

// Forward migrations: kMigrations[v] takes a database from schema version v to v + 1.
// Never edit a shipped entry; append a new one and bump kSchemaVersion.
constexpr std::array<std::string_view, kSchemaVersion> kMigrations = {
    R"sql(
CREATE TABLE run (
  id          INTEGER PRIMARY KEY,
  commit_sha  TEXT NOT NULL,
  dirty       INTEGER NOT NULL,
  build_type  TEXT NOT NULL,
  compiler    TEXT NOT NULL,
  cpu_model   TEXT NOT NULL,
  threads     INTEGER NOT NULL,
  backend     TEXT NOT NULL,
  machine     TEXT NOT NULL,
  suites      TEXT NOT NULL,
  command     TEXT NOT NULL,
  started_at  TEXT NOT NULL,
  ended_at    TEXT,
  status      TEXT NOT NULL CHECK (status IN ('running', 'complete', 'incomplete')),
  pid         INTEGER,
  origin      TEXT NOT NULL DEFAULT ''
);
CREATE TABLE test_case (
  id       INTEGER PRIMARY KEY,
  suite    TEXT NOT NULL,
  family   TEXT NOT NULL,
  op       TEXT NOT NULL,
  backend  TEXT NOT NULL,
  case_id  TEXT NOT NULL,
  params   TEXT NOT NULL DEFAULT '',
  UNIQUE (suite, backend, case_id)
);
CREATE TABLE result (
  id             INTEGER PRIMARY KEY,
  run_id         INTEGER NOT NULL REFERENCES run(id),
  case_ref       INTEGER NOT NULL REFERENCES test_case(id),
  outcome        TEXT NOT NULL CHECK (outcome IN ('PASS', 'FAIL_NUMERIC', 'FAIL_SHAPE',
                   'FAIL_DTYPE', 'UNSUPPORTED', 'SKIPPED', 'ERROR', 'CRASH', 'TIMEOUT', 'MISSING')),
  verdict        TEXT NOT NULL CHECK (verdict IN ('expected', 'unexpected', 'unexpected-pass',
                   'expired')),
  expectation    TEXT NOT NULL DEFAULT '',
  max_abs        REAL,
  max_rel        REAL,
  max_ulp        REAL,
  tolerance_key  TEXT NOT NULL DEFAULT '',
  tolerance      TEXT NOT NULL DEFAULT '',
  output_hash    TEXT NOT NULL DEFAULT '',
  duration_ms    REAL NOT NULL,
  kernel         TEXT NOT NULL DEFAULT '',
  message        TEXT NOT NULL DEFAULT '',
  UNIQUE (run_id, case_ref)
);
CREATE INDEX result_by_case ON result(case_ref, run_id);
CREATE TABLE expectation (
  id       INTEGER PRIMARY KEY,
  run_id   INTEGER NOT NULL REFERENCES run(id),
  suite    TEXT NOT NULL,
  pattern  TEXT NOT NULL,
  outcome  TEXT NOT NULL,
  reason   TEXT NOT NULL,
  issue    TEXT NOT NULL,
  expires  TEXT NOT NULL
);
CREATE TABLE perf_sample (
  id          INTEGER PRIMARY KEY,
  run_id      INTEGER NOT NULL REFERENCES run(id),
  benchmark   TEXT NOT NULL,
  pass        INTEGER NOT NULL,
  repetition  INTEGER NOT NULL,
  value       REAL NOT NULL,
  unit        TEXT NOT NULL
);
CREATE TABLE perf_baseline (
  id          INTEGER PRIMARY KEY,
  machine     TEXT NOT NULL,
  benchmark   TEXT NOT NULL,
  value       REAL NOT NULL,
  unit        TEXT NOT NULL,
  commit_sha  TEXT NOT NULL,
  reason      TEXT NOT NULL CHECK (reason <> ''),
  created_at  TEXT NOT NULL
);
CREATE TABLE doc_claim (
  id          INTEGER PRIMARY KEY,
  commit_sha  TEXT NOT NULL,
  claim       TEXT NOT NULL,
  file        TEXT NOT NULL,
  line        INTEGER NOT NULL,
  evidence    TEXT NOT NULL,
  status      TEXT NOT NULL CHECK (status IN ('PASS', 'FAIL', 'NOT VERIFIED')),
  detail      TEXT NOT NULL,
  checked_at  TEXT NOT NULL
);
CREATE TABLE gate_result (
  id            INTEGER PRIMARY KEY,
  commit_sha    TEXT NOT NULL,
  gate          TEXT NOT NULL,
  blocker       INTEGER NOT NULL,
  status        TEXT NOT NULL CHECK (status IN ('PASS', 'FAIL', 'NOT VERIFIED')),
  reason        TEXT NOT NULL,
  evaluated_at  TEXT NOT NULL
);
)sql",
};

std::string now_utc() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool process_alive(int64_t pid) {
  return pid > 0 && (kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
}

std::string host_name() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

}  // namespace

ResultStore::ResultStore(const std::string& path, Database::Mode mode)
    : db_([&] {
        if (mode == Database::Mode::ReadOnly && !std::filesystem::exists(path)) {
          throw StoreError("results database '" + path +
                           "' does not exist: run `volta-audit run` first, or pass --db PATH");
        }
        return Database(path, mode);
      }()) {
  int version = 0;
  try {
    Statement s = db_.prepare("PRAGMA user_version");
    s.step();
    version = static_cast<int>(s.column_int(0));
    // A file SQLite cannot read fails here, before anything could write to it.
    db_.prepare("SELECT count(*) FROM sqlite_master").step();
  } catch (const StoreError& e) {
    throw StoreError("'" + path + "' is not a readable Volta results database (" + e.what() +
                     "); it was left untouched");
  }
  check_version(version);
  if (mode == Database::Mode::ReadWrite) {
    db_.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;");
    migrate();
    mark_dead_runs_incomplete();
  }
}

void ResultStore::check_version(int version) const {
  if (version > kSchemaVersion) {
    throw StoreError("results database '" + db_.path() + "' has schema version " +
                     std::to_string(version) + ", newer than this build understands (" +
                     std::to_string(kSchemaVersion) +
                     "): use a newer volta-audit, or another --db; the file was left untouched");
  }
  if (version == 0) {
    Statement s = db_.prepare("SELECT count(*) FROM sqlite_master");
    s.step();
    if (s.column_int(0) != 0) {
      throw StoreError("'" + db_.path() +
                       "' is a SQLite database but not a Volta results database (it has tables "
                       "and no Volta schema version); it was left untouched");
    }
  }
}

int ResultStore::schema_version() const {
  Statement s = db_.prepare("PRAGMA user_version");
  s.step();
  return static_cast<int>(s.column_int(0));
}

void ResultStore::migrate() {
  for (int v = schema_version(); v < kSchemaVersion; ++v) {
    Transaction tx(db_);
    db_.exec(kMigrations[static_cast<size_t>(v)]);
    db_.exec("PRAGMA user_version = " + std::to_string(v + 1));
    tx.commit();
  }
}

void ResultStore::mark_dead_runs_incomplete() {
  Statement running =
      db_.prepare("SELECT id, pid FROM run WHERE status = 'running' AND machine = ?");
  running.bind(1, host_name());
  std::vector<int64_t> dead;
  while (running.step()) {
    if (!process_alive(running.column_int(1))) dead.push_back(running.column_int(0));
  }
  for (int64_t id : dead) {
    db_.prepare("UPDATE run SET status = 'incomplete' WHERE id = ?").bind(1, id).run();
  }
}

int64_t ResultStore::begin_run(const RunInfo& info) {
  Statement s = db_.prepare(
      "INSERT INTO run (commit_sha, dirty, build_type, compiler, cpu_model, threads, backend, "
      "machine, suites, command, started_at, status, pid) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?)");
  s.bind(1, info.commit)
      .bind(2, int64_t{info.dirty})
      .bind(3, info.build_type)
      .bind(4, info.compiler)
      .bind(5, info.cpu_model)
      .bind(6, int64_t{info.threads})
      .bind(7, info.backend)
      .bind(8, host_name())
      .bind(9, info.suites)
      .bind(10, info.command)
      .bind(11, now_utc())
      .bind(12, static_cast<int64_t>(getpid()));
  s.run();
  return db_.last_insert_id();
}

void ResultStore::record(int64_t run_id, std::span<const ResultRow> rows) {
  Transaction tx(db_);
  Statement add_case = db_.prepare(
      "INSERT INTO test_case (suite, family, op, backend, case_id, params) VALUES (?, ?, ?, ?, ?, "
      "?) "
      "ON CONFLICT (suite, backend, case_id) DO UPDATE SET family = excluded.family, "
      "op = excluded.op, params = excluded.params RETURNING id");
  Statement add_result = db_.prepare(
      "INSERT INTO result (run_id, case_ref, outcome, verdict, expectation, max_abs, max_rel, "
      "max_ulp, tolerance_key, tolerance, output_hash, duration_ms, kernel, message) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (const ResultRow& r : rows) {
    add_case.reset();
    add_case.bind(1, r.suite).bind(2, r.family).bind(3, r.op).bind(4, r.backend).bind(5, r.case_id);
    add_case.bind(6, r.params);
    add_case.step();
    const int64_t case_ref = add_case.column_int(0);
    add_case.run();
    add_result.reset();
    add_result.bind(1, run_id)
        .bind(2, case_ref)
        .bind(3, outcome_name(r.outcome))
        .bind(4, verdict_name(r.verdict))
        .bind(5, r.expectation)
        .bind(6, r.max_abs)
        .bind(7, r.max_rel)
        .bind(8, r.max_ulp)
        .bind(9, r.tolerance_key)
        .bind(10, r.tolerance)
        .bind(11, r.output_hash)
        .bind(12, r.duration_ms)
        .bind(13, r.kernel)
        .bind(14, r.message);
    add_result.run();
  }
  tx.commit();
}

void ResultStore::record_expectations(int64_t run_id, std::span<const ExpectationRow> rows) {
  Transaction tx(db_);
  Statement s = db_.prepare(
      "INSERT INTO expectation (run_id, suite, pattern, outcome, reason, issue, expires) "
      "VALUES (?, ?, ?, ?, ?, ?, ?)");
  for (const ExpectationRow& e : rows) {
    s.reset();
    s.bind(1, run_id).bind(2, e.suite).bind(3, e.pattern).bind(4, e.outcome).bind(5, e.reason);
    s.bind(6, e.issue).bind(7, e.expires);
    s.run();
  }
  tx.commit();
}

void ResultStore::finish_run(int64_t run_id) {
  db_.prepare("UPDATE run SET status = 'complete', ended_at = ? WHERE id = ?")
      .bind(1, now_utc())
      .bind(2, run_id)
      .run();
}

void ResultStore::merge(std::span<const std::string> shards, const std::string& out) {
  ResultStore target(out);
  for (const std::string& shard : shards) {
    ResultStore source(shard, Database::Mode::ReadOnly);  // validates the shard's schema
    if (source.schema_version() != kSchemaVersion) {
      throw StoreError("shard '" + shard + "' has schema version " +
                       std::to_string(source.schema_version()) + ", expected " +
                       std::to_string(kSchemaVersion) +
                       ": open it once with this build to migrate");
    }
    Database& db = target.db();
    db.prepare("ATTACH DATABASE ? AS shard").bind(1, shard).run();
    try {
      Transaction tx(db);
      // Runs get fresh ids; run_map remembers old -> new for every table keyed by run.
      db.exec(
          "CREATE TEMP TABLE run_map (old INTEGER PRIMARY KEY, new INTEGER NOT NULL);"
          "CREATE TEMP TABLE case_map (old INTEGER PRIMARY KEY, new INTEGER NOT NULL);");
      Statement runs = db.prepare("SELECT id FROM shard.run ORDER BY id");
      std::vector<int64_t> old_ids;
      while (runs.step()) old_ids.push_back(runs.column_int(0));
      for (int64_t old : old_ids) {
        db.prepare(
              "INSERT INTO main.run (commit_sha, dirty, build_type, compiler, cpu_model, threads, "
              "backend, machine, suites, command, started_at, ended_at, status, pid, origin) "
              "SELECT commit_sha, dirty, build_type, compiler, cpu_model, threads, backend, "
              "machine, suites, command, started_at, ended_at, "
              "CASE status WHEN 'running' THEN 'incomplete' ELSE status END, pid, "
              "CASE origin WHEN '' THEN ? ELSE origin END FROM shard.run WHERE id = ?")
            .bind(1, shard)
            .bind(2, old)
            .run();
        db.prepare("INSERT INTO run_map VALUES (?, ?)")
            .bind(1, old)
            .bind(2, db.last_insert_id())
            .run();
      }
      db.exec(
          "INSERT INTO main.test_case (suite, family, op, backend, case_id, params) "
          "SELECT suite, family, op, backend, case_id, params FROM shard.test_case WHERE true "
          "ON CONFLICT (suite, backend, case_id) DO NOTHING;"
          "INSERT INTO case_map SELECT s.id, m.id FROM shard.test_case s JOIN main.test_case m "
          "USING (suite, backend, case_id);"
          "INSERT INTO main.result (run_id, case_ref, outcome, verdict, expectation, max_abs, "
          "max_rel, max_ulp, tolerance_key, tolerance, output_hash, duration_ms, kernel, message) "
          "SELECT r.new, c.new, outcome, verdict, expectation, max_abs, max_rel, max_ulp, "
          "tolerance_key, tolerance, output_hash, duration_ms, kernel, message "
          "FROM shard.result JOIN run_map r ON r.old = run_id JOIN case_map c ON c.old = case_ref;"
          "INSERT INTO main.expectation (run_id, suite, pattern, outcome, reason, issue, expires) "
          "SELECT r.new, suite, pattern, outcome, reason, issue, expires "
          "FROM shard.expectation JOIN run_map r ON r.old = run_id;"
          "INSERT INTO main.perf_sample (run_id, benchmark, pass, repetition, value, unit) "
          "SELECT r.new, benchmark, pass, repetition, value, unit "
          "FROM shard.perf_sample JOIN run_map r ON r.old = run_id;"
          "INSERT INTO main.perf_baseline (machine, benchmark, value, unit, commit_sha, reason, "
          "created_at) SELECT machine, benchmark, value, unit, commit_sha, reason, created_at "
          "FROM shard.perf_baseline;"
          "INSERT INTO main.doc_claim (commit_sha, claim, file, line, evidence, status, detail, "
          "checked_at) SELECT commit_sha, claim, file, line, evidence, status, detail, checked_at "
          "FROM shard.doc_claim;"
          "INSERT INTO main.gate_result (commit_sha, gate, blocker, status, reason, evaluated_at) "
          "SELECT commit_sha, gate, blocker, status, reason, evaluated_at FROM shard.gate_result;"
          "DROP TABLE run_map; DROP TABLE case_map;");
      tx.commit();
    } catch (...) {
      db.exec("DETACH DATABASE shard");
      throw;
    }
    db.exec("DETACH DATABASE shard");
  }
}

}  // namespace volta::conformance
