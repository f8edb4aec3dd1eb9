#pragma once
// The results store: one SQLite file (default volta-results.db), WAL mode, a versioned schema
// with forward migrations, one transaction per batch. A run is inserted as 'running' before
// its first result; a run whose process died is marked 'incomplete' the next time the file is
// opened for writing, and readers never count it. Files from a newer schema, and files that
// are not Volta databases, are refused and left untouched.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "volta/conformance/outcome.h"
#include "volta/conformance/sqlite.h"

namespace volta::conformance {

inline constexpr int kSchemaVersion = 1;
inline constexpr const char* kDefaultDatabase = "volta-results.db";

// Provenance of one run: everything needed to say where a row came from.
struct RunInfo {
  std::string commit;      // git commit the binary was built from
  bool dirty = false;      // the work tree had uncommitted changes
  std::string build_type;  // CMake build type / preset
  std::string compiler;
  std::string cpu_model;
  int threads = 1;
  std::string backend;
  std::string machine;  // host fingerprint: hostname + CPU model
  std::string suites;   // comma-separated suite names
  std::string command;  // the command line that produced the run
};

struct ResultRow {
  std::string suite, family, op, backend, case_id, params;
  Outcome outcome = Outcome::Pass;
  Verdict verdict = Verdict::Expected;
  std::string expectation;  // the matching expectation's pattern, empty when none
  std::optional<double> max_abs, max_rel, max_ulp;
  std::string tolerance_key, tolerance;
  std::string output_hash;
  double duration_ms = 0;
  std::string kernel;   // kernel variants that ran, e.g. "f32_gemm_avx2fma_6x16"
  std::string message;  // diagnostic, failure detail or skip precondition
};

struct ExpectationRow {
  std::string suite, pattern, outcome, reason, issue, expires;
};

class ResultStore {
 public:
  // ReadWrite creates and migrates; ReadOnly refuses a missing file. Throws StoreError.
  explicit ResultStore(const std::string& path, Database::Mode mode = Database::Mode::ReadWrite);

  int schema_version() const;
  int64_t begin_run(const RunInfo& info);
  void record(int64_t run_id, std::span<const ResultRow> rows);  // one transaction
  void record_expectations(int64_t run_id, std::span<const ExpectationRow> rows);
  void finish_run(int64_t run_id);  // status 'complete'

  // Folds shard databases into `out` (created if missing): runs keep their provenance and
  // gain the shard's path as origin; cases are shared by (suite, backend, case id).
  static void merge(std::span<const std::string> shards, const std::string& out);

  Database& db() { return db_; }

 private:
  void migrate();
  void check_version(int version) const;
  void mark_dead_runs_incomplete();

  Database db_;
};

}  // namespace volta::conformance
