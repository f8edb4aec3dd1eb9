#include "volta/conformance/store.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "store_support.h"
#include "volta/runtime/host.h"
#include "volta/version.h"

namespace volta::conformance {
namespace {

// Forward migrations: kMigrations[v] takes a database from schema version v to v + 1.
// Never edit a shipped entry; append a new one and bump kSchemaVersion.
constexpr std::array<std::string_view, kSchemaVersion> kMigrations = {
    R"sql(
PRAGMA application_id = 1450142836;  -- kApplicationId, "Volt"
CREATE TABLE run (
  id          INTEGER PRIMARY KEY,
  commit_sha  TEXT NOT NULL,
  dirty       INTEGER NOT NULL CHECK (dirty IN (0, 1)),
  build_type  TEXT NOT NULL,
  compiler    TEXT NOT NULL,
  cpu_model   TEXT NOT NULL,
  threads     INTEGER NOT NULL CHECK (threads >= 1),
  backend     TEXT NOT NULL,
  machine     TEXT NOT NULL,
  suites      TEXT NOT NULL,
  command     TEXT NOT NULL,
  started_at  TEXT NOT NULL,
  ended_at    TEXT,
  status      TEXT NOT NULL CHECK (status IN ('running', 'complete', 'incomplete')),
  host        TEXT NOT NULL,  -- with pid: how a later writer tells a dead run from a live one
  pid         INTEGER,
  origin      TEXT NOT NULL DEFAULT ''  -- the shard file a merged run came from
);
CREATE TABLE test_case (
  id       INTEGER PRIMARY KEY,
  suite    TEXT NOT NULL CHECK (suite <> ''),
  family   TEXT NOT NULL,
  op       TEXT NOT NULL,
  backend  TEXT NOT NULL CHECK (backend <> ''),
  case_id  TEXT NOT NULL CHECK (case_id <> ''),
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
  max_abs        REAL CHECK (max_abs >= 0),
  max_rel        REAL CHECK (max_rel >= 0),
  max_ulp        REAL CHECK (max_ulp >= 0),
  tolerance_key  TEXT NOT NULL DEFAULT '',
  tolerance      TEXT NOT NULL DEFAULT '',
  output_hash    TEXT NOT NULL DEFAULT '',
  duration_ms    REAL NOT NULL CHECK (duration_ms >= 0),
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
CREATE INDEX expectation_by_run ON expectation(run_id);
CREATE TABLE perf_sample (
  id          INTEGER PRIMARY KEY,
  run_id      INTEGER NOT NULL REFERENCES run(id),
  benchmark   TEXT NOT NULL,
  pass        INTEGER NOT NULL,
  repetition  INTEGER NOT NULL,
  value       REAL NOT NULL,
  unit        TEXT NOT NULL
);
CREATE INDEX perf_sample_by_run ON perf_sample(run_id);
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
    // v2: the determinism suite's evidence. Which steps of a Relaxed plan are not bit-exact,
    // and the node traces `volta-audit diff` compares (trace_store.h).
    R"sql(
ALTER TABLE result ADD COLUMN not_bit_exact TEXT NOT NULL DEFAULT '';
CREATE TABLE node_trace (
  id           INTEGER PRIMARY KEY,
  run_id       INTEGER NOT NULL REFERENCES run(id),
  subject      TEXT NOT NULL CHECK (subject <> ''),
  step         INTEGER NOT NULL CHECK (step >= 0),
  node         TEXT NOT NULL,
  op           TEXT NOT NULL,
  kernel       TEXT NOT NULL,
  determinism  TEXT NOT NULL,
  origin       TEXT NOT NULL,
  output       INTEGER NOT NULL CHECK (output >= 0),
  dtype        TEXT NOT NULL,
  shape        TEXT NOT NULL,
  hash         TEXT NOT NULL,
  data         BLOB,  -- NULL: traced by hash only (above kTraceDataCap)
  UNIQUE (run_id, subject, step, output)
);
CREATE INDEX node_trace_by_run ON node_trace(run_id);
)sql",
    // v3: the perf double pass (issue #7). Each sample says which kernel variant and thread
    // count it measured, in which fresh process, with the benchmark's throughput counters. A
    // baseline row points at the run whose samples it accepts (the Mann-Whitney test compares
    // against samples, not one number) and keeps the value it replaced; a run on a machine
    // with no baseline records 'candidate' rows. perf_verdict holds what `volta-audit perf`
    // concluded per benchmark, with both passes' figures.
    R"sql(
ALTER TABLE perf_sample ADD COLUMN variant TEXT NOT NULL DEFAULT '';
ALTER TABLE perf_sample ADD COLUMN threads INTEGER NOT NULL DEFAULT 1 CHECK (threads >= 1);
ALTER TABLE perf_sample ADD COLUMN process INTEGER NOT NULL DEFAULT 0 CHECK (process >= 0);
ALTER TABLE perf_sample ADD COLUMN gflops REAL;
ALTER TABLE perf_sample ADD COLUMN gbytes_per_s REAL;
ALTER TABLE perf_sample ADD COLUMN peak_bytes INTEGER;
ALTER TABLE perf_sample ADD COLUMN context TEXT NOT NULL DEFAULT '';
ALTER TABLE perf_baseline ADD COLUMN run_id INTEGER REFERENCES run(id);
ALTER TABLE perf_baseline ADD COLUMN old_value REAL;
ALTER TABLE perf_baseline ADD COLUMN kind TEXT NOT NULL DEFAULT 'accepted'
  CHECK (kind IN ('accepted', 'candidate'));
CREATE INDEX perf_baseline_by_machine ON perf_baseline(machine, benchmark);
CREATE TABLE perf_verdict (
  id               INTEGER PRIMARY KEY,
  run_id           INTEGER NOT NULL REFERENCES run(id),
  benchmark        TEXT NOT NULL CHECK (benchmark <> ''),
  unit             TEXT NOT NULL,
  variant          TEXT NOT NULL,
  threads          INTEGER NOT NULL,
  baseline_commit  TEXT NOT NULL DEFAULT '',  -- '' when the machine had no baseline
  baseline_kind    TEXT NOT NULL DEFAULT '',
  baseline_median  REAL,
  threshold        REAL NOT NULL CHECK (threshold > 0),
  alpha            REAL NOT NULL CHECK (alpha > 0 AND alpha < 1),
  pass1_samples    INTEGER NOT NULL,
  pass1_median     REAL NOT NULL,
  pass1_low        REAL NOT NULL,  -- distribution-free confidence interval of the median
  pass1_high       REAL NOT NULL,
  pass1_change     REAL,           -- median / baseline median - 1
  pass1_p          REAL,           -- two-sided Mann-Whitney U p-value against the baseline
  pass2_samples    INTEGER NOT NULL DEFAULT 0,  -- 0: not a suspect, not re-run
  pass2_median     REAL,
  pass2_low        REAL,
  pass2_high       REAL,
  pass2_change     REAL,
  pass2_p          REAL,
  verdict          TEXT NOT NULL CHECK (verdict IN ('unchanged', 'regression', 'improvement',
                     'noise', 'new', 'error')),
  detail           TEXT NOT NULL DEFAULT '',
  UNIQUE (run_id, benchmark)
);
CREATE INDEX perf_verdict_by_run ON perf_verdict(run_id);
)sql",
    // v4: gate integrity (issue #14). run_input: every file a run read that decides verdicts
    // (expectations, policies, configurations), hashed as read and as committed at the run's
    // commit, and every option that planted a test-only defect; gates refuse a run whose
    // inputs are not the committed ones. A case's params move to its result: they describe
    // one run's evidence (runs, processes, configurations), not the case for every commit;
    // the old column's values belong to the newest result of each case, which wrote them
    // last. A result records the precondition its case declared (a SKIPPED result needs one
    // or an expectation). doc_claim says whether the docs checked were the committed ones
    // (older rows: unknown, so dirty). perf_listing: every benchmark the perf binary lists,
    // whatever the run's filter, so the perf gate knows the full set.
    R"sql(
CREATE TABLE run_input (
  id                INTEGER PRIMARY KEY,
  run_id            INTEGER NOT NULL REFERENCES run(id),
  kind              TEXT NOT NULL CHECK (kind IN ('file', 'option')),
  name              TEXT NOT NULL CHECK (name <> ''),  -- repository path, or the option
  path              TEXT NOT NULL,  -- the file read, or the option's value
  sha256            TEXT NOT NULL,  -- of what was read; 'absent': no such file
  committed_sha256  TEXT NOT NULL,  -- at the run's commit; 'absent', or 'unknown' (no git)
  UNIQUE (run_id, kind, name)
);
CREATE INDEX run_input_by_run ON run_input(run_id);
ALTER TABLE result ADD COLUMN params TEXT NOT NULL DEFAULT '';
ALTER TABLE result ADD COLUMN precondition TEXT NOT NULL DEFAULT '';
UPDATE result SET params = (SELECT c.params FROM test_case c WHERE c.id = result.case_ref)
WHERE result.id = (SELECT max(r.id) FROM result r WHERE r.case_ref = result.case_ref);
ALTER TABLE test_case DROP COLUMN params;
ALTER TABLE doc_claim ADD COLUMN dirty INTEGER NOT NULL DEFAULT 1 CHECK (dirty IN (0, 1));
CREATE TABLE perf_listing (
  run_id     INTEGER NOT NULL REFERENCES run(id),
  benchmark  TEXT NOT NULL CHECK (benchmark <> ''),
  PRIMARY KEY (run_id, benchmark)
);
)sql",
    // v5: training (issue #17). A training_run is one `volta train` process, with the
    // provenance columns of run (it is not a run: gates and reports over conformance runs never
    // see it), what it trained on what, and its own status; training_step holds each step's
    // loss, gradient norm and learning rate. A resumed training is a new training_run whose
    // resumed_from is the checkpoint's step: its steps continue that numbering.
    R"sql(
CREATE TABLE training_run (
  id            INTEGER PRIMARY KEY,
  commit_sha    TEXT NOT NULL,
  dirty         INTEGER NOT NULL CHECK (dirty IN (0, 1)),
  build_type    TEXT NOT NULL,
  compiler      TEXT NOT NULL,
  cpu_model     TEXT NOT NULL,
  machine       TEXT NOT NULL,
  threads       INTEGER NOT NULL CHECK (threads >= 1),
  command       TEXT NOT NULL,
  model         TEXT NOT NULL CHECK (model <> ''),
  config        TEXT NOT NULL,  -- the model config, JSON
  optimizer     TEXT NOT NULL,  -- the optimizer and its schedule, JSON
  data_path     TEXT NOT NULL,
  data_sha256   TEXT NOT NULL,
  data_bytes    INTEGER NOT NULL CHECK (data_bytes >= 0),
  seed          TEXT NOT NULL CHECK (seed <> '' AND seed NOT GLOB '*[^0-9]*'),  -- a uint64
  resumed_from  INTEGER CHECK (resumed_from >= 0),  -- NULL: trained from initialization
  started_at    TEXT NOT NULL,
  ended_at      TEXT,
  status        TEXT NOT NULL CHECK (status IN ('running', 'complete', 'interrupted')),
  host          TEXT NOT NULL,  -- with pid: how a later writer tells a dead run from a live one
  pid           INTEGER,
  origin        TEXT NOT NULL DEFAULT ''  -- the shard file a merged run came from
);
CREATE TABLE training_step (
  run_id        INTEGER NOT NULL REFERENCES training_run(id),
  step          INTEGER NOT NULL CHECK (step >= 1),
  loss          REAL NOT NULL,
  grad_norm     REAL NOT NULL CHECK (grad_norm >= 0),
  lr            REAL NOT NULL CHECK (lr >= 0),
  tokens_per_s  REAL CHECK (tokens_per_s > 0),
  PRIMARY KEY (run_id, step)
) WITHOUT ROWID;
)sql",
    // v6: release compatibility (issue #21). Every run and training run records the Volta
    // version (project(VERSION)) of the binary that wrote it; '' for rows written before v6.
    R"sql(
ALTER TABLE run ADD COLUMN volta_version TEXT NOT NULL DEFAULT '';
ALTER TABLE training_run ADD COLUMN volta_version TEXT NOT NULL DEFAULT '';
)sql",
};

// A refused file: says why, and that nothing was written to it.
[[noreturn]] void refuse(std::string_view path, const std::string& why) {
  throw StoreError(describe_store(path) + " " + why + "; the file was left untouched");
}

int64_t query_int(const Database& db, std::string_view sql) {
  Statement s = db.prepare(sql);
  s.step();
  return s.column_int(0);
}

int read_user_version(const Database& db) {
  return static_cast<int>(query_int(db, "PRAGMA user_version"));
}

std::string now_utc() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool process_alive(int64_t pid) {
  // EPERM: the process exists but belongs to another user.
  return pid > 0 && (kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
}

// What the header of an opened file says about whose it is.
struct SchemaState {
  int64_t application_id = 0;
  int version = 0;
  int64_t objects = 0;  // tables, indexes, views, triggers
};

SchemaState read_schema_state(const Database& db) {
  try {
    return SchemaState{query_int(db, "PRAGMA application_id"), read_user_version(db),
                       query_int(db, "SELECT count(*) FROM sqlite_master")};
  } catch (const StoreError& e) {
    // The first reads of the file: random bytes, and a header that no longer matches the
    // file (a truncated one), show up here.
    refuse(db.path(), "is corrupt or not a SQLite database (" + e.cause() +
                          "): restore it from a copy, or pass another --db");
  }
}

// The shard attached to the output's connection as schema "shard", for as long as it lives.
class AttachedShard {
 public:
  AttachedShard(Database& db, const std::string& path) : db_(db) {
    // Read-only: merging must never write to its inputs (not even a WAL checkpoint).
    db_.prepare("ATTACH DATABASE ? AS shard").bind(1, sqlite_file_uri(path, true)).run();
  }
  ~AttachedShard() {
    try {
      db_.exec("DETACH DATABASE shard");
    } catch (const StoreError&) {
      // Only fails while a statement is still open on the shard, after another error; that
      // error is the one being reported, and the connection is closed right after.
    }
  }
  AttachedShard(const AttachedShard&) = delete;
  AttachedShard& operator=(const AttachedShard&) = delete;

 private:
  Database& db_;
};

// Marks the rows of `table` (run or training_run) that are 'running' but whose process is gone
// `dead_status`. Only rows started on this host: a pid means nothing on another machine.
void mark_dead_rows(Database& db, const std::string& table, std::string_view dead_status) {
  std::vector<int64_t> dead;
  Statement running =
      db.prepare("SELECT id, pid FROM " + table + " WHERE status = 'running' AND host = ?");
  running.bind(1, host_name());
  while (running.step()) {
    if (!process_alive(running.column_int(1))) dead.push_back(running.column_int(0));
  }
  if (dead.empty()) return;
  Transaction tx(db);
  Statement mark =
      db.prepare("UPDATE " + table + " SET status = ? WHERE id = ? AND status = 'running'");
  for (const int64_t id : dead) {
    mark.reset();
    mark.bind(1, dead_status).bind(2, id).run();
  }
  tx.commit();
}

int64_t exec_counting(Database& db, std::string_view sql) {
  db.exec(sql);
  return db.changes();
}

// Copies every row of shard.`table`, in id order, into main with `copy_sql` (?1 binds the
// shard's path, ?2 the row's id in the shard) and records old -> new id in temp.`map_table`.
// Returns how many rows it copied.
int64_t copy_rows_with_new_ids(Database& db, const std::string& shard, const std::string& table,
                               std::string_view copy_sql, const std::string& map_table) {
  std::vector<int64_t> old_ids;
  for (Statement rows = db.prepare("SELECT id FROM shard." + table + " ORDER BY id");
       rows.step();) {
    old_ids.push_back(rows.column_int(0));
  }
  Statement copy = db.prepare(copy_sql);
  Statement map = db.prepare("INSERT INTO temp." + map_table + " (old, new) VALUES (?, ?)");
  for (const int64_t old : old_ids) {
    copy.reset();
    copy.bind(1, shard).bind(2, old).run();
    map.reset();
    map.bind(1, old).bind(2, db.last_insert_id()).run();
  }
  return static_cast<int64_t>(old_ids.size());
}

// Copies the attached shard's runs into main with fresh ids, recording old -> new in
// temp.run_map. A run still 'running' in a shard has no writer any more: it is incomplete.
int64_t fold_runs(Database& db, const std::string& shard) {
  return copy_rows_with_new_ids(
      db, shard, "run",
      "INSERT INTO main.run (commit_sha, dirty, build_type, compiler, cpu_model, threads, "
      "backend, machine, suites, command, started_at, ended_at, status, host, pid, origin, "
      "volta_version) "
      "SELECT commit_sha, dirty, build_type, compiler, cpu_model, threads, backend, machine, "
      "suites, command, started_at, ended_at, "
      "CASE status WHEN 'running' THEN 'incomplete' ELSE status END, host, pid, "
      "CASE origin WHEN '' THEN ?1 ELSE origin END, volta_version FROM shard.run WHERE id = ?2",
      "run_map");
}

// Copies the attached shard's training runs and their steps into main with fresh ids. A
// training run still 'running' in a shard has no writer any more: it was interrupted.
void fold_training_runs(Database& db, const std::string& shard, MergeSummary& summary) {
  db.exec("CREATE TEMP TABLE training_run_map (old INTEGER PRIMARY KEY, new INTEGER NOT NULL)");
  summary.training_runs = copy_rows_with_new_ids(
      db, shard, "training_run",
      "INSERT INTO main.training_run (commit_sha, dirty, build_type, compiler, cpu_model, "
      "machine, threads, command, model, config, optimizer, data_path, data_sha256, data_bytes, "
      "seed, resumed_from, started_at, ended_at, status, host, pid, origin, volta_version) "
      "SELECT commit_sha, dirty, build_type, compiler, cpu_model, machine, threads, command, "
      "model, config, optimizer, data_path, data_sha256, data_bytes, seed, resumed_from, "
      "started_at, ended_at, CASE status WHEN 'running' THEN 'interrupted' ELSE status END, "
      "host, pid, CASE origin WHEN '' THEN ?1 ELSE origin END, volta_version "
      "FROM shard.training_run WHERE id = ?2",
      "training_run_map");
  summary.training_steps = exec_counting(
      db,
      "INSERT INTO main.training_step (run_id, step, loss, grad_norm, lr, tokens_per_s) "
      "SELECT m.new, step, loss, grad_norm, lr, tokens_per_s FROM shard.training_step "
      "JOIN temp.training_run_map m ON m.old = run_id");
  db.exec("DROP TABLE temp.training_run_map");
}

// Folds the attached shard into main in one transaction.
MergeSummary fold_shard(Database& db, const std::string& shard) {
  AttachedShard attached(db, shard);
  Transaction tx(db);
  MergeSummary summary;
  summary.shards = 1;
  db.exec(
      "CREATE TEMP TABLE run_map (old INTEGER PRIMARY KEY, new INTEGER NOT NULL);"
      "CREATE TEMP TABLE case_map (old INTEGER PRIMARY KEY, new INTEGER NOT NULL);");
  summary.runs = fold_runs(db, shard);
  summary.new_cases =
      exec_counting(db,
                    "INSERT INTO main.test_case (suite, family, op, backend, case_id) "
                    "SELECT suite, family, op, backend, case_id FROM shard.test_case WHERE true "
                    "ON CONFLICT (suite, backend, case_id) DO NOTHING");
  db.exec(
      "INSERT INTO temp.case_map (old, new) SELECT s.id, m.id FROM shard.test_case s "
      "JOIN main.test_case m USING (suite, backend, case_id)");
  summary.results = exec_counting(
      db,
      "INSERT INTO main.result (run_id, case_ref, outcome, verdict, expectation, max_abs, "
      "max_rel, max_ulp, tolerance_key, tolerance, output_hash, duration_ms, kernel, message, "
      "not_bit_exact, params, precondition) "
      "SELECT r.new, c.new, outcome, verdict, expectation, max_abs, max_rel, max_ulp, "
      "tolerance_key, tolerance, output_hash, duration_ms, kernel, message, not_bit_exact, "
      "params, precondition "
      "FROM shard.result "
      "JOIN temp.run_map r ON r.old = run_id JOIN temp.case_map c ON c.old = case_ref");
  summary.run_inputs = exec_counting(
      db,
      "INSERT INTO main.run_input (run_id, kind, name, path, sha256, committed_sha256) "
      "SELECT r.new, kind, name, path, sha256, committed_sha256 FROM shard.run_input "
      "JOIN temp.run_map r ON r.old = run_id");
  db.exec(
      "INSERT INTO main.perf_listing (run_id, benchmark) SELECT r.new, benchmark "
      "FROM shard.perf_listing JOIN temp.run_map r ON r.old = run_id");
  summary.expectations = exec_counting(
      db,
      "INSERT INTO main.expectation (run_id, suite, pattern, outcome, reason, issue, expires) "
      "SELECT r.new, suite, pattern, outcome, reason, issue, expires FROM shard.expectation "
      "JOIN temp.run_map r ON r.old = run_id");
  summary.perf_samples = exec_counting(
      db,
      "INSERT INTO main.perf_sample (run_id, benchmark, pass, repetition, value, unit, variant, "
      "threads, process, gflops, gbytes_per_s, peak_bytes, context) "
      "SELECT r.new, benchmark, pass, repetition, value, unit, variant, threads, process, gflops, "
      "gbytes_per_s, peak_bytes, context FROM shard.perf_sample "
      "JOIN temp.run_map r ON r.old = run_id");
  summary.perf_verdicts = exec_counting(
      db,
      "INSERT INTO main.perf_verdict (run_id, benchmark, unit, variant, threads, "
      "baseline_commit, baseline_kind, baseline_median, threshold, alpha, pass1_samples, "
      "pass1_median, pass1_low, pass1_high, pass1_change, pass1_p, pass2_samples, pass2_median, "
      "pass2_low, pass2_high, pass2_change, pass2_p, verdict, detail) "
      "SELECT r.new, benchmark, unit, variant, threads, baseline_commit, baseline_kind, "
      "baseline_median, threshold, alpha, pass1_samples, pass1_median, pass1_low, pass1_high, "
      "pass1_change, pass1_p, pass2_samples, pass2_median, pass2_low, pass2_high, pass2_change, "
      "pass2_p, verdict, detail FROM shard.perf_verdict JOIN temp.run_map r ON r.old = run_id");
  summary.node_traces = exec_counting(
      db,
      "INSERT INTO main.node_trace (run_id, subject, step, node, op, kernel, determinism, "
      "origin, output, dtype, shape, hash, data) "
      "SELECT r.new, subject, step, node, op, kernel, determinism, origin, output, dtype, shape, "
      "hash, data FROM shard.node_trace JOIN temp.run_map r ON r.old = run_id");
  fold_training_runs(db, shard, summary);
  // Rows not keyed by a run are facts, not events: one already in the output is not repeated.
  db.exec(
      "INSERT INTO main.perf_baseline (machine, benchmark, value, unit, commit_sha, reason, "
      "created_at, run_id, old_value, kind) SELECT machine, benchmark, value, unit, commit_sha, "
      "reason, created_at, r.new, old_value, kind FROM shard.perf_baseline "
      "LEFT JOIN temp.run_map r ON r.old = run_id "
      "EXCEPT SELECT machine, benchmark, value, unit, commit_sha, reason, created_at, run_id, "
      "old_value, kind FROM main.perf_baseline;"
      "INSERT INTO main.doc_claim (commit_sha, claim, file, line, evidence, status, detail, "
      "checked_at, dirty) SELECT commit_sha, claim, file, line, evidence, status, detail, "
      "checked_at, dirty FROM shard.doc_claim EXCEPT SELECT commit_sha, claim, file, line, "
      "evidence, status, detail, checked_at, dirty FROM main.doc_claim;"
      "INSERT INTO main.gate_result (commit_sha, gate, blocker, status, reason, evaluated_at) "
      "SELECT commit_sha, gate, blocker, status, reason, evaluated_at FROM shard.gate_result "
      "EXCEPT SELECT commit_sha, gate, blocker, status, reason, evaluated_at "
      "FROM main.gate_result;"
      "DROP TABLE temp.run_map; DROP TABLE temp.case_map;");
  tx.commit();
  return summary;
}

[[noreturn]] void refuse_merge_into_shard(const std::string& out, const std::string& shard) {
  throw StoreError("refusing to merge into '" + out + "': it is also listed as shard '" + shard +
                   "'; name a new file with -o");
}

void refuse_output_among_shards(std::span<const std::string> shards, const std::string& out) {
  for (const std::string& shard : shards) {
    std::error_code missing;  // either file missing: they cannot be the same file
    if (std::filesystem::equivalent(shard, out, missing)) refuse_merge_into_shard(out, shard);
  }
}

[[noreturn]] void fail_fold(const StoreError& error, const std::string& shard,
                            const std::string& out, int64_t shards_folded) {
  throw StoreError(std::string(error.what()) + " (folding shard '" + shard + "' into '" + out +
                       "': rolled back; the " + std::to_string(shards_folded) +
                       " shard(s) before it are in the output)",
                   error.cause());
}

void add(MergeSummary& total, const MergeSummary& part) {
  total.shards += part.shards;
  total.runs += part.runs;
  total.results += part.results;
  total.new_cases += part.new_cases;
  total.run_inputs += part.run_inputs;
  total.expectations += part.expectations;
  total.perf_samples += part.perf_samples;
  total.perf_verdicts += part.perf_verdicts;
  total.node_traces += part.node_traces;
  total.training_runs += part.training_runs;
  total.training_steps += part.training_steps;
}

}  // namespace

std::span<const std::string_view> schema_migrations() { return kMigrations; }

void apply_migrations(Database& db, std::span<const std::string_view> migrations) {
  const int target = static_cast<int>(migrations.size());
  while (read_user_version(db) < target) {
    Transaction tx(db);
    const int version = read_user_version(db);  // under the write lock now
    if (version >= target) return;
    try {
      db.exec(migrations[static_cast<size_t>(version)]);
    } catch (const StoreError& e) {
      throw StoreError(std::string(e.what()) + " (migrating from schema version " +
                           std::to_string(version) + " to " + std::to_string(version + 1) +
                           "; rolled back, the file is still at version " +
                           std::to_string(version) + ")",
                       e.cause());
    }
    db.exec("PRAGMA user_version = " + std::to_string(version + 1));
    tx.commit();
  }
}

ResultStore::ResultStore(const std::string& path, Database::Mode mode)
    : db_([&] {
        if (mode == Database::Mode::ReadOnly && !std::filesystem::exists(path)) {
          throw StoreError(describe_store(path) +
                           " does not exist: run `volta-audit run` first, or pass --db PATH");
        }
        return Database(path, mode);
      }()) {
  check_schema(mode);
  if (mode == Database::Mode::ReadWrite) {
    check_integrity();
    enable_wal();
    apply_migrations(db_, kMigrations);
    mark_dead_runs();
  }
}

void ResultStore::check_schema(Database::Mode mode) const {
  const SchemaState state = read_schema_state(db_);
  const bool empty = state.application_id == 0 && state.version == 0 && state.objects == 0;
  if (empty) {
    if (mode == Database::Mode::ReadOnly) {
      throw StoreError(describe_store(db_.path()) +
                       " is empty: record a run into it first (volta-audit run)");
    }
    return;
  }
  if (state.application_id != kApplicationId) {
    refuse(db_.path(), "is a SQLite database of another application (application_id " +
                           std::to_string(state.application_id) + ", user_version " +
                           std::to_string(state.version) + ", " + std::to_string(state.objects) +
                           " schema objects), not a Volta results database");
  }
  if (state.version > kSchemaVersion) {
    refuse(db_.path(), "has schema version " + std::to_string(state.version) +
                           ", newer than this build understands (" +
                           std::to_string(kSchemaVersion) +
                           "): use a newer volta-audit, or another --db");
  }
  if (mode == Database::Mode::ReadOnly && state.version < kSchemaVersion) {
    throw StoreError(describe_store(db_.path()) + " has schema version " +
                     std::to_string(state.version) + ", older than this build's (" +
                     std::to_string(kSchemaVersion) +
                     "): open it for writing once (volta-audit run) to migrate it");
  }
}

void ResultStore::check_integrity() const {
  // quick_check reads every page: a truncated or scribbled-over file is caught here, before
  // this connection writes anything to it.
  std::string problems;
  try {
    Statement check = db_.prepare("PRAGMA quick_check(3)");
    while (check.step()) {
      std::string finding = check.column_text(0);
      if (finding == "ok") continue;
      std::replace(finding.begin(), finding.end(), '\n', ' ');  // messages are one line
      problems += (problems.empty() ? "" : "; ") + finding;
    }
  } catch (const StoreError& e) {
    problems = e.cause();
  }
  if (!problems.empty()) {
    refuse(db_.path(),
           "is corrupt (" + problems + "): restore it from a copy, or pass another --db");
  }
}

void ResultStore::enable_wal() {
  Statement mode = db_.prepare("PRAGMA journal_mode = WAL");
  mode.step();
  // SQLite keeps the old mode, silently, where WAL cannot work (no shared memory).
  if (const std::string got = mode.column_text(0); got != "wal") {
    throw StoreError(describe_store(db_.path()) +
                     " cannot use WAL journaling (journal_mode stays '" + got +
                     "'): put it on a local file system");
  }
  db_.exec("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;");
}

int ResultStore::schema_version() const { return read_user_version(db_); }

void ResultStore::mark_dead_runs() {
  mark_dead_rows(db_, "run", "incomplete");
  mark_dead_rows(db_, "training_run", "interrupted");
}

void ResultStore::require_running(int64_t run_id, std::string_view action) const {
  require_running_row(db_, kRunTable, run_id, action);
}

int64_t ResultStore::begin_run(const RunInfo& info) {
  const std::string host = host_name();
  Statement s = db_.prepare(
      "INSERT INTO run (commit_sha, dirty, build_type, compiler, cpu_model, threads, backend, "
      "machine, suites, command, started_at, status, host, pid, volta_version) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?)");
  s.bind(1, info.commit)
      .bind(2, int64_t{info.dirty})
      .bind(3, info.build_type)
      .bind(4, info.compiler)
      .bind(5, info.cpu_model)
      .bind(6, info.threads)
      .bind(7, info.backend)
      .bind(8, machine_or_host(info.machine, host, info.cpu_model) +
                   (info.device.empty() ? "" : " / " + info.device))
      .bind(9, info.suites)
      .bind(10, info.command)
      .bind(11, now_utc())
      .bind(12, host)
      .bind(13, static_cast<int64_t>(getpid()))
      .bind(14, kVersion);
  s.run();
  return db_.last_insert_id();
}

void ResultStore::record(int64_t run_id, std::span<const ResultRow> rows) {
  Transaction tx(db_);
  require_running(run_id, "record results into");
  Statement add_case = db_.prepare(
      "INSERT INTO test_case (suite, family, op, backend, case_id) VALUES (?, ?, ?, ?, ?) "
      "ON CONFLICT (suite, backend, case_id) DO UPDATE SET family = excluded.family, "
      "op = excluded.op RETURNING id");
  Statement add_result = db_.prepare(
      "INSERT INTO result (run_id, case_ref, outcome, verdict, expectation, max_abs, max_rel, "
      "max_ulp, tolerance_key, tolerance, output_hash, duration_ms, kernel, message, "
      "not_bit_exact, params, precondition) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (size_t i = 0; i < rows.size(); ++i) {
    const ResultRow& r = rows[i];
    try {
      add_case.reset();
      add_case.bind(1, r.suite).bind(2, r.family).bind(3, r.op).bind(4, r.backend);
      add_case.bind(5, r.case_id);
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
          .bind(14, r.message)
          .bind(15, r.not_bit_exact)
          .bind(16, r.params)
          .bind(17, r.precondition);
      add_result.run();
    } catch (const StoreError& e) {
      throw StoreError(std::string(e.what()) + " (result " + std::to_string(i + 1) + " of " +
                           std::to_string(rows.size()) + ": case '" + r.case_id + "' of suite '" +
                           r.suite + "', backend '" + r.backend +
                           "'; the batch was rolled back, the run keeps its earlier batches)",
                       e.cause());
    }
  }
  tx.commit();
}

void ResultStore::record_expectations(int64_t run_id, std::span<const ExpectationRow> rows) {
  Transaction tx(db_);
  require_running(run_id, "record expectations into");
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

void ResultStore::record_inputs(int64_t run_id, std::span<const RunInput> inputs) {
  Transaction tx(db_);
  require_running(run_id, "record inputs into");
  Statement s = db_.prepare(
      "INSERT INTO run_input (run_id, kind, name, path, sha256, committed_sha256) "
      "VALUES (?, ?, ?, ?, ?, ?)");
  for (const RunInput& i : inputs) {
    s.reset();
    s.bind(1, run_id).bind(2, i.kind == RunInput::Kind::File ? "file" : "option");
    s.bind(3, i.name).bind(4, i.path).bind(5, i.sha256).bind(6, i.committed_sha256);
    s.run();
  }
  tx.commit();
}

void ResultStore::finish_run(int64_t run_id) {
  Transaction tx(db_);
  require_running(run_id, "finish");
  db_.prepare("UPDATE run SET status = 'complete', ended_at = ? WHERE id = ?")
      .bind(1, now_utc())
      .bind(2, run_id)
      .run();
  tx.commit();
}

MergeSummary ResultStore::merge(std::span<const std::string> shards, const std::string& out) {
  if (shards.empty()) throw StoreError("merge needs at least one shard database");
  for (const std::string& shard : shards) {
    if (!std::filesystem::exists(shard)) throw StoreError("shard '" + shard + "' does not exist");
  }
  refuse_output_among_shards(shards, out);
  // Every shard must be readable, current and sound before the output is created or touched.
  for (const std::string& shard : shards) {
    ResultStore(shard, Database::Mode::ReadOnly).check_integrity();
  }
  ResultStore target(out);
  MergeSummary total;
  for (const std::string& shard : shards) {
    try {
      add(total, fold_shard(target.db_, shard));
    } catch (const StoreError& e) {
      fail_fold(e, shard, out, total.shards);
    }
  }
  return total;
}

}  // namespace volta::conformance
