#include "configs.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>

#include "volta/error.h"

namespace volta::conformance {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kSettings = "threads, passes, chunk_scale, task_order";

std::string trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  const size_t e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

// A file's `key = value` lines, in order, with their line numbers.
struct Entry {
  std::string key, value;
  int line = 0;
};

std::vector<Entry> read_entries(const fs::path& file) {
  std::ifstream in(file);
  if (!in) fail(ErrorCode::InvalidArgument, "cannot read configuration file " + file.string());
  std::vector<Entry> entries;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const std::string text = trim(line);
    if (text.empty() || text[0] == '#') continue;
    const size_t eq = text.find('=');
    if (eq == std::string::npos) {
      fail(ErrorCode::InvalidArgument, file.string() + ":" + std::to_string(number) +
                                           ": expected `setting = value`, got '" + text + "'");
    }
    entries.push_back({trim(text.substr(0, eq)), trim(text.substr(eq + 1)), number});
  }
  return entries;
}

[[noreturn]] void bad_value(const fs::path& file, const Entry& e, std::string_view expected) {
  fail(ErrorCode::InvalidArgument, file.string() + ":" + std::to_string(e.line) + ": " + e.key +
                                       " = '" + e.value + "' is not " + std::string(expected));
}

// Applies one setting; returns false for an unknown key.
bool apply(const fs::path& file, const Entry& e, ExecutionConfig& config) {
  if (e.key == "threads") {
    int v = 0;
    const auto [end, ec] = std::from_chars(e.value.data(), e.value.data() + e.value.size(), v);
    if (ec != std::errc() || end != e.value.data() + e.value.size() || v < 1 || v > 1024) {
      bad_value(file, e, "a thread count in [1, 1024]");
    }
    config.threads = v;
  } else if (e.key == "passes") {
    if (e.value != "on" && e.value != "off") bad_value(file, e, "on or off");
    config.passes = e.value == "on";
  } else if (e.key == "chunk_scale") {
    double v = 0;
    const auto [end, ec] = std::from_chars(e.value.data(), e.value.data() + e.value.size(), v);
    if (ec != std::errc() || end != e.value.data() + e.value.size() || !std::isfinite(v) ||
        v <= 0) {
      bad_value(file, e, "a positive number");
    }
    config.schedule.chunk_scale = v;
  } else if (e.key == "task_order") {
    if (e.value != "forward" && e.value != "reverse") bad_value(file, e, "forward or reverse");
    config.schedule.reverse_task_order = e.value == "reverse";
  } else {
    return false;
  }
  return true;
}

struct Parsed {
  std::optional<std::string> reason;
  std::vector<std::string> settings;
  ExecutionConfig config;
};

Parsed parse(const fs::path& file, const ExecutionConfig& start) {
  Parsed p;
  p.config = start;
  for (const Entry& e : read_entries(file)) {
    if (e.key == "reason") {
      if (e.value.empty()) bad_value(file, e, "a non-empty reason");
      p.reason = e.value;
      continue;
    }
    if (std::ranges::find(p.settings, e.key) != p.settings.end()) {
      fail(ErrorCode::InvalidArgument,
           file.string() + ":" + std::to_string(e.line) + ": " + e.key + " is set twice");
    }
    if (!apply(file, e, p.config)) {
      fail(ErrorCode::InvalidArgument, file.string() + ":" + std::to_string(e.line) +
                                           ": unknown setting '" + e.key + "' (settings: reason, " +
                                           std::string(kSettings) + ")");
    }
    p.settings.push_back(e.key);
  }
  if (!p.reason) {
    fail(ErrorCode::InvalidArgument,
         file.string() + ": no `reason = ...` line: every configuration says why it exists");
  }
  return p;
}

}  // namespace

std::string describe(const ExecutionConfig& c) {
  char scale[32];
  std::snprintf(scale, sizeof scale, "%g", c.schedule.chunk_scale);
  return "threads=" + std::to_string(c.threads) + " passes=" + (c.passes ? "on" : "off") +
         " chunk_scale=" + scale +
         " task_order=" + (c.schedule.reverse_task_order ? "reverse" : "forward");
}

ConfigMatrix load_config_matrix(const fs::path& dir) {
  const fs::path baseline_file = dir / "baseline.conf";
  if (!fs::is_regular_file(baseline_file)) {
    fail(ErrorCode::InvalidArgument,
         "configuration directory " + dir.string() + " has no baseline.conf");
  }
  ConfigMatrix matrix;
  const Parsed baseline = parse(baseline_file, {});
  for (std::string_view key : {"threads", "passes", "chunk_scale", "task_order"}) {
    if (std::ranges::find(baseline.settings, key) == baseline.settings.end()) {
      fail(ErrorCode::InvalidArgument, baseline_file.string() + ": the baseline sets every " +
                                           "setting; '" + std::string(key) + "' is missing");
    }
  }
  matrix.baseline = baseline.config;
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    const fs::path& path = entry.path();
    if (path.extension() == ".conf" && path.filename() != "baseline.conf") files.push_back(path);
  }
  std::ranges::sort(files);
  for (const fs::path& file : files) {
    Parsed p = parse(file, matrix.baseline);
    if (p.settings.size() != 1) {
      fail(ErrorCode::InvalidArgument,
           file.string() +
               ": a variation changes exactly one setting of the baseline, this one "
               "sets " +
               std::to_string(p.settings.size()));
    }
    if (describe(p.config) == describe(matrix.baseline)) {
      fail(ErrorCode::InvalidArgument,
           file.string() + ": " + p.settings[0] + " has the baseline's value, so it tests nothing");
    }
    matrix.variations.push_back({file.stem().string(), *p.reason, p.settings[0], p.config});
  }
  return matrix;
}

}  // namespace volta::conformance
