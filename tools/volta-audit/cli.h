#pragma once
// Argument handling shared by volta-audit's commands: options are taken by name, and
// whatever is left over is an error that names it and lists what the command supports.

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace volta::audit {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Args {
 public:
  explicit Args(std::span<const std::string_view> args) : args_(args.begin(), args.end()) {}

  // "--name VALUE" (or "--name=VALUE"); removed from the list once taken.
  std::optional<std::string> option(std::string_view name);
  // Every occurrence of "--name VALUE".
  std::vector<std::string> options(std::string_view name);
  // "--name" present; removed once taken.
  bool flag(std::string_view name);
  // The remaining arguments, which must not look like options. Throws UsageError naming
  // the first unknown option and listing `supported`.
  std::vector<std::string> positionals(std::string_view supported);

 private:
  std::vector<std::string_view> args_;
};

// A run id as the user typed it (a positive integer); throws UsageError otherwise.
int64_t parse_run_id(const std::string& text);

// --db PATH, defaulting to volta-results.db in the working directory.
std::string database_path(Args& args);

}  // namespace volta::audit
