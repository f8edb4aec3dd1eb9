#include "volta/conformance/training_suite.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

#include "training_cases.h"
#include "volta/error.h"
#include "volta/sha256.h"
#include "volta/train/token_data.h"

namespace volta::conformance {
namespace training {

ScratchDir::ScratchDir(const TrainingSuiteOptions& options, const std::string& name)
    : dir_(options.scratch / (name + "." + std::to_string(getpid()))) {
  std::filesystem::remove_all(dir_);
  std::filesystem::create_directories(dir_);
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(ErrorCode::InvalidArgument, "cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<uint8_t> read_data(const TrainingSuiteOptions& options) {
  return train::read_token_file(options.data);
}

std::string sha256_hex_of_file(const std::filesystem::path& path) {
  return sha256_hex(read_file(path));
}

CaseOutcome pass(std::string message) {
  CaseOutcome o;
  o.outcome = Outcome::Pass;
  o.message = std::move(message);
  return o;
}

CaseOutcome failed(std::string message) {
  CaseOutcome o;
  o.outcome = Outcome::FailNumeric;
  o.message = std::move(message);
  return o;
}

CaseOutcome skipped(std::string message) {
  CaseOutcome o;
  o.outcome = Outcome::Skipped;
  o.message = std::move(message);
  return o;
}

std::optional<std::filesystem::path> interop_python(const TrainingSuiteOptions& options,
                                                    std::string& why_not) {
  const std::filesystem::path python = options.interop_venv / "bin" / "python3";
  if (std::filesystem::exists(python)) return python;
  why_not = "no interop venv at " + options.interop_venv.string() +
            " (scripts/ci/bootstrap.sh creates it with pinned PyPI packages";
  const std::filesystem::path unavailable = options.interop_venv.string() + ".unavailable";
  if (std::filesystem::exists(unavailable)) why_not += "; it said: " + read_file(unavailable);
  why_not += ")";
  return std::nullopt;
}

}  // namespace training

std::vector<SuiteCase> training_suite(std::string_view backend,
                                      const TrainingSuiteOptions& options) {
  if (backend != "cpu") {
    fail(ErrorCode::InvalidArgument,
         "the training suite has no backend '" + std::string(backend) + "' (supported: cpu)");
  }
  std::vector<training::TrainingCase> cases;
  training::train_reload_cases(options, cases);
  training::checkpoint_cases(options, cases);
  std::vector<SuiteCase> out;
  out.reserve(cases.size());
  for (training::TrainingCase& c : cases) {
    out.push_back({.family = std::move(c.family),
                   .op = "tiny-transformer",
                   .backend = "cpu",
                   .case_id = std::move(c.case_id),
                   .params = std::move(c.params),
                   .body = std::move(c.body),
                   .precondition = std::move(c.precondition)});
  }
  return out;
}

}  // namespace volta::conformance
