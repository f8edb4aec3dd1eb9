#include "perf_run.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "perf_run_data.h"
#include "tool_paths.h"
#include "volta/error.h"

namespace volta::audit {
namespace {

// A temporary file, removed with the object.
class TempFile {
 public:
  TempFile() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "volta-perf-samples-XXXXXX").string();
    const int fd = mkstemp(pattern.data());
    if (fd < 0) fail(ErrorCode::InvalidArgument, "cannot create a temporary sample file");
    close(fd);
    path_ = pattern;
  }
  ~TempFile() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string format_seconds(double seconds) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", seconds);
  return buffer;
}

std::string tail_of(const std::string& text) {
  constexpr size_t kTail = 2000;
  return text.size() <= kTail ? text : "..." + text.substr(text.size() - kTail);
}

SampleFile read_samples(const std::string& path, const std::string& producer, int pass,
                        int process) {
  std::ifstream in(path);
  if (!in) fail(ErrorCode::InvalidArgument, producer + " wrote no sample file " + path);
  try {
    return parse_sample_file(in, pass, process);
  } catch (const std::runtime_error& e) {
    fail(ErrorCode::InvalidArgument, producer + " sample file " + path + " " + e.what());
  }
}

// Why the interop venv's lanes cannot run, or nothing when its python is there.
std::string interop_venv_missing(const PeerEnvironment& environment) {
  if (std::filesystem::exists(environment.interop_venv / "bin/python3")) return {};
  std::string why = "no interop venv at " + environment.interop_venv.string() +
                    " (scripts/ci/bootstrap.sh creates it with pinned PyPI packages";
  const std::filesystem::path reason = environment.interop_venv.string() + ".unavailable";
  if (std::ifstream in(reason); in) {
    const std::string said{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    why += "; it said: " + said.substr(0, said.find('\n'));
  }
  return why + ")";
}

}  // namespace

std::string exact_name_filter(const std::vector<std::string>& names) {
  std::string filter = "^(";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) filter += '|';
    for (char c : names[i]) {
      if (std::strchr("\\^$.|?*+()[]{}", c) != nullptr) filter += '\\';
      filter += c;
    }
  }
  return filter + ")$";
}

PerfBinary::PerfBinary(std::filesystem::path path) : path_(std::move(path)) {
  if (access(path_.c_str(), X_OK) != 0) {
    fail(ErrorCode::InvalidArgument,
         "perf binary " + path_.string() +
             " is not an executable file (build it: cmake --build --preset release --target "
             "volta-perf; or pass --perf-binary PATH)");
  }
}

BinaryDescription PerfBinary::describe() const {
  const ProcessOutcome out = run_process({path_.string(), "--volta_describe"});
  if (!out.ok()) {
    fail(ErrorCode::InvalidArgument, path_.string() + " --volta_describe failed (" +
                                         out.describe() + "): " + tail_of(out.output));
  }
  return parse_binary_description(out.output);
}

std::vector<std::string> PerfBinary::list(const std::string& filter) const {
  std::vector<std::string> argv = {path_.string(), "--benchmark_list_tests=true"};
  if (!filter.empty()) argv.push_back("--benchmark_filter=" + filter);
  const ProcessOutcome out = run_process(argv);
  if (!out.ok()) {
    fail(ErrorCode::InvalidArgument, path_.string() + " --benchmark_list_tests failed (" +
                                         out.describe() + "): " + tail_of(out.output));
  }
  std::vector<std::string> names;
  std::istringstream in(out.output);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) names.push_back(line);
  }
  return names;
}

PassOutcome PerfBinary::run(const PassOptions& options) const {
  const TempFile samples;
  std::vector<std::string> argv = {
      path_.string(),
      "--volta_samples=" + samples.path(),
      "--benchmark_repetitions=" + std::to_string(options.repetitions),
      "--benchmark_enable_random_interleaving=true",
      "--benchmark_min_time=" + format_seconds(options.min_time),
  };
  if (!options.filter.empty()) argv.push_back("--benchmark_filter=" + options.filter);
  const ProcessOutcome out = run_process(argv);
  PassOutcome result;
  result.samples =
      read_samples(samples.path(), path_.filename().string(), options.pass, options.process);
  if (!out.ok()) {
    result.failure = path_.filename().string() + " " + out.describe() + ": " + tail_of(out.output);
  }
  return result;
}

std::filesystem::path system_python() {
  const std::filesystem::path debian = "/usr/bin/python3";
  return std::filesystem::exists(debian) ? debian : std::filesystem::path("python3");
}

PeerEnvironment peer_environment() {
  return {.peers_dir = source_dir() / "perf/peers",
          .system_python = system_python(),
          .interop_venv = interop_venv_path(),
          .volta_cli = volta_cli_path(),
          .lm_data = "/usr/share/common-licenses/GPL-3"};
}

std::vector<PeerLane> peer_lanes(const PeerEnvironment& environment) {
  namespace fs = std::filesystem;
  const std::string torch_gemm_script = (environment.peers_dir / "torch_peer.py").string();
  const std::string gemm_script = (environment.peers_dir / "gemm_peer.py").string();
  const std::string lm_script = (environment.peers_dir / "lm_peer.py").string();
  const std::string data = environment.lm_data.string();
  const fs::path venv_python = environment.interop_venv / "bin/python3";
  const std::string venv_missing = interop_venv_missing(environment);
  std::vector<PeerLane> lanes = {
      {.name = "torch f32_gemm",
       .mirrors = "f32_gemm/",
       .python = environment.system_python,
       .module = "torch",
       .command = {torch_gemm_script},
       .selects = true},
      {.name = "openblas f32_gemm",
       .mirrors = "f32_gemm",
       .python = venv_python,
       .module = "numpy",
       .command = {gemm_script, "--library", "openblas"},
       .unavailable = venv_missing,
       .selects = true},
      {.name = "mlas f32_gemm",
       .mirrors = "f32_gemm",
       .python = venv_python,
       .module = "onnxruntime",
       .command = {gemm_script, "--library", "mlas"},
       .unavailable = venv_missing,
       .selects = true},
      {.name = "torch lm",
       .mirrors = "lm/",
       .python = environment.system_python,
       .module = "torch",
       .command = {lm_script, "--runtime", "torch", "--data", data}},
      {.name = "onnxruntime lm",
       .mirrors = "lm/infer/",
       .python = venv_python,
       .module = "onnxruntime",
       .command = {lm_script, "--runtime", "onnxruntime", "--data", data, "--volta",
                   environment.volta_cli.string()},
       .unavailable = venv_missing},
  };
  PeerLane& onnxruntime = lanes.back();
  if (onnxruntime.unavailable.empty() && !fs::exists(environment.volta_cli)) {
    onnxruntime.unavailable = "no volta CLI at " + environment.volta_cli.string() +
                              " to export the model (build it, or set VOLTA_CLI)";
  }
  for (PeerLane& lane : lanes) {
    if (lane.unavailable.empty() && !fs::exists(lane.command.front())) {
      lane.unavailable = "no peer script " + lane.command.front();
    }
  }
  return lanes;
}

bool mirrors_any(const PeerLane& lane, const std::vector<std::string>& benchmarks) {
  return std::ranges::any_of(
      benchmarks, [&](const std::string& name) { return name.starts_with(lane.mirrors); });
}

std::optional<PassOutcome> run_peer_lane(const PeerLane& lane, int repetitions, double min_time,
                                         std::string& why,
                                         const std::vector<std::string>& selected) {
  if (!lane.unavailable.empty()) {
    why = lane.unavailable;
    return std::nullopt;
  }
  const std::string python = lane.python.string();
  if (!run_process({python, "-c", "import " + lane.module}).ok()) {
    why = lane.module + " not importable by " + python;
    return std::nullopt;
  }
  const TempFile samples;
  std::vector<std::string> argv = {python};
  argv.insert(argv.end(), lane.command.begin(), lane.command.end());
  argv.insert(argv.end(), {"--volta_samples=" + samples.path(), "--repetitions",
                           std::to_string(repetitions), "--min-time", format_seconds(min_time)});
  if (lane.selects && !selected.empty()) {
    std::string keys;
    for (const std::string& name : selected) {
      if (!name.starts_with(lane.mirrors)) continue;
      if (!keys.empty()) keys += ',';
      keys += perf_peer_key(name);
    }
    argv.insert(argv.end(), {"--benchmarks", keys});
  }
  const ProcessOutcome out = run_process(argv);
  PassOutcome result;
  result.samples = read_samples(samples.path(), "the " + lane.name + " peer lane", 1, 0);
  if (!out.ok()) {
    result.failure = lane.name + " peer lane " + out.describe() + ": " + tail_of(out.output);
  }
  return result;
}

}  // namespace volta::audit
