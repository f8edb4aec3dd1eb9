#pragma once
// Internal to the training suite: the cases of each family (train_cases.cpp,
// checkpoint_cases.cpp) and what they share (training_suite.cpp, cli_process.cpp).

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "volta/conformance/training_suite.h"
#include "volta/model/checkpoint.h"
#include "volta/train/language_model_training.h"

namespace volta::conformance::training {

// One case of the suite before it is bound to a backend.
struct TrainingCase {
  std::string family, case_id, params;
  CaseBody body;
  std::string precondition = {};
};

// The peak live bytes of the reference config's plans: "training-step", "inference-batch1",
// "inference-batch16" (memory_budget.cpp), and the case that holds them to their budgets.
std::map<std::string, int64_t> reference_plan_peaks();
CaseOutcome memory_budget(const TrainingSuiteOptions& options);

void train_reload_cases(const TrainingSuiteOptions& options, std::vector<TrainingCase>& out);
void checkpoint_cases(const TrainingSuiteOptions& options, std::vector<TrainingCase>& out);

// --- Shared by the cases (training_suite.cpp) ---

// A fresh directory for one case under options.scratch, removed when the case ends.
class ScratchDir {
 public:
  ScratchDir(const TrainingSuiteOptions& options, const std::string& name);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::filesystem::path operator/(const std::string& file) const { return dir_ / file; }

 private:
  std::filesystem::path dir_;
};

std::string read_file(const std::filesystem::path& path);
std::vector<uint8_t> read_data(const TrainingSuiteOptions& options);
std::string sha256_hex_of_file(const std::filesystem::path& path);

CaseOutcome pass(std::string message);
CaseOutcome failed(std::string message);  // FailNumeric: a guarantee did not hold
CaseOutcome skipped(std::string message);

// The interop venv's python, or nullopt with why not.
std::optional<std::filesystem::path> interop_python(const TrainingSuiteOptions& options,
                                                    std::string& why_not);

// --- The `volta` CLI as a process (cli_process.cpp) ---

struct CliResult {
  int exit_code = -1;  // -1: killed by a signal
  std::string output;  // stdout and stderr merged
};
// Runs `volta ARGS...` to completion. Throws VoltaError when it cannot start.
CliResult run_volta(const TrainingSuiteOptions& options, const std::vector<std::string>& args);
// Runs any program to completion (python scripts).
CliResult run_program(const std::vector<std::string>& argv);

// `volta ARGS...` started in the background; kill_hard() sends SIGKILL and reaps it.
class BackgroundVolta {
 public:
  BackgroundVolta(const TrainingSuiteOptions& options, const std::vector<std::string>& args);
  ~BackgroundVolta();  // kills and reaps what is still running
  BackgroundVolta(const BackgroundVolta&) = delete;
  BackgroundVolta& operator=(const BackgroundVolta&) = delete;
  bool running();
  void kill_hard();
  int wait();  // the exit code, -1 when killed

 private:
  int pid_ = -1;
  int status_ = 0;
  bool reaped_ = false;
};

}  // namespace volta::conformance::training
