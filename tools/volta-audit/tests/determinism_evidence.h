#pragma once
// Hand-built determinism suite evidence, shaped as the suite contract
// (volta/conformance/determinism_suite.h) records it: the rows every determinism gate passes
// on, for tests to take apart one piece at a time.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "store_builder.h"
#include "volta/conformance/determinism_suite.h"

namespace volta::audit::testing {

inline Where determinism_family(std::string_view family) {
  return {.suite = "determinism", .backend = "cpu", .family = std::string(family)};
}

// Plan fingerprints as plan:SUBJECT rows carry them in output_hash.
inline const std::string kMlpFingerprint =
    "plan=5c1f0e2a9b3d4c71 ir=0b9e4d2f3a1c5e60 schedule=7a2c9e1b0d4f3a85 "
    "allocation=3e8d1c0b9a2f4e67 passes=fold-constants:1a2b3c4d5e6f7081,eliminate-dead:"
    "2b3c4d5e6f708192";
inline const std::string kCnnFingerprint =
    "plan=9d8c7b6a5f4e3d2c ir=1c2d3e4f5a6b7c8d schedule=2d3e4f5a6b7c8d9e "
    "allocation=3e4f5a6b7c8d9e0f passes=fold-constants:4f5a6b7c8d9e0f1a";

inline ResultRow determinism_row(std::string case_id, std::string_view family,
                                 Outcome outcome = Outcome::Pass,
                                 Verdict verdict = Verdict::Expected, std::string message = "") {
  return result(std::move(case_id), outcome, verdict, std::move(message),
                determinism_family(family));
}

inline ResultRow replay_row(std::string_view subject) {
  ResultRow row = determinism_row("replay:" + std::string(subject), conformance::kReplayFamily);
  row.params = "runs=100 processes=3 threads=3";
  row.output_hash = "e3b0c44298fc1c14";
  return row;
}

inline ResultRow threads_row(std::string_view subject) {
  ResultRow row =
      determinism_row("threads:" + std::string(subject), conformance::kThreadInvarianceFamily);
  row.params = "configurations=passes-off,task-order-reverse,threads-1";
  return row;
}

inline ResultRow plan_row(std::string_view subject, std::string fingerprint) {
  ResultRow row =
      determinism_row("plan:" + std::string(subject), conformance::kPlanStabilityFamily);
  row.output_hash = std::move(fingerprint);
  return row;
}

// One run of the whole suite on two subjects, every negative control catching its defect.
inline std::vector<ResultRow> passing_determinism_rows() {
  std::vector<ResultRow> rows = {
      replay_row("model:mlp"),
      replay_row("model:cnn"),
      determinism_row("strict:rejects-non-bit-exact", conformance::kStrictModeFamily),
      determinism_row("strict:relaxed-lists-non-bit-exact", conformance::kStrictModeFamily),
      threads_row("model:mlp"),
      threads_row("model:cnn"),
      threads_row("model:transformer-block"),
      plan_row("model:mlp", kMlpFingerprint),
      plan_row("model:cnn", kCnnFingerprint),
  };
  for (const conformance::NegativeControl& control : conformance::kNegativeControls) {
    rows.push_back(determinism_row(std::string(control.case_id), control.family));
  }
  return rows;
}

// `rows` without the case `case_id`.
inline std::vector<ResultRow> without(std::vector<ResultRow> rows, std::string_view case_id) {
  std::erase_if(rows, [&](const ResultRow& r) { return r.case_id == case_id; });
  return rows;
}

// Records `rows` as a run built as `build_type` ("Debug", "RelWithDebInfo", "Release").
inline int64_t add_build_run(TempStore& t, const std::vector<ResultRow>& rows,
                             std::string_view build_type, const RunSpec& spec = {}) {
  const int64_t run = t.add_run(rows, spec);
  t.db()
      .prepare("UPDATE run SET build_type = ? WHERE id = ?")
      .bind(1, build_type)
      .bind(2, run)
      .run();
  return run;
}

// Complete evidence for every determinism gate: a Debug and a RelWithDebInfo run that agree.
inline void add_passing_determinism_suite(TempStore& t) {
  add_build_run(t, passing_determinism_rows(), "Debug", {.started_at = "2030-01-01T00:00:00Z"});
  add_build_run(t, passing_determinism_rows(), "RelWithDebInfo",
                {.started_at = "2030-01-01T01:00:00Z"});
}

}  // namespace volta::audit::testing
