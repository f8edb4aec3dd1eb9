#include "perf_store.h"

#include <algorithm>

#include "volta/error.h"

namespace volta::audit {
namespace {

using conformance::Database;
using conformance::Statement;
using conformance::Transaction;

std::vector<double> pass1_samples(const Database& db, int64_t run_id, const std::string& benchmark,
                                  std::string* variant) {
  Statement q = db.prepare(
      "SELECT value, variant FROM perf_sample WHERE run_id = ? AND benchmark = ? AND pass = 1 "
      "ORDER BY process, repetition, id");
  q.bind(1, run_id).bind(2, benchmark);
  std::vector<double> values;
  while (q.step()) {
    values.push_back(q.column_double(0));
    if (variant != nullptr) *variant = q.column_text(1);
  }
  return values;
}

}  // namespace

void record_perf_listing(Database& db, int64_t run_id, std::span<const std::string> benchmarks) {
  conformance::Transaction tx(db);
  Statement insert =
      db.prepare("INSERT OR IGNORE INTO perf_listing (run_id, benchmark) VALUES (?, ?)");
  for (const std::string& name : benchmarks) {
    insert.reset();
    insert.bind(1, run_id).bind(2, name);
    insert.run();
  }
  tx.commit();
}

void record_perf_samples(Database& db, int64_t run_id, std::span<const PerfSample> samples) {
  Transaction tx(db);
  Statement insert = db.prepare(
      "INSERT INTO perf_sample (run_id, benchmark, pass, repetition, value, unit, variant, "
      "threads, process, gflops, gbytes_per_s, peak_bytes, context) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (const PerfSample& s : samples) {
    insert.reset();
    insert.bind(1, run_id)
        .bind(2, s.benchmark)
        .bind(3, s.pass)
        .bind(4, s.repetition)
        .bind(5, s.seconds)
        .bind(6, std::string_view(kPerfUnit))
        .bind(7, s.variant)
        .bind(8, s.threads)
        .bind(9, s.process)
        .bind(10, s.gflops)
        .bind(11, s.gbytes_per_s);
    if (s.peak_bytes) {
      insert.bind(12, *s.peak_bytes);
    } else {
      insert.bind(12, std::nullopt);
    }
    insert.bind(13, s.context);
    insert.run();
  }
  tx.commit();
}

std::map<std::string, PerfBaseline> newest_baselines(const Database& db,
                                                     const std::string& machine) {
  Statement q = db.prepare(
      "SELECT id, benchmark, value, commit_sha, kind, run_id FROM ("
      "  SELECT b.*, row_number() OVER (PARTITION BY benchmark "
      "                                 ORDER BY created_at DESC, id DESC) AS recency "
      "  FROM perf_baseline b WHERE machine = ?) WHERE recency = 1");
  q.bind(1, machine);
  std::map<std::string, PerfBaseline> out;
  while (q.step()) {
    PerfBaseline b;
    b.id = q.column_int(0);
    b.benchmark = q.column_text(1);
    b.value = q.column_double(2);
    b.commit = q.column_text(3);
    b.kind = q.column_text(4);
    if (!q.column_is_null(5)) b.run_id = q.column_int(5);
    out.emplace(b.benchmark, std::move(b));
  }
  for (auto& [name, b] : out) {
    if (b.run_id) b.samples = pass1_samples(db, *b.run_id, name, &b.variant);
  }
  return out;
}

bool machine_has_baselines(const Database& db, const std::string& machine) {
  Statement q = db.prepare("SELECT 1 FROM perf_baseline WHERE machine = ? LIMIT 1");
  q.bind(1, machine);
  return q.step();
}

void record_perf_verdicts(Database& db, int64_t run_id, std::span<const PerfVerdictRow> rows) {
  Transaction tx(db);
  Statement insert = db.prepare(
      "INSERT INTO perf_verdict (run_id, benchmark, unit, variant, threads, baseline_commit, "
      "baseline_kind, baseline_median, threshold, alpha, pass1_samples, pass1_median, "
      "pass1_low, pass1_high, pass1_change, pass1_p, pass2_samples, pass2_median, pass2_low, "
      "pass2_high, pass2_change, pass2_p, verdict, detail) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (const PerfVerdictRow& r : rows) {
    insert.reset();
    insert.bind(1, run_id)
        .bind(2, r.benchmark)
        .bind(3, std::string_view(kPerfUnit))
        .bind(4, r.variant)
        .bind(5, r.threads)
        .bind(6, r.baseline ? std::string_view(r.baseline->commit) : std::string_view(""))
        .bind(7, r.baseline ? std::string_view(r.baseline->kind) : std::string_view(""))
        .bind(8, r.baseline_median)
        .bind(9, r.threshold)
        .bind(10, r.alpha)
        .bind(11, r.pass1.samples)
        .bind(12, r.pass1.median)
        .bind(13, r.pass1.interval.low)
        .bind(14, r.pass1.interval.high)
        .bind(15, r.pass1.change)
        .bind(16, r.pass1.p);
    if (r.pass2 && r.pass2->samples > 0) {
      insert.bind(17, r.pass2->samples)
          .bind(18, r.pass2->median)
          .bind(19, r.pass2->interval.low)
          .bind(20, r.pass2->interval.high)
          .bind(21, r.pass2->change)
          .bind(22, r.pass2->p);
    } else {
      insert.bind(17, 0);
      for (int i = 18; i <= 22; ++i) insert.bind(i, std::nullopt);
    }
    insert.bind(23, perf_verdict_name(r.verdict)).bind(24, r.detail);
    insert.run();
  }
  tx.commit();
}

void record_baseline_moves(Database& db, const std::string& machine,
                           std::span<const BaselineMove> moves) {
  Transaction tx(db);
  Statement insert = db.prepare(
      "INSERT INTO perf_baseline (machine, benchmark, value, unit, commit_sha, reason, "
      "created_at, run_id, old_value, kind) "
      "VALUES (?, ?, ?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), ?, ?, ?)");
  for (const BaselineMove& m : moves) {
    insert.reset();
    insert.bind(1, machine)
        .bind(2, m.benchmark)
        .bind(3, m.value)
        .bind(4, std::string_view(kPerfUnit))
        .bind(5, m.commit)
        .bind(6, m.reason)
        .bind(7, m.run_id)
        .bind(8, m.old_value)
        .bind(9, m.kind)
        .run();
  }
  tx.commit();
}

std::vector<BaselineMove> accept_baselines(Database& db, const std::string& machine,
                                           const std::vector<std::string>& benchmarks,
                                           const std::string& reason) {
  if (std::ranges::all_of(reason, [](char c) { return c == ' ' || c == '\t' || c == '\n'; })) {
    fail(ErrorCode::InvalidArgument,
         "a baseline move needs a reason (--reason TEXT): say why the new figure is right");
  }
  if (benchmarks.empty()) fail(ErrorCode::InvalidArgument, "name at least one benchmark");
  const std::map<std::string, PerfBaseline> current = newest_baselines(db, machine);
  Statement newest_run = db.prepare(
      "SELECT run.id, run.commit_sha FROM run WHERE run.status = 'complete' AND run.machine = ? "
      "AND EXISTS (SELECT 1 FROM perf_sample s WHERE s.run_id = run.id AND s.benchmark = ? "
      "            AND s.pass = 1) "
      // A run with a planted slowdown is a demonstration: its figures are never a baseline.
      "AND NOT EXISTS (SELECT 1 FROM run_input i WHERE i.run_id = run.id AND i.kind = 'option') "
      "ORDER BY run.started_at DESC, run.id DESC LIMIT 1");
  std::vector<BaselineMove> moves;
  for (const std::string& name : benchmarks) {
    newest_run.reset();
    newest_run.bind(1, machine).bind(2, name);
    if (!newest_run.step()) {
      fail(ErrorCode::InvalidArgument,
           "no complete perf run on this machine has samples of '" + name +
               "' (names are exact; `volta-audit query --sql \"SELECT DISTINCT benchmark FROM "
               "perf_sample\"` lists them); no baseline was moved");
    }
    BaselineMove m;
    m.benchmark = name;
    m.run_id = newest_run.column_int(0);
    m.commit = newest_run.column_text(1);
    m.value = median(pass1_samples(db, m.run_id, name, nullptr));
    if (const auto it = current.find(name); it != current.end()) m.old_value = it->second.value;
    m.reason = reason;
    moves.push_back(std::move(m));
  }
  record_baseline_moves(db, machine, moves);
  return moves;
}

}  // namespace volta::audit
