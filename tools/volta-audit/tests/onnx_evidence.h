#pragma once
// Hand-built onnx suite evidence: a corpus of kOnnxCorpusFloor tests, for the onnx gate and
// for the determinism gates, whose ONNX subjects are the tests the CPU engine passes.

#include <cstdio>
#include <string>
#include <vector>

#include "store_builder.h"
#include "volta/conformance/onnx_corpus.h"
#include "volta/conformance/onnx_suite.h"

namespace volta::audit::testing {

inline std::string onnx_test_id(int64_t n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "node/test_%04lld", static_cast<long long>(n));
  return buf;
}

// Every test id of a corpus at the floor.
inline std::vector<std::string> onnx_corpus_ids() {
  std::vector<std::string> ids;
  for (int64_t n = 0; n < conformance::kOnnxCorpusFloor; ++n) ids.push_back(onnx_test_id(n));
  return ids;
}

// Every test of a corpus at the floor on `backend`, passing, except the rows given.
inline std::vector<ResultRow> onnx_corpus(const std::string& backend,
                                          const std::vector<ResultRow>& others = {}) {
  std::vector<ResultRow> rows;
  const Where where{.suite = "onnx", .backend = backend, .family = "elementwise"};
  for (const std::string& id : onnx_corpus_ids()) {
    rows.push_back(result(id, Outcome::Pass, Verdict::Expected, "", where));
  }
  std::vector<ResultRow> replacements;
  for (ResultRow o : others) {
    o.suite = "onnx";
    o.backend = backend;
    replacements.push_back(std::move(o));
  }
  return with(std::move(rows), replacements);
}

// The whole corpus passing on every backend the onnx gate judges.
inline void add_passing_onnx_corpus(TempStore& t, const RunSpec& spec = {}) {
  for (std::string_view backend : conformance::kOnnxBackends) {
    RunSpec s = spec;
    s.suites = "onnx";
    t.add_run(onnx_corpus(std::string(backend)), s);
  }
}

}  // namespace volta::audit::testing
