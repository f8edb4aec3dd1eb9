#pragma once
// Running benchmark processes for `volta-audit perf`: volta-perf (and the peer lane's script)
// in fresh processes started with posix_spawn, their sample files read back.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "perf_machine.h"
#include "perf_samples.h"
#include "volta/conformance/process.h"

namespace volta::audit {

using conformance::ProcessOutcome;
using conformance::run_process;

// A --benchmark_filter that selects exactly `names`: "^(a|b)$" with regex metacharacters
// escaped.
std::string exact_name_filter(const std::vector<std::string>& names);

struct PassOptions {
  int repetitions = 9;
  double min_time = 0.05;   // seconds per repetition
  std::string filter = {};  // empty: every benchmark
  int pass = 1;
  int process = 0;
};

struct PassOutcome {
  SampleFile samples = {};
  std::string failure = {};  // empty when the process exited 0; samples written before it remain
};

class PerfBinary {
 public:
  explicit PerfBinary(std::filesystem::path path);
  const std::filesystem::path& path() const { return path_; }

  BinaryDescription describe() const;
  // The names of the benchmarks `filter` selects (--benchmark_list_tests).
  std::vector<std::string> list(const std::string& filter) const;
  // One process: every selected benchmark, repetitions interleaved at random.
  PassOutcome run(const PassOptions& options) const;

 private:
  std::filesystem::path path_ = {};
};

// A peer lane: a script of perf/peers that times another library on what some Volta
// benchmarks time and writes sample lines named "peer:LIBRARY:" + the Volta benchmark's name
// (perf_samples.h), which the perf report turns into Volta's ratio to the library.
struct PeerLane {
  std::string name = {};              // "torch f32_gemm", "onnxruntime lm": what messages call it
  std::string mirrors = {};           // the prefix of the names of the Volta benchmarks it mirrors
  std::filesystem::path python = {};  // the interpreter that runs the script
  std::string module = {};            // what the interpreter must import for it to run
  std::vector<std::string> command = {};  // the script and its own arguments
  std::string unavailable = {};           // not empty: it cannot run here, and why
  // The script takes `--benchmarks KEY,...` (perf_peer_key of the selected benchmarks it
  // mirrors) and times only those; otherwise it times everything it knows.
  bool selects = false;
};

// Where the lanes find what they need.
struct PeerEnvironment {
  std::filesystem::path peers_dir = {};      // perf/peers
  std::filesystem::path system_python = {};  // PyTorch's python: system_python()
  std::filesystem::path interop_venv = {};   // ONNX Runtime's python: <venv>/bin/python3
  std::filesystem::path volta_cli = {};      // exports the model ONNX Runtime runs
  std::filesystem::path lm_data = {};        // the language model's training bytes
};
// This build's: the source tree's perf/peers, system_python(), interop_venv_path(),
// volta_cli_path() and GPL-3 (the data of perf/lm_benchmark.cpp).
PeerEnvironment peer_environment();

// The interpreter of Debian's python3-torch, the PyTorch peer: /usr/bin/python3 where it
// exists (a python3 first on PATH, such as a pyenv shim, has no Debian packages), else
// python3 from PATH. Every torch lane and test finds it here.
std::filesystem::path system_python();

// Every lane, in report order: torch on the f32 GEMMs (perf/peers/torch_peer.py) and on the
// tiny transformer's training step and inference (perf/peers/lm_peer.py), both in
// system_python(); ONNX Runtime on the inference of the model `volta export` writes, in the interop
// venv. A lane whose interpreter, script or CLI is missing says so in `unavailable`.
std::vector<PeerLane> peer_lanes(const PeerEnvironment& environment);

// Whether one of `benchmarks` is a benchmark `lane` mirrors: a lane mirroring nothing the run
// selected is not run.
bool mirrors_any(const PeerLane& lane, const std::vector<std::string>& benchmarks);

// `PYTHON SCRIPT ARGS... --volta_samples=FILE --repetitions N --min-time S` in a fresh
// process, with `--benchmarks KEY,...` for a lane that selects and the run's `selected`
// benchmarks (empty: everything). nullopt with `why` set when the lane cannot run here:
// `unavailable`, or its module is not importable by its interpreter.
std::optional<PassOutcome> run_peer_lane(const PeerLane& lane, int repetitions, double min_time,
                                         std::string& why,
                                         const std::vector<std::string>& selected = {});

}  // namespace volta::audit
