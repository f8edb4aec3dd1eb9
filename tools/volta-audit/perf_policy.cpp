#include "perf_policy.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <optional>

#include "volta/conformance/user_regex.h"
#include "volta/error.h"

namespace volta::audit {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// "| a | b | c |" -> {a, b, c}; the outer pipes are required.
std::optional<std::vector<std::string_view>> table_cells(std::string_view row) {
  row = trim(row);
  if (row.size() < 2 || row.front() != '|' || row.back() != '|') return std::nullopt;
  row = row.substr(1, row.size() - 2);
  std::vector<std::string_view> cells;
  for (size_t start = 0;;) {
    const size_t bar = row.find('|', start);
    cells.push_back(trim(row.substr(start, bar == std::string_view::npos ? bar : bar - start)));
    if (bar == std::string_view::npos) return cells;
    start = bar + 1;
  }
}

bool is_separator(const std::vector<std::string_view>& cells) {
  for (std::string_view c : cells) {
    if (c.empty() || c.find_first_not_of("-: ") != std::string_view::npos) return false;
  }
  return true;
}

std::optional<double> parse_double(std::string_view text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

double PerfPolicy::threshold_for(std::string_view benchmark) const {
  const std::string name(benchmark);
  for (const ThresholdOverride& o : overrides) {
    if (std::regex_match(name, o.regex)) return o.threshold;
  }
  return default_threshold;
}

PerfPolicy parse_perf_policy(std::istream& in, std::string_view source) {
  PerfPolicy policy;
  int alpha_line = 0;
  int default_line = 0;
  int repetitions_line = 0;
  int pass2_line = 0;
  bool inside = false;
  bool ended = false;
  bool header_seen = false;
  std::string line;
  int number = 0;
  const auto refuse = [&](int at, const std::string& why) {
    fail(ErrorCode::InvalidArgument, std::string(source) + ":" + std::to_string(at) + ": " + why);
  };
  while (std::getline(in, line)) {
    ++number;
    const std::string_view text = trim(line);
    if (text.starts_with(kPerfPolicyBegin)) {
      if (inside || ended) refuse(number, "a second perf policy table; there is exactly one");
      inside = true;
      continue;
    }
    if (text == kPerfPolicyEnd) {
      if (!inside) refuse(number, "END PERF POLICY without a BEGIN PERF POLICY before it");
      inside = false;
      ended = true;
      continue;
    }
    if (!inside || text.empty()) continue;
    const std::optional<std::vector<std::string_view>> cells = table_cells(text);
    if (!cells || cells->size() != 3) {
      refuse(number,
             "a policy row is '| setting | value | reason |', got '" + std::string(text) + "'");
    }
    const std::vector<std::string_view>& c = *cells;
    if (!header_seen) {
      if (c[0] != "setting" || c[1] != "value" || c[2] != "reason") {
        refuse(number, "the policy table's header is '| setting | value | reason |'");
      }
      header_seen = true;
      continue;
    }
    if (is_separator(c)) continue;
    const std::string_view setting = c[0];
    const std::string_view value = c[1];
    if (c[2].empty()) {
      refuse(number, "'" + std::string(setting) + "' has no reason; every row needs one");
    }
    if (setting == "alpha") {
      if (alpha_line != 0) {
        refuse(number, "alpha is set twice (first on line " + std::to_string(alpha_line) + ")");
      }
      const std::optional<double> alpha = parse_double(value);
      if (!alpha || *alpha <= 0 || *alpha >= 1) {
        refuse(number, "alpha must be a number in (0, 1), got '" + std::string(value) + "'");
      }
      policy.alpha = *alpha;
      alpha_line = number;
      continue;
    }
    if (setting == "repetitions" || setting == "pass2 repetitions") {
      const bool pass1 = setting == "repetitions";
      int& line_set = pass1 ? repetitions_line : pass2_line;
      if (line_set != 0) {
        refuse(number, std::string(setting) + " is set twice (first on line " +
                           std::to_string(line_set) + ")");
      }
      // A p-value needs samples on both sides; pass 2 confirms with at least one.
      const int minimum = pass1 ? 2 : 1;
      int count = 0;
      const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), count);
      if (error != std::errc() || end != value.data() + value.size() || count < minimum) {
        refuse(number, std::string(setting) + " must be a whole number >= " +
                           std::to_string(minimum) + ", got '" + std::string(value) + "'");
      }
      (pass1 ? policy.repetitions : policy.pass2_repetitions) = count;
      line_set = number;
      continue;
    }
    if (setting != "threshold" && !setting.starts_with("threshold ")) {
      refuse(number, "unknown setting '" + std::string(setting) +
                         "' (settings: alpha, repetitions, pass2 repetitions, threshold, "
                         "threshold BENCHMARK-REGEX)");
    }
    const std::optional<double> percent =
        value.ends_with('%') ? parse_double(value.substr(0, value.size() - 1)) : std::nullopt;
    if (!percent || *percent <= 0) {
      refuse(number,
             "a threshold is a positive percentage like '5%', got '" + std::string(value) + "'");
    }
    if (setting == "threshold") {
      if (default_line != 0) {
        refuse(number, "the default threshold is set twice (first on line " +
                           std::to_string(default_line) + ")");
      }
      policy.default_threshold = *percent / 100;
      default_line = number;
      continue;
    }
    ThresholdOverride o;
    o.pattern = trim(setting.substr(std::string_view("threshold ").size()));
    for (const ThresholdOverride& other : policy.overrides) {
      if (other.pattern == o.pattern) {
        refuse(number, "threshold '" + o.pattern + "' is set twice (first on line " +
                           std::to_string(other.line) + ")");
      }
    }
    if (const std::optional<std::string> problem = conformance::regex_limit_problem(o.pattern)) {
      refuse(number, "threshold pattern '" + o.pattern.substr(0, 80) + "' " + *problem);
    }
    try {
      o.regex = std::regex(o.pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      refuse(number, "threshold pattern '" + o.pattern + "' is not a valid regex: " + e.what());
    }
    o.threshold = *percent / 100;
    o.reason = c[2];
    o.line = number;
    policy.overrides.push_back(std::move(o));
  }
  if (inside) refuse(number, "the perf policy table has no END PERF POLICY marker");
  if (!ended) {
    refuse(number, "no perf policy table (a '" + std::string(kPerfPolicyBegin) + " ... -->' line)");
  }
  if (alpha_line == 0) refuse(number, "the perf policy table does not set alpha");
  if (default_line == 0) refuse(number, "the perf policy table does not set the default threshold");
  if (repetitions_line == 0) refuse(number, "the perf policy table does not set repetitions");
  if (pass2_line == 0) refuse(number, "the perf policy table does not set pass2 repetitions");
  return policy;
}

PerfPolicy load_perf_policy(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) fail(ErrorCode::InvalidArgument, "cannot read the perf policy " + file.string());
  return parse_perf_policy(in, file.string());
}

}  // namespace volta::audit
