// Fuzz target: the numerics policy (governance/numerics-policy.md's rules table). parse_policy
// never throws: every problem must come back as an error naming its line.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "volta/conformance/numerics_policy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const volta::conformance::Policy policy =
      volta::conformance::parse_policy(std::string_view(reinterpret_cast<const char*>(data), size));
  for (const volta::conformance::PolicyError& error : policy.errors) {
    if (error.line < 0 || error.message.empty()) std::abort();  // an error that says nothing
  }
  return 0;
}
