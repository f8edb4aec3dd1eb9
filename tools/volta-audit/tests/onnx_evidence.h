#pragma once
// Hand-built ONNX corpus evidence: a corpus at its floor of tests, for the onnx gates and
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
inline std::vector<std::string> onnx_corpus_ids(
    const conformance::OnnxCorpus& corpus = conformance::kOnnxCorpus) {
  std::vector<std::string> ids;
  for (int64_t n = 0; n < corpus.floor; ++n) ids.push_back(onnx_test_id(n));
  return ids;
}

// Every test of a corpus at the floor on `backend`, passing, except the rows given.
inline std::vector<ResultRow> onnx_corpus(
    const std::string& backend, const std::vector<ResultRow>& others = {},
    const conformance::OnnxCorpus& corpus = conformance::kOnnxCorpus) {
  std::vector<ResultRow> rows;
  const std::string suite(corpus.suite);
  const Where where{.suite = suite, .backend = backend, .family = "elementwise"};
  for (const std::string& id : onnx_corpus_ids(corpus)) {
    rows.push_back(result(id, Outcome::Pass, Verdict::Expected, "", where));
  }
  std::vector<ResultRow> replacements;
  for (ResultRow o : others) {
    o.suite = suite;
    o.backend = backend;
    replacements.push_back(std::move(o));
  }
  return with(std::move(rows), replacements);
}

// The whole corpus passing on every backend the corpus's gate judges.
inline void add_passing_onnx_corpus(
    TempStore& t, const RunSpec& spec = {},
    const conformance::OnnxCorpus& corpus = conformance::kOnnxCorpus) {
  for (std::string_view backend : conformance::kOnnxBackends) {
    RunSpec s = spec;
    s.suites = std::string(corpus.suite);
    t.add_run(onnx_corpus(std::string(backend), {}, corpus), s);
  }
}

}  // namespace volta::audit::testing
