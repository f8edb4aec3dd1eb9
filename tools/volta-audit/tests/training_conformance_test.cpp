// The training lane: the whole `training` suite through the built volta-audit (which drives the
// built `volta` CLI) into a scratch database, and its two gates: PASS with the interop venv that
// scripts/ci/bootstrap.sh creates, NOT VERIFIED naming the venv without it.
#define BOOST_TEST_MODULE training_conformance
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "build_info.h"
#include "gates.h"
#include "store_builder.h"
#include "volta_audit_binary.h"

namespace volta::audit {
namespace {

using testing::quoted;
using testing::TempStore;
using testing::volta_audit;

bool interop_venv_present() {
  const char* venv = std::getenv("VOLTA_INTEROP_VENV");
  const std::filesystem::path dir =
      venv != nullptr ? std::filesystem::path(venv)
                      : std::filesystem::path(build::kSourceDir) / "build/interop-venv";
  return std::filesystem::exists(dir / "bin/python3");
}

BOOST_AUTO_TEST_CASE(the_suite_records_every_guarantee_and_its_gates_judge_it) {
  TempStore t;
  const auto run = volta_audit("run training --db " + quoted(t.path()));
  BOOST_TEST_MESSAGE(run.output);
  BOOST_TEST_REQUIRE(run.status == 0, run.output);  // 0: every case as expected
  for (const char* name : {"transformer-train-reload", "checkpoint-round-trip"}) {
    const GateResult r = evaluate_gate(t.db(), *find_gate(name), build::kCommit, false);
    if (interop_venv_present()) {
      BOOST_TEST(gate_status_name(r.status) == "PASS", name << ": " << r.reason);
    } else {
      BOOST_TEST(gate_status_name(r.status) == "NOT VERIFIED", name << ": " << r.reason);
      BOOST_TEST(r.reason.find("no interop venv") != std::string::npos, r.reason);
    }
  }
}

}  // namespace
}  // namespace volta::audit
