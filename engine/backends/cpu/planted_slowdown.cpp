#include "volta/backends/cpu/planted_slowdown.h"

#include <charconv>
#include <cstdlib>
#include <string>

#include "volta/error.h"

namespace volta {
namespace {

constexpr std::string_view kVariable = "VOLTA_PLANT_SLOWDOWN";

struct Planted {
  std::string site;  // empty: nothing planted
  double extra = 0;
};

[[noreturn]] void refuse(std::string_view value, std::string_view why) {
  std::string sites;
  for (std::string_view s : kPlantedSlowdownSites)
    sites += (sites.empty() ? "" : ", ") + std::string(s);
  fail(ErrorCode::InvalidArgument,
       std::string(kVariable) + "='" + std::string(value) + "': " + std::string(why) +
           "; expected SITE:PERCENT with SITE one of " + sites + " and PERCENT in (0, 1000]");
}

Planted parse(std::string_view value) {
  const size_t colon = value.find(':');
  if (colon == std::string_view::npos) refuse(value, "no ':'");
  const std::string_view site = value.substr(0, colon);
  bool known = false;
  for (std::string_view s : kPlantedSlowdownSites) known = known || s == site;
  if (!known) refuse(value, "unknown site '" + std::string(site) + "'");
  const std::string_view percent = value.substr(colon + 1);
  double parsed = 0;
  const auto [end, ec] = std::from_chars(percent.data(), percent.data() + percent.size(), parsed);
  if (ec != std::errc{} || end != percent.data() + percent.size()) {
    refuse(value, "'" + std::string(percent) + "' is not a number");
  }
  if (!(parsed > 0 && parsed <= 1000)) refuse(value, "percent out of range");
  return {std::string(site), parsed / 100};
}

const Planted& planted() {
  static const Planted kPlanted = [] {
    const char* value = std::getenv(std::string(kVariable).c_str());
    if (value == nullptr || *value == '\0') return Planted{};
#ifndef VOLTA_PLANT_HOOKS
    fail(ErrorCode::InvalidArgument,
         std::string(kVariable) + "='" + value +
             "': this build has no planted-slowdown hooks (VOLTA_PLANT_HOOKS=OFF, as the release "
             "preset builds): time a build with them (relassert) to plant a slowdown");
#endif
    return parse(value);
  }();
  return kPlanted;
}

}  // namespace

double planted_slowdown(std::string_view site) {
  const Planted& p = planted();
  return p.site == site ? p.extra : 0;
}

PlantedSlowdownScope::~PlantedSlowdownScope() {
  if (extra_ <= 0) return;
  const auto took = std::chrono::steady_clock::now() - start_;
  const auto until =
      start_ + took + std::chrono::duration_cast<std::chrono::nanoseconds>(took * extra_);
  while (std::chrono::steady_clock::now() < until) {
  }
}

}  // namespace volta
