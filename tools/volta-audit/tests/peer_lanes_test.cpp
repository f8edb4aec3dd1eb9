#define BOOST_TEST_MODULE peer_lanes
// `volta-audit perf`'s peer lanes (perf_run.h): what each mirrors, why one cannot run here,
// and what a run of one brings back. The real_onnxruntime, real_blas and real_torch suites run
// the language model's and the GEMMs' lanes for real, a few iterations each; CTest reports them
// SKIPPED where the interop venv or PyTorch is missing.

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "peer_script_support.h"
#include "perf_run.h"
#include "perf_run_data.h"

namespace volta::audit {
namespace {

namespace fs = std::filesystem;
using testing::contains;
using testing::ScratchDir;

const PeerLane& lane_named(const std::vector<PeerLane>& lanes, const std::string& name) {
  for (const PeerLane& lane : lanes) {
    if (lane.name == name) return lane;
  }
  BOOST_FAIL("no peer lane " + name);
  return lanes.front();
}

BOOST_AUTO_TEST_SUITE(plumbing)

BOOST_AUTO_TEST_CASE(each_lane_mirrors_its_benchmarks) {
  const std::vector<PeerLane> lanes = peer_lanes(peer_environment());
  std::vector<std::string> names;
  names.reserve(lanes.size());
  for (const PeerLane& lane : lanes) names.push_back(lane.name);
  BOOST_TEST((names == std::vector<std::string>{"torch f32_gemm", "openblas f32_gemm",
                                                "mlas f32_gemm", "torch lm", "onnxruntime lm"}));
  const std::vector<std::string> gemm = {"f32_gemm/avx512/size:64/threads:1/real_time"};
  const std::vector<std::string> mlp = {
      "f32_gemm_mlp/avx512/up/tokens:64/d:64/threads:1/real_time"};
  const std::vector<std::string> train = {"lm/train_step/threads:1/real_time"};
  const std::vector<std::string> infer = {"plan/mlp/threads:1", "lm/infer/threads:2/real_time"};
  BOOST_TEST(mirrors_any(lane_named(lanes, "torch f32_gemm"), gemm));
  BOOST_TEST(!mirrors_any(lane_named(lanes, "torch f32_gemm"), mlp));  // squares only
  BOOST_TEST(!mirrors_any(lane_named(lanes, "torch f32_gemm"), infer));
  for (const char* blas : {"openblas f32_gemm", "mlas f32_gemm"}) {
    BOOST_TEST(mirrors_any(lane_named(lanes, blas), gemm));
    BOOST_TEST(mirrors_any(lane_named(lanes, blas), mlp));
    BOOST_TEST(!mirrors_any(lane_named(lanes, blas), infer));
  }
  BOOST_TEST(mirrors_any(lane_named(lanes, "torch lm"), train));
  BOOST_TEST(mirrors_any(lane_named(lanes, "torch lm"), infer));
  BOOST_TEST(!mirrors_any(lane_named(lanes, "torch lm"), gemm));
  BOOST_TEST(!mirrors_any(lane_named(lanes, "onnxruntime lm"), train));  // it does not train
  BOOST_TEST(mirrors_any(lane_named(lanes, "onnxruntime lm"), infer));
}

BOOST_AUTO_TEST_CASE(the_interop_venvs_lanes_say_why_without_a_venv) {
  const ScratchDir dir("peer-lanes-test");
  PeerEnvironment environment = peer_environment();
  environment.interop_venv = dir / "venv";
  for (const char* name : {"onnxruntime lm", "openblas f32_gemm", "mlas f32_gemm"}) {
    BOOST_TEST_CONTEXT(name) {
      std::string why;
      const PeerLane bare = lane_named(peer_lanes(environment), name);
      BOOST_TEST(!run_peer_lane(bare, 1, 0.001, why));
      BOOST_TEST(why == "no interop venv at " + (dir / "venv").string() +
                            " (scripts/ci/bootstrap.sh creates it with pinned PyPI packages)");
    }
  }
  // interop_venv.sh leaves the reason it could not create one beside it.
  std::ofstream(dir / "venv.unavailable") << "pip could not reach the index\nmore\n";
  const PeerLane said = lane_named(peer_lanes(environment), "onnxruntime lm");
  BOOST_TEST(contains(said.unavailable, "; it said: pip could not reach the index)"),
             said.unavailable);
}

BOOST_AUTO_TEST_CASE(onnxruntime_lane_says_why_without_the_volta_cli) {
  const ScratchDir dir("peer-lanes-test");
  fs::create_directories(dir / "venv/bin");
  std::ofstream(dir / "venv/bin/python3").put('\n');
  PeerEnvironment environment = peer_environment();
  environment.interop_venv = dir / "venv";
  environment.volta_cli = dir / "volta";
  const PeerLane lane = lane_named(peer_lanes(environment), "onnxruntime lm");
  BOOST_TEST(lane.unavailable == "no volta CLI at " + (dir / "volta").string() +
                                     " to export the model (build it, or set VOLTA_CLI)");
}

BOOST_AUTO_TEST_CASE(every_lane_says_why_without_its_script) {
  const ScratchDir dir("peer-lanes-test");
  PeerEnvironment environment = peer_environment();
  environment.peers_dir = dir.path();
  for (const PeerLane& lane : peer_lanes(environment)) {
    BOOST_TEST_CONTEXT(lane.name) {
      if (contains(lane.unavailable, "no interop venv")) continue;
      BOOST_TEST(lane.unavailable.starts_with("no peer script " + dir.path().string()),
                 lane.unavailable);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_lane_whose_module_is_not_importable_is_skipped) {
  const PeerLane lane{.name = "nothing",
                      .python = "python3",
                      .module = "volta_no_such_module_for_tests",
                      .command = {"/no/such/script.py"}};
  std::string why;
  BOOST_TEST(!run_peer_lane(lane, 1, 0.001, why));
  BOOST_TEST(why == "volta_no_such_module_for_tests not importable by python3");
}

// A lane that writes a sample and fails: its sample is kept, its failure said.
BOOST_AUTO_TEST_CASE(a_failing_lane_keeps_what_it_wrote_and_says_how_it_failed) {
  const ScratchDir dir("peer-lanes-test");
  std::ofstream(dir / "peer.py") << R"py(import sys
args = sys.argv[1:]
path = next(a.split("=", 1)[1] for a in args if a.startswith("--volta_samples="))
assert args[args.index("--repetitions") + 1] == "2", args
assert args[args.index("--min-time") + 1] == "0.25", args
with open(path, "w") as out:
    out.write("sample\tpeer:fake:lm/infer/threads:1\t0\t0.002\t10\tfake 1\t1\t62.9\t\t\t\n")
print("fake peer: out of luck", file=sys.stderr)
sys.exit(1)
)py";
  const PeerLane lane{.name = "fake lm",
                      .mirrors = "lm/",
                      .python = "python3",
                      .module = "sys",
                      .command = {(dir / "peer.py").string()}};
  std::string why;
  const std::optional<PassOutcome> out = run_peer_lane(lane, 2, 0.25, why);
  BOOST_REQUIRE(out);
  BOOST_REQUIRE_EQUAL(out->samples.samples.size(), 1U);
  BOOST_TEST(out->samples.samples[0].benchmark == "peer:fake:lm/infer/threads:1");
  BOOST_TEST(out->samples.samples[0].threads == 1);
  BOOST_TEST(contains(out->failure, "fake lm peer lane exit 1"), out->failure);
  BOOST_TEST(contains(out->failure, "fake peer: out of luck"), out->failure);
}

// A lane that selects is told the peer keys of the selected benchmarks it mirrors, and only
// those: the run's other benchmarks are not its business.
BOOST_AUTO_TEST_CASE(a_selecting_lane_is_told_the_benchmarks_it_mirrors) {
  const ScratchDir dir("peer-lanes-test");
  std::ofstream(dir / "peer.py") << R"py(import sys
args = sys.argv[1:]
path = next(a.split("=", 1)[1] for a in args if a.startswith("--volta_samples="))
with open(path, "w") as out:
    out.write("sample\tpeer:fake:" + args[args.index("--benchmarks") + 1] + "\t0\t0.5\t1\tf\t1\t1\t\t\t\n")
)py";
  PeerLane lane{.name = "fake f32_gemm",
                .mirrors = "f32_gemm",
                .python = "python3",
                .module = "sys",
                .command = {(dir / "peer.py").string()},
                .selects = true};
  std::string why;
  const std::vector<std::string> selected = {"lm/infer/threads:1/real_time",
                                             "f32_gemm/avx512/size:64/threads:1/real_time",
                                             "f32_gemm_mlp/avx2fma/up/tokens:64/d:64/threads:2"};
  const std::optional<PassOutcome> out = run_peer_lane(lane, 1, 0.01, why, selected);
  BOOST_REQUIRE(out);
  BOOST_REQUIRE_EQUAL(out->samples.samples.size(), 1U);
  BOOST_TEST(out->samples.samples[0].benchmark ==
             "peer:fake:f32_gemm/size:64/threads:1,f32_gemm_mlp/up/tokens:64/d:64/threads:2");
}

BOOST_AUTO_TEST_SUITE_END()

// Runs `lane` for two repetitions and checks its samples mirror `benchmarks` (Volta's names)
// at threads 1 and 2; prints the SKIPPED line and returns when the lane cannot run here.
void check_real_lane(const std::string& name, const std::vector<std::string>& benchmarks) {
  const PeerLane lane = lane_named(peer_lanes(peer_environment()), name);
  std::string why;
  const std::optional<PassOutcome> out = run_peer_lane(lane, 2, 0.01, why);
  if (!out) {
    std::cout << "SKIPPED: " << why << std::endl;
    return;
  }
  BOOST_TEST_REQUIRE(out->failure.empty(), out->failure);
  std::multiset<std::string> keys;
  for (const PerfSample& s : out->samples.samples) {
    BOOST_TEST_CONTEXT(s.benchmark) {
      BOOST_TEST(s.benchmark.starts_with(kPeerPrefix));
      BOOST_TEST(s.seconds > 0);
      BOOST_TEST(s.gflops.value_or(0) > 0);
      BOOST_TEST(s.benchmark.ends_with("/threads:" + std::to_string(s.threads)));
      keys.insert(perf_peer_key(s.benchmark));
    }
  }
  std::multiset<std::string> expected;
  for (const std::string& benchmark : benchmarks) {
    for (int threads : {1, 2}) {
      const std::string volta = benchmark + "/threads:" + std::to_string(threads) + "/real_time";
      expected.insert(perf_peer_key(volta));
      expected.insert(perf_peer_key(volta));
    }
  }
  BOOST_TEST(keys == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE(real_onnxruntime)
BOOST_AUTO_TEST_CASE(times_the_exported_model_in_onnx_runtime) {
  check_real_lane("onnxruntime lm", {"lm/infer"});
}
BOOST_AUTO_TEST_SUITE_END()

// Every shape gemm_peer.py times by default, as volta-perf names them (ISA left out).
std::vector<std::string> gemm_peer_shapes() {
  std::vector<std::string> shapes;
  for (int size : {64, 256, 512, 1024, 2048}) {
    shapes.push_back("f32_gemm/size:" + std::to_string(size));
  }
  for (const char* product : {"up", "down", "qkv"}) {
    for (int tokens : {64, 512}) {
      for (int width : {64, 256, 512, 768}) {
        shapes.push_back("f32_gemm_mlp/" + std::string(product) +
                         "/tokens:" + std::to_string(tokens) + "/d:" + std::to_string(width));
      }
    }
  }
  return shapes;
}

BOOST_AUTO_TEST_SUITE(real_blas)
BOOST_AUTO_TEST_CASE(times_the_gemms_in_openblas) {
  check_real_lane("openblas f32_gemm", gemm_peer_shapes());
}
BOOST_AUTO_TEST_CASE(times_the_gemms_in_mlas) {
  check_real_lane("mlas f32_gemm", gemm_peer_shapes());
}
BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(real_torch)
BOOST_AUTO_TEST_CASE(times_the_language_model_in_pytorch) {
  check_real_lane("torch lm", {"lm/train_step", "lm/infer"});
}
BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace volta::audit
