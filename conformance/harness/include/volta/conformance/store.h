#pragma once
// The results store: one SQLite file (default volta-results.db), WAL mode, a versioned schema
// with forward migrations, one transaction per batch. A run is inserted as 'running' before
// its first result; a run whose process died is marked 'incomplete' the next time the file is
// opened for writing on the same host, and readers never count it. Files from a newer schema,
// files that are not Volta databases and corrupt files are refused and left untouched.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "volta/conformance/outcome.h"
#include "volta/conformance/sqlite.h"

namespace volta::conformance {

inline constexpr int kSchemaVersion = 6;
inline constexpr const char* kDefaultDatabase = "volta-results.db";
// PRAGMA application_id of every Volta results database ("Volt"): what tells our file apart
// from another application's SQLite file that happens to have a user_version.
inline constexpr int64_t kApplicationId = 0x566F6C74;

// Provenance of one run: everything needed to say where a row came from.
struct RunInfo {
  std::string commit;      // git commit the binary was built from
  bool dirty = false;      // the work tree had uncommitted changes
  std::string build_type;  // CMake build type / preset
  std::string compiler;
  std::string cpu_model;
  int threads = 1;
  std::string backend;
  std::string machine;  // host fingerprint; empty: "HOSTNAME / CPU MODEL"
  std::string suites;   // comma-separated suite names
  std::string command;  // the command line that produced the run
  // The accelerator the run's cases used (the CUDA device: name, compute capability, SMs,
  // driver and toolkit), appended to the machine as " / DEVICE"; empty: none.
  std::string device = {};
};

struct ResultRow {
  std::string suite, family, op, backend, case_id;
  std::string params;  // the evidence's size in this run: "runs=100 processes=3 threads=3"
  Outcome outcome = Outcome::Pass;
  Verdict verdict = Verdict::Expected;
  std::string expectation;  // the matching expectation's pattern, empty when none
  std::optional<double> max_abs, max_rel, max_ulp;
  std::string tolerance_key, tolerance;
  std::string output_hash;
  double duration_ms = 0;
  std::string kernel;   // kernel variants that ran, e.g. "f32_gemm_avx2fma_6x16"
  std::string message;  // diagnostic, failure detail or skip precondition
  // The plan's steps whose kernels are not bit-exact (Relaxed plans), "; "-joined lines of
  // non_bit_exact_steps(plan); empty for Strict plans and for cases without a plan.
  std::string not_bit_exact;
  // The precondition the case declared (SuiteCase::precondition), recorded with every result:
  // a SKIPPED result without an expectation is expected only when it has one.
  std::string precondition;
};

// One input of a run that decides verdicts. A file (kind File) is hashed as the run read it
// and as committed at the run's commit (known to the binary from its build); an option that
// plants a test-only defect (kind Option) is never the committed input. Gates refuse a run
// with any input whose sha256 differs from committed_sha256, and a run that recorded none.
struct RunInput {
  enum class Kind { File, Option };
  Kind kind = Kind::File;
  std::string name;    // repository path ("governance/perf-slo.md"), or the option
  std::string path;    // the file read, or the option's value
  std::string sha256;  // kAbsent when the file does not exist
  std::string committed_sha256;
};
inline constexpr std::string_view kAbsent = "absent";    // no such file
inline constexpr std::string_view kUnknown = "unknown";  // no committed version known
inline constexpr std::string_view kPlanted = "planted";  // an option's sha256

struct ExpectationRow {
  std::string suite, pattern, outcome, reason, issue, expires;
};

// What ResultStore::merge folded into its output.
struct MergeSummary {
  int64_t shards = 0;
  int64_t runs = 0;
  int64_t results = 0;
  int64_t run_inputs = 0;
  int64_t new_cases = 0;  // cases the output did not have yet
  int64_t expectations = 0;
  int64_t perf_samples = 0;
  int64_t perf_verdicts = 0;
  int64_t node_traces = 0;
  int64_t training_runs = 0;
  int64_t training_steps = 0;
};

// The schema's forward migrations: element v takes version v to v + 1 (kSchemaVersion in
// all). Tests build files of an older version with a prefix of them.
std::span<const std::string_view> schema_migrations();

// Takes `db` from its user_version up to migrations.size(): migrations[v] moves version v to
// v + 1, each step in its own transaction, so a step that fails leaves the file at the version
// before it. Another process that migrated meanwhile is noticed under the write lock.
void apply_migrations(Database& db, std::span<const std::string_view> migrations);

class ResultStore {
 public:
  // ReadWrite creates the file, checks its integrity, migrates it and marks dead runs
  // incomplete (dead training runs interrupted, training_store.h). ReadOnly refuses a missing file
  // and one not at kSchemaVersion. Throws StoreError, leaving a refused file untouched.
  explicit ResultStore(const std::string& path, Database::Mode mode = Database::Mode::ReadWrite);

  int schema_version() const;
  // Inserts a 'running' run stamped with the time, host, pid and volta::kVersion (the version
  // of the binary writing it, schema v6) and returns its id.
  int64_t begin_run(const RunInfo& info);
  // One transaction: the whole batch or nothing. The run must be 'running'.
  void record(int64_t run_id, std::span<const ResultRow> rows);
  void record_expectations(int64_t run_id, std::span<const ExpectationRow> rows);
  // One transaction. The run must be 'running'.
  void record_inputs(int64_t run_id, std::span<const RunInput> inputs);
  void finish_run(int64_t run_id);  // status 'complete'; the run must be 'running'
  // Throws StoreError unless `run_id` exists and is 'running'; `action` words the message
  // ("record results into"). For writers of rows keyed by run (record_traces).
  void require_running(int64_t run_id, std::string_view action) const;

  // Folds shard databases into `out` (created if missing). Runs and training runs get fresh
  // ids and keep their provenance, with the shard's path as origin ('running' ones become
  // 'incomplete', or 'interrupted' for training runs); cases are shared by (suite, backend,
  // case id); rows keyed by run follow their run. Every shard is validated before `out` is
  // touched, and each is folded in one transaction; merging a shard twice gives its runs
  // twice. Refuses an `out` that is one of the shards.
  static MergeSummary merge(std::span<const std::string> shards, const std::string& out);

  Database& db() { return db_; }
  const Database& db() const { return db_; }

 private:
  void check_schema(Database::Mode mode) const;
  void check_integrity() const;
  void enable_wal();
  // Dead runs become 'incomplete', dead training runs 'interrupted'.
  void mark_dead_runs();

  Database db_;
};

}  // namespace volta::conformance
