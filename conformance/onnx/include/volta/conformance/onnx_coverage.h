#pragma once
// What the results store says about the onnx suite for one commit: the evidence the
// onnx-conformance gate judges and the coverage numbers the docs are generated from.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "volta/conformance/sqlite.h"

namespace volta::conformance {

// Common table expressions (to follow a WITH and the CTE `runs` names) defining
// onnx_evidence(case_id, family, op, params, backend, outcome, verdict, message, run_id,
// expectation, precondition): for
// every case of `suite` (an ONNX corpus: onnx or onnx-current), its result in the newest of
// `runs` that has one, so a rerun of some tests
// supersedes older results and shards add up. `runs` has run's columns: the gates' usable_run
// (volta/conformance/evidence.h), which binds :commit and :release.
std::string onnx_evidence_ctes(std::string_view runs = "usable_run",
                               std::string_view suite = "onnx");

// One op on one backend: how its tests ended (failed: FAIL_*, ERROR, CRASH or TIMEOUT).
// MISSING rows (stale expectations) are not tests.
struct OnnxCoverageRow {
  std::string family, op, backend;
  int64_t tests = 0, passed = 0, unsupported = 0, failed = 0;
};

// Rows ordered by family, op, backend; empty when the commit has no results of `suite`.
std::vector<OnnxCoverageRow> onnx_coverage(const Database& db, std::string_view commit,
                                           std::string_view suite = "onnx");

// The same tallies by the default-domain opset the tests' models import: `op` holds the opset
// ("18"), `family` is empty. Ordered by opset, then backend.
std::vector<OnnxCoverageRow> onnx_coverage_by_opset(const Database& db, std::string_view commit,
                                                    std::string_view suite = "onnx");
// And by the ONNX type of the tests' first graph input ("FLOAT", "FLOAT16", "seq"; "" for a
// test without one): `op` holds the type. Ordered by type, then backend.
std::vector<OnnxCoverageRow> onnx_coverage_by_dtype(const Database& db, std::string_view commit,
                                                    std::string_view suite = "onnx");

}  // namespace volta::conformance
