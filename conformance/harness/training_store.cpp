#include "volta/conformance/training_store.h"

#include <unistd.h>

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "store_support.h"
#include "volta/runtime/host.h"
#include "volta/version.h"

namespace volta::conformance {
namespace {

constexpr std::array<std::string_view, 3> kStatusNames = {"running", "complete", "interrupted"};

constexpr std::string_view kInsertStep =
    "INSERT INTO training_step (run_id, step, loss, grad_norm, lr, tokens_per_s) "
    "VALUES (?, ?, ?, ?, ?, ?)";

std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  return buffer;
}

std::string describe_run(const Database& db, int64_t run_id) {
  return describe_store(db.path()) + ": training run " + std::to_string(run_id);
}

// Throws unless `run_id` exists and is 'running'; returns its resumed_from.
std::optional<int64_t> require_running_training_run(const Database& db, int64_t run_id,
                                                    std::string_view action) {
  const Statement s = require_running_row(db, kTrainingRunTable, run_id, action, ", resumed_from");
  return s.column_is_null(1) ? std::nullopt : std::optional(s.column_int(1));
}

// What the schema's CHECKs would refuse, said with the step and the field; SQLite's own
// message names neither, and would store a NaN as NULL.
void check_step(const Database& db, int64_t run_id, std::optional<int64_t> resumed_from,
                const TrainingStepRow& row) {
  const auto refuse = [&](const std::string& why) {
    throw StoreError(describe_run(db, run_id) + ", step " + std::to_string(row.step) + ": " + why);
  };
  if (row.step < 1) refuse("steps are numbered from 1");
  if (resumed_from && row.step <= *resumed_from) {
    refuse("the run resumed at step " + std::to_string(*resumed_from) +
           ", so its steps are numbered from " + std::to_string(*resumed_from + 1));
  }
  if (std::isnan(row.loss)) refuse("the loss is NaN");
  if (std::isnan(row.grad_norm) || row.grad_norm < 0) {
    refuse("the gradient norm is " + number(row.grad_norm) + ", not a number >= 0");
  }
  if (std::isnan(row.lr) || row.lr < 0) {
    refuse("the learning rate is " + number(row.lr) + ", not a number >= 0");
  }
  if (row.tokens_per_s && !(*row.tokens_per_s > 0)) {
    refuse("the throughput is " + number(*row.tokens_per_s) + " tokens/s, not a number > 0");
  }
}

// Inserts `rows` with `insert` (kInsertStep) inside the caller's transaction.
void insert_steps(const Database& db, Statement& insert, int64_t run_id,
                  std::optional<int64_t> resumed_from, std::span<const TrainingStepRow> rows) {
  for (const TrainingStepRow& row : rows) {
    check_step(db, run_id, resumed_from, row);
    try {
      insert.reset();
      insert.bind(1, run_id)
          .bind(2, row.step)
          .bind(3, row.loss)
          .bind(4, row.grad_norm)
          .bind(5, row.lr)
          .bind(6, row.tokens_per_s);
      insert.run();
    } catch (const StoreError& e) {
      if (e.cause().starts_with("UNIQUE constraint failed")) {
        throw StoreError(describe_run(db, run_id) + " already has step " +
                             std::to_string(row.step) + ": a step is recorded once per run",
                         e.cause());
      }
      throw;
    }
  }
}

void record_with(ResultStore& store, Statement& insert, int64_t run_id,
                 std::span<const TrainingStepRow> rows) {
  Database& db = store.db();
  Transaction tx(db);
  const std::optional<int64_t> resumed_from =
      require_running_training_run(db, run_id, "record steps into");
  insert_steps(db, insert, run_id, resumed_from, rows);
  tx.commit();
}

uint64_t parse_seed(const std::string& text) {
  uint64_t seed = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seed);
  if (error != std::errc() || end != text.data() + text.size()) {
    throw StoreError("training run seed '" + text + "' is not a 64-bit unsigned integer");
  }
  return seed;
}

constexpr std::string_view kSelectRuns =
    "SELECT id, commit_sha, dirty, build_type, compiler, cpu_model, machine, threads, command, "
    "model, config, optimizer, data_path, data_sha256, data_bytes, seed, resumed_from, "
    "started_at, ended_at, status, origin, volta_version FROM training_run";

TrainingStepRow read_step(const Statement& s, int first_column) {
  TrainingStepRow row;
  row.step = s.column_int(first_column);
  row.loss = s.column_double(first_column + 1);
  row.grad_norm = s.column_double(first_column + 2);
  row.lr = s.column_double(first_column + 3);
  if (!s.column_is_null(first_column + 4)) row.tokens_per_s = s.column_double(first_column + 4);
  return row;
}

std::optional<TrainingStepRow> edge_step(const Database& db, int64_t run_id,
                                         std::string_view order) {
  Statement s = db.prepare(
      "SELECT step, loss, grad_norm, lr, tokens_per_s FROM training_step WHERE run_id = ? "
      "ORDER BY step " +
      std::string(order) + " LIMIT 1");
  s.bind(1, run_id);
  return s.step() ? std::optional(read_step(s, 0)) : std::nullopt;
}

TrainingRunRecord read_run(const Database& db, const Statement& s) {
  TrainingRunRecord r;
  r.id = s.column_int(0);
  TrainingRunInfo& info = r.info;
  info.commit = s.column_text(1);
  info.dirty = s.column_int(2) != 0;
  info.build_type = s.column_text(3);
  info.compiler = s.column_text(4);
  info.cpu_model = s.column_text(5);
  info.machine = s.column_text(6);
  info.threads = static_cast<int>(s.column_int(7));
  info.command = s.column_text(8);
  info.model = s.column_text(9);
  info.config = s.column_text(10);
  info.optimizer = s.column_text(11);
  info.data_path = s.column_text(12);
  info.data_sha256 = s.column_text(13);
  info.data_bytes = s.column_int(14);
  info.seed = parse_seed(s.column_text(15));
  if (!s.column_is_null(16)) info.resumed_from = s.column_int(16);
  r.started_at = s.column_text(17);
  r.ended_at = s.column_text(18);
  r.status = parse_training_status(s.column_text(19));
  r.origin = s.column_text(20);
  r.volta_version = s.column_text(21);
  Statement count = db.prepare("SELECT count(*) FROM training_step WHERE run_id = ?");
  count.bind(1, r.id).step();
  r.steps = count.column_int(0);
  r.first_step = edge_step(db, r.id, "ASC");
  r.last_step = edge_step(db, r.id, "DESC");
  return r;
}

}  // namespace

std::string_view training_status_name(TrainingStatus status) {
  return kStatusNames[static_cast<size_t>(status)];
}

TrainingStatus parse_training_status(std::string_view name) {
  for (size_t i = 0; i < kStatusNames.size(); ++i) {
    if (kStatusNames[i] == name) return static_cast<TrainingStatus>(i);
  }
  throw StoreError("unknown training run status '" + std::string(name) +
                   "' (known: running, complete, interrupted)");
}

int64_t begin_training_run(ResultStore& store, const TrainingRunInfo& info) {
  Database& db = store.db();
  const std::string host = host_name();
  Statement s = db.prepare(
      "INSERT INTO training_run (commit_sha, dirty, build_type, compiler, cpu_model, machine, "
      "threads, command, model, config, optimizer, data_path, data_sha256, data_bytes, seed, "
      "resumed_from, started_at, status, host, pid, volta_version) VALUES (?, ?, ?, ?, ?, ?, ?, "
      "?, ?, ?, ?, ?, ?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), 'running', ?, ?, ?)");
  s.bind(1, info.commit)
      .bind(2, int64_t{info.dirty})
      .bind(3, info.build_type)
      .bind(4, info.compiler)
      .bind(5, info.cpu_model)
      .bind(6, machine_or_host(info.machine, host, info.cpu_model))
      .bind(7, info.threads)
      .bind(8, info.command)
      .bind(9, info.model)
      .bind(10, info.config)
      .bind(11, info.optimizer)
      .bind(12, info.data_path)
      .bind(13, info.data_sha256)
      .bind(14, info.data_bytes)
      .bind(15, std::to_string(info.seed));
  if (info.resumed_from) {
    s.bind(16, *info.resumed_from);
  } else {
    s.bind(16, std::nullopt);
  }
  s.bind(17, host).bind(18, static_cast<int64_t>(getpid())).bind(19, kVersion);
  try {
    s.run();
  } catch (const StoreError& e) {
    throw StoreError(
        std::string(e.what()) + " (beginning a training run of model '" + info.model + "')",
        e.cause());
  }
  return db.last_insert_id();
}

void record_training_steps(ResultStore& store, int64_t run_id,
                           std::span<const TrainingStepRow> rows) {
  Statement insert = store.db().prepare(kInsertStep);
  record_with(store, insert, run_id, rows);
}

void finish_training_run(ResultStore& store, int64_t run_id, TrainingStatus status) {
  if (status == TrainingStatus::Running) {
    throw StoreError(describe_run(store.db(), run_id) +
                     ": a run finishes 'complete' or 'interrupted', not 'running'");
  }
  Database& db = store.db();
  Transaction tx(db);
  require_running_training_run(db, run_id, "finish");
  db.prepare(
        "UPDATE training_run SET status = ?, ended_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now') "
        "WHERE id = ?")
      .bind(1, training_status_name(status))
      .bind(2, run_id)
      .run();
  tx.commit();
}

TrainingStepWriter::TrainingStepWriter(ResultStore& store, int64_t run_id, int steps_per_commit)
    : store_(store),
      run_id_(run_id),
      steps_per_commit_(static_cast<size_t>(steps_per_commit)),
      resumed_from_(require_running_training_run(store.db(), run_id, "record steps into")),
      insert_(store.db().prepare(kInsertStep)) {
  if (steps_per_commit < 1) {
    throw StoreError(describe_run(store.db(), run_id) + ": steps_per_commit is " +
                     std::to_string(steps_per_commit) + "; commit every 1 or more steps");
  }
  pending_.reserve(steps_per_commit_);
}

TrainingStepWriter::~TrainingStepWriter() {
  try {
    flush();
  } catch (const StoreError&) {
    // Reached on the way out of an error (the caller flushes on its normal path): that error
    // is the one to report.
  }
}

void TrainingStepWriter::record(const TrainingStepRow& row) {
  // Refused now, not at the commit: the caller's step is the one that is wrong.
  check_step(store_.db(), run_id_, resumed_from_, row);
  pending_.push_back(row);
  if (pending_.size() >= steps_per_commit_) flush();
}

void TrainingStepWriter::flush() {
  if (pending_.empty()) return;
  // Cleared whatever happens: a batch that failed would fail again at every later step.
  std::vector<TrainingStepRow> batch = std::exchange(pending_, {});
  pending_.reserve(steps_per_commit_);
  record_with(store_, insert_, run_id_, batch);
}

void TrainingStepWriter::finish(TrainingStatus status) {
  flush();
  finish_training_run(store_, run_id_, status);
}

std::vector<TrainingRunRecord> load_training_runs(const Database& db,
                                                  std::optional<int64_t> limit) {
  Statement s = db.prepare(std::string(kSelectRuns) + " ORDER BY started_at DESC, id DESC LIMIT ?");
  s.bind(1, limit.value_or(-1));  // a negative LIMIT is no limit
  std::vector<TrainingRunRecord> runs;
  while (s.step()) runs.push_back(read_run(db, s));
  return runs;
}

std::optional<TrainingRunRecord> load_training_run(const Database& db, int64_t run_id) {
  Statement s = db.prepare(std::string(kSelectRuns) + " WHERE id = ?");
  s.bind(1, run_id);
  return s.step() ? std::optional(read_run(db, s)) : std::nullopt;
}

std::vector<TrainingStepRow> load_training_steps(const Database& db, int64_t run_id) {
  Statement s = db.prepare(
      "SELECT step, loss, grad_norm, lr, tokens_per_s FROM training_step WHERE run_id = ? "
      "ORDER BY step");
  s.bind(1, run_id);
  std::vector<TrainingStepRow> steps;
  while (s.step()) steps.push_back(read_step(s, 0));
  return steps;
}

}  // namespace volta::conformance
