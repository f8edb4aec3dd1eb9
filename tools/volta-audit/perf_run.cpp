#include "perf_run.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

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

std::optional<PassOutcome> run_torch_peer(const std::filesystem::path& script, int repetitions,
                                          std::string& why) {
  if (!run_process({"python3", "-c", "import torch"}).ok()) {
    why = "torch not importable";
    return std::nullopt;
  }
  if (!std::filesystem::exists(script)) {
    why = "torch importable but no peer script " + script.string();
    return std::nullopt;
  }
  const TempFile samples;
  const ProcessOutcome out =
      run_process({"python3", script.string(), "--volta_samples=" + samples.path(), "--repetitions",
                   std::to_string(repetitions)});
  PassOutcome result;
  result.samples = read_samples(samples.path(), "the torch peer", 1, 0);
  if (!out.ok()) result.failure = "torch peer " + out.describe() + ": " + tail_of(out.output);
  return result;
}

}  // namespace volta::audit
