#include "cli.h"

#include <charconv>
#include <cstdint>

#include "volta/conformance/store.h"

namespace volta::audit {

std::optional<std::string> Args::option(std::string_view name) {
  for (size_t i = 0; i < args_.size(); ++i) {
    const std::string_view a = args_[i];
    if (a == name) {
      if (i + 1 >= args_.size()) throw UsageError(std::string(name) + " needs a value");
      std::string value(args_[i + 1]);
      args_.erase(args_.begin() + static_cast<std::ptrdiff_t>(i),
                  args_.begin() + static_cast<std::ptrdiff_t>(i) + 2);
      return value;
    }
    if (a.size() > name.size() && a.starts_with(name) && a[name.size()] == '=') {
      std::string value(a.substr(name.size() + 1));
      args_.erase(args_.begin() + static_cast<std::ptrdiff_t>(i));
      return value;
    }
  }
  return std::nullopt;
}

std::vector<std::string> Args::options(std::string_view name) {
  std::vector<std::string> values;
  while (std::optional<std::string> v = option(name)) values.push_back(std::move(*v));
  return values;
}

bool Args::flag(std::string_view name) {
  for (size_t i = 0; i < args_.size(); ++i) {
    if (args_[i] == name) {
      args_.erase(args_.begin() + static_cast<std::ptrdiff_t>(i));
      return true;
    }
  }
  return false;
}

std::vector<std::string> Args::positionals(std::string_view supported) {
  std::vector<std::string> out;
  for (std::string_view a : args_) {
    if (a.starts_with("-")) {
      throw UsageError("unknown option '" + std::string(a) +
                       "' (supported: " + std::string(supported) + ")");
    }
    out.emplace_back(a);
  }
  return out;
}

std::string database_path(Args& args) {
  return args.option("--db").value_or(conformance::kDefaultDatabase);
}

int64_t parse_run_id(const std::string& text) {
  int64_t id = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (error != std::errc() || end != text.data() + text.size() || id <= 0) {
    throw UsageError("run id '" + text +
                     "' is not a run number (a positive integer: the `id` column of "
                     "`volta-audit query runs`)");
  }
  return id;
}

}  // namespace volta::audit
