// The table of ONNX schema versions Volta reads beyond its ONNX library (onnx_versions.cpp) against
// the onnx package pinned in scripts/ci/interop-requirements.txt: the same newest opset and IR
// version, and the same ops and versions, new where ONNX's are new. SKIPPED without the interop
// venv (interop_python.h).
#define BOOST_TEST_MODULE onnx_versions_interop
#include <boost/test/unit_test.hpp>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include "interop_python.h"
#include "onnx_versions.h"

namespace volta::onnx {
namespace {

BOOST_AUTO_TEST_CASE(the_newer_version_table_is_the_pinned_onnx_history) {
  const std::optional<std::filesystem::path> python = interop::python_or_skip();
  if (!python) return;
  const interop::ScriptResult listed = interop::run_script(*python, "onnx_schema_versions.py", {});
  BOOST_TEST_REQUIRE(listed.status == 0, listed.output);

  std::set<std::tuple<std::string, int, bool>> onnx_has;  // op, version, new
  int64_t ir = 0;
  int64_t opset = 0;
  std::istringstream lines(listed.output);
  std::string first;
  while (lines >> first) {
    if (first == "IR") {
      lines >> ir;
    } else if (first == "OPSET") {
      lines >> opset;
    } else {
      int version = 0;
      std::string kind;
      lines >> version >> kind;
      onnx_has.emplace(first, version, kind == "New");
    }
  }
  BOOST_TEST(kNewestIrVersion == ir, "onnx_versions.h reads IR versions up to "
                                         << kNewestIrVersion << "; the pinned onnx writes " << ir);
  BOOST_TEST(kNewestOpset == opset, "onnx_versions.h reads opsets up to "
                                        << kNewestOpset << "; the pinned onnx has " << opset);
  std::set<std::tuple<std::string, int, bool>> volta_has;
  for (const NewerSchema& s : newer_schemas()) {
    volta_has.emplace(std::string(s.op), s.version, s.change == SchemaChange::New);
  }
  for (const auto& [op, version, is_new] : onnx_has) {
    BOOST_TEST(volta_has.contains({op, version, is_new}),
               "onnx_versions.cpp lacks " << op << " " << version << (is_new ? " (New)" : ""));
  }
  for (const auto& [op, version, is_new] : volta_has) {
    BOOST_TEST(onnx_has.contains({op, version, is_new}),
               "onnx_versions.cpp lists " << op << " " << version << (is_new ? " (New)" : "")
                                          << ", which the pinned onnx does not have");
  }
}

}  // namespace
}  // namespace volta::onnx
