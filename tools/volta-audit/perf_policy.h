#pragma once
// The perf SLO policy `volta-audit perf` judges by, read from the machine-readable table of
// governance/perf-slo.md: the significance level of the Mann-Whitney test, the default
// effect-size threshold, per-benchmark thresholds, and the samples each pass needs, each
// with its reason. The perf-double-pass gate holds every verdict to the committed table.

#include <filesystem>
#include <istream>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace volta::audit {

inline constexpr std::string_view kPerfPolicyBegin = "<!-- BEGIN PERF POLICY";
inline constexpr std::string_view kPerfPolicyEnd = "<!-- END PERF POLICY -->";
inline constexpr std::string_view kPerfPolicyFile = "governance/perf-slo.md";

struct ThresholdOverride {
  std::string pattern = {};  // ECMAScript regex matched against the whole benchmark name
  std::regex regex = {};
  double threshold = 0;  // fraction: 0.10 for "10%"
  std::string reason = {};
  int line = 0;
};

struct PerfPolicy {
  double alpha = 0;              // a suspect needs p < alpha
  double default_threshold = 0;  // ... and |median change| > its threshold (fraction)
  int repetitions = 0;           // pass-1 samples every verdict needs, at least
  int pass2_repetitions = 0;     // pass-2 samples every re-measured suspect needs, at least
  std::vector<ThresholdOverride> overrides = {};  // file order; the first match wins

  double threshold_for(std::string_view benchmark) const;
};

// Parses the table between the markers. Throws VoltaError(InvalidArgument) naming `source`
// and the line for a malformed row, a missing reason, an unknown setting, a duplicate, an
// invalid regex or value, and a table without alpha, a default threshold or either count of
// repetitions.
PerfPolicy parse_perf_policy(std::istream& in, std::string_view source);
PerfPolicy load_perf_policy(const std::filesystem::path& file);

}  // namespace volta::audit
