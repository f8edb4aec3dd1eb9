#pragma once
// A switch for proving the perf double pass works: VOLTA_PLANT_SLOWDOWN=SITE:PERCENT makes the
// kernel at SITE do PERCENT % more work, by busy-spinning after each call for that share of
// the call's own wall time. Results are untouched (it only burns time), so every correctness
// and determinism check still holds while a perf run must report the slowdown. Unset, a site
// costs one relaxed load. A malformed value or an unknown site is an error naming the sites.
// The hooks are a test instrument: a build with VOLTA_PLANT_HOOKS off (the release preset)
// compiles them out of the kernels and refuses the variable.

#include <chrono>
#include <string_view>

namespace volta {

// The kernels that can be slowed, each a short name used in the environment variable.
inline constexpr std::string_view kPlantedSlowdownSites[] = {"gemm"};

// The extra share of time planted at `site` (0.2 for "gemm:20"), 0 when none. Reads
// VOLTA_PLANT_SLOWDOWN once per process; throws VoltaError(InvalidArgument) on a bad value.
double planted_slowdown(std::string_view site);

// Times its scope and, when a slowdown is planted at the site, spins at its end for the
// planted share of the time the scope took.
class PlantedSlowdownScope {
 public:
  explicit PlantedSlowdownScope(std::string_view site)
      : extra_(planted_slowdown(site)),
        start_(extra_ > 0 ? std::chrono::steady_clock::now()
                          : std::chrono::steady_clock::time_point{}) {}
  ~PlantedSlowdownScope();
  PlantedSlowdownScope(const PlantedSlowdownScope&) = delete;
  PlantedSlowdownScope& operator=(const PlantedSlowdownScope&) = delete;

 private:
  double extra_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace volta
