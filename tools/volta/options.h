#pragma once
// Command-line options of the training commands: "--name value" pairs and flags, each command
// naming the ones it takes, so a typo or a missing value is an error that lists what exists.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace volta::cli {

class Options {
 public:
  // Throws UsageError for an option not in `valued` or `flags`, or a valued one without a value.
  Options(std::string_view command, std::span<const std::string_view> args,
          std::vector<std::string_view> valued, std::vector<std::string_view> flags = {});

  bool has(std::string_view name) const { return values_.contains(std::string(name)); }
  bool flag(std::string_view name) const { return flags_.contains(std::string(name)); }
  std::optional<std::string> text(std::string_view name) const;
  std::string required(std::string_view name) const;  // UsageError when absent
  // Typed values; UsageError naming the option and the range when out of it.
  std::optional<int64_t> integer(std::string_view name, int64_t min, int64_t max) const;
  std::optional<double> real(std::string_view name, double min, double max) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::string command_;
  std::string known_;
  std::map<std::string, std::string> values_;
  std::set<std::string> flags_;
  std::vector<std::string> positional_;
};

// A bad command line: main prints it with the usage and exits 2.
struct UsageError {
  std::string message;
};

}  // namespace volta::cli
