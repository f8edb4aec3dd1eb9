#include "options.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace volta::cli {

Options::Options(std::string_view command, std::span<const std::string_view> args,
                 std::vector<std::string_view> valued, std::vector<std::string_view> flags)
    : command_(command) {
  for (const std::string_view v : valued) known_ += (known_.empty() ? "" : " ") + std::string(v);
  for (const std::string_view f : flags) known_ += (known_.empty() ? "" : " ") + std::string(f);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view a = args[i];
    if (!a.starts_with("--")) {
      positional_.emplace_back(a);
    } else if (std::ranges::find(flags, a) != flags.end()) {
      flags_.emplace(a);
    } else if (std::ranges::find(valued, a) != valued.end()) {
      if (i + 1 >= args.size()) throw UsageError{std::string(a) + " needs a value"};
      values_[std::string(a)] = std::string(args[++i]);
    } else {
      throw UsageError{"unknown option '" + std::string(a) + "' (options: " + known_ + ")"};
    }
  }
}

std::optional<std::string> Options::text(std::string_view name) const {
  const auto it = values_.find(std::string(name));
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string Options::required(std::string_view name) const {
  if (auto v = text(name)) return *v;
  throw UsageError{std::string(name) + " is required"};
}

std::optional<int64_t> Options::integer(std::string_view name, int64_t min, int64_t max) const {
  const std::optional<std::string> v = text(name);
  if (!v) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(v->c_str(), &end, 10);
  if (v->empty() || *end != '\0' || errno != 0 || n < min || n > max) {
    throw UsageError{std::string(name) + " takes an integer in " + std::to_string(min) + ".." +
                     std::to_string(max) + ", got '" + *v + "'"};
  }
  return n;
}

std::optional<double> Options::real(std::string_view name, double min, double max) const {
  const std::optional<std::string> v = text(name);
  if (!v) return std::nullopt;
  char* end = nullptr;
  const double x = std::strtod(v->c_str(), &end);
  if (v->empty() || *end != '\0' || !std::isfinite(x) || x < min || x > max) {
    throw UsageError{std::string(name) + " takes a number in [" + std::to_string(min) + ", " +
                     std::to_string(max) + "], got '" + *v + "'"};
  }
  return x;
}

}  // namespace volta::cli
