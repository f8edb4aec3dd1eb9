// Fuzz target: the harness's committed TSV files, each parser fed the same bytes:
// conformance/expectations/*.tsv (parse_expectations) and conformance/harness/tolerances.tsv
// (ToleranceTable::parse). A malformed file must be refused with a VoltaError naming the line.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "volta/conformance/expectations.h"
#include "volta/conformance/tolerance.h"
#include "volta/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    volta::conformance::parse_expectations(text, "<fuzz input>");
  } catch (const volta::VoltaError&) {
  }
  try {
    volta::conformance::ToleranceTable::parse(text);
  } catch (const volta::VoltaError&) {
  }
  return 0;
}
