#pragma once
// Hand-built determinism suite evidence, shaped as the suite contract
// (volta/conformance/determinism_suite.h) records it: the rows every determinism gate passes
// on, for tests to take apart one piece at a time. The subjects are the built-in models and
// the ONNX tests the cpu onnx evidence passes, so the evidence comes with that onnx run.

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

// The committed configuration files but the baseline (conformance/determinism/configs).
inline const std::string kConfigurations =
    "configurations=chunk-scale-4x,chunk-scale-quarter,passes-off,task-order-reverse,threads-1,"
    "threads-2,threads-4,threads-8";
inline const std::string kReplayParams = "runs=100 processes=3 threads=3";
inline const std::string kPlanParams = "compiles=2 processes=3";
inline const std::string kBatchParams = "batches=1,2,3,7,16,64 threads=3";

// The ONNX tests the unit tests' subjects include unless they say otherwise.
inline const std::vector<std::string> kOnnxSubjects = {"node/test_abs"};

inline ResultRow determinism_row(std::string case_id, std::string_view family,
                                 Outcome outcome = Outcome::Pass,
                                 Verdict verdict = Verdict::Expected, std::string message = "") {
  return result(std::move(case_id), outcome, verdict, std::move(message),
                determinism_family(family));
}

inline ResultRow replay_row(std::string_view subject, const std::string& params = kReplayParams) {
  ResultRow row = determinism_row("replay:" + std::string(subject), conformance::kReplayFamily);
  row.params = params;
  row.output_hash = "e3b0c44298fc1c14";
  return row;
}

inline ResultRow threads_row(std::string_view subject,
                             const std::string& params = kConfigurations) {
  ResultRow row =
      determinism_row("threads:" + std::string(subject), conformance::kThreadInvarianceFamily);
  row.params = params;
  return row;
}

inline std::string fingerprint_of(std::string_view subject) {
  if (subject == "model:mlp") return kMlpFingerprint;
  if (subject == "model:cnn") return kCnnFingerprint;
  return "plan=" + std::string(subject);
}

inline ResultRow plan_row(std::string_view subject, std::string fingerprint = {}) {
  ResultRow row =
      determinism_row("plan:" + std::string(subject), conformance::kPlanStabilityFamily);
  row.output_hash = fingerprint.empty() ? fingerprint_of(subject) : std::move(fingerprint);
  row.params = kPlanParams;
  return row;
}

inline ResultRow batch_row(std::string_view subject, const std::string& params = kBatchParams) {
  ResultRow row =
      determinism_row("batch:" + std::string(subject), conformance::kBatchInvarianceFamily);
  row.params = params;
  return row;
}

// Every control catching its defect; the cross-build one records a fingerprint that depends
// on whether `build_type` is optimized, as its planted pass makes it.
inline std::vector<ResultRow> control_rows(std::string_view build_type) {
  std::vector<ResultRow> rows;
  for (const conformance::NegativeControl& control : conformance::kNegativeControls) {
    rows.push_back(determinism_row(std::string(control.case_id), control.family));
    if (control.across_builds) {
      rows.back().output_hash =
          std::string("plan=") + (build_type == "Debug" ? "noopt" : "opt") + " passes=planted";
    }
  }
  return rows;
}

// One run of the whole suite: every family over the built-in models (batch invariance) and the
// ONNX subjects too (the other families), every negative control catching its defect.
inline std::vector<ResultRow> passing_determinism_rows(
    std::string_view build_type = "RelWithDebInfo",
    const std::vector<std::string>& onnx = kOnnxSubjects) {
  std::vector<std::string> subjects(conformance::kBuiltinSubjects.begin(),
                                    conformance::kBuiltinSubjects.end());
  for (const std::string& id : onnx) subjects.push_back("onnx:" + id);
  std::vector<ResultRow> rows;
  for (const std::string& s : subjects) {
    rows.push_back(replay_row(s));
    rows.push_back(threads_row(s));
    rows.push_back(plan_row(s));
  }
  for (std::string_view s : conformance::kBuiltinSubjects) rows.push_back(batch_row(s));
  for (std::string_view id : conformance::kStrictModeCases) {
    rows.push_back(determinism_row(std::string(id), conformance::kStrictModeFamily));
  }
  for (ResultRow& r : control_rows(build_type)) rows.push_back(std::move(r));
  return rows;
}

// The cpu onnx evidence that makes `onnx` the ONNX subjects.
inline void add_onnx_subjects(TempStore& t, const std::vector<std::string>& onnx,
                              const std::string& commit = kCommit) {
  std::vector<ResultRow> rows;
  rows.reserve(onnx.size());
  for (const std::string& id : onnx) {
    rows.push_back(result(id, Outcome::Pass, Verdict::Expected, "",
                          {.suite = "onnx", .backend = "cpu", .family = "elementwise"}));
  }
  t.add_run(rows, {.commit = commit, .suites = "onnx"});
}

// Records `rows` as a run built as `build_type` ("Debug", "RelWithDebInfo", "Release").
inline int64_t add_build_run(TempStore& t, const std::vector<ResultRow>& rows,
                             std::string_view build_type, RunSpec spec = {}) {
  spec.build_type = std::string(build_type);
  spec.suites = "determinism";
  return t.add_run(rows, spec);
}

// Complete evidence for every determinism gate: the onnx subjects' cpu evidence, and a Debug
// and a RelWithDebInfo run of the suite that agree.
inline void add_passing_determinism_suite(TempStore& t,
                                          const std::vector<std::string>& onnx = kOnnxSubjects,
                                          const std::string& commit = kCommit) {
  add_onnx_subjects(t, onnx, commit);
  add_build_run(t, passing_determinism_rows("Debug", onnx), "Debug",
                {.commit = commit, .started_at = "2030-01-01T00:00:00Z"});
  add_build_run(t, passing_determinism_rows("RelWithDebInfo", onnx), "RelWithDebInfo",
                {.commit = commit, .started_at = "2030-01-01T01:00:00Z"});
}

}  // namespace volta::audit::testing
