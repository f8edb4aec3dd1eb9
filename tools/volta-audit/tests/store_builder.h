#pragma once
// Hand-built results databases for the gate, query and report tests: runs with chosen
// provenance and status, result rows, perf samples and baselines, doc claims. Each store lives
// in its own temporary directory, removed with it.

#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "volta/conformance/parity_suite.h"
#include "volta/conformance/store.h"

namespace volta::audit::testing {

using conformance::Outcome;
using conformance::ResultRow;
using conformance::Verdict;

inline const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";
inline const std::string kOtherCommit = "fedcba9876543210fedcba9876543210fedcba98";
inline const std::string kMachine = "ci-box / Test CPU";

// Where a case lives: suite, backend and family.
struct Where {
  std::string suite = "parity";
  std::string backend = "cpu";
  std::string family = "elementwise";
};

inline ResultRow result(std::string case_id, Outcome outcome, Verdict verdict = Verdict::Expected,
                        std::string message = "", const Where& where = {}) {
  ResultRow row;
  row.suite = where.suite;
  row.backend = where.backend;
  row.family = where.family;
  row.op = case_id.substr(0, case_id.find('('));
  row.case_id = std::move(case_id);
  row.outcome = outcome;
  row.verdict = verdict;
  row.message = std::move(message);
  row.tolerance = "abs=1e-05 rel=0.0001 ulp=16";
  row.duration_ms = 1.0;
  return row;
}

// `rows` with each row of `replacements` in place of the row with its case id (appended when
// there is none).
inline std::vector<ResultRow> with(std::vector<ResultRow> rows,
                                   const std::vector<ResultRow>& replacements) {
  for (const ResultRow& r : replacements) {
    const auto it = std::find_if(rows.begin(), rows.end(),
                                 [&](const ResultRow& row) { return row.case_id == r.case_id; });
    if (it == rows.end()) {
      rows.push_back(r);
    } else {
      *it = r;
    }
  }
  return rows;
}

// `rows` without the case `case_id`.
inline std::vector<ResultRow> without(std::vector<ResultRow> rows, std::string_view case_id) {
  std::erase_if(rows, [&](const ResultRow& r) { return r.case_id == case_id; });
  return rows;
}

// Every case of the parity suite (the list the parity gates need), passing on `backend`; on
// cuda each is SKIPPED for want of its declared precondition, as the suite records them.
inline std::vector<ResultRow> parity_rows(const std::string& backend = "cpu") {
  static const std::vector<std::string> ids = [] {
    std::vector<std::string> out;
    for (const conformance::SuiteCase& c : conformance::parity_suite("cpu", 1)) {
      out.push_back(c.case_id);
    }
    return out;
  }();
  std::vector<ResultRow> rows;
  rows.reserve(ids.size());
  for (const std::string& id : ids) {
    rows.push_back(result(id, Outcome::Pass, Verdict::Expected, "",
                          Where{.suite = "parity", .backend = backend, .family = "elementwise"}));
    if (backend == "cuda") {
      rows.back().outcome = Outcome::Skipped;
      rows.back().message = "no CUDA backend in this build";
      rows.back().precondition = std::string(conformance::kCudaPrecondition);
    }
  }
  return rows;
}

enum class RunEnd { Complete, Running, Incomplete };

// An input a run read, identical to the committed file: what makes a run usable evidence.
inline conformance::RunInput committed_input(std::string name = "conformance/expectations/x.tsv") {
  conformance::RunInput input;
  input.path = "/src/" + name;
  input.name = std::move(name);
  input.sha256 = input.committed_sha256 = std::string(64, 'a');
  return input;
}

struct RunSpec {
  std::string commit = kCommit;
  bool dirty = false;
  RunEnd end = RunEnd::Complete;
  std::string started_at = {};  // empty: now, as begin_run records it
  std::vector<conformance::ExpectationRow> expectations = {};
  std::vector<conformance::RunInput> inputs = {committed_input()};  // empty: none recorded
  std::string build_type = "RelWithDebInfo";
  std::string suites = "parity";
  std::string machine = kMachine;
};

class TempStore {
 public:
  TempStore() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "volta-audit-test-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
    path_ = (dir_ / "results.db").string();
    store_.emplace(path_);
  }
  ~TempStore() {
    store_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  TempStore(const TempStore&) = delete;
  TempStore& operator=(const TempStore&) = delete;

  conformance::ResultStore& store() { return *store_; }
  conformance::Database& db() { return store_->db(); }
  const std::string& path() const { return path_; }
  const std::filesystem::path& dir() const { return dir_; }

  int64_t add_run(const std::vector<ResultRow>& rows, const RunSpec& spec = {}) {
    conformance::RunInfo info;
    info.commit = spec.commit;
    info.dirty = spec.dirty;
    info.build_type = spec.build_type;
    info.compiler = "GNU 12.2.0";
    info.cpu_model = "Test CPU";
    info.threads = 4;
    info.backend = "cpu";
    info.machine = spec.machine;
    info.suites = spec.suites;
    info.command = "volta-audit run " + spec.suites;
    const int64_t run = store_->begin_run(info);
    if (!spec.inputs.empty()) store_->record_inputs(run, spec.inputs);
    if (!rows.empty()) store_->record(run, rows);
    if (!spec.expectations.empty()) store_->record_expectations(run, spec.expectations);
    if (spec.end == RunEnd::Complete) store_->finish_run(run);
    if (spec.end == RunEnd::Incomplete) {
      db().prepare("UPDATE run SET status = 'incomplete' WHERE id = ?").bind(1, run).run();
    }
    if (!spec.started_at.empty()) {
      db().prepare("UPDATE run SET started_at = ? WHERE id = ?")
          .bind(1, spec.started_at)
          .bind(2, run)
          .run();
    }
    return run;
  }

  void add_perf_samples(int64_t run, std::string_view benchmark, int pass,
                        std::initializer_list<double> values, std::string_view unit = "ns") {
    int repetition = 0;
    for (double value : values) {
      db().prepare(
              "INSERT INTO perf_sample (run_id, benchmark, pass, repetition, value, unit) "
              "VALUES (?, ?, ?, ?, ?, ?)")
          .bind(1, run)
          .bind(2, benchmark)
          .bind(3, int64_t{pass})
          .bind(4, int64_t{repetition++})
          .bind(5, value)
          .bind(6, unit)
          .run();
    }
  }

  void add_baseline(std::string_view benchmark, double value, std::string_view created_at,
                    std::string_view machine = kMachine, std::string_view unit = "ns") {
    db().prepare(
            "INSERT INTO perf_baseline (machine, benchmark, value, unit, commit_sha, reason, "
            "created_at) VALUES (?, ?, ?, ?, ?, 'first measurement', ?)")
        .bind(1, machine)
        .bind(2, benchmark)
        .bind(3, value)
        .bind(4, unit)
        .bind(5, kOtherCommit)
        .bind(6, created_at)
        .run();
  }

  void add_claim(std::string_view claim, std::string_view file, int line, std::string_view status,
                 std::string_view detail, std::string_view checked_at,
                 std::string_view commit = kCommit, bool dirty = false) {
    db().prepare(
            "INSERT INTO doc_claim (commit_sha, claim, file, line, evidence, status, detail, "
            "checked_at, dirty) VALUES (?, ?, ?, ?, 'gate=parity-cpu-reference', ?, ?, ?, ?)")
        .bind(1, commit)
        .bind(2, claim)
        .bind(3, file)
        .bind(4, int64_t{line})
        .bind(5, status)
        .bind(6, detail)
        .bind(7, checked_at)
        .bind(8, int64_t{dirty})
        .run();
  }

 private:
  std::filesystem::path dir_;
  std::string path_;
  std::optional<conformance::ResultStore> store_;
};

}  // namespace volta::audit::testing
