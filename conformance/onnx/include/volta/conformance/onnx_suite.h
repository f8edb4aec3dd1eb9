#pragma once
// The `onnx` suite: every test of the ONNX backend test data, run on the engine's CPU backend
// and on the reference engine (and on the CUDA backend on request), each judged against the
// data set's expected outputs (not against each other). One row per test x backend, reported
// under the family of the test's principal op.

#include <span>
#include <string_view>
#include <vector>

#include "volta/conformance/onnx_corpus.h"
#include "volta/conformance/onnx_expectations.h"
#include "volta/conformance/onnx_tolerances.h"
#include "volta/conformance/runner.h"

namespace volta::conformance {

inline constexpr std::string_view kOnnxSuite = kOnnxCorpus.suite;
inline constexpr std::string_view kOnnxCurrentSuite = kOnnxCurrentCorpus.suite;
// The backends the suite runs on by default; kOnnxCudaBackend only when asked for.
inline constexpr std::array<std::string_view, 2> kOnnxBackends = {"cpu", "reference"};
inline constexpr std::string_view kOnnxCudaBackend = "cuda";

// Runs one test on one backend: load the model, read every data set, run it (CPU: a Session
// in Strict mode on `threads` threads with a poisoned arena; reference: import with the
// reference engine as the import-time evaluator, then reference::evaluate), compare. Import
// refusals (I-UNSUPPORTED, I-NOT-STATIC, a dtype Volta lacks in the model or a .pb file) and
// missing kernels are UNSUPPORTED with the diagnostic; any other exception is ERROR.
CaseOutcome run_onnx_test(const OnnxTest& test, std::string_view backend, int threads,
                          const OnnxTolerance& tolerance);

// One case per test for `backend`. Throws VoltaError(InvalidArgument) for a backend outside
// kOnnxBackends and kOnnxCudaBackend. On a backend this binary lacks or this machine cannot
// run (no CUDA device), every case is SKIPPED with the reason under the declared precondition.
std::vector<SuiteCase> onnx_suite_cases(
    std::span<const OnnxTest> corpus, std::string_view backend, int threads,
    const OnnxTolerances& tolerances = OnnxTolerances::builtin());

// Runs the chosen cases (all of one backend) into `run_id`, judging each against the
// expectations that apply to `backend`, which are also recorded with the run. A line naming
// one exact test that the corpus lacks is recorded as MISSING when the whole suite runs.
// Rows are recorded under `suite`: the suite of the corpus the cases come from.
SuiteSummary run_onnx_suite(ResultStore& store, int64_t run_id, std::string_view backend,
                            std::span<const SuiteCase> cases,
                            std::span<const OnnxExpectation> expectations,
                            const RunOptions& options, std::string_view suite = kOnnxSuite);

}  // namespace volta::conformance
