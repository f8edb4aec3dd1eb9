#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "training_cases.h"
#include "volta/conformance/process.h"
#include "volta/error.h"

namespace volta::conformance::training {
namespace {

std::vector<std::string> volta_argv(const TrainingSuiteOptions& options,
                                    const std::vector<std::string>& args) {
  std::vector<std::string> argv = {options.volta_cli.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

}  // namespace

CliResult run_program(const std::vector<std::string>& argv) {
  const ProcessOutcome p = run_process(argv, StandardError::Merge);
  if (!p.started) {
    fail(ErrorCode::InvalidArgument, "could not start " + argv.at(0) + ": " + p.output);
  }
  return {p.exit_code, p.output};
}

CliResult run_volta(const TrainingSuiteOptions& options, const std::vector<std::string>& args) {
  return run_program(volta_argv(options, args));
}

BackgroundVolta::BackgroundVolta(const TrainingSuiteOptions& options,
                                 const std::vector<std::string>& args) {
  const std::vector<std::string> argv = volta_argv(options, args);
  std::vector<char*> raw;
  raw.reserve(argv.size() + 1);
  for (const std::string& a : argv) raw.push_back(const_cast<char*>(a.c_str()));
  raw.push_back(nullptr);
  // Its output is not needed: the case watches the checkpoint it writes.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  const int rc = posix_spawn(&pid_, raw[0], &actions, nullptr, raw.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    fail(ErrorCode::InvalidArgument, "could not start " + argv[0] + ": " + std::strerror(rc));
  }
}

BackgroundVolta::~BackgroundVolta() {
  if (!reaped_) kill_hard();
}

bool BackgroundVolta::running() {
  if (reaped_) return false;
  const pid_t done = waitpid(pid_, &status_, WNOHANG);
  if (done == pid_) reaped_ = true;
  return !reaped_;
}

void BackgroundVolta::kill_hard() {
  if (reaped_) return;
  ::kill(pid_, SIGKILL);
  wait();
}

int BackgroundVolta::wait() {
  while (!reaped_) {
    if (waitpid(pid_, &status_, 0) == pid_)
      reaped_ = true;
    else if (errno != EINTR)
      break;
  }
  return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
}

}  // namespace volta::conformance::training
