// An ONNX conformance lane: `volta-audit run SUITE` on its corpus (both backends) into a scratch
// database, then the corpus's gate must pass and the committed coverage sections must match
// what the results generate. Built twice: onnx_conformance_test (suite onnx, ONNX 1.12's data
// from Debian) and onnx_current_conformance_test (suite onnx-current, the data
// scripts/ci/onnx_current_data.sh generates), which is SKIPPED, saying why, without that data.
#define BOOST_TEST_MODULE onnx_conformance
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <string_view>
#include <vector>

#include "build_info.h"
#include "commands.h"
#include "docs_contract.h"
#include "gates.h"
#include "store_builder.h"
#include "volta/conformance/onnx_corpus.h"

#ifndef VOLTA_ONNX_SUITE
#define VOLTA_ONNX_SUITE "onnx"
#endif

namespace volta::audit {
namespace {

BOOST_AUTO_TEST_CASE(the_corpus_runs_as_expected_and_the_docs_match) {
  const conformance::OnnxCorpus& corpus = *conformance::find_onnx_corpus(VOLTA_ONNX_SUITE);
  const std::string suite(corpus.suite);
  const std::filesystem::path root(corpus.data_root);
  const std::filesystem::path data =
      root.is_absolute() ? root : std::filesystem::path(build::kSourceDir) / root;
  if (!std::filesystem::is_directory(data)) {
    // The current corpus is generated from the interop venv, which needs the package index.
    BOOST_TEST_MESSAGE("SKIPPED: no " << suite << " data at " << data.string() << ": "
                                      << corpus.how_to_get);
    return;
  }
  testing::TempStore t;
  const std::string db = t.path();
  // A generous per-test limit: under the dev preset (Debug + sanitizers) the reference
  // engine's largest convolution takes over a minute.
  const std::vector<std::string_view> argv = {suite, "--db", db, "--timeout", "600"};
  Args args{argv};
  BOOST_TEST(run_command(args) == 0);  // 0: no unexpected result on either backend

  const std::string gate_name = suite + "-conformance";
  const GateResult gate = evaluate_gate(t.db(), *find_gate(gate_name), build::kCommit, false);
  BOOST_TEST(gate_status_name(gate.status) == "PASS", gate.reason);
  BOOST_TEST_MESSAGE(gate_name << ": " << gate.reason);

  const ResultsSource results{&t.db(), build::kCommit};
  for (const DocFinding& f : check_docs(build::kSourceDir, nullptr, &results)) {
    if (f.claim != "section:" + suite + "-coverage" && f.claim != "section:" + suite + "-totals") {
      continue;
    }
    BOOST_TEST(
        gate_status_name(f.status) == "PASS",
        f.file << ":" << f.line << ": " << f.detail
               << " (regenerate: volta-audit docs sync --db DB, see conformance/onnx/README.md)");
  }
}

}  // namespace
}  // namespace volta::audit
