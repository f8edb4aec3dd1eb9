// Fuzz target: the perf policy table (governance/perf-slo.md, parse_perf_policy), whose rows
// carry ECMAScript regexes, and `volta-perf --volta_describe`'s text (parse_binary_description),
// each fed the same bytes. A bad file must be refused with a VoltaError naming the line.

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

#include "../perf_machine.h"
#include "../perf_policy.h"
#include "volta/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    std::istringstream in(text);
    volta::audit::parse_perf_policy(in, "<fuzz input>");
  } catch (const volta::VoltaError&) {
  }
  try {
    volta::audit::parse_binary_description(text);
  } catch (const volta::VoltaError&) {
  }
  return 0;
}
