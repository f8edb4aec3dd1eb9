#define BOOST_TEST_MODULE lm_peer
// perf/peers/lm_peer.py, the language model's peer lanes: its arguments, its exit statuses,
// the model it has the volta CLI export, and the sample lines it writes, against fake
// onnxruntime and numpy modules (the fast lane's python3 has neither). Its schedule and batch
// order against Volta's own. The real runtimes run in peer_lanes_test.

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "peer_script_support.h"
#include "volta/model/transformer_lm.h"
#include "volta/train/language_model_training.h"
#include "volta/train/token_data.h"

namespace {

namespace fs = std::filesystem;
using volta::testing::contains;
using volta::testing::fields_of;
using volta::testing::lines_of;
using volta::testing::ProcessResult;
using volta::testing::quoted;
using volta::testing::ScratchDir;
using volta::testing::shell;

constexpr const char* kData = "/usr/share/common-licenses/GPL-3";
// The GEMM flops of one forward of the reference config, as perf/lm_benchmark.cpp counts them:
// 512 tokens, per layer 2 (4 * 64^2 + 2 * 32 * 64 + 2 * 64 * 256), and the head 2 * 64 * 256.
constexpr double kForwardFlops =
    2 * 2.0 * 512 * (4 * 64 * 64 + 2 * 32 * 64 + 2 * 64 * 256) + 2.0 * 512 * 64 * 256;

// What the script calls of ONNX Runtime, each session logged with its thread counts, provider
// and the size of the model file; the input shape from FAKE_SHAPE.
constexpr std::string_view kFakeOnnxRuntime = R"py(import os
__version__ = "0.0-fake"
class ExecutionMode:
    ORT_SEQUENTIAL = "sequential"
class SessionOptions:
    intra_op_num_threads = 0
    inter_op_num_threads = 0
    execution_mode = None
class _Input:
    def __init__(self, name, shape):
        self.name, self.shape = name, shape
def _log(line):
    with open(os.environ["FAKE_LOG"], "a") as log:
        log.write(line + "\n")
class InferenceSession:
    def __init__(self, path, sess_options=None, providers=None):
        o = sess_options
        _log(f"session {o.intra_op_num_threads} {o.inter_op_num_threads} {o.execution_mode} "
             f"{providers} {os.path.getsize(path)}")
        self.shape = [int(n) for n in os.environ.get("FAKE_SHAPE", "16,32").split(",")]
        self.fed = False
    def get_inputs(self):
        return [_Input("tokens", self.shape)]
    def run(self, names, feed):
        if not self.fed:
            _log("feed " + ",".join(str(len(row)) for row in feed["tokens"]) + " " +
                 ",".join(str(t) for t in feed["tokens"][1]))
            self.fed = True
        return [None]
)py";
constexpr std::string_view kFakeNumpy = R"py(int64 = "int64"
def array(rows, dtype=None):
    return rows
)py";

class Sandbox {
 public:
  // `name/__init__.py` with `source`, first on PYTHONPATH for run().
  void fake(const std::string& name, std::string_view source) {
    fs::create_directories(dir_ / "fake" / name);
    std::ofstream(dir_ / "fake" / name / "__init__.py") << source;
  }
  ProcessResult run(const std::string& arguments, const std::string& environment = "") const {
    std::string env = "FAKE_LOG=" + quoted(log().string()) + " " + environment + " ";
    if (fs::exists(dir_ / "fake")) env += "PYTHONPATH=" + quoted((dir_ / "fake").string()) + " ";
    return shell(env + "python3 " + quoted(LM_PEER_SCRIPT) + " " + arguments);
  }
  std::string samples_flag() const { return "--volta_samples=" + quoted(samples().string()); }
  fs::path samples() const { return dir_ / "samples.tsv"; }
  fs::path log() const { return dir_ / "runtime.log"; }

 private:
  ScratchDir dir_{"lm-peer-test"};
};

std::string onnxruntime_arguments(const Sandbox& box, const std::string& volta = VOLTA_CLI) {
  return "--runtime onnxruntime --volta " + quoted(volta) + " " + box.samples_flag();
}

BOOST_AUTO_TEST_SUITE(fake_runtimes)

BOOST_AUTO_TEST_CASE(onnxruntime_lane_times_the_exported_model_per_thread_count) {
  Sandbox box;
  box.fake("onnxruntime", kFakeOnnxRuntime);
  box.fake("numpy", kFakeNumpy);
  const ProcessResult r =
      box.run(onnxruntime_arguments(box) + " --repetitions 3 --min-time 0.0005 --threads 1,2");
  BOOST_TEST_REQUIRE(r.status == 0, r.output);
  BOOST_TEST(contains(r.output, "6 samples of onnxruntime 0.0-fake CPU written to"), r.output);
  const std::vector<std::string> lines = lines_of(box.samples());
  BOOST_REQUIRE_EQUAL(lines.size(), 6U);
  std::map<std::string, int> per_benchmark;
  for (size_t i = 0; i < lines.size(); ++i) {
    BOOST_TEST_CONTEXT(lines[i]) {
      const std::vector<std::string> f = fields_of(lines[i]);
      BOOST_REQUIRE_EQUAL(f.size(), 11U);
      BOOST_TEST(f[0] == "sample");
      const std::string threads = i % 2 == 0 ? "1" : "2";  // interleaved
      BOOST_TEST(f[1] == "peer:onnxruntime:lm/infer/threads:" + threads);
      BOOST_TEST(std::stoi(f[2]) == per_benchmark[f[1]]++);
      const double seconds = std::stod(f[3]);
      BOOST_TEST(seconds > 0);
      BOOST_TEST(seconds * std::stod(f[4]) >= 0.0005);
      BOOST_TEST(f[5] == "onnxruntime 0.0-fake CPU");
      BOOST_TEST(f[6] == threads);
      BOOST_TEST(std::stod(f[7]) == kForwardFlops / seconds / 1e9,
                 boost::test_tools::tolerance(1e-6));
      BOOST_TEST((f[8].empty() && f[9].empty() && f[10].empty()));
    }
  }
  // One session per thread count, one inter-op thread, sequential, on the CPU provider, of
  // the model the volta CLI exported; each fed row 1 of step 0's windows (bytes 32..63).
  std::ifstream data(kData, std::ios::binary);
  std::string row(32, '\0');
  data.seekg(32);
  data.read(row.data(), 32);
  std::string feed = "feed 32";
  for (int i = 1; i < 16; ++i) feed += ",32";
  feed += " ";
  for (size_t i = 0; i < row.size(); ++i) {
    feed += (i > 0 ? "," : "") + std::to_string(static_cast<unsigned char>(row[i]));
  }
  const std::vector<std::string> log = lines_of(box.log());
  BOOST_REQUIRE_EQUAL(log.size(), 4U);
  for (const std::string threads : {"1", "2"}) {
    const size_t at = threads == "1" ? 0 : 2;
    BOOST_TEST(
        log[at].starts_with("session " + threads + " 1 sequential ['CPUExecutionProvider'] "),
        log[at]);
    BOOST_TEST(std::stoll(log[at].substr(log[at].rfind(' ') + 1)) > 100000, log[at]);  // weights
    BOOST_TEST(log[at + 1] == feed);
  }
}

BOOST_AUTO_TEST_CASE(refuses_a_model_of_other_sizes) {
  Sandbox box;
  box.fake("onnxruntime", kFakeOnnxRuntime);
  box.fake("numpy", kFakeNumpy);
  const ProcessResult r = box.run(onnxruntime_arguments(box), "FAKE_SHAPE=1,32");
  BOOST_TEST(r.status == 1, r.output);
  BOOST_TEST(contains(r.output, "has inputs [('tokens', [1, 32])], not tokens [16, 32]"), r.output);
  BOOST_TEST(lines_of(box.samples()).empty());
}

BOOST_AUTO_TEST_CASE(says_which_volta_command_failed) {
  Sandbox box;
  box.fake("onnxruntime", kFakeOnnxRuntime);
  box.fake("numpy", kFakeNumpy);
  const ProcessResult r = box.run(onnxruntime_arguments(box, "/bin/false"));
  BOOST_TEST(r.status == 1, r.output);
  BOOST_TEST(contains(r.output, "/bin/false train --data " + std::string(kData)), r.output);
  BOOST_TEST(contains(r.output, "exited 1"), r.output);
  const ProcessResult missing = box.run(onnxruntime_arguments(box, "/no/such/volta"));
  BOOST_TEST(missing.status == 1, missing.output);
  BOOST_TEST(contains(missing.output, "cannot run /no/such/volta train"), missing.output);
}

BOOST_AUTO_TEST_CASE(says_when_the_data_cannot_be_read) {
  Sandbox box;
  box.fake("onnxruntime", kFakeOnnxRuntime);
  box.fake("numpy", kFakeNumpy);
  const ProcessResult r = box.run(onnxruntime_arguments(box) + " --data /no/such/file");
  BOOST_TEST(r.status == 1, r.output);
  BOOST_TEST(contains(r.output, "cannot read the data /no/such/file"), r.output);
}

BOOST_AUTO_TEST_CASE(exits_3_with_a_reason_when_the_runtime_is_missing) {
  for (const std::string runtime : {"torch", "onnxruntime"}) {
    BOOST_TEST_CONTEXT(runtime) {
      Sandbox box;
      box.fake(runtime, "raise ImportError(\"No module named '" + runtime + "'\")\n");
      const ProcessResult r = box.run("--runtime " + runtime + " --volta " + quoted(VOLTA_CLI) +
                                      " " + box.samples_flag());
      BOOST_TEST(r.status == 3, r.output);
      BOOST_TEST(contains(r.output, runtime + " is not importable by"), r.output);
      BOOST_TEST(contains(r.output, "language-model lane is skipped"), r.output);
      BOOST_TEST(!fs::exists(box.samples()));
    }
  }
}

BOOST_AUTO_TEST_CASE(refuses_bad_arguments_with_status_2) {
  Sandbox box;
  const std::string samples = box.samples_flag();
  for (const std::string& arguments :
       {samples, std::string("--runtime torch"), "--runtime tensorflow " + samples,
        "--runtime onnxruntime " + samples, "--runtime torch --repetitions 0 " + samples,
        "--runtime torch --min-time 0 " + samples, "--runtime torch --threads 1,x " + samples,
        "--runtime torch --unknown " + samples}) {
    BOOST_TEST_CONTEXT(arguments) {
      const ProcessResult r = box.run(arguments);
      BOOST_TEST(r.status == 2, r.output);
      BOOST_TEST(contains(r.output, "usage: lm_peer.py"), r.output);
    }
  }
  BOOST_TEST(contains(box.run("--runtime onnxruntime " + samples).output,
                      "--runtime onnxruntime needs --volta CLI"));
}

BOOST_AUTO_TEST_SUITE_END()

// The script's copies of Volta's training run: a change to default_run or make_batch that the
// peer does not follow fails here.
BOOST_AUTO_TEST_SUITE(mirrors_volta)

// `python3 -c CODE` with the script importable as lm_peer; its standard output.
std::string python(const std::string& code) {
  const std::string dir = fs::path(LM_PEER_SCRIPT).parent_path().string();
  const ProcessResult r =
      shell("PYTHONPATH=" + quoted(dir) + " python3 -c " + quoted("import lm_peer\n" + code));
  BOOST_TEST_REQUIRE(r.status == 0, r.output);
  return r.output;
}

BOOST_AUTO_TEST_CASE(learning_rates_are_default_runs) {
  const volta::train::Schedule schedule = volta::train::default_run(1000).optimizer.schedule;
  const std::vector<int64_t> steps = {1, 2, 99, 100, 101, 500, 999, 1000, 1001, 5000};
  std::string code = "for s in (";
  for (const int64_t s : steps) code += std::to_string(s) + ",";
  code += "): print(repr(lm_peer.learning_rate(s)))";
  std::istringstream out(python(code));
  for (const int64_t step : steps) {
    BOOST_TEST_CONTEXT("step " << step) {
      double rate = 0;
      BOOST_REQUIRE(out >> rate);
      BOOST_TEST(rate == schedule.learning_rate(step), boost::test_tools::tolerance(1e-12));
    }
  }
}

BOOST_AUTO_TEST_CASE(windows_are_make_batchs) {
  const std::vector<uint8_t> data = volta::train::read_token_file(kData);
  const volta::model::TransformerConfig& c = volta::model::kTinyTransformer;
  const volta::train::BatchOrder order = volta::train::default_run(1000).order;
  for (const int64_t step : {0, 1, 1234}) {
    BOOST_TEST_CONTEXT("step " << step) {
      const volta::train::TokenBatch batch =
          volta::train::make_batch(data, order, c.batch, c.seq, c.vocab, step);
      std::istringstream out(python("data = open(" + quoted(kData) + ", 'rb').read()\n" +
                                    "for row in lm_peer.window_rows(data, " + std::to_string(step) +
                                    "): print(*row)"));
      for (int64_t b = 0; b < c.batch; ++b) {
        for (int64_t i = 0; i <= c.seq; ++i) {
          int64_t byte = -1;
          BOOST_REQUIRE(out >> byte);
          const volta::Tensor& from = i < c.seq ? batch.tokens : batch.targets;
          const int64_t at = b * c.seq + (i < c.seq ? i : c.seq - 1);
          BOOST_TEST(byte == from.data_as<int64_t>()[at]);
        }
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
