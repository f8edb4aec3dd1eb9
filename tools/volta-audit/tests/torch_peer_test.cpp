#define BOOST_TEST_MODULE torch_peer
// perf/peers/torch_peer.py, the perf double pass's torch peer lane: its arguments, its exit
// statuses and the sample lines it writes, against a fake torch module (the machines that run
// the fast lane have no PyTorch). The real_torch suite runs the script on the real torch and is
// reported SKIPPED by CTest when system_python() (Debian's python3) cannot import it.

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "peer_script_support.h"
#include "perf_run.h"

namespace {

namespace fs = std::filesystem;
using volta::testing::contains;
using volta::testing::fields_of;
using volta::testing::lines_of;
using volta::testing::ProcessResult;
using volta::testing::quoted;
using volta::testing::ScratchDir;
using volta::testing::shell;

// A fake `torch` package: just what the script calls, with set_num_threads logged.
constexpr std::string_view kFakeTorch = R"py(import os
__version__ = "0.0-fake"
float32 = "float32"
class _Tensor:
    def __mul__(self, other): return self
    def __sub__(self, other): return self
class Generator:
    def manual_seed(self, seed): return self
def rand(*shape, generator=None, dtype=None): return _Tensor()
def empty(*shape, dtype=None): return _Tensor()
def mm(a, b, out=None): return out
def set_num_threads(n):
    with open(os.environ["FAKE_TORCH_LOG"], "a") as log:
        log.write(f"threads {n}\n")
)py";

constexpr std::string_view kMissingTorch = "raise ImportError(\"No module named 'torch'\")\n";

class Sandbox {
 public:
  // `torch/__init__.py` with `source`, first on PYTHONPATH for run().
  void fake_torch(std::string_view source) {
    fs::create_directories(dir_ / "fake" / "torch");
    std::ofstream(dir_ / "fake" / "torch" / "__init__.py") << source;
  }
  ProcessResult run(const std::string& arguments) const {
    std::string env = "FAKE_TORCH_LOG=" + quoted(log().string()) + " ";
    if (fs::exists(dir_ / "fake")) env += "PYTHONPATH=" + quoted((dir_ / "fake").string()) + " ";
    return shell(env + quoted(volta::audit::system_python().string()) + " " +
                 quoted(TORCH_PEER_SCRIPT) + " " + arguments);
  }
  fs::path samples() const { return dir_ / "samples.tsv"; }
  fs::path log() const { return dir_ / "torch.log"; }

 private:
  ScratchDir dir_{"torch-peer-test"};
};

// Every line is a well-formed volta-perf sample line (perf/perf_main.cpp's format) of a torch
// GEMM; returns how many samples each benchmark got.
std::map<std::string, int> check_sample_lines(const std::vector<std::string>& lines,
                                              const std::string& variant_prefix) {
  std::map<std::string, int> per_benchmark;
  for (const std::string& line : lines) {
    BOOST_TEST_CONTEXT(line) {
      const std::vector<std::string> f = fields_of(line);
      BOOST_REQUIRE_EQUAL(f.size(), 11U);
      BOOST_TEST(f[0] == "sample");
      BOOST_TEST(f[1].starts_with("peer:torch:f32_gemm/size:"));
      BOOST_TEST(std::stoi(f[2]) == per_benchmark[f[1]]++);  // repetitions in order
      const double seconds = std::stod(f[3]);
      BOOST_TEST(seconds > 0);
      BOOST_TEST(std::stoll(f[4]) >= 1);
      BOOST_TEST(f[5].starts_with(variant_prefix));
      BOOST_TEST(f[1].ends_with("/threads:" + f[6]));
      const double size = std::stod(f[1].substr(f[1].find("size:") + 5));
      BOOST_TEST(std::stod(f[7]) == 2 * size * size * size / seconds / 1e9,
                 boost::test_tools::tolerance(1e-6));
      BOOST_TEST(f[8].empty());
      BOOST_TEST(f[9].empty());
      BOOST_TEST(f[10].empty());
    }
  }
  return per_benchmark;
}

BOOST_AUTO_TEST_SUITE(fake_torch)

BOOST_AUTO_TEST_CASE(writes_interleaved_sample_lines_per_size_and_thread_count) {
  Sandbox box;
  box.fake_torch(kFakeTorch);
  const ProcessResult r = box.run("--volta_samples=" + quoted(box.samples().string()) +
                                  " --repetitions 3 --min-time 0.0005 --sizes 8,16");
  BOOST_TEST_REQUIRE(r.status == 0, r.output);
  BOOST_TEST(contains(r.output, "12 samples of torch.mm written to"));
  const std::vector<std::string> lines = lines_of(box.samples());
  BOOST_REQUIRE_EQUAL(lines.size(), 12U);
  const std::map<std::string, int> per_benchmark = check_sample_lines(lines, "torch 0.0-fake mm");
  const std::map<std::string, int> expected = {{"peer:torch:f32_gemm/size:8/threads:1", 3},
                                               {"peer:torch:f32_gemm/size:8/threads:2", 3},
                                               {"peer:torch:f32_gemm/size:16/threads:1", 3},
                                               {"peer:torch:f32_gemm/size:16/threads:2", 3}};
  BOOST_TEST(per_benchmark == expected);
  // Interleaved: every shape's repetition 0 before any repetition 1.
  for (size_t i = 0; i < 4; ++i) BOOST_TEST(fields_of(lines[i])[2] == "0");
  // Each sample timed at least --min-time, in whole batches of iterations.
  for (const std::string& line : lines) {
    const std::vector<std::string> f = fields_of(line);
    BOOST_TEST(std::stod(f[3]) * std::stod(f[4]) >= 0.0005);
  }
  std::set<std::string> thread_counts;
  for (const std::string& line : lines_of(box.log())) thread_counts.insert(line);
  BOOST_TEST((thread_counts == std::set<std::string>{"threads 1", "threads 2"}));
}

BOOST_AUTO_TEST_CASE(exits_3_with_a_reason_when_torch_is_missing) {
  Sandbox box;
  box.fake_torch(kMissingTorch);
  const ProcessResult r = box.run("--volta_samples=" + quoted(box.samples().string()));
  BOOST_TEST(r.status == 3);
  BOOST_TEST(contains(r.output, "torch is not importable"), r.output);
  BOOST_TEST(!fs::exists(box.samples()));
}

BOOST_AUTO_TEST_CASE(refuses_bad_arguments_with_status_2) {
  Sandbox box;
  box.fake_torch(kFakeTorch);
  const std::string samples = "--volta_samples=" + quoted(box.samples().string());
  for (const std::string& arguments :
       {std::string("--repetitions 3"), samples + " --repetitions 0", samples + " --min-time -1",
        samples + " --sizes 8,x", samples + " --threads 0", samples + " --unknown"}) {
    BOOST_TEST_CONTEXT(arguments) {
      const ProcessResult r = box.run(arguments);
      BOOST_TEST(r.status == 2, r.output);
      BOOST_TEST(contains(r.output, "usage: torch_peer.py"), r.output);
    }
  }
  const ProcessResult help = box.run("--help");
  BOOST_TEST(help.status == 0);
  BOOST_TEST(contains(help.output, "--volta_samples FILE"), help.output);
  BOOST_TEST(contains(help.output, "--repetitions N"), help.output);
  BOOST_TEST(contains(help.output, "--min-time S"), help.output);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(real_torch)

// CTest marks this test SKIPPED when its output has the SKIPPED line (SKIP_REGULAR_EXPRESSION).
BOOST_AUTO_TEST_CASE(times_torch_mm_in_the_sample_format) {
  const std::string python = volta::audit::system_python().string();
  if (shell(quoted(python) + " -c 'import torch'").status != 0) {
    BOOST_TEST_MESSAGE("SKIPPED: torch is not importable by " + python +
                       "; the peer lane is off here");
    return;
  }
  Sandbox box;
  const ProcessResult r = box.run("--volta_samples=" + quoted(box.samples().string()) +
                                  " --repetitions 2 --min-time 0.01 --sizes 64");
  BOOST_TEST_REQUIRE(r.status == 0, r.output);
  const std::vector<std::string> lines = lines_of(box.samples());
  BOOST_REQUIRE_EQUAL(lines.size(), 4U);
  check_sample_lines(lines, "torch ");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
