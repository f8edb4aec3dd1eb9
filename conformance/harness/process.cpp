#include "volta/conformance/process.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "volta/error.h"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX, for posix_spawn

namespace volta::conformance {

std::string ProcessOutcome::describe() const {
  if (!started) return "could not start: " + output;
  if (exit_code >= 0) return "exit " + std::to_string(exit_code);
  return "signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
}

ProcessOutcome run_process(const std::vector<std::string>& argv, StandardError standard_error) {
  ProcessOutcome outcome;
  int fds[2];
  if (pipe(fds) != 0) fail(ErrorCode::InvalidArgument, "pipe() failed for " + argv.at(0));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  if (standard_error == StandardError::Merge) {
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  }
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (spawned == 0) {
    char buffer[65536];
    for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) != 0;) {
      if (n > 0) {
        outcome.output.append(buffer, static_cast<size_t>(n));
      } else if (errno != EINTR) {
        break;
      }
    }
  }
  close(fds[0]);
  if (spawned != 0) {
    outcome.output = argv[0] + ": " + std::strerror(spawned);
    return outcome;
  }
  outcome.started = true;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    outcome.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    outcome.signal = WTERMSIG(status);
  }
  return outcome;
}

}  // namespace volta::conformance
