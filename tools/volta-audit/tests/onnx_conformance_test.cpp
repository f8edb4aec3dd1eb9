// The ONNX conformance lane: `volta-audit run onnx` on the installed corpus (both backends)
// into a scratch database, then the onnx-conformance gate must pass and the committed coverage
// sections must match what the results generate.
#define BOOST_TEST_MODULE onnx_conformance
#include <boost/test/unit_test.hpp>
#include <string_view>
#include <vector>

#include "build_info.h"
#include "commands.h"
#include "docs_contract.h"
#include "gates.h"
#include "store_builder.h"

namespace volta::audit {
namespace {

BOOST_AUTO_TEST_CASE(the_corpus_runs_as_expected_and_the_docs_match) {
  testing::TempStore t;
  const std::string db = t.path();
  // A generous per-test limit: under the dev preset (Debug + sanitizers) the reference
  // engine's largest convolution takes over a minute.
  const std::vector<std::string_view> argv = {"onnx", "--db", db, "--timeout", "600"};
  Args args{argv};
  BOOST_TEST(run_command(args) == 0);  // 0: no unexpected result on either backend

  const GateResult gate =
      evaluate_gate(t.db(), *find_gate("onnx-conformance"), build::kCommit, false);
  BOOST_TEST(gate_status_name(gate.status) == "PASS", gate.reason);
  BOOST_TEST_MESSAGE("onnx-conformance: " << gate.reason);

  const ResultsSource results{&t.db(), build::kCommit};
  for (const DocFinding& f : check_docs(build::kSourceDir, nullptr, &results)) {
    if (f.claim != "section:onnx-coverage" && f.claim != "section:onnx-totals") continue;
    BOOST_TEST(
        gate_status_name(f.status) == "PASS",
        f.file << ":" << f.line << ": " << f.detail
               << " (regenerate: volta-audit docs sync --db DB, see conformance/onnx/README.md)");
  }
}

}  // namespace
}  // namespace volta::audit
